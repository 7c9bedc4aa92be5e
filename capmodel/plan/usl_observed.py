"""The verdict on a USL latency fit of a server's own telemetry (``capmodel.plan.production`` lets it answer only
where this verdict is sound, before the operational laws).

An observed window is an open system: the throughput is the load the clients offered, the concurrency N = X·R what
Little's law makes of it. A server whose CPU saturates shows its throughput levelling off while N grows; a USL
fitted to that plateau puts its "peak" where the data stop. So a sound verdict asks for more than a fit that
describes the points (R²) and a knee within reach (the 95th-percentile concurrency at least half the fitted peak's):
the window must show the throughput *falling* past the fitted peak (``no_decline``).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from capmodel.formatting import number, percent, r_squared
from capmodel.models.evidence import Evidence, Reason
from capmodel.models.usl.closed_form import usl_throughput

R2_SOUND, R2_USABLE = 0.8, 0.5
PAST_PEAK_UNUSABLE = 1.10      # the busiest intervals more than 10% above the fitted peak: the "peak" is not one
KNEE_REACHED = 0.5             # the 95th-percentile concurrency at least half the fitted peak concurrency
#: a fitted peak is shown by the data when this many intervals lie past it, their throughput falling with their
#: concurrency by this many standard errors
DECLINE_POINTS, DECLINE_T = 3, 2.0


def usl_verdict(fit, curve: pd.DataFrame) -> Evidence:
    """How far a USL latency fit of an observed curve can be trusted: R² (of latency for ``method="latency"``,
    of throughput on the points' N = X·R otherwise), whether the observed concurrency reached the knee, whether the
    busiest intervals ran past the fitted peak, and how much of the window was light load (N < 1)."""
    n = pd.to_numeric(curve["concurrency"], errors="coerce").to_numpy(float)
    x = pd.to_numeric(curve["throughput"], errors="coerce").to_numpy(float)
    if fit.method == "latency":
        r2, what = fit.r2, "latency"
    else:
        predicted = usl_throughput(n, fit.sigma, fit.kappa, fit.lambda_)
        total = float(((x - x.mean()) ** 2).sum())
        r2, what = (1.0 - float(((x - predicted) ** 2).sum()) / total if total > 0 else 1.0), "throughput"
    reasons = []
    if r2 < R2_SOUND:
        reasons.append(Reason("low_r2", "unusable" if r2 < R2_USABLE else "weak",
                              f"the USL explains little of the observed {what} (R² {r_squared(r2)})", r2))
    n95 = float(np.quantile(n, 0.95))
    peak_n, peak_x = fit.peak_concurrency, fit.peak_throughput
    if not math.isfinite(peak_n):
        reasons.append(Reason("no_peak", "unusable", "the fit has no peak (no coherency term): it cannot say where "
                              "the server saturates"))
    elif n95 < KNEE_REACHED * peak_n:
        reasons.append(Reason("knee_not_reached", "unusable", f"the server rarely ran more than {number(n95, 2)} "
                              f"operations at once (95th percentile); the fitted peak at {number(peak_n, 2)} "
                              f"operation{'' if number(peak_n, 2) == '1' else 's'} lies {number(peak_n / n95, 2)}× "
                              "beyond: it cannot be located from this window",
                              peak_n / n95))
    decline = _decline_reason(n, x, peak_n, peak_x) if math.isfinite(peak_n) and n95 >= KNEE_REACHED * peak_n else None
    if decline is not None:
        reasons.append(decline)
    observed = fit.observed_peak_throughput
    if math.isfinite(peak_x) and observed > peak_x:
        reasons.append(Reason("past_peak", "unusable" if observed > PAST_PEAK_UNUSABLE * peak_x else "weak",
                              f"the busiest intervals ran at {number(observed)} ops/s, above the fitted peak of "
                              f"{number(peak_x)} ops/s", observed / peak_x))
    light = float(np.mean(n < 1.0))
    if light >= 0.5:
        reasons.append(Reason("light_load", "weak", f"in {percent(light, 2)} of the intervals fewer than one "
                              "operation was in the server at a time", light))
    return Evidence.of(*reasons)


def _decline_reason(n: np.ndarray, x: np.ndarray, peak_n: float, peak_x: float) -> Reason | None:
    """Unusable unless the window shows the throughput falling past the fitted peak: at least ``DECLINE_POINTS``
    intervals beyond its concurrency, their throughput below the peak on average and falling as their concurrency
    grows (the slope of X on N among them negative by more than ``DECLINE_T`` standard errors). A server whose
    throughput only levels off (a CPU saturating: an M/M/c queue's throughput rises with its concurrency all the way)
    gives the USL a "peak" wherever its data stop: on synthetic servers driven up to 97% of their capacity, every
    such peak graded sound lay 7-32% below the truth with an interval that never held it
    (``benchmarks/calibrate_observe.py``)."""
    past = n > peak_n
    slope = math.nan
    if past.sum() >= DECLINE_POINTS and np.ptp(n[past]) > 0:
        xs, ns = x[past], n[past]
        slope, intercept = np.polyfit(ns, xs, 1)
        resid = xs - (slope * ns + intercept)
        spread = float(((ns - ns.mean()) ** 2).sum())
        se = math.sqrt(float(resid @ resid) / max(len(xs) - 2, 1) / spread)
        if xs.mean() < peak_x and slope < 0 and (se == 0 or slope / se < -DECLINE_T):
            return None
    shown = (f"its {int(past.sum())} intervals beyond the fitted peak's {number(peak_n, 2)} operations ran at "
             f"{number(float(x[past].mean()))} ops/s on average against the peak's {number(peak_x)}"
             + (", rising with their concurrency" if slope > 0 else "") if past.any() else
             f"no interval ran beyond the fitted peak's {number(peak_n, 2)} operations")
    return Reason("no_decline", "unusable", f"the window never showed its throughput falling past the fitted peak "
                  f"({shown}): where throughput only levels off, the USL's peak is where the data stop, not where "
                  "the server saturates", float(past.sum()))
