"""The serverStatus figures capmodel observes, and how consecutive snapshots become per-interval samples.

One list of figures serves both sources: a live ``serverStatus`` document (``snapshot``) and FTDC, whose metric
names are the same paths under ``serverStatus.`` (``ftdc_metrics``). Field meanings are those of the MongoDB manual's
serverStatus page: ``opcounters`` count operations by type since start; ``opLatencies`` give, per class (reads,
writes, commands), the operations and their summed latency in microseconds since start; ``globalLock`` the clients
active and queued right now; ``wiredTiger.concurrentTransactions`` the read/write tickets in use and free.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

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
CORES, FTDC_CORES, HOSTINFO_CORES = "cores", "systemMetrics.cpu.num_cpus", "system.numCores"
#: identity of the process: a change means a restart (counters start again from zero)
IDENTITY = {"uptime_ms": "uptimeMillis", "pid": "pid"}
TIME_PATH = "localTime"
CLASSES = ("reads", "writes", "commands")
OPCOUNTERS = ("insert", "query", "update", "delete", "getmore", "command")
FIGURES = {**IDENTITY, **COUNTERS, **GAUGES}
COUNTER_RESET, NO_OPERATIONS = "counter_reset", "no_operations"


def ftdc_metrics() -> dict:
    """column -> FTDC metric name for every figure (FTDC stores serverStatus under ``serverStatus.``), and ``cores``
    from ``systemMetrics``."""
    return {**{column: f"serverStatus.{path}" for column, path in FIGURES.items()}, CORES: FTDC_CORES}


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
    moment = pd.Timestamp(status[TIME_PATH])
    moment = moment.tz_localize("UTC") if moment.tzinfo is None else moment.tz_convert("UTC")
    row = {"time_ms": int(moment.value // 1_000_000)}
    row.update({column: _lookup(status, path) for column, path in FIGURES.items()})
    return row


def intervals(raw: pd.DataFrame, own_commands: int = 0) -> pd.DataFrame:
    """Per-interval samples from consecutive raw rows (``time_ms`` plus the figures): one row per interval, ending at
    ``time`` (UTC).

    Rates are counter differences over the interval (ops/s); ``<class>_latency_ms`` is the class's summed latency
    over its operations in the interval; gauges are the values at its end; ``cpu_cores`` the process CPU seconds per
    second (where the server reports them). ``dropped`` names why an interval is not fitted: ``counter_reset`` (a
    counter went back, the uptime fell or the pid changed: a restart) or ``no_operations``; empty otherwise.
    ``own_commands``: commands the observer itself ran per interval (the live sampler's one ``serverStatus``), taken
    out of the commands count so that an idle server reads as idle (their few microseconds of latency stay in).
    """
    raw = raw.sort_values("time_ms", kind="stable").reset_index(drop=True)
    for column in FIGURES:
        if column not in raw:
            raw[column] = np.nan
    if len(raw) < 2:
        return pd.DataFrame(columns=["time", "interval_s", "dropped"])
    before, after = raw.iloc[:-1].reset_index(drop=True), raw.iloc[1:].reset_index(drop=True)
    seconds = (after["time_ms"] - before["time_ms"]).to_numpy(dtype=float) / 1000.0
    diff = {column: (after[column] - before[column]).to_numpy(dtype=float) for column in COUNTERS}
    if own_commands:
        for column in ("commands_ops", "command"):
            diff[column] = np.where(diff[column] >= own_commands, diff[column] - own_commands, diff[column])
    out = pd.DataFrame({"time": pd.to_datetime(after["time_ms"], unit="ms", utc=True), "interval_s": seconds})
    with np.errstate(divide="ignore", invalid="ignore"):
        for name in OPCOUNTERS:
            out[f"{name}_per_s"] = diff[name] / seconds
        for name in CLASSES:
            ops, latency_us = diff[f"{name}_ops"], diff[f"{name}_latency_us"]
            out[f"{name}_per_s"] = ops / seconds
            out[f"{name}_latency_ms"] = np.where(ops > 0, latency_us / ops / 1000.0, np.nan)
        out["cpu_cores"] = (diff["cpu_user_us"] + diff["cpu_system_us"]) / 1e6 / seconds
    for column in GAUGES:
        out[column] = after[column].to_numpy(dtype=float)
    if CORES in raw and raw[CORES].notna().any():
        out[CORES] = after[CORES].to_numpy(dtype=float)
    counters = np.column_stack([diff[c] for c in COUNTERS])
    reset = (np.nan_to_num(counters, nan=0.0) < 0).any(axis=1)
    reset |= (after["uptime_ms"] < before["uptime_ms"]).to_numpy() | (after["pid"] != before["pid"]).to_numpy()
    reset |= ~(seconds > 0)
    operations = sum(np.nan_to_num(diff[f"{name}_ops"], nan=0.0) for name in CLASSES)
    out["dropped"] = np.where(reset, COUNTER_RESET, np.where(operations <= 0, NO_OPERATIONS, ""))
    return out
