"""How far the mix what-if's figures can fall: the bootstrap's percentiles, and the spread from one window of the
observation to another that the bootstrap does not see.

A bootstrap over the intervals (``capmodel.models.mix.production.mix_what_if``) measures the fit's sampling error:
how much the demands would move with other draws of the same intervals. A what-if is asked of another period, and a
server's figures move from one period to the next beyond that (a cache, a checkpoint, the host's other guests: on the
embedded server the CPU per operation of one 4-second window of load differed from its neighbours' by 5-40 %). So
the observation is cut into windows (``window_labels``: its runs of consecutive intervals, each cut into pieces of at
most a tenth of the intervals and at least MIN_WINDOW), and per window the fitted model's figure at the window's own
mean rates is set against the window's measured one (``window_errors``): the logarithm of their ratio. Their root
mean square over the K windows, on K - 1 degrees of freedom, is the spread of a new window about the model; a new
window's figure falls within the estimate times exp(±t s sqrt(1 + 1/K)) with the level's probability (Student's t on
K - 1 degrees of freedom: a prediction interval for one more draw). The what-if's interval is the bootstrap's, each
end's distance from the estimate (on the log scale) combined with that one in quadrature (``widened``).

The intervals are wide where the windows are few: a class seen in two windows has t on one degree of freedom (12.7).
How often they hold the measured window's latency on the embedded server's lab: ``benchmarks/bench_mix.py --from``
(the recorded runs: ``benchmarks/bench_mix.py --record``).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd

#: the fewest intervals a window of the observation holds, unless a run of consecutive intervals is shorter
MIN_WINDOW = 5
#: one unbroken observation is cut into this many windows (a tenth of it each), where they hold MIN_WINDOW intervals
MAX_WINDOWS = 10
#: a class's share of a window's operations under which its latency there is not counted (a few a second: noise)
MIN_CLASS_SHARE = 0.02
CPU = "cpu"


def window_labels(table: pd.DataFrame) -> np.ndarray:
    """Per interval, the number of its window: runs of consecutive intervals (a gap of half an interval or more, by
    ``time`` and ``interval_s``, starts a new one; row order where there is no ``time``), each cut into pieces of
    about a MAX_WINDOWS-th of all the intervals, and at least MIN_WINDOW (a shorter run is one window)."""
    n = len(table)
    if n == 0:
        return np.zeros(0, int)
    order = np.arange(n)
    run = np.zeros(n, int)
    if "time" in table and "interval_s" in table:
        end = pd.to_datetime(table["time"], utc=True, errors="coerce")
        seconds = ((end - pd.Timestamp(0, tz="UTC")).dt.total_seconds()).to_numpy(float)
        length = pd.to_numeric(table["interval_s"], errors="coerce").to_numpy(float)
        if np.isfinite(seconds).all() and np.isfinite(length).all():
            order = np.argsort(seconds, kind="stable")
            ends, lengths = seconds[order], length[order]
            gap = np.abs(ends[1:] - lengths[1:] - ends[:-1]) >= 0.5 * np.median(lengths)
            run[order] = np.concatenate([[0], np.cumsum(gap)])
    size = max(MIN_WINDOW, math.ceil(n / MAX_WINDOWS))
    labels, next_label = np.zeros(n, int), 0
    for members in np.split(order, np.flatnonzero(np.diff(run[order])) + 1):     # each run, in time order
        for piece in np.array_split(members, max(1, round(len(members) / size))):
            labels[piece] = next_label
            next_label += 1
    return labels


def window_errors(table: pd.DataFrame, classes, predict: Callable[[dict, float], dict],
                  other: np.ndarray | None = None) -> dict:
    """{CPU or class: [log(predicted / measured) per window]}: ``predict(rates, other)`` gives the model's row
    (``utilization``, ``cpu_cores``, ``<class>_latency_ms``) at a window's mean per-class rates and mean ``other``
    load (a per-interval array: a member's replication work; 0 without it); the measured latency is the window's
    operations-weighted mean, counted where the class is at least MIN_CLASS_SHARE of the window's operations."""
    labels = window_labels(table)
    x = np.column_stack([table[f"{c}_per_s"].fillna(0.0).to_numpy(float) for c in classes])
    latency = np.column_stack([table[f"{c}_latency_ms"].to_numpy(float) for c in classes])
    cpu = table["cpu_cores"].to_numpy(float)
    other = np.zeros(len(table)) if other is None else np.asarray(other, float)
    out: dict[str, list] = {CPU: [], **{c: [] for c in classes}}
    for k in np.unique(labels):
        inside = labels == k
        rates = x[inside].mean(axis=0)
        row = predict(dict(zip(classes, rates.tolist())), float(other[inside].mean()))
        if not row["utilization"] < 1:           # the window's own load saturates the fitted CPU: no steady figure
            continue
        measured_cpu = float(cpu[inside].mean())
        if measured_cpu > 0 and row["cpu_cores"] > 0:
            out[CPU].append(math.log(row["cpu_cores"] / measured_cpu))
        for j, c in enumerate(classes):
            ops, values = x[inside, j], latency[inside, j]
            kept = np.isfinite(values) & (ops > 0)
            if rates[j] >= MIN_CLASS_SHARE * rates.sum() > 0 and kept.any():
                measured = float(np.average(values[kept], weights=ops[kept]))
                if measured > 0 and row[f"{c}_latency_ms"] > 0:
                    out[c].append(math.log(row[f"{c}_latency_ms"] / measured))
    return out


def window_spread(errors: Mapping[str, list]) -> dict:
    """{CPU or class: (s, K)}: the root mean square of the K windows' log errors on K - 1 degrees of freedom, for
    those with at least two windows."""
    return {key: (math.sqrt(float(np.sum(np.square(e))) / (len(e) - 1)), len(e))
            for key, e in errors.items() if len(e) >= 2}


def half_width(s: float, windows: int, level: float) -> float:
    """The prediction interval's half-width for one more window, on the log scale: t s sqrt(1 + 1/K)."""
    from scipy.special import stdtrit

    return float(stdtrit(windows - 1, 0.5 + level / 2)) * s * math.sqrt(1.0 + 1.0 / windows)


def percentiles(draws: list, level: float) -> tuple[pd.Series, pd.Series]:
    """The ends of the bootstrap's interval. A refit whose asked load saturates the CPU has no steady latency: it
    counts as an unbounded one (dropping it would leave an interval below the estimate near saturation), so the
    upper end is infinite when more than the level's tail of the refits saturate. The ends are drawn values
    ('lower'/'higher'), not interpolated ones, so an infinite draw never turns into a NaN."""
    boot = pd.DataFrame(draws)
    latencies = [col for col in boot.columns if col.endswith("_latency_ms")]
    boot.loc[boot["utilization"] >= 1, latencies] = np.inf
    return (boot.quantile((1 - level) / 2, interpolation="lower"),
            boot.quantile((1 + level) / 2, interpolation="higher"))


def widened(estimate: pd.Series, low: pd.Series, high: pd.Series, spread: Mapping[str, tuple[float, int]], classes,
            level: float) -> tuple[pd.Series, pd.Series]:
    """The bootstrap's ends ``low``, ``high`` with the window-to-window ``spread`` added (see the module doc): each
    class's latency by its own spread, the CPU (``cpu_cores``, ``utilization``) and the load factor that fits by the
    CPU's. Where the CPU's upper end reaches saturation, the latencies have no upper end."""
    low, high = low.copy(), high.copy()

    def combine(column: str, key: str) -> None:
        value = estimate[column]
        if key not in spread or not (np.isfinite(value) and value > 0):
            return
        w = half_width(*spread[key], level)
        for end, sign in ((low, -1.0), (high, 1.0)):
            if np.isfinite(end[column]) and end[column] > 0:
                end[column] = value * math.exp(sign * math.hypot(math.log(end[column] / value), w))
    for c in classes:
        combine(f"{c}_latency_ms", c)
    for column in ("cpu_cores", "utilization", "load_factor_that_fits"):
        combine(column, CPU)
    if high["utilization"] >= 1:
        for c in classes:
            high[f"{c}_latency_ms"] = np.inf
    return low, high
