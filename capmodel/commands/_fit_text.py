"""The text ``capmodel fit`` prints, through the one formatting layer (capmodel.formatting): the ranking of the
models (with --model auto), the parameters with their intervals, the peak or ceiling when the verdict allows it
(else what the data support), the fit's quality and the verdict (whose reasons include
every warning of the fit). No NaN, None or inf reaches it: a
missing figure is a word."""
from __future__ import annotations

import math

import numpy as np

from capmodel.formatting import Column, aside, integer, number, percent, plural, r_squared, table

PARAMETERS = {"sigma": "sigma (σ, contention)", "kappa": "kappa (κ, coherency)",
              "lambda": "lambda (λ, ops/s per client)"}


def comparison_text(comparison) -> str:
    """The models ranked by the comparison's criterion, with the reason for the recommendation."""
    from capmodel.models.usl.labels import model_label

    frame = comparison.table.drop(columns=["params"])
    frame["model"] = frame["model"].map(model_label)
    criterion = comparison.criterion_label
    ranked = table(frame, {
        "model": Column("model", "text"), "n_params": Column("parameters", "int"),
        "aicc": Column("AICc", decimals=1, infinite="undefined", missing="undefined"),
        "aic": Column("AIC", decimals=1), "bic": Column("BIC", decimals=1),
        "delta": Column(f"Δ{criterion}", decimals=1, missing="not ranked"), "r2": Column("R²", "r2"),
        "rmse": Column("RMSE (ops/s)"),
        "extrapolation_mape": Column("extrapolation error", "percent", digits=2,
                                                              missing="not checked")},
        caption=f"Models ranked by {criterion}",
        footnotes=['"not ranked": exactly determined, or R² below 0 (worse than the mean) or undefined',
                   '"undefined": too few points for AICc with this many parameters'])
    return f"{ranked.text()}\n\nrecommended: {model_label(comparison.recommended)} {aside(comparison.reason)}"


def parameter_text(fit, level: float) -> str:
    frame = fit.parameter_table(level, method="profile").reset_index(names="parameter")
    frame["parameter"] = frame["parameter"].map(lambda k: PARAMETERS.get(k, k))
    lvl = percent(level)
    return table(frame, {
        "parameter": Column("parameter", "text"), "estimate": Column("estimate", digits=5),
        "se": Column("standard error", digits=4, missing="none"),
        "low": Column(f"{lvl} low", digits=5, missing="none"), "high": Column(f"{lvl} high", digits=5,
                                                                                missing="none",
                                                                                infinite="unbounded")},
        footnotes=['"none": too few points for an interval (as many points as parameters, or 3 for the USL family)',
                   "intervals: each parameter's range over the likelihood region (capmodel.models.usl.region)"]).text()


def limit_lines(fit, figures: dict, level: float) -> list[str]:
    """Each figure of the limit with its interval (printed only when the verdict is usable)."""
    lines = []
    peak = fit.peak_concurrency
    n_star, x_star, ceiling = figures["peak_concurrency"], figures["peak_throughput"], figures["ceiling"]

    def span(e) -> str:
        if not math.isfinite(e.low):
            return ""
        return (f" ({percent(level)} interval {number(e.low)} to "
                f"{number(e.high) if math.isfinite(e.high) else 'unbounded'})")

    if math.isfinite(peak):
        whole = getattr(fit, "recommended_concurrency", None)
        lines.append(f"peak concurrency: {number(peak)} clients{span(n_star)}"
                     + (f"; recommended {integer(whole)} (floor or ceil, whichever gives the higher throughput)"
                        if whole is not None else ""))
        lines.append(f"peak throughput: {number(fit.peak_throughput)} ops/s{span(x_star)}")
    else:
        lines.append("peak concurrency: none (kappa = 0: throughput keeps rising towards the ceiling)")
        if not math.isfinite(fit.peak_throughput):
            lines.append("peak throughput: unbounded (sigma = kappa = 0)")
    lines.append(f"ceiling lambda/sigma: {number(ceiling.estimate)} ops/s{span(ceiling)}"
                 if math.isfinite(ceiling.estimate) else "ceiling lambda/sigma: none (sigma = 0)")
    return lines


def quality_line(fit) -> str:
    if fit.df_resid > 0 and math.isfinite(fit.rse):
        spread = (f"residual standard error {number(fit.rse)} ops/s on "
                  f"{plural(fit.df_resid, 'degree of freedom', 'degrees of freedom')}")
    else:
        spread = "no residual degrees of freedom (the curve passes through every point)"
    r2 = f"R² = {r_squared(fit.r2)}" if math.isfinite(fit.r2) else "R² undefined (the throughput does not vary)"
    criteria = "; ".join(f"{name} {value:,.1f}" for name, value in (("AIC", fit.aic), ("BIC", fit.bic))
                         if math.isfinite(value))
    return "; ".join(part for part in (r2, spread, criteria) if part)


def answer_line(fit, evidence, figures: dict, level: float) -> str:
    """The answer in one line, above everything that supports it: where the model peaks or levels off with each
    figure's interval and its verdict, or (verdict unusable) what the data support instead."""
    from capmodel.models.usl.describe import limit_words
    from capmodel.models.usl.labels import model_label
    from capmodel.models.usl.verdict.assessment import supported_instead

    if not evidence.usable:
        return f"Answer: no peak or ceiling is supported by these data; {supported_instead(fit, evidence).rstrip('.')}."
    return f"Answer: {limit_words(fit, figures, level)} ({model_label(fit.model)}; evidence: {evidence.grade})."


def fit_text(fit, level: float, evidence, comparison=None) -> str:
    """Everything ``capmodel fit`` prints without --json."""
    from capmodel.models.usl.labels import model_label
    from capmodel.models.usl.verdict.assessment import answer_region, supported_instead

    figures = fit.figure_intervals(level, region=answer_region(fit, comparison, level))
    n = np.asarray(fit.concurrency, dtype=float)
    head = [f"{model_label(fit.model)} fit: {fit.formula}",
            f"points: {integer(fit.n_points)}, concurrency {number(n.min())} to {number(n.max())} clients"
            + (", weighted" if getattr(fit, "weights", None) is not None else "")]
    parts = [answer_line(fit, evidence, figures, level)]
    if comparison is not None:
        parts.append(comparison_text(comparison))
    parts.append("\n".join(head) + "\n\n" + parameter_text(fit, level))
    body = limit_lines(fit, figures, level) if evidence.usable else [
        f"peak / ceiling: not supported by these data; {supported_instead(fit, evidence)}"]
    body.append(quality_line(fit))
    body += evidence.lines()     # the fit's warnings are among its reasons (models.assessment.warning_reasons)
    parts.append("\n".join(body))
    return "\n\n".join(parts)
