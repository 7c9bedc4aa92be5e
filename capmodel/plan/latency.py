"""Latency objectives: absolute (p95 <= T ms) or relative (p95 no more than a fraction above the baseline VM's).

A measured point passes or fails at the load it was measured at, from a numeric ``latency_p95_ms`` or, when only words
are known (benchANT), from ``<op>_latency_vs_baseline`` columns: ``higher`` ("significantly worse") fails any relative
target; ``baseline``, ``similar`` and ``lower`` pass. A fitted curve answers at every load: its Little's-law response
time N/X(N), scaled by the p95/mean ratio seen in the measured points, is held under the target.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from capmodel.errors import PlanError
from capmodel.formatting import number
from capmodel.models.usl.closed_form import concurrency_for_throughput
from capmodel.plan.catalog import QUALITATIVE_SUFFIX

#: the study's words for a latency against the baseline's, as a sentence reads them
WORDS_READ = {"lower": "lower than the baseline", "similar": "similar to the baseline", "baseline": "as the baseline"}


def qualitative_columns(table: pd.DataFrame) -> list[str]:
    return [c for c in table.columns if str(c).endswith(QUALITATIVE_SUFFIX)]


def point_meets_latency(row: pd.Series, objectives, baseline_p95_ms: float | None) -> tuple[bool | None, str]:
    """Whether a measured point meets the latency objective at its measured load (None: not known), and why."""
    p95 = row.get("latency_p95_ms", math.nan)
    p95 = math.nan if p95 is None else float(p95)
    if objectives.latency_p95_ms is not None:
        if math.isnan(p95):
            return None, "no p95 latency measured"
        return p95 <= objectives.latency_p95_ms, (f"p95 {number(p95, 6)} ms vs target "
                                                  f"{number(objectives.latency_p95_ms, 6)} ms")
    if objectives.latency_increase is None:
        return None, ""
    if not math.isnan(p95) and baseline_p95_ms is not None and math.isfinite(baseline_p95_ms):
        limit = baseline_p95_ms * (1 + objectives.latency_increase)
        return p95 <= limit, (f"p95 {number(p95, 6)} ms vs {number(limit, 6)} ms (baseline + "
                              f"{objectives.latency_increase:.0%})")
    words = {c[: -len(QUALITATIVE_SUFFIX)]: row.get(c, "") for c in qualitative_columns(row.to_frame().T)}
    words = {op: w for op, w in words.items() if isinstance(w, str) and w}
    if not words:
        return None, "no latency relative to the baseline known"
    worse = sorted(op for op, w in words.items() if w == "higher")
    if worse:
        return False, f"{', '.join(worse)} latency reported worse than the baseline"
    if all(w == "baseline" for w in words.values()):
        return True, "the baseline VM itself"
    # a pass says what it rests on, as a failure does (the table's "how it was judged" was empty beside "yes")
    by_word = {w: " and ".join(sorted(op for op, x in words.items() if x == w)) for w in sorted(set(words.values()))}
    return True, "; ".join(f"{ops} latency reported {WORDS_READ.get(w, w)}" for w, ops in by_word.items())


#: measured p95 over the Little's-law mean response time N/X a closed-loop curve can show. Without think time N/X is
#: the mean latency the clients saw, and a p95 sits at about 1-5x a mean (3x for exponential service). Below
#: ``P95_RATIO_LOW`` the p95 is a tenth of the mean: the clients waited between operations (think time, a throttled
#: target, which the USL's N/X does not model), or the column holds seconds, not ms (a 1,000x slip gives ~0.003).
#: Above ``P95_RATIO_HIGH`` the column holds microseconds, or the concurrency counts fewer clients than ran (threads
#: of one host of several).
P95_RATIO_LOW = 0.1
P95_RATIO_HIGH = 20.0


def p95_ratio_reason(ratio: float, basis: str):
    """A ``Reason`` (weak) when the measured p95 / N/X ratio is implausible for a closed-loop curve, else None."""
    from capmodel.models.evidence import Reason

    if not basis.startswith("p95") or not math.isfinite(ratio) or P95_RATIO_LOW <= ratio <= P95_RATIO_HIGH:
        return None
    if ratio < P95_RATIO_LOW:
        why = ("the clients waited between operations (think time, a throttled target: the N/X the target is held "
               "against then is not the latency), or latency_p95_ms holds seconds, not milliseconds")
    else:
        why = ("latency_p95_ms holds microseconds, not milliseconds, or the concurrency column counts fewer "
               "clients than ran (one host's threads of several)")
    return Reason("latency_scale", "weak", f"the measured p95 is {number(ratio, 3)}x the mean response time N/X "
                  f"(expected {number(P95_RATIO_LOW)} to {number(P95_RATIO_HIGH, 3)}x for clients without think "
                  f"time): {why}", float(ratio))


def p95_to_mean_ratio(curve: pd.DataFrame) -> tuple[float, str]:
    """Median of measured p95 / Little's-law response time N/X over the points; 1 (mean latency) without p95."""
    if "latency_p95_ms" not in curve.columns:
        return 1.0, "mean response time N/X (no p95 measured)"
    usable = curve[(curve["throughput"] > 0) & curve["latency_p95_ms"].notna()]
    if usable.empty:
        return 1.0, "mean response time N/X (no p95 measured)"
    ratios = (usable["latency_p95_ms"] / 1000.0) / (usable["concurrency"] / usable["throughput"])
    return float(np.median(ratios)), f"p95 = {number(float(np.median(ratios)))} x N/X (median over measured points)"


def median_interval(values, level: float) -> tuple[float, float]:
    """The distribution-free interval of a median: the order statistics k and m + 1 - k of the m sorted values, k
    the largest with P(Binomial(m, 1/2) < k) <= (1 - level) / 2 (the ends themselves with too few values)."""
    v = np.sort(np.asarray(values, dtype=float))
    m = len(v)
    if m == 0:
        return math.nan, math.nan
    tail, cdf, k = (1.0 - level) / 2.0, 0.0, 0
    while k < m:
        cdf += math.exp(math.lgamma(m + 1) - math.lgamma(k + 1) - math.lgamma(m - k + 1) - m * math.log(2))
        if cdf > tail:
            break
        k += 1
    k = max(k, 1)
    return float(v[k - 1]), float(v[m - k])


def p95_ratio_interval(curve: pd.DataFrame, level: float) -> tuple[float, float]:
    """The ``level`` interval of ``p95_to_mean_ratio``'s median (``median_interval``); its figure twice without a
    p95 (the mean itself: no ratio measured)."""
    ratio, _ = p95_to_mean_ratio(curve)
    if "latency_p95_ms" not in curve.columns:
        return ratio, ratio
    usable = curve[(curve["throughput"] > 0) & curve["latency_p95_ms"].notna()]
    if usable.empty:
        return ratio, ratio
    ratios = (usable["latency_p95_ms"] / 1000.0) / (usable["concurrency"] / usable["throughput"])
    low, high = median_interval(ratios.to_numpy(dtype=float), level)
    return min(low, ratio), max(high, ratio)


def p95_at_throughput_ms(fit, throughput: float) -> float:
    """p95 latency (ms) a fitted curve predicts when it carries ``throughput``."""
    n = concurrency_for_throughput(throughput, fit.sigma, fit.kappa, fit.lambda_)
    if not math.isfinite(n):
        raise PlanError(f"the baseline's fitted curve never reaches {throughput:,.0f} ops/s (peak "
                        f"{fit.peak_throughput:,.0f}); check the baseline throughput")
    ratio, _ = p95_to_mean_ratio(fit.curve)
    return ratio * 1000.0 * n / throughput
