"""The clients' operations per interval, apart from the replication operations a member serves, and the busy
intervals the operational laws use (``busy_columns``).

A sync source (the primary, or a secondary that others chain from) answers its replicas' oplog getMores, which
``opLatencies`` counts as reads, and their ``replSetUpdatePosition`` reports, which it counts as commands; a
secondary applies the entries it fetched (``repl_applied_per_s``, in no class). Observe records all three per
interval (``capmodel.observe.serverstatus.REPLICATION_COUNTERS``). A server's capacity is said in the clients'
operations per second, so the curve and the operational laws take the served ones out of their class: the class's rate
less the served rate, and its latency the clients' alone, so that Little's law N = X·R is over the clients' operations
only. The served operations' mean latency is told from the clients' by the mix what-if's rule
(``capmodel.models.mix.served_latency``: a regression where the shares vary, else the intervals where clients are a
negligible share); where it cannot be told, the class keeps its mean latency over both, the served
operations' latency counted at the clients' rate. Their CPU stays in the CPU: it is work the server does for its
clients' writes, and a ratio of it per client operation holds while the mix holds.

Samples without the replication columns (a standalone, an older samples.csv, FTDC without them) read as before.
"""
from __future__ import annotations

import numpy as np

from capmodel.data.curve_columns import OPERATION_CLASSES
from capmodel.errors import InputError
from capmodel.formatting import number
from capmodel.models.evidence import Reason
from capmodel.models.mix.served_latency import APPLIED, SERVED, served_latency
from capmodel.observe.columns import Columns, as_floats, empty_cells

#: replication's share of the operations above which the answer says it, and the share of entries applied above
#: which the member's load is replication (a secondary its clients barely use: its CPU follows the primary's writes;
#: a primary's served getMores follow its own clients' writes, and stay a ratio per client operation)
REPLICATION_SAID, REPLICATION_LOAD = 0.10, 0.90
#: the samples' columns ``client_classes`` reads
CLIENT_INPUTS = (*(f"{name}_{what}" for name in OPERATION_CLASSES for what in ("per_s", "latency_ms")),
                 *SERVED.values(), APPLIED)
#: the samples' columns the operational laws read (``busy_columns``, and the host's ``cores``)
CAPACITY_INPUTS = ("interval_s", "cpu_cores", "cores", "dropped", *CLIENT_INPUTS)


def replication_share(replication: float, clients: float) -> float:
    """Replication's share of the operations a server handled, of their mean rates (0 without any)."""
    return replication / (replication + clients) if replication + clients > 0 else 0.0


def replication_words(share: float, replication: float, clients: float) -> str:
    """The answer's sentence on replication where its share is over REPLICATION_SAID (mean rates), else ""."""
    if share <= REPLICATION_SAID:
        return ""
    return (f" Replication made {share:.0%} of the operations the server handled ({number(replication)} ops/s "
            f"beside the clients' {number(clients)}, on average over the busy intervals): the figures here count the "
            "clients' operations only, and replication's CPU is in each client operation's cost, a ratio that holds "
            "while the mix of the clients' work holds.")


def replication_reason(applied: float, replication: float, clients: float) -> Reason | None:
    """Unusable where the oplog entries a member applied are over REPLICATION_LOAD of its operations (mean rates,
    ``replication`` all of replication's): its CPU is the set's writes applied, which its own clients do not cause,
    so no CPU per client operation is one."""
    share = applied / (replication + clients) if replication + clients > 0 else 0.0
    if share <= REPLICATION_LOAD:
        return None
    return Reason("replication_load", "unusable", f"the oplog entries it applied made {share:.0%} of the member's "
                  f"operations ({number(applied)} a second beside its clients' {number(clients)} ops/s): its CPU "
                  "follows the primary's writes, not its clients, so a CPU per client operation says nothing of its "
                  "capacity (capmodel mva --observed models replication as work of its own)", share)


def _rate(samples, name: str, keep: np.ndarray) -> np.ndarray:
    """A rate column of the kept rows, 0 where missing, not a number or negative."""
    if name not in samples:
        return np.zeros(int(keep.sum()))
    values = as_floats(samples[name])[keep]
    return np.where(np.isfinite(values) & (values > 0), values, 0.0)


def _class_rates(samples, name: str, keep: np.ndarray) -> tuple:
    """(ops/s, mean latency in ms, replication ops/s served among them) of one class, of the rows ``keep``."""
    rows = int(keep.sum())
    total = as_floats(samples[f"{name}_per_s"])[keep] if f"{name}_per_s" in samples else np.full(rows, np.nan)
    latency_ms = (as_floats(samples[f"{name}_latency_ms"])[keep] if f"{name}_latency_ms" in samples
                  else np.full(rows, np.nan))
    served = _rate(samples, SERVED[name], keep) if name in SERVED else np.zeros(rows)
    return total, latency_ms, served


