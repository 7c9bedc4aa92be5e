"""What a fitted model says the server can reach (its peak, or its ceiling λ/σ), and its check against the best
measured point: the data ran past it beyond the scatter (``check_past_peak``, unusable): the best measured
throughput above the model's limit by more than ``PAST_PEAK_TOLERANCE`` = 5% and more than ``PAST_PEAK_RSE`` = 2
residual standard errors. Declared here, below the verdict (capmodel.models.assessment), so that the single-point
check (capmodel.models.influence) reads the limit without an import cycle.
"""
from __future__ import annotations

import math

import numpy as np

from capmodel.formatting import number
from capmodel.models.evidence import Reason

PAST_PEAK_TOLERANCE = 0.05
PAST_PEAK_RSE = 2.0


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
