"""Report 02's result: one curve, every rival model, the chosen fit, its verdict, its answer and its tables.

The notebook draws its figures from this object and its headline states ``answer``, so the sentence and the figure
come from the same fit.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from capmodel.formatting import Column, interval, number, percent, r_squared, table, unnested
from capmodel.models.evidence import Evidence
from capmodel.models.usl.describe import limit_words
from capmodel.models.usl.labels import model_label
from capmodel.models.usl.ranking import criterion_label
from capmodel.models.usl.verdict.assessment import answer_region, assess_fit, supported_instead
from capmodel.models.usl.verdict.limits import best_measured

if TYPE_CHECKING:
    import pandas as pd

    from capmodel.models.usl.ranking import ModelComparison
    from capmodel.models.usl.results import ScalabilityFit

QUESTION = "Which scalability model does this curve support, and where does it saturate?"
PARAMETER_NAMES = {"sigma": "σ (contention)", "kappa": "κ (coherency)", "lambda": "λ (ops/s per client)"}
PARAMETER_UNITS = {"lambda": "ops/s per client"}


def model_name(model: str) -> str:
    """The model's name as readers write it (declared with the model: ``capmodel.models.usl.labels.model_label``)."""
    return model_label(model)


def fit_evidence(fit, comparison, level: float = 0.95) -> Evidence:
    """The verdict on the fit's answer: ``assess_fit`` (the models layer's, the one ``capmodel fit --json`` prints);
    the comparison's choice, when it chose the fit, is read into the figure's interval."""
    return assess_fit(fit, comparison, level=level)


def _measured(fit) -> str:
    """The best measured level as the verdict compares the fitted curve with it (its runs' mean: one lucky run of
    several is not a rate the server sustains)."""
    best, at = best_measured(fit)
    runs = int((fit.curve["concurrency"] == at).sum())
    return (f"the best measured rate was **{number(best)} ops/s** at {number(at)} clients"
            + (f", the mean of {runs} runs" if runs > 1 else ""))


def _chose(fit, comparison) -> str:
    which = model_name(fit.model)
    if comparison is not None and fit.model == comparison.recommended:
        return f"the data support the **{which}** model"
    if comparison is not None:
        return (f"the **{which}** model was fitted as asked (the comparison prefers "
                f"{model_name(comparison.recommended)})")
    return f"the **{which}** model was fitted"


def fit_short_answer(fit, comparison, evidence: Evidence, level: float, source: str) -> str:
    """The answer in one sentence (markdown): the model and where it peaks or levels off with the figures'
    intervals, or, when the verdict is unusable, what the data support instead."""
    if not evidence.usable:
        return (f"{source}: the data cannot locate where this server saturates; "
                f"{supported_instead(fit, evidence)}.")
    figures = fit.figure_intervals(level, region=answer_region(fit, comparison, level))
    return f"{source}: {_chose(fit, comparison)}; {limit_words(fit, figures, level, strong=lambda t: f'**{t}**')}."


def fit_answer(fit, comparison, evidence: Evidence, level: float, source: str) -> str:
    """The answer in one or two sentences (markdown) with its key numbers and intervals: ``fit_short_answer``, the best
    measured rate and the parameters."""
    if not evidence.usable:   # what the data support instead, in the words ``capmodel fit`` prints
        return (f"{source}: {_measured(fit)}. The data cannot locate where this server saturates; "
                f"{supported_instead(fit, evidence)}.")
    params = ""
    if not fit.region(level).empty:
        ci = fit.conf_int(level, method="profile")
        params = f" Parameters with {percent(level)} intervals: " + ", ".join(
            f"{PARAMETER_NAMES.get(k, k).split(' ')[0]} = "
            f"{interval(v, ci.loc[k, 'low'], ci.loc[k, 'high'], unit=PARAMETER_UNITS.get(k, ''))}"
            for k, v in fit.params.items()) + f"; R² = {r_squared(fit.r2)}."
    return f"{fit_short_answer(fit, comparison, evidence, level, source).removesuffix('.')}; {_measured(fit)}.{params}"


