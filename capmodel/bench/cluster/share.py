"""One client process's share of a step: what it is told (``ShareRequest``) and what it does (``run_share``).

The same function runs a share in this process (one client process, no cluster) and on a Dask worker (a local
cluster or workers on other hosts), so both paths measure alike. A request carries everything a worker needs and
nothing it must already have: the workload as its definition (a plain mapping, parsed on the worker), the client
options, the key space to insert into, the step, the capmodel version of the coordinator, and the start instant on
the scheduler's clock (each worker converts it with its own measured offset to the scheduler, so hosts whose clocks
disagree still start together). The URI travels wrapped in ``Secret``, whose text is always masked: it cannot show
up in a task's repr, a log line or a traceback.

``run_share`` never raises: whatever goes wrong comes back as ``{"ok": False, "error": ...}`` naming the worker and
its host, so Dask logs no task failure (with its arguments) and the coordinator decides what the step is worth.
"""
from __future__ import annotations

import hashlib
import os
import resource
import socket
import sys
import threading
import time
from dataclasses import dataclass

from capmodel.bench.client import attempts
from capmodel.redact import redact_text, secrets_masked

_CLIENTS: dict[str, object] = {}  # MongoClients of this process, kept warm from step to step
_LOCK = threading.Lock()


class Secret:
    """A string that never shows itself (repr, str and format give ``***``); ``.reveal()`` gives it back."""

    __slots__ = ("_value",)

    def __init__(self, value: str):
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __reduce__(self):
        return (Secret, (self._value,))


@dataclass
class ShareRequest:
    """Everything one client process needs to run its share of a step."""

    uri: Secret
    client_options: dict  # timeout_ms, server_selection_timeout_ms, read_preference, write_concern
    pool: int  # the MongoClient's maxPoolSize
    workload: dict  # the workload definition (Workload.spec) ...
    workload_source: str  # ... and where it came from
    database: str
    collection: str
    existing: int | None  # records with YCSB keys already there (None: the workload has no record keys)
    index: int  # this share's number: inserts take key numbers existing + index, + index + stride, ...
    stride: int
    seed: int
    step: dict  # Runner.run's keywords: concurrency, duration, warmup, operations, rate, arrivals, first_worker, ...
    join_timeout: float
    stop_unreachable_after: float | None
    version: str  # the coordinator's capmodel version
    start_at: float | None = None  # the warm-up's start on the scheduler's clock (time.time() there)
    label: str = ""
    allow_server_js: bool = False  # the user's --allow-server-js: the worker re-checks the workload as it was


def _where(address: str, host: str) -> str:
    return f"worker {address} on host {host}"


def _identity(dask_worker=None) -> tuple[str, str, float]:
    """(address, host, offset of the scheduler's clock against this host's) of the running process."""
    hostname = socket.gethostname()
    if dask_worker is None:
        return "local", hostname, 0.0
    address = dask_worker.address
    ip = address.split("://")[-1].rsplit(":", 1)[0]
    return address, f"{hostname} ({ip})", float(getattr(dask_worker, "scheduler_delay", 0.0) or 0.0)


def _client(uri: str, options: dict, pool: int):
    from types import SimpleNamespace

    from capmodel.bench.cluster.connection import make_client

    key = hashlib.sha256(repr((uri, sorted(options.items()), pool)).encode()).hexdigest()
    with _LOCK:
        if key not in _CLIENTS:
            _CLIENTS[key] = make_client(uri, SimpleNamespace(**options), pool=pool)
        return _CLIENTS[key]


def close_clients() -> None:
    """Close the clients this process keeps (the end of a sweep): pymongo's, and mongojet's if it was used."""
    from capmodel.bench.cluster.connection import close_soon

    with _LOCK:
        for client in _CLIENTS.values():
            close_soon(client)
        _CLIENTS.clear()
    if "capmodel.bench.client.async_workers" in sys.modules:
        sys.modules["capmodel.bench.client.async_workers"].close_all()


def run_share(request: ShareRequest, dask_worker=None, progress: bool = False) -> dict:
    """Run one share; ``{"ok": True, "record": StepResult.as_record(), "keys_next": n}`` or ``{"ok": False, ...}``."""
    if dask_worker is None and "distributed" in sys.modules:  # on a Dask worker: it is imported already
        from distributed import get_worker

        try:
            dask_worker = get_worker()
        except ValueError:  # not inside a task
            dask_worker = None
    address, host, scheduler_delay = _identity(dask_worker)
    where = _where(address, host)
    import capmodel

    if capmodel.__version__ != request.version:
        return {"ok": False, "error": f"{where} runs capmodel {capmodel.__version__}, the coordinator "
                                      f"{request.version}: install the same version on every load host"}
    with secrets_masked(request.uri.reveal()):  # the password masked in whatever this share says, wherever it is
        try:
            return _run(request, address, host, scheduler_delay, where, progress)
        except Exception as exc:  # noqa: BLE001 - reported to the coordinator, never raised into Dask's logs
            from capmodel.errors import CapmodelError

            text = str(exc) if isinstance(exc, CapmodelError) else f"{type(exc).__name__}: {exc}"
            return {"ok": False, "error": f"{where}: {redact_text(text)[:400]}"}


