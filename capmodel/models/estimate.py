"""A figure with its interval: the one ``Estimate`` every layer hands on (the planner's ranges, the operational laws'
bootstrap, the production answer), and how it reads.

An interval is carried through a monotone formula by evaluating the formula at the ends (``capmodel.models.runway``
does so for the runway); which end becomes which is the formula's business, so the caller builds the result.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from capmodel.formatting import shows_width


@dataclass(frozen=True)
class Estimate:
    """A figure with its interval, at the level of whatever made it; ``str()`` shows it as ``format_estimate`` does.

    Parameters
    ----------
    estimate : float
        The figure.
    low, high : float
        Its interval's ends (infinite where the data do not bound it).

    Examples
    --------
    >>> from capmodel.models.estimate import Estimate
    >>> str(Estimate(1.5, 1.2, 1.9))
    '1.50 (1.20-1.90)'
    """

    estimate: float
    low: float
    high: float

    @property
    def value(self) -> float:
        """The figure itself (``estimate``; the name ``capmodel.plan.Estimate`` gave it)."""
        return self.estimate

    def __str__(self) -> str:
        return format_estimate(self.estimate, self.low, self.high)

    def to_json(self) -> dict:
        """``{"estimate", "low", "high"}``, a missing or infinite figure as None (JSON null)."""
        return {k: (float(v) if math.isfinite(v) else None) for k, v in
                (("estimate", self.estimate), ("low", self.low), ("high", self.high))}


def _fmt(x: float, digits: int) -> str:
    if x is None or not math.isfinite(x):
        return "n/a"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    return f"{x:,.{digits}f}"


def format_estimate(value: float, low: float | None = None, high: float | None = None, digits: int = 2) -> str:
    """A figure and its interval as text: ``62,000 (55,000-68,000)``.

    Parameters
    ----------
    value : float
        The figure.
    low, high : float, optional
        The interval; left out when it has no width at the digits shown.
    digits : int, default 2
        Decimals below 100 (figures of 100 or more are shown whole).

    Returns
    -------
    str
        ``n/a`` for a missing or infinite figure.

    Examples
    --------
    >>> from capmodel.models.estimate import format_estimate
    >>> format_estimate(62000, 55000, 68000)
    '62,000 (55,000-68,000)'
    >>> format_estimate(0.25)
    '0.25'
    """
    text = _fmt(value, digits)
    if low is None or high is None or not shows_width(low, high, lambda x: _fmt(x, digits)):
        return text
    return f"{text} ({_fmt(low, digits)}-{_fmt(high, digits)})"
