"""What a fitted model says the server can reach (its peak, or its ceiling λ/σ), and the two checks of that limit
against the best measured point: the data ran past it (``check_past_peak``, unusable) or came nowhere near it
(``check_ceiling_reach``). The thresholds are explained where the verdict gathers every check,
``capmodel.models.assessment``; they are declared here, once.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from capmodel.formatting import number
from capmodel.models.evidence import Reason

PAST_PEAK_TOLERANCE = 0.05
PAST_PEAK_RSE = 2.0
CEILING_REACH_WEAK = 0.5
CEILING_REACH_UNUSABLE = 0.1


def best_measured(fit) -> tuple[float, float]:
    """(throughput, concurrency) of the best measured point."""
    i = int(np.argmax(fit.throughput))
    return float(fit.throughput[i]), float(fit.concurrency[i])


def model_limit(fit) -> tuple[str, float]:
    """What the model says the server can reach: ('peak', X*) or ('ceiling', λ/σ) or ('none', inf)."""
    if math.isfinite(fit.peak_concurrency):
        return "peak", float(fit.peak_throughput)
    ceiling = getattr(fit, "ceiling", math.inf)
    if math.isfinite(ceiling):
        return "ceiling", float(ceiling)
    return "none", math.inf


def check_past_peak(fit) -> Reason | None:
    """The best measured throughput above the model's peak or ceiling, beyond the scatter -> unusable."""
    kind, limit = model_limit(fit)
    best, at = best_measured(fit)
    if not math.isfinite(limit):
        return None
    rse = fit.rse if math.isfinite(fit.rse) else 0.0
    if best <= limit * (1 + PAST_PEAK_TOLERANCE) or best <= limit + PAST_PEAK_RSE * rse:
        return None
    return Reason("past_peak", "unusable", f"the server measured {number(best)} ops/s (at N = {number(at)}), "
                  f"{best / limit - 1:.0%} above the model's {kind} of {number(limit)} ops/s: the data ran past what "
                  "the model says is possible", float(best / limit))


def check_ceiling_reach(fit) -> Reason | None:
    """A ceiling the measured curve came nowhere near: best below half of it -> weak, below a tenth -> unusable."""
    kind, limit = model_limit(fit)
    best, _ = best_measured(fit)
    if kind != "ceiling" or best >= CEILING_REACH_WEAK * limit:
        return None
    share = best / limit
    grade = "unusable" if share < CEILING_REACH_UNUSABLE else "weak"
    shown = f"{share:.0%}" if share >= 0.01 else f"{number(share * 100, 2)}%"   # 63,000 of 30.7 million: not "0%"
    return Reason("ceiling_reach", grade, f"the best measured throughput ({number(best)} ops/s) is {shown} "
                  f"of the ceiling λ/σ = {number(limit)} ops/s: the curve has not levelled off enough to place it",
                  float(share))


def at_most_weak(reason: Reason | None) -> Reason | None:
    """The reason graded weak at worst (a limit's check where the answer is not the limit itself)."""
    return reason if reason is None or reason.grade != "unusable" else dataclasses.replace(reason, grade="weak")