@dataclass
class FitReport:
    """Everything report 02 shows, derived from one curve and one comparison.

    Attributes
    ----------
    curve : pandas.DataFrame
        The curve table.
    comparison : ModelComparison
        The models compared.
    fit : ScalabilityFit
        The model chosen.
    source : str
        The curve's name, as the answer's subject.
    level : float
        The intervals' coverage.
    upto : float
        The largest concurrency drawn.
    inputs : dict
        The files read, for the provenance.
    unused : tuple of str
        Parameters the run did not use.
    """

    curve: pd.DataFrame
    comparison: ModelComparison
    fit: ScalabilityFit
    source: str
    level: float
    upto: float
    inputs: dict
    unused: tuple = ()

    question = QUESTION

    @property
    def chosen_label(self) -> str:
        return model_name(self.fit.model)

    @cached_property
    def evidence(self) -> Evidence:
        return fit_evidence(self.fit, self.comparison, self.level)

    @property
    def answer(self) -> str:
        """The answer under the decision, in short plain sentences (``headline.answer_problems``): how sure the
        limit is and the best rate measured; the parameters, their intervals and the comparison follow in
        ``details``."""
        from capmodel.models.usl.describe import limit_range_words
        from capmodel.models.usl.verdict.assessment import answer_region

        figures = self.fit.figure_intervals(self.level, region=answer_region(self.fit, self.comparison, self.level))
        parts = [limit_range_words(self.fit, figures, self.level)] if self.evidence.usable else []
        measured = _measured(self.fit)
        parts.append(f"{measured[0].upper()}{measured[1:]}.")
        if not self.evidence.usable:   # what the data support instead (its first clause; the next step is the
            instead = unnested(supported_instead(self.fit, self.evidence).split("; ")[0])   # verdict's)
            parts.append(f"{instead[0].upper()}{instead[1:]}.")
        return " ".join([*parts, "The fitted parameters, their intervals and the models compared follow below."])

    @property
    def details(self) -> str:
        """How the answer was worked out: the model, its parameters with intervals, the comparison."""
        return fit_answer(self.fit, self.comparison, self.evidence, self.level, self.source)

    @property
    def decision(self) -> str:
        """The decision in at most two short sentences, no brackets (``headline.decision_problems``): where
        throughput stops, and which model says so; the intervals and parameters follow in ``answer``."""
        from capmodel.models.usl.describe import limit_decision
        from capmodel.models.usl.verdict.assessment import answer_region

        figures = self.fit.figure_intervals(self.level, region=answer_region(self.fit, self.comparison, self.level))
        where = limit_decision(self.fit, figures, self.source, self.evidence.usable)
        if not self.evidence.usable or self.comparison is None:
            return where
        chosen, preferred = model_name(self.fit.model), model_name(self.comparison.recommended)
        if self.fit.model == self.comparison.recommended:
            return f"{where} The data support the **{chosen}** model."
        return f"{where} The comparison prefers {preferred} to the **{chosen}** model fitted as asked."

    @property
    def short_answer(self) -> str:
        """The answer in one sentence, for the index of reports."""
        return fit_short_answer(self.fit, self.comparison, self.evidence, self.level, self.source)

    def bands(self) -> dict:
        """The chosen model's confidence band, name -> (concurrency, low, high), over the likelihood region its
        answer's intervals are read over (``answer_region``: every compared family when the comparison chose it), so
        that the band drawn and the interval stated come from the same curves."""
        import numpy as np
        import pandas as pd

        from capmodel.plots.curves import concurrency_grid

        grid = concurrency_grid(self.curve, self.upto)
        region = answer_region(self.fit, self.comparison, self.level)
        low, high = region.band(grid)
        fitted = np.asarray(self.fit.predict(grid), dtype=float)
        finite = np.isfinite(low)
        band = pd.DataFrame({"concurrency": grid, "low": np.where(finite, np.minimum(low, fitted), low),
                             "high": np.where(finite, np.maximum(high, fitted), high)})
        band.attrs["label"] = (f"{percent(self.level)} band, every compared model" if len(region.families) > 1 else
                               f"{self.chosen_label} {percent(self.level)} band")
        return {self.chosen_label: band}

    @property
    def band_note(self) -> str:
        """Under the chosen model's figure heading: when the data cannot support the answer, that the curve and its band
        describe the measured steps only (empty otherwise)."""
        if self.evidence.usable:
            return ""
        unusable = "; ".join(r.message for r in self.evidence.reasons if r.grade == "unusable")
        return ("The verdict is unusable, so the curve and its band below describe the measured steps, not where the "
                f"server saturates. Why: {unusable}.")

    @property
    def band_caption(self) -> str:
        """Above the chosen model's figure: what its band is (the throughput's range over the curves the answer's
        intervals range over, every compared model's when the comparison chose it), after ``band_note``."""
        region = answer_region(self.fit, self.comparison, self.level)
        names = [model_name(f) for f in region.families]
        edges = "; Amdahl and linear are the USL's edges" if "usl" in region.families else ""
        if len(names) > 1:
            over = f"every curve of the compared models ({', '.join(names)}{edges}) "
        elif edges:
            over = "every curve of the USL's family (Amdahl and linear are its edges) "
        else:
            over = f"every {names[0] if names else self.chosen_label} curve "
        what = (f"The {percent(self.level)} band is the throughput's range over {over}that the data do not reject: "
                "the curves the answer's intervals range over. It bounds the mean curve, not a new measurement.")
        return f"{self.band_note} {what}" if self.band_note else what

    @property
    def has_latency(self) -> bool:
        return any(c.startswith("latency_") for c in self.curve.columns)

    def every_fit(self) -> dict:
        return {model_name(name): f for name, f in self.comparison.fits.items()}

    def comparison_table(self):
        frame = self.comparison.table.copy()
        frame["model"] = frame["model"].map(model_name)
        criterion = criterion_label(self.comparison.criterion)
        return table(frame, {
            "model": Column("model", "text"), "n_params": Column("parameters", "int"),
            "aicc": Column("AICc", decimals=1, infinite="undefined"), "aic": Column("AIC", decimals=1),
            "bic": Column("BIC", decimals=1),
            "delta": Column(f"Δ{criterion} from the best", missing="not ranked", decimals=1),
            "r2": Column("R²", "r2"), "rmse": Column("RMSE (ops/s)"),
            "extrapolation_mape": Column("extrapolation error", "percent", digits=2)},
            caption=f"Models ranked by {criterion}; recommended: {model_name(self.comparison.recommended)}",
            footnotes=['"not ranked": exactly determined, or R² below 0 (worse than the mean)',
                       '"undefined": too few points for AICc with this many parameters'],
            csv_name="model_comparison.csv")

    def parameter_table(self):
        """Each parameter with its interval over the likelihood region (the asymptotic standard error is left out:
        estimate ± 2 of it is a second interval, narrower than the one that covers, and the page states one)."""
        frame = self.fit.parameter_table(self.level, method="profile").reset_index(names="parameter")
        frame["parameter"] = frame["parameter"].map(lambda k: PARAMETER_NAMES.get(k, k))
        lvl = percent(self.level)
        return table(frame.drop(columns=["se"]), {
            "parameter": Column("parameter", "text"), "estimate": Column("estimate", per_row=True),
            "low": Column(f"{lvl} low", per_row=True),
            "high": Column(f"{lvl} high", infinite="unbounded", per_row=True)},
            caption=f"{self.chosen_label} parameters",
            footnotes=['"—": no interval (too few points)',
                       "intervals: each parameter's range over the likelihood region the answer's figures are read "
                       "over"],
            csv_name="parameters.csv")

    def curve_table(self):
        return table(self.curve, {
            "concurrency": Column("concurrency (clients)", "int"), "throughput": Column("throughput (ops/s)"),
            "latency_mean_ms": Column("mean latency (ms)"), "latency_p50_ms": Column("p50 latency (ms)"),
            "latency_p95_ms": Column("p95 latency (ms)"), "latency_p99_ms": Column("p99 latency (ms)"),
            "cpu_util": Column("CPU", "percent"), "errors": Column("errors", "int"),
            "client_bound": Column("client-bound", "text")},
            caption=f"{self.source}: the measured steps", csv_name="curve.csv")


