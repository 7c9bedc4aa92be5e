"""The figures a fitted curve answers — the most the server delivers (its peak, or its ceiling without one), the
peak's concurrency, the ceiling λ/σ, and the parameters themselves — each with its interval: its range over the
likelihood region (capmodel.models.usl.region), so that every page, the CLI's text and ``--json`` state the same one.
"""
from __future__ import annotations

import math

import pandas as pd

from capmodel.formatting import number, percent
from capmodel.models.estimate import Estimate


def figure_intervals(fit, level: float = 0.95, region=None) -> dict:
    """A fit's figures with their intervals over its likelihood region.

    An end the data do not bound is infinite; NaN without an interval. An interval that misses its own estimate (a
    model the comparison chose although the region rejects it) is widened to reach it; the verdict says so
    (``model_outside_region``).

    Parameters
    ----------
    fit : ScalabilityFit
        A fitted curve.
    level : float, default 0.95
        The intervals' coverage.
    region : Region, optional
        Default ``fit.region(level)``.

    Returns
    -------
    dict
        Name to ``Estimate``: ``peak_throughput`` (the most the server delivers: the peak, or the ceiling without
        one), ``peak_concurrency`` and ``ceiling`` (λ/σ).

    Examples
    --------
    >>> import capmodel
    >>> fit = capmodel.fit_usl(capmodel.datasets.load_curve("usl_specsdm91"))
    >>> str(fit.figure_intervals()["peak_throughput"])
    '1,884 (1,635-2,452)'
    """
    region = fit.region(level) if region is None else region
    limit = region.limit_interval()
    ceiling = region.ceiling_interval() if math.isfinite(fit.peak_concurrency) else limit
    figures = {"peak_throughput": (fit.peak_throughput, limit),
               "peak_concurrency": (fit.peak_concurrency, region.peak_concurrency_interval()),
               "ceiling": (fit.lambda_ / fit.sigma if fit.sigma > 0 else math.inf, ceiling)}
    out = {}
    for name, (value, (low, high)) in figures.items():
        value = float(value)
        if not math.isnan(low):     # an interval: it holds its own estimate
            low, high = min(low, value), max(high, value)
        out[name] = Estimate(value, low, high)
    return out


def profile_intervals(fit, level: float = 0.95) -> pd.DataFrame:
    """Each parameter's range over the fit's likelihood region, one row per parameter (``low``, ``high``), widened
    to hold the estimate; NaN without a region."""
    region = fit.region(level)
    ranges = {"sigma": region.interval(lambda s, k, lam, f: s), "kappa": region.interval(lambda s, k, lam, f: k),
              "lambda": region.interval(lambda s, k, lam, f: lam)}
    low, high = [], []
    for name, value in zip(fit.names, fit.estimates):
        lo, hi = ranges[name]
        low.append(min(lo, value) if not math.isnan(lo) else lo)
        high.append(max(hi, value) if not math.isnan(lo) else hi)
    return pd.DataFrame({"low": low, "high": high}, index=list(fit.names))


def _span(figure: Estimate, level: float) -> str:
    if math.isnan(figure.low):
        return ""
    high = number(figure.high, 5) if math.isfinite(figure.high) else "unbounded"
    return f" ({percent(level)} interval {number(figure.low, 5)} to {high})"


def figure_lines(fit, level: float = 0.95) -> list[str]:
    """The peak (or ceiling) lines of ``fit.summary()``, each figure with its interval."""
    figures = fit.figure_intervals(level)
    lines = []
    if math.isfinite(fit.peak_concurrency):
        whole = getattr(fit, "recommended_concurrency", None)
        lines.append(f"peak concurrency: {number(fit.peak_concurrency, 4)} (real-valued)"
                     f"{_span(figures['peak_concurrency'], level)}"
                     + (f"; recommended {whole} (floor or ceil, whichever gives the higher throughput)"
                        if whole is not None else ""))
    else:
        lines.append("peak concurrency: none (kappa = 0: throughput keeps rising towards the ceiling)")
    lines.append(f"peak throughput: {number(fit.peak_throughput, 5)}{_span(figures['peak_throughput'], level)}"
                 if math.isfinite(fit.peak_throughput) else "peak throughput: unbounded (sigma = kappa = 0)")
    ceiling = figures["ceiling"]
    lines.append(f"ceiling lambda/sigma: {number(ceiling.estimate, 5)}{_span(ceiling, level)}"
                 if math.isfinite(ceiling.estimate) else "ceiling lambda/sigma: none (sigma = 0)")
    return lines
