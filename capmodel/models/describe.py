"""A fitted scalability model in words: what was measured, which model the data support, its parameters with
intervals, where it peaks or saturates, and the verdict, whose reasons include the fit's warnings, each said once
(markdown, for the reports' answers)."""
from __future__ import annotations

import math

from capmodel.formatting import aside, interval, number, percent, r_squared
from capmodel.models.labels import model_label


def _where(fit) -> str:
    peak = getattr(fit, "peak_concurrency", math.inf)
    ceiling = getattr(fit, "ceiling", math.inf)
    if math.isfinite(peak):
        return (f"throughput peaks at about **{number(round(peak))} concurrent clients** with "
                f"**{number(fit.peak_throughput)} ops/s**; past that, more clients lower throughput")
    if math.isfinite(ceiling):
        return f"throughput has no peak but never passes the ceiling **λ/σ = {number(ceiling)} ops/s**"
    return "throughput keeps growing in proportion to concurrency over the measured range"


def _verdict(fit, comparison) -> str:
    """Which model was fitted and whether the data support it, as one sentence (no full stop)."""
    used = model_label(fit.model)
    if comparison is None:
        return f"The **{used}** model was fitted; too few points to rank it against its rivals"
    others = ", ".join(f"{model_label(r.model)} {number(r.delta, missing='not ranked')}"
                       for r in comparison.table.itertuples() if r.model != fit.model)
    if fit.model == comparison.recommended:
        text = f"The data support the **{used}** model {aside(comparison.reason)}"
    else:
        text = (f"The **{used}** model was fitted as asked; the comparison recommends "
                f"**{model_label(comparison.recommended)}** {aside(comparison.reason)}")
    return f"{text}. Δ{comparison.criterion_label} of the others from the best: {others or 'none'}"


def _r2(r2: float) -> str:
    """R² for a sentence (``formatting.r_squared``: 0.9996 is not 1.000), words when undefined."""
    if not math.isfinite(r2):
        return "R² undefined (the throughput does not vary)"
    return f"R² = {r_squared(r2)}"


def answer_sentence(fit, evidence) -> str:
    """Where the fit peaks or levels off, or, when the verdict is unusable, what the data support instead."""
    from capmodel.models.assessment import supported_instead

    if evidence.usable:
        return f"Under this model {_where(fit)}."
    return ("The data cannot support a peak or ceiling for this server: "
            f"{supported_instead(fit, evidence)}.")


def describe_fit(fit, comparison=None, level: float = 0.95, source: str = "The curve") -> str:
    """The fit in words (markdown). ``comparison`` (from ``compare_models``) adds which model the data support;
    ``source`` names the curve (the sentence's subject: "The sweep of ycsb-c", "Dataset plgm_workload1"); without
    ``comparison`` the rivals' ranking on the same data stands in, so the verdict (``fit_verdict``, the one
    ``capmodel fit`` and ``fit.evidence`` give) follows the answer; when it is unusable the answer says what the data support
    instead of a peak or ceiling."""
    from capmodel.models.assessment import fit_verdict
    from capmodel.models.ranking import rivals_ranking

    if comparison is None:
        comparison = rivals_ranking(fit)
    evidence = fit_verdict(fit, comparison, level=level)
    curve = fit.curve
    if getattr(fit, "df_resid", 1) > 0:
        intervals = fit.parameter_table(level)
        params = f"Its parameters with {percent(level)} intervals: " + ", ".join(
            f"{k} = {interval(v, intervals.loc[k, 'low'], intervals.loc[k, 'high'], digits=4)}"
            for k, v in fit.params.items())
    else:
        params = "Its parameters (exactly determined, no intervals): " + ", ".join(
            f"{k} = {number(v, 4)}" for k, v in fit.params.items())
    best = curve.loc[curve["throughput"].idxmax()]
    return (f"{source} measured {number(len(curve))} steps from {number(curve['concurrency'].min())} to "
            f"{number(curve['concurrency'].max())} clients; the best measured rate was {number(best['throughput'])} "
            f"ops/s (at {number(best['concurrency'])} clients). {_verdict(fit, comparison)}.\n"
            f"{params}; {_r2(fit.r2)}. {answer_sentence(fit, evidence)}\n\n{evidence.describe()}\n")
