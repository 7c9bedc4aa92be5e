"""The CPU per operation (service demand) of a server's intervals: the least squares of CPU on load, its interval by a
circular block bootstrap (its block length and widening: ``capmodel.models.block_bootstrap``), and its drift over the
window (``capmodel.observe.capacity`` states them).

Why blocks. Consecutive intervals of a server are not independent draws: a checkpoint, a cache warming up or a
changing mix of operations moves the CPU per operation for many seconds at a time (a live run's light step went from
1.41 to 1.66 ms within 8 s). A bootstrap that resamples single intervals treats each as a fresh draw and gives an
interval too narrow by the square root of the variance inflation: about sqrt((1 + ρ) / (1 − ρ)) for a lag-one
correlation ρ of the fitted slope's terms, 3x at ρ = 0.8. The circular block bootstrap (Politis & Romano 1992)
resamples runs of ``block`` contiguous intervals (wrapping at the end), so the dependence within a run is kept.

The block length is chosen from the data by Politis & White (2004, "Automatic block-length selection for the
dependent bootstrap", Econometric Reviews 23(1):53-70) with the correction of Patton, Politis & White (2009,
Econometric Reviews 28(4):372-375), applied to the series whose mean the slope is: ψ_i = (x_i − x̄)·e_i (the
load's deviation times the residual; for the ratio ΣU/ΣX, ψ_i = e_i = U_i − D·X_i). For independent residuals the
rule returns 1 and the bootstrap is the ordinary one, draw for draw. With blocks, the percentiles' distance from the
estimate is widened for the block bootstrap's two known shortfalls (``Dependence.widening``): its variance is low by
about G / b, and it rests on only n / b blocks. tests/observe/test_capacity_block.py counts the coverage that results.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from capmodel.formatting import number
from capmodel.models.block_bootstrap import dependence
from capmodel.models.evidence import Reason

#: a trend of the CPU per operation within the window worth telling: this share of it, this many standard errors
DRIFT_SHARE, DRIFT_T = 0.10, 3.0
#: difference-array cells the block counts fill at a time (1 MB of int64: a group of resamples stays in the cache)
CACHED_CELLS = 1 << 17


def fit_demand(x: np.ndarray, u: np.ndarray, with_intercept: bool) -> tuple[float, float]:
    """(background cores, CPU seconds per operation) by least squares of U on X; without intercept ΣU / ΣX."""
    if with_intercept:
        slope, intercept = np.polyfit(x, u, 1)
        return float(intercept), float(slope)
    return 0.0, float(u.sum() / x.sum())


def slope_terms(x: np.ndarray, u: np.ndarray, with_intercept: bool, background: float, d: float) -> np.ndarray:
    """ψ: the per-interval terms whose mean the estimate's error is, to first order (its influence function up to a
    constant): (x − x̄)·e with an intercept, e alone for the ratio; e = u − background − d·x."""
    e = u - background - d * x
    return (x - x.mean()) * e if with_intercept else e


def block_counts(rng: np.random.Generator, n: int, block: int, rows: int, out: np.ndarray) -> np.ndarray:
    """How often each of ``n`` intervals is drawn in ``rows`` circular block resamples (into ``out[:rows]``): per
    resample ceil(n / block) starts drawn uniformly (``rng.integers(0, n, k)``), each run ``block`` long and the
    last cut so that n intervals are drawn; block 1 is the ordinary bootstrap. A run is +1 at its start and −1 past
    its end in a difference array (a run past the last interval goes on from the first), summed up."""
    k = -(-n // block)
    # one rng.integers call of (count, k) draws the very numbers count calls of k would, in the same order, without
    # numpy's ~20 µs a call (a coverage count's 60,000 resamples of 200 intervals spent most of their time there)
    if block == 1:
        group = max(1, CACHED_CELLS // n)
        for first in range(0, rows, group):
            count = min(group, rows - first)
            drawn = rng.integers(0, n, (count, n)) + (np.arange(count) * n)[:, None]
            out[first:first + count] = np.bincount(drawn.ravel(), minlength=count * n).reshape(count, n)
        return out[:rows]
    lengths = np.full(k, block)
    lengths[-1] = n - (k - 1) * block
    width = n + 1
    group = max(1, CACHED_CELLS // width)                # resamples at a time: their arrays stay in the cache
    for first in range(0, rows, group):
        count = min(group, rows - first)
        starts = rng.integers(0, n, (count, k))
        ends = starts + lengths
        wraps = ends > n
        offsets = (np.arange(count) * width)[:, None]
        up = np.concatenate([(starts + offsets).ravel(), np.repeat(offsets[:, 0], wraps.sum(axis=1))])
        down = np.concatenate([(np.minimum(ends, n) + offsets).ravel(), ((ends - n) + offsets)[wraps]])
        edges = np.bincount(up, minlength=count * width) - np.bincount(down, minlength=count * width)
        out[first:first + count] = np.cumsum(edges.reshape(count, width)[:, :n], axis=1)    # summed as integers:
    return out[:rows]                                   # a float cumsum cannot be vectorised, and is 5x slower


def bootstrap_demands(x: np.ndarray, u: np.ndarray, with_intercept: bool, n_bootstrap: int, seed: int,
                      block: int = 1) -> np.ndarray:
    """``fit_demand``'s CPU per operation in ``n_bootstrap`` circular block resamples (``seed``'s): each is its counts c
    of each interval drawn, so its least squares is closed form, with x centred (no cancellation): slope =
    (n·Σcxu − Σcx·Σcu) / (n·Σcx² − (Σcx)²), the sums one matrix product (tests/observe/test_capacity.py checks it
    against a polyfit per resample)."""
    n = len(x)
    xc = x - x.mean()
    stats = np.column_stack([xc, u, xc * xc, xc * u, x])
    least_spread = 1e-6 * n * float(xc @ xc)
    rng = np.random.default_rng(seed)
    out = np.empty(n_bootstrap)
    counts = np.empty((max(1, min(n_bootstrap, CACHED_CELLS // max(n, 1))), n))     # reused, in the cache if it fits
    for start in range(0, n_bootstrap, len(counts)):
        rows = min(len(counts), n_bootstrap - start)
        drawn = block_counts(rng, n, block, rows, counts)
        sx, su, sxx, sxu, sx_raw = (drawn @ stats).T
        spread = n * sxx - sx * sx                   # n² times the resample's variance of x
        varies = np.zeros(rows, dtype=bool)
        if with_intercept:                           # a clearly positive variance, else look at the values drawn
            varies = spread > least_spread
            for r in np.flatnonzero(~varies):
                values = x[drawn[r] > 0]
                varies[r] = values.max() > values.min()
        with np.errstate(divide="ignore", invalid="ignore"):
            out[start:start + rows] = np.where(varies, (n * sxu - sx * su) / spread, su / sx_raw)
    return out


def demand_drift(x: np.ndarray, u: np.ndarray, t: np.ndarray, with_intercept: bool) -> tuple[float, float, float]:
    """How the CPU per operation moved over the window: U fitted as background + (D + E·(t − t̄))·X, a demand that
    changes linearly in time; returns (demand at the window's first interval, at its last, t-statistic of E) in CPU
    seconds per operation. (nan, nan, 0) where the fit is not determined."""
    tc = t - t.mean()
    columns = [x, x * tc] + ([np.ones_like(x)] if with_intercept else [])
    design = np.column_stack(columns)
    coef, _, rank, _ = np.linalg.lstsq(design, u, rcond=None)
    dof = len(x) - design.shape[1]
    if rank < design.shape[1] or dof < 1:
        return math.nan, math.nan, 0.0
    resid = u - design @ coef
    sigma2 = float(resid @ resid) / dof
    cov = sigma2 * np.linalg.inv(design.T @ design)
    se = math.sqrt(max(float(cov[1, 1]), 0.0))
    d, e = float(coef[0]), float(coef[1])
    tstat = e / se if se > 0 else (math.inf if e else 0.0)
    return d + e * float(tc[0]), d + e * float(tc[-1]), tstat


@dataclass(frozen=True)
class DemandInterval:
    """The CPU per operation's interval (CPU seconds per operation, ``low`` to ``high``) and how it was drawn:
    ``block`` consecutive intervals a run, the percentiles' spread about the estimate widened by ``widening``."""

    low: float
    high: float
    block: int
    widening: float


def demand_interval(x: np.ndarray, u: np.ndarray, with_intercept: bool, background: float, d: float, level: float,
                    n_bootstrap: int, seed: int, block: int | None = None) -> DemandInterval:
    """The ``level`` interval of the CPU per operation ``d`` (fitted with ``background``): percentiles of the
    circular block bootstrap's positive draws, their distance from ``d`` widened by ``Dependence.widening``;
    ``block`` None chooses it from the data (``Dependence.block`` of the slope's terms), 1 is the ordinary
    bootstrap of independent intervals, unwidened."""
    found = dependence(slope_terms(x, u, with_intercept, background, d))
    chosen = found.block if block is None else int(block)
    draws = bootstrap_demands(x, u, with_intercept, int(n_bootstrap), seed, chosen)
    draws = draws[draws > 0]
    if not len(draws):
        return DemandInterval(d, d, chosen, 1.0)
    alpha = (1 - float(level)) / 2
    lo, hi = np.quantile(draws, [alpha, 1 - alpha])
    widen = found.widening(chosen, float(level))
    return DemandInterval(max(d + widen * (float(lo) - d), 0.0), d + widen * (float(hi) - d), chosen, widen)


def drift_reason(x, u, elapsed, with_intercept, demand, block) -> Reason | None:
    """A weak reason when the CPU per operation trends within the window by DRIFT_SHARE or more of it, clearly
    beyond noise (the trend's t-statistic DRIFT_T or more), with its figures at the window's two ends."""
    first, last, tstat = demand_drift(x, u, elapsed, with_intercept)
    change = (last - first) / demand if demand > 0 and math.isfinite(first) else 0.0
    if abs(change) < DRIFT_SHARE or abs(tstat) < DRIFT_T or not (first > 0 and last > 0):
        return None
    runs = (f"; consecutive intervals move together, so its interval comes from runs of {block} consecutive "
            "intervals resampled together" if block > 1 else "")
    return Reason("demand_drift", "weak", f"the CPU each operation costs {'rose' if change > 0 else 'fell'} from "
                  f"{number(first * 1000)} ms at the start of the window to {number(last * 1000)} ms at its end "
                  f"({change:+.0%} of the {number(demand * 1000)} ms measured): the capacity is the window's "
                  f"average, not a settled figure{runs}", change)