def fit_report(dataset: str = "plgm_workload1", file: str = "", concurrency: str = "", throughput: str = "",
               model: str = "auto", level: float = 0.95, upto: float = 0) -> FitReport:
    """What report 02 shows: a curve read, the models compared, one chosen.

    Parameters
    ----------
    dataset : str, default "plgm_workload1"
        A bundled curve, when no ``file`` is given.
    file : str, default ""
        A curve file (``read_curve``).
    concurrency, throughput : str, default ""
        The file's columns, when their names are not recognised.
    model : str, default "auto"
        ``auto`` (the recommended model) or one of the compared models.
    level : float, default 0.95
        The intervals' coverage.
    upto : float, default 0
        The largest concurrency drawn (0: 1.5 × the largest measured).

    Returns
    -------
    FitReport

    Raises
    ------
    InputError
        The curve is refused, or ``model`` is not one of the compared models.
    """
    import capmodel
    from capmodel.errors import InputError

    if file:
        curve = capmodel.read_curve(file, concurrency=concurrency or None, throughput=throughput or None)
        # the sentence names the file; its full path and digest are in the provenance
        source, inputs = f"The curve in {Path(file).name}", {"file": file}
    else:
        curve = capmodel.datasets.load_curve(dataset)
        source, inputs = f"Dataset {dataset}", {"dataset": str(capmodel.datasets.path(dataset))}
    comparison = capmodel.compare_models(curve)
    try:
        fit = comparison.fit_for(model)
    except InputError as exc:
        raise InputError(f"parameter {exc}") from None
    top = float(upto or 1.5 * float(curve["concurrency"].max()))
    return FitReport(curve=curve, comparison=comparison, fit=fit, source=source, level=level,
                     upto=top, inputs=inputs,
                     unused=("dataset",) if file else ("concurrency", "throughput"))
