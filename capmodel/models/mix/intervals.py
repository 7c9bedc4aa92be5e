"""The intervals the mix what-if fits (``capmodel.models.mix.production``): which are usable, which are disturbed,
and the server's wait for its cores per operation.

The wait: on a host whose cores the server shares with other processes, a server thread that has work may find its
core taken and wait on the run queue. Its own CPU time does not show that wait, so demands fitted from the CPU miss
it; the part of it that falls inside an operation's latency window (a preemption in mid-operation) adds to the
latency. Where the samples carry ``cpu_wait_per_s`` (seconds per second the server's threads spent runnable but not
running: on Linux the second field of ``/proc/PID/task/TID/schedstat``, summed over the threads), the latency fit
takes it as one more term, per operation (see ``wait_slope``).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats
from scipy.optimize import nnls

from capmodel.data.curve_columns import OPERATION_CLASSES
from capmodel.errors import InputError
from capmodel.models.mix.served_latency import APPLIED, MIN_INTERVALS, SERVED, served_latency

WAIT = "cpu_wait_per_s"
#: the column the fit reads instead of observe's replication columns (``capmodel.models.mix.served_latency``)
REPLICATION_RATE = "replication_per_s"


def usable_intervals(samples: pd.DataFrame, source: str = "samples") -> pd.DataFrame:
    """The intervals a fit may use: not dropped, CPU known, at least one operation or some replication work; columns
    checked; the reads and commands are the clients' alone and ``replication_per_s`` the replication work
    (``split_replication``; the replication operations' latency it used is ``attrs["replication_latency_s"]``)."""
    if not isinstance(samples, pd.DataFrame):
        raise InputError(f"{source}: samples must be a table (capmodel observe's samples.csv)")
    need = ["cpu_cores"] + [f"{c}_per_s" for c in OPERATION_CLASSES] + [f"{c}_latency_ms" for c in OPERATION_CLASSES]
    missing = [c for c in need if c not in samples]
    if missing:
        raise InputError(f"{source}: no column {missing[0]!r} (is this capmodel observe's samples.csv?)")
    table = samples.copy()
    for column in need:
        table[column] = pd.to_numeric(table[column], errors="coerce")
    table = split_replication(table)
    keep = np.isfinite(table["cpu_cores"].to_numpy(float))
    if "dropped" in table:
        keep &= table["dropped"].astype(object).fillna("").astype(str).eq("").to_numpy()
    rates = table[[f"{c}_per_s" for c in OPERATION_CLASSES]].fillna(0.0).to_numpy(float)
    keep &= rates.sum(axis=1) + table[REPLICATION_RATE].to_numpy(float) > 0
    return table[keep].reset_index(drop=True)


def rate_column(table: pd.DataFrame, name: str) -> np.ndarray:
    """A rate column as floats, 0 where missing or not a number (a standalone has no replication figures)."""
    if name not in table:
        return np.zeros(len(table))
    values = pd.to_numeric(table[name], errors="coerce").to_numpy(float)
    return np.where(np.isfinite(values) & (values > 0), values, 0.0)


def split_replication(table: pd.DataFrame) -> pd.DataFrame:
    """The clients' operations apart from replication's, and the replication work, per interval.

    A sync source answers its replicas' oplog getMores, which ``opLatencies`` counts as reads, and their
    ``replSetUpdatePosition`` reports, which it counts as commands; a secondary applies the oplog entries it fetches.
    All follow the primary's writes. Out: ``reads_per_s`` less the getMores served (``oplog_getmores_per_s``),
    ``commands_per_s`` less the position reports (``repl_update_position_per_s``), each class's latency that of the
    clients' operations alone, and ``replication_per_s``: the entries applied plus the getMores and reports served.
    A class's clients' latency is its summed latency less the replication operations' (their count times their mean
    latency): that mean is a non-negative regression of the summed latency on the clients' operations and the
    replication's where their shares vary by 0.1 or more over MIN_INTERVALS intervals or more, else the class's mean
    latency where the clients' operations are at most PURE_SHARE of it (a primary whose clients read from
    secondaries), in that many intervals; otherwise it cannot be told, the class's latency stays the mean over both,
    and ``attrs["replication_latency_s"][class]`` is NaN (the class is absent where no such operation was served).
    Where the clients are a small share of their class, their latency is the difference of two large figures: noisy
    (a 0.3 % error in the reports' latency is ~30 % of the clients' at a 1 % share). A table already split (one with
    ``replication_per_s``: a bootstrap resample of one) is returned as it is."""
    if REPLICATION_RATE in table:
        return table
    table = table.copy()
    served = {c: rate_column(table, column) for c, column in SERVED.items()}
    table[REPLICATION_RATE] = sum(served.values()) + rate_column(table, APPLIED)
    table.attrs["replication_latency_s"] = told = {}
    for c, ops in served.items():
        if not (ops > 0).any():
            continue
        total = rate_column(table, f"{c}_per_s")
        latency = table[f"{c}_latency_ms"].to_numpy(float) / 1000.0
        summed = np.where(total > 0, total * latency, 0.0)              # seconds of latency per second
        clients = np.clip(total - ops, 0.0, None)
        told[c] = served_latency(summed, clients, ops, total)
        with np.errstate(divide="ignore", invalid="ignore"):
            own = (summed - told[c] * ops) / clients if np.isfinite(told[c]) else latency
        table[f"{c}_per_s"] = clients
        table[f"{c}_latency_ms"] = np.where((clients > 0) & (own > 0), own * 1000.0, np.nan)
    return table


def typical(values: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """Of the intervals ``ok``, those whose latency is within 4 scaled MADs above their median (Hampel's rule): a
    disturbed interval (a checkpoint, a neighbour on the core) is a spike that does not scale with the mix and would
    decide a small fit, or a measured mean."""
    ok = np.asarray(ok, bool)
    if ok.sum() < MIN_INTERVALS:
        return ok
    median = np.median(values[ok])
    mad = 1.4826 * np.median(np.abs(values[ok] - median))
    return ok & ~(values > median + 4 * max(mad, 1e-12))


def regress_cpu(x: np.ndarray, cpu: np.ndarray):
    """cpu_t = B + sum_c D_c X_c,t by non-negative least squares: (B, D, R^2), or None where the intervals cannot
    separate the terms (rank) or are too few for them."""
    design = np.column_stack([np.ones(len(x)), x])
    scale = np.maximum(np.abs(design).max(axis=0), 1e-12)
    if np.linalg.matrix_rank(design / scale, tol=1e-6) < design.shape[1] or len(x) < design.shape[1] + 2:
        return None
    coef = nnls(design / scale, cpu)[0] / scale
    fitted = design @ coef
    r2 = 1 - np.sum((cpu - fitted) ** 2) / max(np.sum((cpu - cpu.mean()) ** 2), 1e-300)
    return float(coef[0]), coef[1:], float(r2)


def regress_classes(x: np.ndarray, cpu: np.ndarray, r: np.ndarray, minor: np.ndarray,
                    extra: np.ndarray | None = None):
    """The CPU regression on the classes' rates (and ``extra``, a rate that is not a class: the replication work):
    ((background, D per class, R^2) or None, D of ``extra``, 0 without it).

    A class with a few operations a second (health checks, the driver's own commands) cannot be told from the
    background by the regression, and would take the others' fit down with it: the others are regressed, and its CPU
    per operation is its time in the server times the CPU per second in the server of the others."""
    k = x.shape[1]
    design = x if extra is None else np.column_stack([x, extra])
    regression = regress_cpu(design, cpu)
    mean_x = x.mean(axis=0)
    if (regression is None or min(regression[1][:k]) <= 0) and minor.any() and not minor.all():
        kept = np.concatenate([~minor, np.ones(design.shape[1] - k, dtype=bool)])
        major = regress_cpu(design[:, kept], cpu)
        if major is not None and min(major[1][:(~minor).sum()]) > 0:
            r_mean = np.array([np.nanmean(r[:, j]) if np.isfinite(r[:, j]).any() else 0.0 for j in range(k)])
            ratio = (float(mean_x[~minor] @ major[1][:(~minor).sum()])
                     / max(float(mean_x[~minor] @ r_mean[~minor]), 1e-300))
            d = np.zeros(design.shape[1])
            d[:k] = np.where(minor, r_mean * ratio, 0.0)
            d[kept] = major[1]
            background = max(major[0] - float(mean_x[minor] @ d[:k][minor]), 0.0)
            regression = (background, d, major[2])
    if regression is None:
        return None, 0.0
    background, d, r2 = regression
    return (background, d[:k], r2), (float(d[k]) if extra is not None else 0.0)


def explains(base: np.ndarray, extra: np.ndarray, y: np.ndarray, weight: np.ndarray, level: float = 0.05) -> bool:
    """Whether the columns ``extra`` explain ``y`` beyond the columns ``base`` more than chance would (weighted
    non-negative least squares of both designs; an F-test on their residuals at ``level``)."""
    n, p0, q = len(y), base.shape[1], extra.shape[1]
    if q == 0 or n <= p0 + q + 1:
        return False
    rss0 = nnls(base * weight[:, None], y * weight)[1] ** 2
    rss1 = nnls(np.column_stack([base, extra]) * weight[:, None], y * weight)[1] ** 2
    if rss1 <= 1e-12 * max(rss0, 1e-300):
        return rss0 > rss1
    return bool(stats.f.sf((rss0 - rss1) / q / (rss1 / (n - p0 - q)), q, n - p0 - q) < level)


def mix_shares(rates) -> dict:
    """Each class's share of the operations at these per-class rates ({} when there are none)."""
    total = sum(rates.values())
    return {c: v / total for c, v in rates.items()} if total > 0 else {}


def wait_per_op(table: pd.DataFrame) -> np.ndarray | None:
    """Per interval, the server's wait for its cores per operation (s): ``cpu_wait_per_s`` over the operations per
    second; None where the samples do not carry the wait (or carry no figure of it)."""
    if WAIT not in table:
        return None
    wait = pd.to_numeric(table[WAIT], errors="coerce").to_numpy(float)
    ops = table[[f"{c}_per_s" for c in OPERATION_CLASSES]].fillna(0.0).to_numpy(float).sum(axis=1)
    out = np.where((ops > 0) & (wait >= 0), wait / np.maximum(ops, 1e-300), np.nan)
    return out if np.isfinite(out).any() else None


def wait_slope(latency: np.ndarray, wait: np.ndarray, stretch: np.ndarray | None, weight: np.ndarray) -> float:
    """Seconds of a class's latency per second of the server's wait per operation: the coefficient of ``wait`` in
    latency = a + b S + k wait (``stretch`` S given) or a + k wait, by non-negative weighted least squares over the
    intervals; 0 where the wait does not vary across them (nothing to tell it by)."""
    if len(latency) < MIN_INTERVALS or np.ptp(wait) <= 0:
        return 0.0
    columns = [np.ones(len(latency))] + ([stretch] if stretch is not None else []) + [wait]
    design = np.column_stack(columns)
    scale = np.maximum(np.abs(design).max(axis=0), 1e-300)
    coef = nnls(design / scale * weight[:, None], latency * weight)[0] / scale
    return float(coef[-1])
