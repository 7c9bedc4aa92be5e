"""One measured point that decides a fit's answer: an outlier the curve bent towards.

For each point, the model is refitted on the other points (leave one out). The point is an outlier when it lies more
than ``OUTLIER_FACTOR`` times above, or below, what the other points' curve gives at its concurrency (a 10x slip, a
step from another run, a failed step in the middle of a sweep); below only counts inside the measured range, since a
curve that falls after its last-but-one point is what a retrograde server does. It decides the answer when, without
it, the model's limit (the peak throughput, or the ceiling λ/σ) moves by more than ``DECISIVE_SHIFT`` (25%), or
appears or vanishes. Both together are a weak reason naming the point: the answer rests on one measurement the rest
contradict. A sweep of many points is not checked (``MAX_POINTS``): one point of 50 cannot bend a three-parameter
curve this far. Only the ``MAX_REFITS`` points furthest from the full fit, and more than ``SCREEN`` (20%) off it, are
refitted without (``_candidates``), and the point at the largest concurrency, so a smooth curve costs one refit.
"""
from __future__ import annotations

import math

import numpy as np

from capmodel.formatting import number
from capmodel.models.evidence import Reason
from capmodel.models.usl.verdict.limits import model_limit

OUTLIER_FACTOR = 2.0
DECISIVE_SHIFT = 0.25
MAX_POINTS = 50
SCREEN = 0.2
MAX_REFITS = 8


def _limit(fit) -> tuple[str, float]:
    return model_limit(fit)


def _without(fit, i: int):
    """The fit's model refitted without point ``i`` (None when the rest cannot be fitted)."""
    from capmodel.errors import CapmodelError
    from capmodel.models.usl.engine import _kkt_holds, fit_parameters, levenberg_marquardt

    keep = np.arange(fit.n_points) != i
    n, x = fit.concurrency[keep], fit.throughput[keep]
    if len(np.unique(n)) <= fit.n_params:
        return None
    w = None if fit.weights is None else np.asarray(fit.weights, dtype=float)[keep]
    sw = np.ones_like(x) if w is None else np.sqrt(w)
    with np.errstate(all="ignore"):
        try:   # from the full fit's estimates first (one point less moves them little); the engine's search if not
            p, ok = levenberg_marquardt(fit.spec, n, x, sw, fit.estimates, fit.lower, fit.upper)
            if ok and _kkt_holds(fit.spec, n, x, sw, p, fit.lower, fit.upper):
                at_bound = (p <= fit.lower) | (p >= fit.upper)
            else:
                p, at_bound = fit_parameters(fit.spec, n, x, w, fit.lower, fit.upper)
        except (CapmodelError, np.linalg.LinAlgError, ValueError, FloatingPointError, OverflowError):
            return None
    if not np.all(np.isfinite(p)):
        return None
    k = len(p)
    return fit.spec.results_class(fit.spec, fit.curve.iloc[np.flatnonzero(keep)], p, np.full((k, k), np.nan),
                                  weights=w, at_bound=at_bound, lower=fit.lower, upper=fit.upper,
                                  allow_superlinear=fit.allow_superlinear, concurrency=n, throughput=x)


def _shift(before: float, after: float) -> float:
    """How far the limit moved, as a factor >= 1 (inf when one side has none)."""
    if not (math.isfinite(before) and math.isfinite(after)):
        return 1.0 if math.isfinite(before) == math.isfinite(after) else math.inf
    if before <= 0 or after <= 0:
        return math.inf if before != after else 1.0
    return max(before / after, after / before)


def _candidates(fit) -> list[int]:
    """The points worth a refit: at most ``MAX_REFITS``, those furthest (as a factor) from the full fit's curve, and
    only when more than ``SCREEN`` off it. A point 2x off the others' curve stays well off the full fit's too, which
    bends towards it only partly; a curve within 20% of every point has no outlier to find, except at its largest
    concurrency, whose leverage lets the curve pass through it: that point is always refitted."""
    fitted = np.asarray(fit.fitted, dtype=float)
    with np.errstate(all="ignore"):
        off = np.abs(np.log(np.asarray(fit.throughput, dtype=float) / fitted))
    off = np.where(np.isnan(off), np.inf, off)     # a zero measured or fitted throughput: furthest of all
    order = [int(i) for i in np.argsort(-off) if off[i] > math.log(1 + SCREEN)][:MAX_REFITS]
    # the largest concurrency has the most leverage: the fit can pass through a 10x last point (20% off at most)
    last = int(np.argmax(np.where(fit.concurrency == fit.concurrency.max(), off, -np.inf)))
    return order + ([last] if last not in order else [])


def check_single_point(fit) -> Reason | None:
    """The point that contradicts the others' curve and decides the answer -> weak, named (None: none). Derived once
    per fit (its refits are kept on the fit, as a cached property would: a fit's data never change)."""
    cache = getattr(fit, "__dict__", None)
    if cache is None:
        return _single_point(fit)
    if "_single_point_reason" not in cache:
        cache["_single_point_reason"] = _single_point(fit)
    return cache["_single_point_reason"]


def _single_point(fit) -> Reason | None:
    if not 4 <= fit.n_points <= MAX_POINTS or fit.df_resid < 1:
        return None
    kind, limit = _limit(fit)
    n_all = fit.concurrency
    worst = None
    for i in _candidates(fit):
        rest = _without(fit, i)
        if rest is None:
            continue
        expected = float(rest.spec.evaluate(np.array([n_all[i]]), rest.estimates)[0])
        measured = float(fit.throughput[i])
        if not expected > 0:
            continue
        factor = measured / expected
        interior = n_all.min() < n_all[i] < n_all.max()
        if not (factor > OUTLIER_FACTOR or (interior and factor < 1 / OUTLIER_FACTOR)):
            continue
        rest_kind, rest_limit = _limit(rest)
        shift = _shift(limit, rest_limit)
        if shift <= 1 + DECISIVE_SHIFT:
            continue
        # of several flagged points, the one whose removal leaves the others fitting best is the outlier (removing
        # a good point next to it leaves the outlier's bend, and a worse fit)
        misfit = float(rest.rse) if math.isfinite(rest.rse) else math.inf
        if worst is None or misfit < worst[0]:
            worst = (misfit, i, factor, expected, rest_kind, rest_limit)
    if worst is None:
        return None
    _, i, factor, expected, rest_kind, rest_limit = worst
    without = (f"the {rest_kind} is {number(rest_limit)} ops/s" if math.isfinite(rest_limit)
               else "the curve has no peak or ceiling")
    with_it = f"{number(limit)} ops/s" if math.isfinite(limit) else "none"
    return Reason("single_point", "weak", f"the point at N = {number(float(n_all[i]), 6)} "
                  f"({number(float(fit.throughput[i]))} ops/s) is {number(factor, 3)}x what the other "
                  f"{fit.n_points - 1} points' curve gives there ({number(expected)} ops/s), and without it {without} "
                  f"(with it: {with_it}): one measurement decides the answer (a unit slip, an outlier, or a step from "
                  "another run?)",
                  float(factor))
