"""Where the clients of a step run: this process, a local Dask cluster, or an existing Dask cluster on other hosts.

Like Dask's own ``LocalCluster`` and a remote scheduler behind one ``Client``, the sweep does not care which it got:
``open_executor(config)`` returns an object whose ``runner(...)`` gives ``Runner.run``'s signature and returns one
merged ``StepResult`` per step.

- ``InProcess`` (``processes=1``, the default): the step's clients are threads of this process.
- ``DaskExecutor`` with ``processes=P``: an embedded ``LocalCluster`` of P single-threaded worker processes on
  127.0.0.1, started for the sweep and stopped after it (no dashboard).
- ``DaskExecutor`` with ``scheduler=ADDRESS``: the workers of a cluster started with ``dask scheduler`` and
  ``dask worker ADDRESS`` (on as many hosts as there are); ``workers=K`` takes K of them, spread over hosts.

Every step: the clients are split over the workers (``shares.split``), one task per worker, pinned to it; every task
starts its warm-up at one instant of the scheduler's clock; the answers are merged (``shares.merge``). A worker that
dies or does not answer in time fails that step only (the sweep's ``--on-error`` decides); the next step uses the
workers alive then (a nanny restarts a killed one). A lost scheduler ends the sweep with a ``BenchError``: Dask's
client tries to reconnect for ``RECONNECT_S`` (15 s, three connect timeouts) first, as it takes that long to connect;
``$CAPMODEL_DASK_RECONNECT_S`` (seconds, 0.5 to 600) sets both (the tests use 3 s on the loopback).
``$CAPMODEL_DASK_START_LEAD_S`` (seconds, 0.1 to 60) replaces ``START_LEAD_S``, the 1 s between sending a step's tasks
and its common start (the local-cluster tests use 0.3 s: a worker that misses the start says so in ``late_start_s``).
Task keys name the step and the share (``capmodel-s3-c64-w1-...``), never the URI.
"""
from __future__ import annotations

import logging
import os
import secrets
import time
from typing import TYPE_CHECKING

from capmodel.bench.client.progress import StepProgress
from capmodel.bench.client.runner import StepResult
from capmodel.bench.cluster.scheduler_probe import CALL_TIMEOUT_S, CONNECT_TIMEOUT_S, probe_scheduler
from capmodel.bench.cluster.share import Secret, ShareRequest, close_clients, run_share, worker_version
from capmodel.bench.cluster.split_merge import merge, portion, split
from capmodel.errors import BenchError
from capmodel.formatting import number, plural
from capmodel.local_cluster import local_cluster

if TYPE_CHECKING:
    from distributed import Client, LocalCluster

START_LEAD_S = 1.0  # the step starts this long after its tasks are sent ...
PER_CLIENT_LEAD_S = 0.005  # ... plus this per client of the largest share (its workers open their connections)
ANSWER_GRACE_S = 30.0  # beyond the step's own end and drain timeout, before a worker is declared lost
WORKER_WAIT_S = 30.0  # how long a step waits for restarted workers to come back
TASK_POLL_S = 0.25
RECONNECT_S = CONNECT_TIMEOUT_S * 3  # connect to an existing scheduler, and reconnect to a lost one, within this
RECONNECT_ENV = "CAPMODEL_DASK_RECONNECT_S"
START_LEAD_ENV = "CAPMODEL_DASK_START_LEAD_S"
# Dask's own deadlines for an existing scheduler: connect, a silent connection declared dead
BOUNDED_COMMS = {"distributed.comm.timeouts.connect": f"{CONNECT_TIMEOUT_S * 3:g}s",  # machine-read (Dask's)
                 "distributed.comm.timeouts.tcp": f"{CALL_TIMEOUT_S:g}s"}  # machine-read


def open_executor(config, uri: str) -> InProcess | DaskExecutor:
    """The executor for ``config`` (a checked BenchConfig): ``InProcess`` or a started ``DaskExecutor``."""
    if not config.distributed:
        return InProcess(uri, config)
    return DaskExecutor(uri, config).start()


