"""The serverStatus figures capmodel observes, and how consecutive snapshots become per-interval samples.

One list of figures serves both sources: a live ``serverStatus`` document (``snapshot``) and FTDC, whose metric
names are the same paths under ``serverStatus.`` (``ftdc_metrics``). Field meanings are those of the MongoDB manual's
serverStatus page: ``opcounters`` count operations by type since start; ``opLatencies`` give, per class (reads,
writes, commands), the operations and their summed latency in microseconds since start; ``globalLock`` the clients
active and queued right now; ``wiredTiger.concurrentTransactions`` the read/write tickets in use and free.
"""
from __future__ import annotations

import numpy as np

from capmodel.data.curve_columns import OPERATION_CLASSES
from capmodel.observe.columns import Columns

#: cumulative counters: column -> path inside serverStatus
COUNTERS = {
    "insert": "opcounters.insert",
    "query": "opcounters.query",
    "update": "opcounters.update",
    "delete": "opcounters.delete",
    "getmore": "opcounters.getmore",
    "command": "opcounters.command",
    "reads_ops": "opLatencies.reads.ops",
    "reads_latency_us": "opLatencies.reads.latency",
    "writes_ops": "opLatencies.writes.ops",
    "writes_latency_us": "opLatencies.writes.latency",
    "commands_ops": "opLatencies.commands.ops",
    "commands_latency_us": "opLatencies.commands.latency",
    "oplog_getmores": "metrics.repl.network.oplogGetMoresProcessed.num",
    "repl_applied": "metrics.repl.apply.ops",
    "repl_update_position": "metrics.commands.replSetUpdatePosition.total",
    "cpu_user_us": "extra_info.user_time_us",
    "cpu_system_us": "extra_info.system_time_us",
}
#: values at the end of each interval: column -> path inside serverStatus
GAUGES = {
    "active_readers": "globalLock.activeClients.readers",
    "active_writers": "globalLock.activeClients.writers",
    "queued_readers": "globalLock.currentQueue.readers",
    "queued_writers": "globalLock.currentQueue.writers",
    "tickets_read_out": "wiredTiger.concurrentTransactions.read.out",
    "tickets_read_available": "wiredTiger.concurrentTransactions.read.available",
    "tickets_write_out": "wiredTiger.concurrentTransactions.write.out",
    "tickets_write_available": "wiredTiger.concurrentTransactions.write.available",
    "connections_current": "connections.current",
    "connections_active": "connections.active",
    "connections_available": "connections.available",
    "cache_bytes": "wiredTiger.cache.bytes currently in the cache",
    "cache_dirty_bytes": "wiredTiger.cache.tracked dirty bytes in the cache",
    "cache_max_bytes": "wiredTiger.cache.maximum bytes configured",
}
#: the host's CPU count, beside serverStatus: FTDC's systemMetrics (Linux) or, live, hostInfo's system.numCores (the
#: host's, not the CPUs a container quota or a CPU affinity leaves the mongod: ``--cores`` says that)
CORES_COLUMN, FTDC_CORES, HOSTINFO_CORES = "cores", "systemMetrics.cpu.num_cpus", "system.numCores"
#: identity of the process: a change means a restart (counters start again from zero)
IDENTITY = {"uptime_ms": "uptimeMillis", "pid": "pid"}
TIME_PATH = "localTime"
REPLICATION_COUNTERS = ("oplog_getmores", "repl_applied", "repl_update_position")
OPCOUNTERS = ("insert", "query", "update", "delete", "getmore", "command")
FIGURES = {**IDENTITY, **COUNTERS, **GAUGES}
COUNTER_RESET, NO_OPERATIONS, CLOCK_JUMP = "counter_reset", "no_operations", "clock_jump"
#: why an interval was dropped, in words for "N intervals dropped: ..."
DROPPED_WORDS = {COUNTER_RESET: "a counter went back (the server restarted)", NO_OPERATIONS: "no operations in them",
                 CLOCK_JUMP: "the server's clock was set back or forward across them"}


def ftdc_metrics() -> dict:
    """column -> FTDC metric name for every figure (FTDC stores serverStatus under ``serverStatus.``), and ``cores``
    from ``systemMetrics``."""
    return {**{column: f"serverStatus.{path}" for column, path in FIGURES.items()}, CORES_COLUMN: FTDC_CORES}


FTDC_TIME = f"serverStatus.{TIME_PATH}"


def _lookup(document: dict, path: str):
    value = document
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return np.nan
        value = value[part]
    if isinstance(value, bool):
        return float(value)
    return float(value) if isinstance(value, (int, float)) else np.nan