def _shares(total: np.ndarray, latency_ms: np.ndarray, served: np.ndarray) -> tuple:
    """(the class's ops/s, 0 where none or not a number; its summed latency, s per s; the clients' ops/s)."""
    filled = np.where(np.isfinite(total) & (total > 0), total, 0.0)
    summed = np.where(filled > 0, filled * np.nan_to_num(latency_ms) / 1000.0, 0.0)
    return filled, summed, np.clip(filled - served, 0.0, None)


def _served_latency(total: np.ndarray, latency_ms: np.ndarray, served: np.ndarray) -> float | None:
    """The served operations' mean latency (s, ``served_latency``), None where none was served."""
    if not (served > 0).any():
        return None
    filled, summed, clients = _shares(total, latency_ms, served)
    return served_latency(summed, clients, served, filled)


def served_latencies(samples, keep: np.ndarray) -> dict:
    """class -> the mean latency (s) of the replication operations it served in the rows ``keep`` (None where none
    was served): what ``client_classes`` tells them apart with, for a table given to it a block of rows at a time."""
    return {name: _served_latency(*_class_rates(samples, name, keep))
            if (_rate(samples, SERVED[name], keep) > 0).any() else None for name in SERVED}   # none: nothing copied


def client_classes(samples, keep: np.ndarray, served_s: dict | None = None) -> tuple[dict, np.ndarray]:
    """Of the rows ``keep`` of ``samples`` (observe's samples: a DataFrame or ``Columns``): class -> (the clients'
    ops/s, their mean latency in ms, NaN where none), and the replication operations per second (served plus
    applied). ``served_s``: the served operations' latencies (``served_latencies``) of the table ``samples`` is a
    block of, told over its rows; by default told over the rows ``keep``."""
    out = {}
    replication = _rate(samples, APPLIED, keep)
    for name in OPERATION_CLASSES:
        total, latency_ms, served = _class_rates(samples, name, keep)
        replication = replication + served
        theirs = _served_latency(total, latency_ms, served) if served_s is None else served_s.get(name)
        if theirs is None:
            out[name] = (total, latency_ms)
            continue
        filled, summed, clients = _shares(total, latency_ms, served)
        with np.errstate(divide="ignore", invalid="ignore"):
            own = (summed - theirs * served) / clients if np.isfinite(theirs) else latency_ms / 1000.0
        out[name] = (clients, np.where((clients > 0) & (own > 0), own * 1000.0, np.nan))
    return out, replication


def busy_columns(samples, any_cpu: bool = False) -> dict:
    """``capmodel.observe.capacity.busy_table``'s columns as numpy arrays, of a samples DataFrame or ``Columns``;
    ``any_cpu``: count the intervals without a CPU figure too."""
    if not isinstance(samples, Columns):
        import pandas as pd

        if not isinstance(samples, pd.DataFrame):
            raise InputError(f"samples must be a DataFrame (observe's samples.csv), got {type(samples).__name__}")
    missing = [c for c in ("interval_s", "cpu_cores", *(f"{k}_per_s" for k in OPERATION_CLASSES)) if c not in samples]
    if missing:
        raise InputError(f"samples: missing column(s) {', '.join(missing)} (expected the samples.csv that "
                         "'capmodel observe' writes)")
    keep = (empty_cells(samples["dropped"]) if "dropped" in samples else np.ones(len(samples), dtype=bool))

    def number(name: str) -> np.ndarray:
        return as_floats(samples[name])[keep] if name in samples else np.full(int(keep.sum()), np.nan)

    def filled(name: str) -> np.ndarray:         # NaN as 0 (an infinity stays one)
        values = number(name)
        return np.where(np.isnan(values), 0.0, values)

    classes, replication = client_classes(samples, keep)
    # an infinity stays one
    x = np.asarray(sum(np.where(np.isnan(classes[k][0]), 0.0, classes[k][0]) for k in OPERATION_CLASSES))
    n = np.asarray(sum(np.where(rate > 0, rate * np.nan_to_num(r_ms) / 1000.0, 0.0) for rate, r_ms in classes.values()))
    del classes                                  # a day's rows: each column let go of once it is not needed
    cpu = np.zeros(int(keep.sum())) if any_cpu else number("cpu_cores")
    chosen = (x > 0) & np.isfinite(cpu)
    out = {"throughput": x[chosen], "cpu_cores": cpu[chosen]}
    del x, cpu
    out["interval_s"] = number("interval_s")[chosen]
    out["elapsed_s"] = np.cumsum(filled("interval_s"))[chosen]
    out["concurrency"], out["replication"] = n[chosen], replication[chosen]
    del n, replication
    out["applied"] = _rate(samples, APPLIED, keep)[chosen]
    return out
