"""The answer to "fit a curve": the fit of the model asked for (or the one the data support), the comparison it was
chosen from, its verdict and its figures with their intervals, in words (``describe``, ``summary``) and as JSON
(``to_json``): the one source of what ``capmodel fit`` prints. No NaN, None or inf reaches a sentence: a missing
figure is a word."""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from capmodel.formatting import Column, aside, integer, number, percent, plural, r_squared, table
from capmodel.jsonable import to_jsonable
from capmodel.models.usl.describe import limit_words
from capmodel.models.usl.labels import model_label
from capmodel.models.usl.ranking import ModelComparison
from capmodel.models.usl.results import ScalabilityFit
from capmodel.models.usl.selection import check_choice, fit_chosen
from capmodel.models.usl.verdict.assessment import answer_region, fit_verdict, supported_instead

PARAMETERS = {"sigma": "sigma (σ, contention)", "kappa": "kappa (κ, coherency)",
              "lambda": "lambda (λ, ops/s per client)"}
INTERVAL_METHOD = "profile likelihood over the answer's likelihood region (capmodel.models.usl.region)"


def fit_curve(curve, model: str = "auto", *, level: float = 0.95, weights=None,
              allow_superlinear: bool = False) -> CurveAnswer:
    """Fit a scalability model to a measured curve and grade the answer.

    Parameters
    ----------
    curve : pandas.DataFrame
        A curve table (``concurrency``, ``throughput``, ...), as ``capmodel.read_curve`` returns it.
    model : str
        One of ``capmodel.models.usl.selection.MODEL_CHOICES``: ``auto`` (the model the comparison recommends),
        ``usl``, ``amdahl``, ``linear`` or ``log_coherency``.
    level : float
        Confidence level of every interval, between 0 and 1.
    weights : str or None
        ``"replicates"`` weighs each point by the inverse variance of its concurrency level's replicates.
    allow_superlinear : bool
        Let sigma go below 0 (``usl`` only).

    Returns
    -------
    CurveAnswer

    Raises
    ------
    InputError
        A level outside (0, 1), an unknown model, or a curve no model can be fitted to.

    Examples
    --------
    >>> import capmodel
    >>> from capmodel.models.usl.answer import fit_curve
    >>> answer = fit_curve(capmodel.datasets.load_curve("usl_raytracer"), "usl")
    >>> answer.evidence.grade in ("sound", "weak", "unusable")
    True
    """
    check_request(model, level, allow_superlinear)
    fit, comparison = fit_chosen(curve, model, weights=weights, allow_superlinear=allow_superlinear)
    return CurveAnswer(fit, comparison, float(level))


def check_request(model: str, level: float = 0.95, allow_superlinear: bool = False) -> None:
    """The checks ``fit_curve`` makes before any fit: the model (``check_choice``) and the level, in (0, 1).
    ``InputError`` whose message starts with the parameter's name (``model:``, ``level:``, ``allow_superlinear:``)."""
    from capmodel.errors import InputError

    check_choice(model, allow_superlinear)
    if not (isinstance(level, (int, float)) and 0 < level < 1):
        raise InputError(f"level: expected a confidence level between 0 and 1, got {level!r}")


def _finite_or_none(value):
    return value if value is not None and math.isfinite(value) else None


