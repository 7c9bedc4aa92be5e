"""What the server and the client machine were doing during a benchmark step.

``server_snapshot(client)`` flattens the parts of ``serverStatus`` a capacity planner reads (operation counters,
connections, WiredTiger cache, read/write tickets, network, uptime) into one dict of numbers;
``delta(before, after)`` turns two snapshots into per-second rates; ``CpuMeter`` measures CPU utilisation (0-1) of this
process, of other processes (the embedded mongod's pids) and of the whole machine between ``start()`` and ``stop()``.

Field names follow serverStatus (https://www.mongodb.com/docs/manual/reference/command/serverStatus/). Where versions
differ the first path found wins; anything missing is None, never an error.
"""
from __future__ import annotations

import time
from typing import Any, Iterable

# counters grow monotonically while the server runs: delta() gives their difference and their rate per second
TELEMETRY_COUNTERS = (
    "opcounters.insert", "opcounters.query", "opcounters.update", "opcounters.delete", "opcounters.getmore",
    "opcounters.command",
    "opcounters_repl.insert", "opcounters_repl.update", "opcounters_repl.delete", "opcounters_repl.command",
    "network.bytes_in", "network.bytes_out", "network.requests",
    "connections.total_created",
    "cache.bytes_read_into", "cache.bytes_written_from", "cache.pages_evicted_by_app_threads",
    *(f"op_latency.{kind}.{part}" for kind in ("reads", "writes", "commands", "transactions")
      for part in ("ops", "latency_us")),
)

# flat name -> candidate paths in serverStatus (first present wins)
FIELDS: dict[str, tuple[str, ...]] = {
    "uptime_s": ("uptimeMillis",),  # converted to seconds below
    **{f"opcounters.{op}": (f"opcounters.{op}",)
       for op in ("insert", "query", "update", "delete", "getmore", "command")},
    **{f"opcounters_repl.{op}": (f"opcountersRepl.{op}",) for op in ("insert", "update", "delete", "command")},
    "connections.current": ("connections.current",),
    "connections.available": ("connections.available",),
    "connections.active": ("connections.active",),
    "connections.total_created": ("connections.totalCreated",),
    "network.bytes_in": ("network.bytesIn",),
    "network.bytes_out": ("network.bytesOut",),
    "network.requests": ("network.numRequests",),
    "cache.bytes": ("wiredTiger.cache.bytes currently in the cache",),
    "cache.max_bytes": ("wiredTiger.cache.maximum bytes configured",),
    "cache.dirty_bytes": ("wiredTiger.cache.tracked dirty bytes in the cache",),
    "cache.bytes_read_into": ("wiredTiger.cache.bytes read into cache",),
    "cache.bytes_written_from": ("wiredTiger.cache.bytes written from cache",),
    "cache.pages_evicted_by_app_threads": ("wiredTiger.cache.pages evicted by application threads",),
    "global_lock.queue_readers": ("globalLock.currentQueue.readers",),
    "global_lock.queue_writers": ("globalLock.currentQueue.writers",),
    "global_lock.active_readers": ("globalLock.activeClients.readers",),
    "global_lock.active_writers": ("globalLock.activeClients.writers",),
    "mem.resident_mb": ("mem.resident",),
    # server-side time spent per class of operation (microseconds, cumulative) and the operations counted
    **{f"op_latency.{kind}.{part}": (f"opLatencies.{kind}.{field}",)
       for kind in ("reads", "writes", "commands", "transactions")
       for part, field in (("ops", "ops"), ("latency_us", "latency"))},
}
# read/write tickets ("concurrent transactions"): 7.0+ reports queues.execution,
# 5.0-6.x wiredTiger.concurrentTransactions
TICKET_ROOTS = ("queues.execution", "admission.execution", "wiredTiger.concurrentTransactions")
for _kind in ("read", "write"):
    for _field, _name in (("out", "out"), ("available", "available"), ("totalTickets", "total")):
        FIELDS[f"tickets.{_kind}.{_name}"] = tuple(f"{root}.{_kind}.{_field}" for root in TICKET_ROOTS)


def _lookup(document: dict, path: str) -> Any:
    """serverStatus keys contain spaces but never dots, so a dotted path is unambiguous."""
    value: Any = document
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def _number(value: Any) -> float | int | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return value
    try:  # bson Int64 and Decimal128 behave like numbers once converted
        return int(value) if hasattr(value, "__index__") else float(str(value))
    except (TypeError, ValueError):
        return None


def flatten_server_status(status: dict) -> dict:
    """The flat snapshot of one serverStatus document (see FIELDS); missing fields are None."""
    snapshot: dict[str, Any] = {"version": status.get("version"), "host": status.get("host")}
    for name, paths in FIELDS.items():
        snapshot[name] = next((v for v in (_number(_lookup(status, p)) for p in paths) if v is not None), None)
    if snapshot["uptime_s"] is not None:
        snapshot["uptime_s"] = snapshot["uptime_s"] / 1000.0
    else:
        snapshot["uptime_s"] = _number(status.get("uptime"))
    snapshot["taken_at"] = time.time()
    snapshot["monotonic"] = time.monotonic()
    return snapshot


