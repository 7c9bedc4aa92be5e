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
from capmodel.models.closed_form import concurrency_for_throughput
from capmodel.plan.catalog import QUALITATIVE_SUFFIX
from capmodel.formatting import number


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


def p95_to_mean_ratio(curve: pd.DataFrame) -> tuple[float, str]:
    """Median of measured p95 / Little's-law response time N/X over the points; 1 (mean latency) without p95."""
    if "latency_p95_ms" not in curve.columns:
        return 1.0, "mean response time N/X (no p95 measured)"
    usable = curve[(curve["throughput"] > 0) & curve["latency_p95_ms"].notna()]
    if usable.empty:
        return 1.0, "mean response time N/X (no p95 measured)"
    ratios = (usable["latency_p95_ms"] / 1000.0) / (usable["concurrency"] / usable["throughput"])
    return float(np.median(ratios)), f"p95 = {number(float(np.median(ratios)))} x N/X (median over measured points)"


def p95_at_throughput_ms(fit, throughput: float) -> float:
    """p95 latency (ms) a fitted curve predicts when it carries ``throughput``."""
    n = concurrency_for_throughput(throughput, fit.sigma, fit.kappa, fit.lambda_)
    if not math.isfinite(n):
        raise PlanError(f"the baseline's fitted curve never reaches {throughput:,.0f} ops/s (peak "
                        f"{fit.peak_throughput:,.0f}); check the baseline throughput")
    ratio, _ = p95_to_mean_ratio(fit.curve)
    return ratio * 1000.0 * n / throughput