@dataclass(frozen=True)
class CurveAnswer:
    """A fitted curve and how far it supports an answer; ``fit_curve`` builds it.

    Attributes
    ----------
    fit : ScalabilityFit
        The fit of the model asked for, or of the one the comparison recommends.
    comparison : ModelComparison or None
        The comparison the model was chosen from; None when one model was asked for.
    level : float
        The confidence level of every interval.
    evidence : Evidence
        The verdict: sound, weak or unusable, with its reasons.
    figures : dict
        ``peak_throughput``, ``peak_concurrency`` and ``ceiling``, each an ``Estimate`` with its interval.
    """

    fit: ScalabilityFit
    comparison: ModelComparison | None
    level: float = 0.95

    @cached_property
    def evidence(self):
        """The verdict (``fit_verdict``): sound, weak or unusable, with its reasons."""
        return fit_verdict(self.fit, self.comparison, level=self.level)

    @cached_property
    def figures(self) -> dict:
        """``peak_throughput``, ``peak_concurrency`` and ``ceiling`` as estimates with their intervals over the
        answer's likelihood region."""
        return self.fit.figure_intervals(self.level, region=answer_region(self.fit, self.comparison, self.level))

    @property
    def table(self):
        """The parameters with their standard errors and intervals (profile likelihood)."""
        return self.fit.parameter_table(self.level, method="profile")

    def describe(self) -> str:
        """The answer in one sentence: where the model peaks or levels off, with each figure's interval and the
        verdict, or (verdict unusable) what the data support instead."""
        words = self._answer_words()
        return words[0].upper() + words[1:]

    def _answer_words(self) -> str:
        if not self.evidence.usable:
            return ("no peak or ceiling is supported by these data; "
                    f"{supported_instead(self.fit, self.evidence).rstrip('.')}.")
        return (f"{limit_words(self.fit, self.figures, self.level)} ({model_label(self.fit.model)}; "
                f"evidence: {self.evidence.grade}).")

    def summary(self) -> str:
        """Everything ``capmodel fit`` prints: the answer, the ranking of the models (when compared), the
        parameters, the peak or ceiling (or what the data support), the fit's quality and the verdict's reasons
        (the fit's warnings among them)."""
        fit = self.fit
        n = np.asarray(fit.concurrency, dtype=np.float64)
        head = [f"{model_label(fit.model)} fit: {fit.formula}",
                f"points: {integer(fit.n_points)}, concurrency {number(n.min())} to {number(n.max())} clients"
                + (", weighted" if getattr(fit, "weights", None) is not None else "")]
        parts = [f"Answer: {self._answer_words()}"]
        if self.comparison is not None:
            parts.append(_comparison_text(self.comparison))
        parts.append("\n".join(head) + "\n\n" + self._parameter_text())
        body = self._limit_lines() if self.evidence.usable else [
            f"peak / ceiling: not supported by these data; {supported_instead(fit, self.evidence)}"]
        body.append(self._quality_line())
        body += self.evidence.lines()
        parts.append("\n".join(body))
        return "\n\n".join(parts)

    def to_json(self) -> dict:
        """The JSON contract of ``capmodel fit --json``. ``ci`` holds one interval per figure: the parameters' and
        the figures' (``peak_throughput``, ``peak_concurrency``, ``ceiling``) ranges over the answer's likelihood
        region (an end the data do not bound is null). ``supported`` says what the data support when the evidence
        is unusable; ``selection`` is the comparison, when there was one."""
        fit, level, evidence = self.fit, self.level, self.evidence
        ci = {name: [_finite_or_none(float(row.low)), _finite_or_none(float(row.high))]
              for name, row in fit.conf_int(level, method="profile").iterrows()}
        params = fit.params
        for fixed in ("sigma", "kappa"):
            ci.setdefault(fixed, [0.0, 0.0])   # held at 0 by the model (amdahl: kappa; linear: both)
        for name, figure in self.figures.items():
            ci[name] = [_finite_or_none(figure.low), _finite_or_none(figure.high)]
        record = {
            "model": fit.model,
            "sigma": params.get("sigma", 0.0),
            "kappa": params.get("kappa", 0.0),
            "lambda": params["lambda"],
            "peak_concurrency": _finite_or_none(fit.peak_concurrency),
            "recommended_concurrency": getattr(fit, "recommended_concurrency", None),
            "peak_throughput": _finite_or_none(fit.peak_throughput),
            "ceiling": _finite_or_none(self.figures["ceiling"].estimate),
            "r2": fit.r2,
            "rse": fit.rse,
            "aic": fit.aic,
            "n_points": fit.n_points,
            "level": level,
            "interval_method": INTERVAL_METHOD,
            "se": fit.se,
            "ci": ci,
            "warnings": list(fit.warnings),
            "evidence": evidence.to_json(),
            "supported": None if evidence.usable else supported_instead(fit, evidence),
        }
        if self.comparison is not None:
            record["selection"] = {"criterion": self.comparison.criterion, "reason": self.comparison.reason,
                                   "table": self.comparison.table.drop(columns=["params"])}
        return to_jsonable(record)

    # the parts of the summary

    def _parameter_text(self) -> str:
        frame = self.table.reset_index(names="parameter")
        frame["parameter"] = frame["parameter"].map(lambda k: PARAMETERS.get(k, k))
        lvl = percent(self.level)
        return table(frame, {
            "parameter": Column("parameter", "text"), "estimate": Column("estimate", digits=5),
            "se": Column("standard error", digits=4, missing="none"),
            "low": Column(f"{lvl} low", digits=5, missing="none"),
            "high": Column(f"{lvl} high", digits=5, missing="none", infinite="unbounded")},
            footnotes=['"none": too few points for an interval (as many points as parameters, or 3 for the USL '
                       'family)',
                       "intervals: each parameter's range over the likelihood region (capmodel.models.usl.region)"]
        ).text()

    def _limit_lines(self) -> list[str]:
        fit, level = self.fit, self.level
        n_star, x_star, ceiling = (self.figures[k] for k in ("peak_concurrency", "peak_throughput", "ceiling"))

        def span(e) -> str:
            if not math.isfinite(e.low):
                return ""
            return (f" ({percent(level)} interval {number(e.low)} to "
                    f"{number(e.high) if math.isfinite(e.high) else 'unbounded'})")

        lines = []
        if math.isfinite(fit.peak_concurrency):
            whole = getattr(fit, "recommended_concurrency", None)
            lines.append(f"peak concurrency: {number(fit.peak_concurrency)} clients{span(n_star)}"
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

    def _quality_line(self) -> str:
        fit = self.fit
        if fit.df_resid > 0 and math.isfinite(fit.rse):
            spread = (f"residual standard error {number(fit.rse)} ops/s on "
                      f"{plural(fit.df_resid, 'degree of freedom', 'degrees of freedom')}")
        else:
            spread = "no residual degrees of freedom (the curve passes through every point)"
        r2 = f"R² = {r_squared(fit.r2)}" if math.isfinite(fit.r2) else "R² undefined (the throughput does not vary)"
        criteria = "; ".join(f"{name} {value:,.1f}" for name, value in (("AIC", fit.aic), ("BIC", fit.bic))
                             if math.isfinite(value))
        return "; ".join(part for part in (r2, spread, criteria) if part)


def _comparison_text(comparison: ModelComparison) -> str:
    """The models ranked by the comparison's criterion, with the reason for the recommendation."""
    frame = comparison.table.drop(columns=["params"])
    frame["model"] = frame["model"].map(model_label)
    criterion = comparison.criterion_label
    ranked = table(frame, {
        "model": Column("model", "text"), "n_params": Column("parameters", "int"),
        "aicc": Column("AICc", decimals=1, infinite="undefined", missing="undefined"),
        "aic": Column("AIC", decimals=1), "bic": Column("BIC", decimals=1),
        "delta": Column(f"Δ{criterion}", decimals=1, missing="not ranked"), "r2": Column("R²", "r2"),
        "rmse": Column("RMSE (ops/s)"),
        "extrapolation_mape": Column("extrapolation error", "percent", digits=2, missing="not checked")},
        caption=f"Models ranked by {criterion}",
        footnotes=['"not ranked": exactly determined, or R² below 0 (worse than the mean) or undefined',
                   '"undefined": too few points for AICc with this many parameters'])
    return f"{ranked.text()}\n\nrecommended: {model_label(comparison.recommended)} {aside(comparison.reason)}"
