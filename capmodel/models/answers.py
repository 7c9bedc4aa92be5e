"""The plain-English answer a report prints for a fit: where the curve saturates, how sure we are, what to watch.

Markdown text (bold for the figures a reader looks for), built only from the fitted object and, when given, the model
comparison it came from (capmodel.models.selection.ModelComparison).
"""
from __future__ import annotations

import math


def where_it_saturates(fit) -> str:
    """One clause: the peak, or the ceiling, or that throughput keeps growing."""
    peak = fit.peak_concurrency
    ceiling = getattr(fit, "ceiling", math.inf)
    if math.isfinite(peak):
        return (f"throughput peaks at about **{peak:.0f} concurrent clients** with **{fit.peak_throughput:,.0f} "
                "ops/s**; past that, more clients lower throughput")
    if math.isfinite(ceiling):
        return f"throughput has no peak but never passes the ceiling **λ/σ = {ceiling:,.0f} ops/s**"
    return "throughput keeps growing in proportion to concurrency over the measured range"


def describe_fit(fit, level: float = 0.95, source: str | None = None, comparison=None) -> str:
    """The answer for a fit (markdown): data, model and how it was chosen, parameters with intervals, R², where the
    curve saturates, the highest measured point and every warning (one bullet each)."""
    curve = fit.curve
    what = source or "this curve"
    head = (f"For {what} ({fit.n_points} points, concurrency {curve['concurrency'].min():g} to "
            f"{curve['concurrency'].max():g}), ")
    if comparison is None:
        verdict = f"the **{fit.model}** model was fitted"
    elif comparison.recommended == fit.model:
        verdict = f"the data support the **{fit.model}** model ({comparison.reason})"
    else:
        verdict = (f"the **{fit.model}** model was fitted as asked; the comparison recommends "
                   f"**{comparison.recommended}** ({comparison.reason})")
    ranking = ""
    if comparison is not None:
        others = ", ".join(f"{r.model} {r.delta:.1f}" for r in comparison.table.itertuples() if r.model != fit.model)
        if others:
            ranking = f" Δ{comparison.criterion.upper()} of the others from the best: {others}."
    intervals = fit.conf_int(level)
    if fit.df_resid > 0:
        params = ", ".join(f"{k} = {v:.4g} ({intervals.loc[k, 'low']:.3g} to {intervals.loc[k, 'high']:.3g})"
                           for k, v in fit.params.items())
        params = f"Its parameters with {level:.0%} intervals: {params}"
    else:
        params = "Its parameters (exactly determined, no intervals): " + ", ".join(
            f"{k} = {v:.4g}" for k, v in fit.params.items())
    best = curve.loc[curve["throughput"].idxmax()]
    warnings = "".join(f"\n- warning: {w}" for w in fit.warnings) or "\n- no warnings from the fit"
    return (f"{head}{verdict}.{ranking}\n{params}; R² = {fit.r2:.3f}.\n"
            f"Under this model {where_it_saturates(fit)}. The highest measured throughput was "
            f"{best['throughput']:,.0f} ops/s at {best['concurrency']:g} clients.\n{warnings}")