class InProcess:
    """The step's clients as threads of this process."""

    size = 1
    workers_described = "1 process (the bench's own)"   # said in the log and kept in run.json: read later too

    def __init__(self, uri: str, config):
        self.uri, self.config = uri, config

    def runner(self, database: str, collection: str, workload, existing, seed: int = 0, join_timeout: float = 15.0):
        return StepRunner(self, database, collection, workload, existing, seed, join_timeout)

    def targets(self) -> list[str]:
        return ["local"]

    def prepare_step(self) -> list[str]:
        return self.targets()

    def run_requests(self, requests, targets, deadline, progress, label, warmup, duration) -> list[dict]:
        return [run_share(requests[0], progress=progress)]

    def scheduler_clock(self) -> float | None:
        return None

    def close(self) -> None:
        close_clients()


class DaskExecutor:
    """Clients on the workers of a Dask cluster: an embedded local one, or an existing one at an address."""

    def __init__(self, uri: str, config):
        self.uri, self.config = uri, config
        self.cluster: LocalCluster | None = None
        self.client: Client | None = None
        self.address = config.scheduler
        self.expected = config.processes if config.scheduler is None else config.workers

    @property
    def _client(self) -> Client:
        """The client to the cluster, once ``start`` has connected it."""
        assert self.client is not None, "start() connects the client"
        return self.client

    # --- cluster ---------------------------------------------------------------------------------------------------
    def start(self) -> "DaskExecutor":
        start_lead_seconds()  # a wrong $CAPMODEL_DASK_START_LEAD_S is refused before a cluster starts
        try:
            from distributed import Client
        except ImportError:
            raise BenchError("client processes run on Dask: pip install distributed") from None
        try:
            if self.address is None:
                self.cluster = local_cluster(self.config.processes, logging.ERROR)
                self.client = Client(self.cluster, set_as_default=False)
                self.address = self.cluster.scheduler_address
            else:
                probe_scheduler(self.address)  # a silent, garbage or wrong-scheme peer: one line within 10 s
                import dask

                with dask.config.set(BOUNDED_COMMS):
                    self.client = Client(self.address, timeout=reconnect_seconds(), set_as_default=False)
        except BenchError:
            raise
        except Exception as exc:  # noqa: BLE001 - Dask raises OSError, TimeoutError, ValueError ...
            self.close()
            where = f"the Dask scheduler at {self.address}" if self.address else "a local Dask cluster"
            raise BenchError(f"cannot start or reach {where}: {type(exc).__name__}: {exc}"[:400]) from None
        if self.expected:
            self._wait_for(self.expected, WORKER_WAIT_S if self.config.scheduler is None else 10.0)
        try:
            if not self.targets():
                raise BenchError(f"the Dask scheduler at {self.address} has no workers: start some with "
                                 f"'dask worker {self.address}'")
            self._check_versions()
        except BaseException:
            self.close()
            raise
        return self

    @property
    def size(self) -> int:
        return len(self.targets())

    @property
    def workers_described(self) -> str:
        hosts = {self._workers.get(a, "?") for a in self.targets()}
        return (f"{plural(self.size, 'Dask worker')} on {plural(len(hosts), 'host')} "
                f"(scheduler {self.address})")

    def _info(self) -> dict:
        """{address: host} of the workers alive now, straight from the scheduler (raises when it is lost)."""
        try:
            workers = self._client.run_on_scheduler(_scheduler_workers, callback_timeout=CALL_TIMEOUT_S)
        except Exception as exc:  # noqa: BLE001 - CommClosedError, OSError, TimeoutError ...
            raise SchedulerLost(f"lost the Dask scheduler at {self.address} ({type(exc).__name__})") from None
        self._workers = workers
        return workers

    def _wait_for(self, count: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while len(self._info()) < count and time.monotonic() < deadline:
            time.sleep(0.2)

    def targets(self) -> list[str]:
        """The worker addresses that take part, spread over hosts (round robin), at most ``workers``."""
        workers = getattr(self, "_workers", None) or self._info()
        by_host: dict[str, list[str]] = {}
        for address in sorted(workers):
            by_host.setdefault(workers[address], []).append(address)
        order, lists = [], list(by_host.values())
        while any(lists):
            for addresses in lists:
                if addresses:
                    order.append(addresses.pop(0))
        return order[: self.config.workers] if self.config.workers else order

    def _check_versions(self) -> None:
        import capmodel

        try:
            answers = self._client.run(worker_version, workers=self.targets(), on_error="return",
                                      callback_timeout=CALL_TIMEOUT_S)
        except Exception as exc:  # noqa: BLE001 - TimeoutError, CommClosedError ...
            raise SchedulerLost(f"the workers of the Dask scheduler at {self.address} did not say their version "
                                f"within {number(CALL_TIMEOUT_S, 6)} s ({type(exc).__name__})") from None
        for address, answer in answers.items():
            if isinstance(answer, BaseException):
                raise BenchError(f"worker {address} did not answer ({type(answer).__name__}: {answer})"[:400])
            if answer["version"] != capmodel.__version__:
                raise BenchError(f"worker {address} on host {answer['host']} runs capmodel {answer['version']}, "
                                 f"the coordinator {capmodel.__version__}: install the same version on every load "
                                 "host")

    def scheduler_clock(self) -> float:
        """The scheduler's time.time() minus this host's (midpoint of a round trip)."""
        t0 = time.time()
        try:
            there = self._client.run_on_scheduler(time.time, callback_timeout=CALL_TIMEOUT_S)
        except Exception as exc:  # noqa: BLE001
            raise SchedulerLost(f"lost the Dask scheduler at {self.address} ({type(exc).__name__})") from None
        return there - (t0 + time.time()) / 2

    def runner(self, database: str, collection: str, workload, existing, seed: int = 0, join_timeout: float = 15.0):
        return StepRunner(self, database, collection, workload, existing, seed, join_timeout)

    # --- one step --------------------------------------------------------------------------------------------------
    def prepare_step(self) -> list[str]:
        """The workers for the next step: wait a little for restarted ones, then take those alive."""
        if self.expected:
            self._wait_for(self.expected, WORKER_WAIT_S if self.config.scheduler is None else 5.0)
        else:
            self._info()
        targets = self.targets()
        if not targets:
            raise BenchError(f"no Dask worker is left at {self.address}")
        return targets

    def run_requests(self, requests, targets, deadline, progress, label, warmup, duration) -> list[dict]:
        token = secrets.token_hex(4)
        futures = {}
        for j, (request, address) in enumerate(zip(requests, targets)):
            key = f"capmodel-{label.replace(' ', '-').replace('=', '')}-w{j}-{token}"
            futures[self._client.submit(run_share, request, key=key, workers=[address], allow_other_workers=False,
                                       pure=False, retries=0)] = j
        answers: list = [None] * len(requests)
        bar = StepProgress(progress, warmup, duration, label)
        started = time.monotonic()
        pending = set(futures)
        try:
            while pending and time.monotonic() < deadline:
                time.sleep(TASK_POLL_S)
                for future in [f for f in pending if f.done()]:
                    j = futures[future]
                    pending.discard(future)
                    try:
                        answers[j] = future.result(timeout=5)
                    except Exception as exc:  # noqa: BLE001 - the task could not run at all on that worker
                        answers[j] = {"ok": False, "error": f"worker {targets[j]}: {type(exc).__name__}: {exc}"[:400]}
                alive = self._info()
                for future in list(pending):
                    j = futures[future]
                    if targets[j] not in alive:
                        answers[j] = {"ok": False, "error": f"worker {targets[j]} died during the step"}
                        pending.discard(future)
                bar.update(time.monotonic() - started, None)
        finally:
            bar.close()
            for future in pending:
                j = futures[future]
                answers[j] = {"ok": False, "error": f"worker {targets[j]} did not answer in time"}
            if pending:
                try:
                    self._client.cancel(list(pending), force=True)
                except Exception:  # noqa: BLE001 - cancelling on a lost scheduler: nothing more to do
                    pass
        return answers

    def close(self) -> None:
        for thing in (self.client, self.cluster):
            if thing is not None:
                try:
                    thing.close(timeout=CALL_TIMEOUT_S)  # a scheduler that stopped answering does not hold the end up
                except Exception:  # noqa: BLE001 - closing after a lost scheduler
                    pass
        self.client = self.cluster = None


def reconnect_seconds() -> float:
    """``$CAPMODEL_DASK_RECONNECT_S`` if set (checked: a number of seconds from 0.5 to 600), else ``RECONNECT_S``."""
    return _seconds_from_env(RECONNECT_ENV, RECONNECT_S, 0.5, 600)


def start_lead_seconds() -> float:
    """``$CAPMODEL_DASK_START_LEAD_S`` if set (checked: a number of seconds from 0.1 to 60), else ``START_LEAD_S``."""
    return _seconds_from_env(START_LEAD_ENV, START_LEAD_S, 0.1, 60)


def _seconds_from_env(name: str, default: float, low: float, high: float) -> float:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not low <= seconds <= high:
        raise BenchError(f"${name} must be a number of seconds from {number(low)} to {number(high)}, got {text!r}")
    return seconds


class SchedulerLost(BenchError):
    """The Dask scheduler stopped answering."""


def _scheduler_workers(dask_scheduler) -> dict:
    """{address: host} of the scheduler's workers (runs on the scheduler)."""
    return {address: ws.host for address, ws in dask_scheduler.workers.items()}


class StepRunner:
    """One workload's steps, run by an executor's workers; ``run`` has ``Runner.run``'s signature."""

    def __init__(self, executor, database, collection, workload, existing, seed, join_timeout):
        self.executor, self.database, self.collection = executor, database, collection
        self.workload, self.existing, self.seed, self.join_timeout = workload, existing, seed, join_timeout

    def run(self, concurrency: int, duration: float | None = 10.0, warmup: float = 1.0,
            operations: int | None = None, rate: float | None = None, progress: bool = False,
            max_seconds: float | None = None, label: str = "", arrivals: str = "uniform", shape=None,
            windows: int | None = None) -> StepResult:
        import capmodel

        if concurrency < 1:
            raise BenchError(f"concurrency must be >= 1, got {concurrency}")
        ex, cfg = self.executor, self.executor.config
        targets = ex.prepare_step()
        shares = split(concurrency, len(targets))
        targets = targets[: len(shares)]
        offset = ex.scheduler_clock()
        lead = start_lead_seconds() + PER_CLIENT_LEAD_S * max(shares)
        start_at = None if offset is None else time.time() + offset + lead
        options = {"timeout_ms": cfg.timeout_ms, "server_selection_timeout_ms": cfg.server_selection_timeout_ms,
                   "read_preference": cfg.read_preference, "write_concern": cfg.write_concern,
                   "binding": cfg.binding}
        requests, first = [], 0
        for j, share in enumerate(shares):
            step = {"concurrency": share, "duration": duration, "warmup": warmup, "max_seconds": max_seconds,
                    "arrivals": arrivals, "first_worker": first,
                    "operations": None if operations is None else portion(operations, shares, j),
                    "rate": None if rate is None else rate * share / concurrency,
                    "shape": None if shape is None else shape.scaled(share / concurrency).to_json(),
                    "windows": windows}
            share_start = start_at
            if start_at is not None and rate is not None and arrivals == "uniform":
                share_start = start_at + j / rate  # interleave the evenly spaced schedules
            elif start_at is not None and shape is not None and arrivals == "uniform":
                share_start = start_at + j / max(shape.first_rate, shape.mean_rate())
            requests.append(ShareRequest(
                uri=Secret(ex.uri), client_options=options, pool=share + 8, workload=dict(self.workload.spec),
                workload_source=str(self.workload.path or self.workload.name), database=self.database,
                collection=self.collection,
                existing=self.existing, index=j, stride=len(shares), seed=self.seed, step=step,
                join_timeout=self.join_timeout, stop_unreachable_after=_unreachable_after(cfg),
                version=capmodel.__version__,
                start_at=share_start, label=label or f"c={concurrency}",
                allow_server_js=cfg.allow_server_js))
            first += share
        length = (warmup + duration) if operations is None and duration is not None else (max_seconds or 3600.0)
        open_loop = rate is not None or shape is not None
        drain = self.join_timeout * (2 if open_loop else 1)
        deadline = time.monotonic() + lead + length + drain + ANSWER_GRACE_S
        answers = ex.run_requests(requests, targets, deadline, progress, label or f"c={concurrency}", warmup,
                                  duration)
        records, failures = [], []
        for j, answer in enumerate(answers):
            if answer.get("ok"):
                records.append(answer["record"])
                if answer.get("keys_next") is not None:
                    self.existing = max(self.existing or 0, answer["keys_next"])
            else:
                failures.append(answer["error"])
        result = merge(records, [op.name for op in self.workload.operations], self.workload.throughput_unit,
                       rate if shape is None else shape.mean_rate(), None if shape is None else shape.text)
        if failures:
            result.runner_failures += len(failures)
            result.errors["RunnerFailure"] = result.errors.get("RunnerFailure", 0) + len(failures)
            result.error_samples.setdefault("RunnerFailure", failures[0])
        result.concurrency = int(concurrency)
        return result


def _unreachable_after(cfg) -> float:
    """A step ends early after the server was unreachable this long: one server selection timeout, at least 2 s."""
    return max(2.0, cfg.server_selection_timeout_ms / 1000.0)
