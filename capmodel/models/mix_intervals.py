"""The intervals the mix what-if fits (``capmodel.models.mix_production``): which are usable, which are disturbed,
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

from capmodel.errors import InputError

CLASSES = ("reads", "writes", "commands")
MIN_INTERVALS = 5
WAIT = "cpu_wait_per_s"


def usable_intervals(samples: pd.DataFrame, source: str = "samples") -> pd.DataFrame:
    """The intervals a fit may use: not dropped, CPU known, at least one operation; columns checked."""
    if not isinstance(samples, pd.DataFrame):
        raise InputError(f"{source}: samples must be a table (capmodel observe's samples.csv)")
    need = ["cpu_cores"] + [f"{c}_per_s" for c in CLASSES] + [f"{c}_latency_ms" for c in CLASSES]
    missing = [c for c in need if c not in samples]
    if missing:
        raise InputError(f"{source}: no column {missing[0]!r} (is this capmodel observe's samples.csv?)")
    table = samples.copy()
    for column in need:
        table[column] = pd.to_numeric(table[column], errors="coerce")
    keep = np.isfinite(table["cpu_cores"].to_numpy(float))
    if "dropped" in table:
        keep &= table["dropped"].astype(object).fillna("").astype(str).eq("").to_numpy()
    rates = table[[f"{c}_per_s" for c in CLASSES]].fillna(0.0).to_numpy(float)
    keep &= rates.sum(axis=1) > 0
    return table[keep].reset_index(drop=True)


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
    ops = table[[f"{c}_per_s" for c in CLASSES]].fillna(0.0).to_numpy(float).sum(axis=1)
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