def _run(request: ShareRequest, address, host, scheduler_delay, where, progress) -> dict:
    from capmodel.bench.client.operations import KeySpace
    from capmodel.bench.client.runner import Runner
    from capmodel.bench.client.telemetry import CpuMeter
    from capmodel.bench.cluster.connection import ping, server_on_this_host
    from capmodel.bench.workload.definition import parse_workload

    uri = request.uri.reveal()
    binding = request.client_options.get("binding")
    counted = binding == "pymongo"   # pymongo retries some operations silently: its failed attempts are counted
    if binding == "mongojet":
        target = _mongojet_binding(uri, request)
        _ping_async(target, uri, where)
    else:
        if counted:
            attempts.listen()  # before the client is made: it counts the attempts pymongo retries silently
        client = _client(uri, request.client_options, request.pool)
        ping(client, uri, where=f"{where}: ")
        target = None
        if binding == "wire":   # pymongo's client selects the servers, the binding's sockets carry the operations
            from capmodel.bench.client.wire import WireBinding

            timeout_s = (request.client_options.get("timeout_ms") or 10_000) / 1000.0
            target = WireBinding(client, request.database, request.collection, uri, timeout_s)
    workload = parse_workload(dict(request.workload), request.workload_source,
                              allow_server_js=request.allow_server_js)
    keyspace = None
    if request.existing is not None:
        keyspace = KeySpace(workload, request.existing, offset=request.index, stride=request.stride)
    if target is None:
        target = client[request.database][request.collection]
    runner = Runner(target, workload, keyspace, seed=request.seed, join_timeout=request.join_timeout,
                    stop_unreachable_after=request.stop_unreachable_after)
    start_at = None if request.start_at is None else request.start_at - scheduler_delay
    meter = CpuMeter().start()
    failed_before = attempts.failed_attempts(request.database) if counted else 0
    try:
        result = runner.run(**request.step, start_at=start_at, progress=progress, label=request.label)
    finally:
        if binding == "wire":
            target.close()
    cpu = meter.stop()
    if counted:
        result.failed_attempts = attempts.failed_attempts(request.database) - failed_before
    result.workers = [{
        "address": address, "host": host, "pid": os.getpid(), "clients": result.concurrency,
        "operations": result.operations, "ops_per_s": result.ops_per_s, "errors": result.error_count,
        "cpu_cores": cpu["process_cores"], "host_cpu": cpu["system"], "host_cores": CpuMeter().cpu_count,
        "server_on_host": server_on_this_host(uri), "late_start_s": result.late_start_s,
        "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
    }]
    return {"ok": True, "record": result.as_record(), "keys_next": keyspace.count if keyspace else None}


def _ping_async(binding, uri: str, where: str) -> None:
    from capmodel.bench.client import async_workers
    from capmodel.bench.client.mongo_errors import describe_error
    from capmodel.errors import BenchError
    from capmodel.redact import redact_uri

    try:
        async_workers.call(binding.ping())
    except Exception as exc:  # noqa: BLE001 - mongojet's errors, TimeoutError
        raise BenchError(f"{where}: cannot reach MongoDB at {redact_uri(uri)}: "
                         f"{type(exc).__name__}: {describe_error(exc)}") from None


def _mongojet_binding(uri: str, request: ShareRequest):
    """The share's collection through mongojet, with the sweep's timeouts, read preference and write concern."""
    from types import SimpleNamespace

    from capmodel.bench.client import async_workers
    from capmodel.bench.client.bindings import MongojetBinding
    from capmodel.bench.cluster.connection import client_options

    o = request.client_options
    client = async_workers.client(*client_options(uri, SimpleNamespace(**o), max(request.pool, 10), "mongojet"))
    collection = client.get_database(request.database)[request.collection]
    return MongojetBinding(collection, timeout_s=(o.get("timeout_ms") or 10_000) / 1000.0)


def worker_version(dask_worker=None) -> dict:
    """This worker's capmodel version and host (``Client.run`` asks every worker before a sweep)."""
    import capmodel

    address, host, _ = _identity(dask_worker)
    return {"address": address, "host": host, "version": capmodel.__version__, "time": time.time()}
