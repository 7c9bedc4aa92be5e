"""Intervals on planning figures: how to read one off a set of draws (the figure with its interval is
``capmodel.models.estimate.Estimate``).

Two sources of spread reach the planner: ranges stated in the inputs (benchANT's "6k-7k operations per second") and
bootstrap samples of a fitted curve. A range is propagated by evaluating the plan at its ends (every figure here is
monotone in each input, so the ends bound the result); bootstrap samples give percentile intervals.
"""
from __future__ import annotations

import math

import numpy as np


def percentile_interval(draws, level: float = 0.95) -> tuple[float, float]:
    """Equal-tailed percentile interval of the finite draws (NaN, NaN when there are none)."""
    values = np.asarray(draws, dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return math.nan, math.nan
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(values, [tail, 1.0 - tail])
    return float(low), float(high)


def finite_range(values) -> tuple[float, float]:
    """Smallest and largest of the finite values (NaN, NaN when there are none)."""
    arr = np.asarray(values, dtype=float)
    arr = arr[np.isfinite(arr)]
    if arr.size == 0:
        return math.nan, math.nan
    return float(arr.min()), float(arr.max())