def snapshot(status: dict) -> dict:
    """One raw row from a live serverStatus document: ``time_ms`` (its localTime) and every figure (NaN if absent)."""
    import pandas as pd

    moment = pd.Timestamp(status[TIME_PATH])
    moment = moment.tz_localize("UTC") if moment.tzinfo is None else moment.tz_convert("UTC")
    row = {"time_ms": int(moment.value // 1_000_000)}
    row.update({column: _lookup(status, path) for column, path in FIGURES.items()})
    return row


def intervals(raw, own_commands: int = 0):
    """Per-interval samples (a pandas DataFrame) from consecutive raw rows (a DataFrame of ``time_ms`` plus the
    figures): ``interval_columns`` as a DataFrame; fewer than two rows give an empty one."""
    import pandas as pd

    raw = raw.sort_values("time_ms", kind="stable").reset_index(drop=True)
    if len(raw) < 2:
        return pd.DataFrame(columns=["time", "interval_s", "dropped"])
    figures = {column: raw[column].to_numpy(dtype=float) for column in FIGURES if column in raw}
    if CORES_COLUMN in raw:
        figures[CORES_COLUMN] = raw[CORES_COLUMN].to_numpy(dtype=float)
    return interval_columns(raw["time_ms"].to_numpy(dtype=np.int64), figures, own_commands).frame()


def interval_columns(time_ms: np.ndarray, figures: dict, own_commands: int = 0) -> Columns:
    """Per-interval samples from consecutive snapshots (``time_ms``, ms since the epoch, and ``figures``: column ->
    float array, NaN where a snapshot lacks it): one row per interval, ending at ``time`` (UTC).

    Rates are counter differences over the interval (ops/s); ``<class>_latency_ms`` is the class's summed latency
    over its operations in the interval; gauges are the values at its end; ``cpu_cores`` the process CPU seconds per
    second (where the server reports them). ``dropped`` names why an interval is not fitted: ``counter_reset`` (a
    counter went back, the uptime fell or the pid changed: a restart) or ``no_operations`` (none in opLatencies and
    no oplog entry applied); empty otherwise.
    ``own_commands``: commands the observer itself ran per interval (the live sampler's one ``serverStatus``), taken
    out of the commands count so that an idle server reads as idle (their few microseconds of latency stay in).
    ``figures`` is emptied as its columns are used: a caller that hands over its only reference to them holds each
    snapshot column only until its intervals are derived (a gauge's intervals are a view of it).
    """
    time_ms = np.asarray(time_ms, dtype=np.int64)
    order = np.argsort(time_ms, kind="stable")
    if not (order == np.arange(order.size)).all():
        time_ms = time_ms[order]
        for column in list(figures):
            figures[column] = np.asarray(figures[column])[order]
    if time_ms.size < 2:
        empty = np.zeros(0)
        return Columns({"time": empty.astype("datetime64[ms]"), "interval_s": empty, "dropped": empty.astype(str)})
    missing = np.full(time_ms.size, np.nan)

    def values(column: str) -> np.ndarray:           # taken out of figures: let go of once used
        return np.asarray(figures.pop(column, missing), dtype=float)

    def diff(column: str) -> np.ndarray:             # one counter's differences, made when needed and let go of
        counter = values(column)
        change = counter[1:] - counter[:-1]
        if own_commands and column in ("commands_ops", "command"):
            change = np.where(change >= own_commands, change - own_commands, change)
        reset[:] |= change < 0                        # NaN compares False: a missing counter is no reset
        return change

    seconds = np.diff(time_ms).astype(float) / 1000.0
    reset = ~(seconds > 0)
    out = {"time": time_ms[1:].view("datetime64[ms]"), "interval_s": seconds}
    operations: np.ndarray | int = 0
    with np.errstate(divide="ignore", invalid="ignore"):
        for name in OPCOUNTERS:
            out[f"{name}_per_s"] = diff(name) / seconds
        for name in OPERATION_CLASSES:
            ops, latency_us = diff(f"{name}_ops"), diff(f"{name}_latency_us")
            out[f"{name}_per_s"] = ops / seconds
            out[f"{name}_latency_ms"] = np.where(ops > 0, latency_us / ops / 1000.0, np.nan)
            operations = operations + np.nan_to_num(ops, nan=0.0)
        for name in REPLICATION_COUNTERS:
            change = diff(name)
            out[f"{name}_per_s"] = change / seconds
            if name == "repl_applied":             # not in opLatencies: a secondary applying the oplog is not idle
                operations = operations + np.where(change > 0, change, 0.0)
        out["cpu_cores"] = (diff("cpu_user_us") + diff("cpu_system_us")) / 1e6 / seconds
    for column in GAUGES:
        out[column] = values(column)[1:]
    cores = values(CORES_COLUMN) if CORES_COLUMN in figures else None
    if cores is not None and not np.isnan(cores).all():
        out[CORES_COLUMN] = cores[1:]
    uptime, pid = values("uptime_ms"), values("pid")
    reset |= (uptime[1:] < uptime[:-1]) | (pid[1:] != pid[:-1])
    dropped = np.full(seconds.size, "", dtype=object)
    dropped[operations <= 0] = NO_OPERATIONS
    dropped[reset] = COUNTER_RESET
    out["dropped"] = dropped
    return Columns(out)
