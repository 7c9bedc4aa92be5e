"""What a fitted model says the server can reach (its peak, or its ceiling λ/σ), and its check against the best
measured level: the data ran past it beyond the scatter (``check_past_peak``, unusable): the best level's mean
throughput (replicates averaged: one lucky run of several is noise, not a rate the server sustains) above the
model's limit by more than ``PAST_PEAK_TOLERANCE`` = 5% and by more than ``PAST_PEAK_RSE`` = 2 standard errors of
that mean (the residual standard error over the square root of its runs). Declared here, below the verdict
(capmodel.models.usl.verdict.assessment), so that the single-point check (capmodel.models.usl.verdict.influence) reads
the limit without an import cycle.
"""
from __future__ import annotations

import math

import numpy as np

from capmodel.formatting import number
from capmodel.models.evidence import Reason

PAST_PEAK_TOLERANCE = 0.05
PAST_PEAK_RSE = 2.0


def best_measured(fit) -> tuple[float, float]:
    """(throughput, concurrency) of the best measured level: its mean throughput over its runs."""
    best, at, _ = _best_level(fit)
    return best, at


def _best_level(fit) -> tuple[float, float, int]:
    """(mean throughput, concurrency, runs) of the level with the highest mean throughput."""
    n = np.asarray(fit.concurrency, dtype=float)
    x = np.asarray(fit.throughput, dtype=float)
    levels, inverse, counts = np.unique(n, return_inverse=True, return_counts=True)
    means = np.bincount(inverse, weights=x) / counts
    i = int(np.argmax(means))
    return float(means[i]), float(levels[i]), int(counts[i])


def model_limit(fit) -> tuple[str, float]:
    """What the model says the server can reach: ('peak', X*) or ('ceiling', λ/σ) or ('none', inf)."""
    if math.isfinite(fit.peak_concurrency):
        return "peak", float(fit.peak_throughput)
    ceiling = getattr(fit, "ceiling", math.inf)
    if math.isfinite(ceiling):
        return "ceiling", float(ceiling)
    return "none", math.inf


def check_past_peak(fit) -> Reason | None:
    """The best level's mean throughput above the model's peak or ceiling, beyond the scatter -> unusable."""
    kind, limit = model_limit(fit)
    best, at, runs = _best_level(fit)
    if not math.isfinite(limit):
        return None
    rse = fit.rse if math.isfinite(fit.rse) else 0.0
    if best <= limit * (1 + PAST_PEAK_TOLERANCE) or best <= limit + PAST_PEAK_RSE * rse / math.sqrt(runs):
        return None
    over = f" (mean of {runs} runs)" if runs > 1 else ""
    return Reason("past_peak", "unusable", f"the server measured {number(best)} ops/s{over} (at N = {number(at)}), "
                  f"{best / limit - 1:.0%} above the model's {kind} of {number(limit)} ops/s: the data ran past what "
                  "the model says is possible", float(best / limit))
