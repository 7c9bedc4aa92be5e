"""Intervals on planning figures: a value with a low and a high end, and how to read one off a set of draws.

Two sources of spread reach the planner: ranges stated in the inputs (benchANT's "6k-7k operations per second") and
bootstrap samples of a fitted curve. A range is propagated by evaluating the plan at its ends (every figure here is
monotone in each input, so the ends bound the result); bootstrap samples give percentile intervals.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Estimate:
    """A figure with an interval: ``value`` (``low``-``high``)."""

    value: float
    low: float
    high: float

    def __str__(self) -> str:
        return format_estimate(self.value, self.low, self.high)


def _fmt(x: float, digits: int) -> str:
    if x is None or not math.isfinite(x):
        return "n/a"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    return f"{x:,.{digits}f}"


def format_estimate(value: float, low: float | None = None, high: float | None = None, digits: int = 2) -> str:
    """'62,000 (55,000-68,000)'; just the value when the interval is missing or collapses onto it."""
    text = _fmt(value, digits)
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return text
    if _fmt(low, digits) == _fmt(high, digits) == text:
        return text
    return f"{text} ({_fmt(low, digits)}-{_fmt(high, digits)})"


def percentile_interval(draws, level: float = 0.95) -> tuple[float, float]:
    """Equal-tailed percentile interval of the finite draws (NaN, NaN when there are none)."""
    values = np.asarray(draws, dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return math.nan, math.nan
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(values, [tail, 1.0 - tail])
    return float(low), float(high)


def span(values) -> tuple[float, float]:
    """Smallest and largest of the finite values (NaN, NaN when there are none)."""
    arr = np.asarray(values, dtype=float)
    arr = arr[np.isfinite(arr)]
    if arr.size == 0:
        return math.nan, math.nan
    return float(arr.min()), float(arr.max())