def server_snapshot(client) -> dict:
    """Flat serverStatus numbers of the server ``client`` talks to (its primary on a replica set)."""
    from pymongo.errors import PyMongoError

    from capmodel.errors import BenchError

    try:
        status = client.admin.command("serverStatus")
    except PyMongoError as exc:
        raise BenchError(f"serverStatus failed: {exc}") from None
    return flatten_server_status(status)


def delta(before: dict, after: dict, seconds: float | None = None) -> dict:
    """Counter differences (``name``) and rates (``name_per_s``) between two snapshots, plus ``after``'s gauges.

    ``op_latency.<kind>.mean_ms`` is the server-side mean time of the reads/writes/commands in between.
    ``seconds`` defaults to the client-side monotonic time between the snapshots. A counter that went down (the
    server restarted) gives None.
    """
    if seconds is None:
        seconds = after["monotonic"] - before["monotonic"]
    if not seconds > 0:
        raise ValueError(f"seconds must be > 0, got {seconds}")
    out: dict[str, Any] = {"seconds": seconds}
    for name in TELEMETRY_COUNTERS:
        a, b = before.get(name), after.get(name)
        diff = b - a if a is not None and b is not None and b >= a else None
        out[name] = diff
        out[f"{name}_per_s"] = None if diff is None else diff / seconds
    for kind in ("reads", "writes", "commands", "transactions"):
        ops, micros = out.get(f"op_latency.{kind}.ops"), out.get(f"op_latency.{kind}.latency_us")
        out[f"op_latency.{kind}.mean_ms"] = micros / ops / 1000.0 if ops and micros is not None else None
    for name, value in after.items():
        if name not in TELEMETRY_COUNTERS and name not in out and name not in ("monotonic", "taken_at"):
            out[name] = value
    return out


class CpuMeter:
    """CPU utilisation between start() and stop(), each as a fraction 0-1 of the whole machine.

    ``process``: the processes measured (default this one; pass e.g. the embedded server's pids); ``system``: all CPUs
    busy (not idle or iowait). ``process_cores`` is the same process time in cores (1.0 = one core fully busy).
    """

    def __init__(self, pids: Iterable[int] | None = None):
        import psutil

        self._psutil = psutil
        self._processes = [psutil.Process(pid) for pid in pids] if pids is not None else [psutil.Process()]
        self.cpu_count = psutil.cpu_count() or 1
        self._start: tuple | None = None

    def _process_seconds(self) -> float:
        total = 0.0
        for proc in self._processes:
            try:
                times = proc.cpu_times()
            except self._psutil.NoSuchProcess:
                continue
            total += times.user + times.system
        return total

    def _system_busy_idle(self) -> tuple[float, float]:
        times = self._psutil.cpu_times()
        idle = times.idle + getattr(times, "iowait", 0.0)
        # Linux already counts guest time inside user time; summing both would count it twice.
        guest = getattr(times, "guest", 0.0) + getattr(times, "guest_nice", 0.0)
        return sum(times) - idle - guest, idle

    def start(self) -> "CpuMeter":
        self._start = (time.monotonic(), self._process_seconds(), *self._system_busy_idle())
        return self

    def stop(self) -> dict:
        """{'seconds', 'process_seconds', 'process_cores', 'process', 'system'} since start()."""
        if self._start is None:
            raise RuntimeError("CpuMeter.stop() before start()")
        t0, p0, busy0, idle0 = self._start
        t1, p1 = time.monotonic(), self._process_seconds()
        busy1, idle1 = self._system_busy_idle()
        wall = max(t1 - t0, 1e-9)
        used = max(p1 - p0, 0.0)
        # Kernel counters are sums of floats and iowait may even step backwards: an idle interval can give a busy
        # delta of -5e-12. Clamp so the fraction stays in [0, 1].
        busy, idle = max(busy1 - busy0, 0.0), max(idle1 - idle0, 0.0)
        return {
            "seconds": wall,
            "process_seconds": used,
            "process_cores": used / wall,
            "process": min(used / (wall * self.cpu_count), 1.0),
            "system": min(busy / (busy + idle), 1.0) if busy + idle > 0 else 0.0,
        }


def client_cpu(interval: float = 0.5) -> dict:
    """This process's and the machine's CPU utilisation (0-1) over the next ``interval`` seconds."""
    meter = CpuMeter().start()
    time.sleep(interval)
    return meter.stop()


def replica_state(client) -> dict | None:
    """The replica set's primary and election term as the primary answers ``hello`` now; None for a standalone
    server. The term is the one in ``electionId`` (protocol version 1 writes it in the id's last 8 bytes)."""
    hello = client.admin.command("hello")
    if not hello.get("setName"):
        return None
    election = hello.get("electionId")
    term = int.from_bytes(election.binary[4:], "big") if election is not None else None
    return {"set": hello["setName"], "primary": hello.get("primary"), "term": term, "taken_at": time.time()}

