"""The adaptive search: which concurrency to measure next, from a USL fit of what has been measured so far.

Four geometrically spaced concurrencies of the requested list come first (with only two values: any integer between
them); then the USL is fitted to everything measured, the next step goes to the predicted peak (snapped to the list),
and the search stops once two successive peak estimates agree within ``tolerance`` (relative) and a measured
concurrency lies within ``tolerance`` of the peak, or no unmeasured concurrency is left next to it. If the fitted peak
lies beyond the largest requested concurrency, that one is measured and the search stops (no peak in range).
Without a retrograde term (kappa = 0) the knee of the plateau stands in for the peak.
"""
from __future__ import annotations

import math

import pandas as pd

from capmodel.errors import CapmodelError
from capmodel.formatting import number


def _snapper(lo: int, hi: int, candidates):
    """Round a concurrency to the allowed values: any integer in [lo, hi], or the nearest candidate (log scale)."""
    if not candidates:
        return lambda x: min(max(int(round(x)), lo), hi)
    allowed = sorted(set(candidates))
    return lambda x: min(allowed, key=lambda c: abs(math.log(c) - math.log(min(max(x, lo), hi))))


def initial_points(lo: int, hi: int, count: int = 4, candidates=None) -> list[int]:
    """``count`` geometrically spaced concurrencies from lo to hi (fewer if the range is small)."""
    if hi <= lo:
        return [lo]
    snap = _snapper(lo, hi, candidates)
    return sorted({snap(lo * (hi / lo) ** (i / (count - 1))) for i in range(count)})


def choose_next(steps: list[dict], lo: int, hi: int, tolerance: float, history: list[float], candidates=None):
    """The next concurrency to measure, or None; returns ``(next, reason, peak_estimate)``.

    ``candidates``: measure only these concurrencies (a grid), else any integer in [lo, hi]. ``history`` collects
    the successive peak estimates (it is appended to).
    """
    ok = [s for s in steps if s.get("status") == "ok"]
    measured = sorted({s["concurrency"] for s in ok})
    for point in initial_points(lo, hi, candidates=candidates):
        if point not in measured:
            return point, "initial points", None
    from capmodel.models.usl.fit import fit_usl

    snap = _snapper(lo, hi, candidates)
    curve = pd.DataFrame({"concurrency": [s["concurrency"] for s in ok], "throughput": [s["throughput"] for s in ok]})
    try:
        fit = fit_usl(curve)
        peak = float(fit.peak_concurrency)
    except CapmodelError as exc:
        refine = _between(ok, measured, snap, candidates)
        return refine, f"USL fit failed ({exc}); refining around the best point", None
    what = "peak"
    if not math.isfinite(peak) and fit.sigma > 0:
        # no retrograde (kappa = 0): throughput levels off at lambda/sigma; look for the knee instead, where
        # X(N) = (1 - tolerance) * lambda/sigma, i.e. N = (1 - tolerance)(1 - sigma) / (tolerance * sigma)
        peak = (1 - tolerance) * (1 - fit.sigma) / (tolerance * fit.sigma)
        what = f"knee of the plateau at {fit.ceiling:,.0f}/s"
    if not math.isfinite(peak) or peak >= hi:
        if hi in measured:
            return None, (f"no peak up to concurrency {hi}: throughput is still rising (fitted peak "
                          f"{number(peak)})"), peak
        return hi, "fitted peak beyond the range: measuring the largest concurrency", peak
    peak = max(peak, lo)
    history.append(peak)
    target = snap(peak)
    near = [c for c in measured if abs(c - peak) <= max(tolerance * peak, 0.5)]
    stable = len(history) >= 2 and abs(history[-1] - history[-2]) <= tolerance * history[-2]
    if near and stable:
        return None, f"{what} located at concurrency {peak:.1f} within {tolerance:.0%}", peak
    if target not in measured:
        return target, f"measuring at the fitted {what} {peak:.1f}", peak
    refine = _between(ok, measured, snap, candidates, around=target)
    if refine is None:
        return None, f"{what} at {peak:.1f}: no unmeasured concurrency left next to it", peak
    return refine, f"refining next to the fitted {what} {peak:.1f}", peak


def _between(ok, measured, snap, candidates, around=None):
    """An unmeasured concurrency between ``around`` (default: the best point) and a neighbour, widest gap first."""
    best = around if around is not None else max(ok, key=lambda s: s["throughput"])["concurrency"]
    i = measured.index(best) if best in measured else 0
    neighbours = [measured[j] for j in (i - 1, i + 1) if 0 <= j < len(measured)]
    for neighbour in sorted(neighbours, key=lambda c: -abs(math.log(c / best))):
        lo, hi = sorted((best, neighbour))
        inside = [c for c in (candidates or range(lo + 1, hi)) if lo < c < hi and c not in measured]
        if inside:
            middle = math.sqrt(lo * hi)
            return min(inside, key=lambda c: abs(math.log(c / middle)))
    return None
