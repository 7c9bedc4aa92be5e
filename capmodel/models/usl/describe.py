"""A fitted scalability model in words: what was measured, which model the data support, its parameters with
intervals, where it peaks or saturates, and the verdict, whose reasons include the fit's warnings, each said once
(markdown, for the reports' answers)."""
from __future__ import annotations

import math

from capmodel.formatting import aside, interval, number, percent, r_squared, shows_width
from capmodel.models.usl.labels import model_label


def _span(low: float, high: float, level: float, unit: str = "") -> str:
    """'95% interval 12,200 to 14,900 ops/s', '95% interval: 47 or more', or '' when there is none to show."""
    unit = f" {unit}" if unit else ""
    if not math.isfinite(low):
        return ""
    if not math.isfinite(high):
        return f"{percent(level)} interval: {number(low)}{unit} or more"
    if not shows_width(low, high):
        return ""
    return f"{percent(level)} interval {number(low)} to {number(high)}{unit}"


def limit_words(fit, figures: dict, level: float = 0.95, strong=lambda text: text, intervals: bool = True) -> str:
    """Where the fitted curve peaks or levels off, each figure with its interval (``figures``: the fit's
    ``figure_intervals`` over the answer's region): the one sentence ``capmodel fit``, ``describe()`` and report 02
    print (no full stop). ``strong`` marks the figures (markdown bold on pages); ``intervals=False`` leaves the
    intervals out (a headline's decision, which the answer below it qualifies)."""
    peak, n_star = figures["peak_throughput"], figures["peak_concurrency"]
    x_span = _span(peak.low, peak.high, level, "ops/s") if intervals else ""
    x_words = strong(f"{number(peak.estimate)} ops/s") + (f" ({x_span})" if x_span else "")
    if math.isfinite(n_star.estimate):
        n_span = _span(n_star.low, n_star.high, level) if intervals else ""
        n_words = strong(f"{number(n_star.estimate)} clients") + (f" ({n_span})" if n_span else "")
        return f"throughput peaks at {x_words} at about {n_words}; past that, more clients lower it"
    if math.isfinite(peak.estimate):
        return f"throughput has no peak but levels off towards a ceiling of {x_words}"
    return "throughput grows in proportion to the clients over the measured range, with no peak or ceiling in sight"


def _range(low: float, high: float, unit: str = "") -> str:
    """'between 11,851 and 22,071 ops/s', 'at least 42.5', or '' when there is no range to show."""
    unit = f" {unit}" if unit else ""
    if not math.isfinite(low):
        return ""
    if not math.isfinite(high):
        return f"at least {number(low)}{unit}"
    return f"between {number(low)} and {number(high)}{unit}" if shows_width(low, high) else ""


def limit_range_words(fit, figures: dict, level: float = 0.95) -> str:
    """The intervals of ``limit_words``' figures in plain words, for the answer under a headline's decision (one
    sentence, no brackets): 'With 95% confidence the peak lies between 11,851 and 22,071 ops/s, reached with
    at least 42.5 clients.'; '' when there is none to show."""
    peak, n_star = figures["peak_throughput"], figures["peak_concurrency"]
    x_range = _range(peak.low, peak.high, "ops/s") if math.isfinite(peak.estimate) else ""
    if not x_range:
        return ""
    kind = "peak" if math.isfinite(n_star.estimate) else "ceiling"
    n_range = _range(n_star.low, n_star.high) if kind == "peak" else ""
    where = f", reached with {n_range} clients" if n_range else ""
    return f"With {percent(level)} confidence the {kind} lies {x_range}{where}."


def limit_decision(fit, figures: dict, subject: str, usable: bool) -> str:
    """A headline's decision on where ``subject``'s throughput stops (markdown, one sentence, no brackets): the
    ``limit_words`` without intervals, or, when the verdict is unusable, that the data cannot locate it."""
    if not usable:
        return f"{subject}: the data cannot locate where throughput stops growing."
    return f"{subject}: {limit_words(fit, figures, strong=lambda t: f'**{t}**', intervals=False)}."


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


def answer_sentence(fit, evidence, figures: dict, level: float = 0.95) -> str:
    """Where the fit peaks or levels off, or, when the verdict is unusable, what the data support instead."""
    from capmodel.models.usl.verdict.assessment import supported_instead

    if evidence.usable:
        return f"Under this model {limit_words(fit, figures, level, strong=lambda t: f'**{t}**')}."
    return ("The data cannot support a peak or ceiling for this server: "
            f"{supported_instead(fit, evidence)}.")


def describe_fit(fit, comparison=None, level: float = 0.95, source: str = "The curve") -> str:
    """A fit in words (markdown): what was measured, which model the data support, the parameters and the answer.

    Parameters
    ----------
    fit : ScalabilityFit
        A fitted curve.
    comparison : ModelComparison, optional
        From ``compare_models``: adds which model the data support. Without it the rivals' ranking on the same data
        stands in, so the verdict (``fit_verdict``, the one ``capmodel fit`` and ``fit.evidence`` give) follows the
        answer.
    level : float, default 0.95
        The intervals' coverage.
    source : str, default "The curve"
        The sentence's subject ("The sweep of ycsb-c", "Dataset plgm_workload1").

    Returns
    -------
    str
        Where the curve peaks or levels off, with intervals; when the verdict is unusable, what the data support
        instead of a peak or ceiling; then the verdict.
    """
    from capmodel.models.usl.ranking import rivals_ranking
    from capmodel.models.usl.verdict.assessment import answer_region, fit_verdict

    if comparison is None:
        comparison = rivals_ranking(fit)
    evidence = fit_verdict(fit, comparison, level=level)
    curve = fit.curve
    region = answer_region(fit, comparison, level)
    if not region.empty:
        intervals = fit.parameter_table(level, method="profile")
        params = f"Its parameters with {percent(level)} intervals: " + ", ".join(
            f"{k} = {interval(v, intervals.loc[k, 'low'], intervals.loc[k, 'high'], digits=4)}"
            for k, v in fit.params.items())
    else:
        params = "Its parameters (too few points for an interval): " + ", ".join(
            f"{k} = {number(v, 4)}" for k, v in fit.params.items())
    figures = fit.figure_intervals(level, region=region)
    best = curve.loc[curve["throughput"].idxmax()]
    return (f"{source} measured {number(len(curve))} steps from {number(curve['concurrency'].min())} to "
            f"{number(curve['concurrency'].max())} clients; the best measured rate was {number(best['throughput'])} "
            f"ops/s (at {number(best['concurrency'])} clients). {_verdict(fit, comparison)}.\n"
            f"{params}; {_r2(fit.r2)}. {answer_sentence(fit, evidence, figures, level)}\n\n{evidence.describe()}\n")
