"""Report 06's result: a sweep (run now, or read from an existing ``capmodel bench --out`` folder), its fits, the plan
read off the fit, the verdict and the answer; the notebook's figures draw the same curve and fit."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from capmodel.errors import InputError, PlanError
from capmodel.formatting import Column, aside, integer, number, percent, plural, shows_width, table
from capmodel.models.evidence import Evidence, Reason
from capmodel.models.usl.describe import limit_words
from capmodel.models.usl.labels import model_label
from capmodel.models.usl.verdict.assessment import answer_region, assess_fit, supported_instead
from capmodel.models.usl.verdict.limits import best_measured, model_limit

if TYPE_CHECKING:
    import pandas as pd

    from capmodel.models.usl.ranking import ModelComparison
    from capmodel.models.usl.usl_fit import USLFit
    from capmodel.plan.capacity import Objectives

QUESTION = "What does this MongoDB deliver, and how many users can it carry?"
BENCHANT_OPS_PER_USER = 0.26   # the benchANT study: 6,500 ops/s for 25,000 users


def read_bench_folder(folder: str | Path) -> tuple[pd.DataFrame, list, dict]:
    """The curve, steps and run record of a ``capmodel bench --out`` folder.

    Parameters
    ----------
    folder : str or path-like
        The folder.

    Returns
    -------
    tuple of (pandas.DataFrame, list of dict, dict)
        The curve (from ``steps.jsonl``, else ``curve.csv``), the steps and the run record ({} without one).

    Raises
    ------
    InputError
        Not a folder, neither ``steps.jsonl`` nor ``curve.csv``, an unreadable ``run.json``, or fewer than 3
        successful steps.
    """
    from capmodel.bench.sweep.files import CURVE_FILE, RUN_FILE, STEPS_FILE, curve_table, read_steps
    from capmodel.data.readers import read_curve

    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"parameter bench_dir: {folder} is not a folder (give the --out folder of capmodel bench)")
    steps = read_steps(folder / STEPS_FILE)
    if steps:
        curve = curve_table(steps)
    elif (folder / CURVE_FILE).is_file():
        curve = read_curve(folder / CURVE_FILE)
    else:
        raise InputError(f"parameter bench_dir: {folder} has neither {STEPS_FILE} nor {CURVE_FILE}: not a bench folder")
    run = {}
    if (folder / RUN_FILE).is_file():
        try:
            run = json.loads((folder / RUN_FILE).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            raise InputError(f"parameter bench_dir: {folder / RUN_FILE} is not a readable run record") from None
    if len(curve) < 3:
        raise InputError(f"parameter bench_dir: {folder} holds {plural(len(curve), 'successful step')}; a fit needs 3")
    return curve, steps, run if isinstance(run, dict) else {}


def read_slo_folder(folder: str | Path) -> dict:
    """The answer of a ``capmodel bench --slo`` folder: its ``slo.json`` (``SloAnswer.to_json()``).

    Raises
    ------
    InputError
        Not a folder, or no readable ``slo.json`` in it.
    """
    from capmodel.bench.sweep.files import SLO_FILE

    path = Path(folder) / SLO_FILE
    if not Path(folder).is_dir():
        raise InputError(f"parameter slo_dir: {folder} is not a folder (give the --out folder of capmodel bench --slo)")
    try:
        answer = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise InputError(f"parameter slo_dir: {path} is missing or unreadable (run capmodel bench --slo with that "
                         "--out)") from None
    if not isinstance(answer, dict) or not {"max_rate", "interval", "objectives", "evidence"} <= set(answer):
        raise InputError(f"parameter slo_dir: {path} is not the answer of an SLO search")
    return answer


@dataclass
class BenchReport:
    """Everything report 06 shows.

    Attributes
    ----------
    curve : pandas.DataFrame
        The measured curve.
    steps : list of dict
        The step records.
    run : dict
        The run record.
    comparison : ModelComparison
        The models compared on the curve.
    fit : USLFit
        The USL fitted to it.
    server_name, workload : str
        Their names in the answer.
    objectives : Objectives
        The peak fraction and the latency target.
    latency_target_ms, ops_per_user, level : float
        The report's parameters.
    inputs : dict
        What was read.
    slo : dict or None
        An SLO search's answer (``SloAnswer.to_json()``: ``capmodel bench --slo``'s ``slo.json``), shown beside the
        fit's prediction of the same figure.
    """
    curve: pd.DataFrame
    steps: list
    run: dict
    comparison: ModelComparison
    fit: USLFit
    server_name: str
    workload: str
    objectives: Objectives
    latency_target_ms: float
    ops_per_user: float
    level: float
    inputs: dict
    slo: dict | None = None

    question = QUESTION

    @property
    def mongodb_version(self) -> str | None:
        return (self.run.get("versions") or {}).get("mongodb")

    @property
    def borrowed(self) -> dict:
        if self.ops_per_user == BENCHANT_OPS_PER_USER:
            return {f"ops per user {number(self.ops_per_user)}": "the benchANT study: 6,500 ops/s for 25,000 users"}
        return {}

    @cached_property
    def plan(self):
        """The capacity read off the USL fit (``capacity_from_fit``, its verdict included), or the ``PlanError``
        saying why the curve gives none."""
        from capmodel.plan import capacity_from_fit

        try:
            return capacity_from_fit(self.fit, self.objectives, self.level, comparison=self.comparison)
        except PlanError as exc:
            return exc

    @cached_property
    def evidence(self) -> Evidence:
        """The planned capacity's verdict (``capacity_from_fit``'s: what the curve says against any answer, the fit's
        verdict on its peak when the plan is read off it, the plan's own interval and the latency target's fate);
        without a plan, the fit's own verdict (``assess_fit``)."""
        plan = self.plan
        if isinstance(plan, PlanError):
            return assess_fit(self.fit, self.comparison, level=self.level)
        return plan.evidence

    @cached_property
    def figures(self) -> dict:
        """The fit's peak (or ceiling) and its concurrency, each with its interval over the region the verdict reads
        them over (``answer_region``): the one interval the page states for each."""
        return self.fit.figure_intervals(self.level, region=answer_region(self.fit, self.comparison, self.level))

    @property
    def limit_kind(self) -> str:
        """What the plan's share of the fitted curve is a share of: "peak", or "ceiling" when the curve has none."""
        kind, _ = model_limit(self.fit)
        return "ceiling" if kind == "ceiling" else "peak"

    @property
    def below_best(self) -> Reason | None:
        """The verdict's reason when the plan is read off a fitted peak or ceiling below the best measured rate."""
        return next((r for r in self.evidence.reasons if r.code == "below_best"), None)

    def _best(self) -> tuple[float, float]:
        """(throughput, concurrency) of the best measured level (its runs' mean), the figure the verdict compares the
        fitted curve with."""
        return best_measured(self.fit)

    def objectives_words(self) -> str:
        """The plan's objectives in words, the share of the fitted curve named as what it is a share of."""
        parts = []
        if self.objectives.peak_fraction is not None:
            parts.append(f"throughput at most {percent(self.objectives.peak_fraction)} of the fitted "
                         f"{self.limit_kind}")
        if self.objectives.latency_p95_ms is not None:
            parts.append(f"p95 at most {number(self.objectives.latency_p95_ms, 6)} ms")
        return ", ".join(parts) or self.objectives.describe()

    def _usable_words(self, strong=lambda text: text) -> str:
        plan = self.plan
        span = (f" ({percent(self.level)} interval {number(plan.usable_throughput_low)} to "
                f"{number(plan.usable_throughput_high)} ops/s)"
                if shows_width(plan.usable_throughput_low, plan.usable_throughput_high) else "")
        return f"{strong(f'{number(plan.usable_throughput)} ops/s')}{span}"

    @property
    def answer(self) -> str:
        """The answer under the decision, in short plain sentences (``headline.answer_problems``): the best rate
        measured, how sure the plan is, what binds it; the fit and its figures follow in ``details``."""
        best, at = self._best()
        parts = [f"The sweep measured at best {number(best)} ops/s, at {integer(at)} clients."]
        plan = self.plan
        if not isinstance(plan, PlanError) and self.evidence.usable:
            if shows_width(plan.usable_throughput_low, plan.usable_throughput_high):
                parts.append(f"With {percent(self.level)} confidence the planned throughput lies between "
                             f"{number(plan.usable_throughput_low)} and {number(plan.usable_throughput_high)} ops/s.")
            parts.append(f"The objective that holds it there: {plan.limit_words(peak=self.limit_kind)}.")
        return " ".join([*parts, "The fitted curve and why the plan stands where it does follow below."])

    @property
    def details(self) -> str:
        """How the answer was worked out: the fitted USL, where the plan is read off it, the binding limit."""
        best, at = self._best()
        text = (f"The sweep of {self.workload} against {self.server_name} measured at best "
                f"**{number(best)} ops/s** (at {integer(at)} clients).")
        plan = self.plan
        if isinstance(plan, PlanError):
            return text + f" No plan from this curve: {plan}."
        if not self.evidence.usable:   # what the data support instead, in the words ``capmodel fit`` prints
            return text + f" The data cannot support a planned capacity; {supported_instead(self.fit, self.evidence)}."
        bold = lambda words: f"**{words}**"   # noqa: E731 - the figures in bold, as every answer shows them
        text += f" Under the fitted USL, {limit_words(self.fit, self.figures, self.level, strong=bold)}."
        below = self.below_best
        if below is not None and below.value is not None:
            text += (f" The plan is read off that fitted {self.limit_kind}, {below.value - 1:.0%} below the best "
                     "measured rate (within the measurements' scatter: the evidence below says why).")
        text += (f" Under {self.objectives_words()}, it sustains {self._usable_words(bold)} at about "
                 f"{number(plan.operating_concurrency, 2)} clients (the objective that binds: "
                 f"{plan.limit_words(peak=self.limit_kind)})")
        if self.ops_per_user:
            text += (f", which at {number(self.ops_per_user)} ops/s per user is "
                     f"**{integer(plan.usable_throughput / self.ops_per_user)} users**")
        return text + "."

    @property
    def decision(self) -> str:
        """The decision in at most two short sentences, no brackets (``headline.decision_problems``): the throughput
        to plan under the objectives, or that the data support none; the fit, the intervals and the binding limit
        follow in ``answer``."""
        best, _ = self._best()
        plan = self.plan
        if isinstance(plan, PlanError) or not self.evidence.usable:
            return (f"**No capacity to plan**: the sweep measured at best {number(best)} ops/s, and its data support "
                    "no planned capacity.")
        users = (f", **{integer(plan.usable_throughput / self.ops_per_user)} users** at {number(self.ops_per_user)} "
                 "ops/s each" if self.ops_per_user else "")
        keeps = " and ".join(self.objectives_words().rsplit(", ", 1))
        return f"Plan **{number(plan.usable_throughput)} ops/s** on {self.server_name}{users}. That keeps {keeps}."

    @property
    def short_answer(self) -> str:
        """The answer in one sentence, for the index of reports: the best measured rate and the plan."""
        best, at = self._best()
        text = f"Measured at best **{number(best)} ops/s** (at {integer(at)} clients)"
        plan = self.plan
        if isinstance(plan, PlanError) or not self.evidence.usable:
            return text + "; the data support no planned capacity."
        text += f"; planned at {self._usable_words(lambda t: f'**{t}**')}"
        below = self.below_best
        if below is not None and below.value is not None:
            text += f", from a fitted {self.limit_kind} {below.value - 1:.0%} below that best"
        if self.ops_per_user:
            text += f", **{integer(plan.usable_throughput / self.ops_per_user)} users**"
        return text + "."

    @property
    def fit_note(self) -> str:
        """What the fit section is for: the plan below uses the USL only when there is a plan below."""
        if self.plan_table() is None:
            return "Every rival model is fitted and ranked; no plan is drawn from them (the Plan section says why)."
        text = ("Every rival model is fitted and ranked; the plan below uses the USL, whose peak and latency answers "
                "it needs")
        chosen = self.comparison.recommended if self.comparison is not None else "usl"
        if chosen in ("amdahl", "linear"):
            text += (f". The comparison recommends {model_label(chosen)}, an edge of the USL's family "
                     f"({'κ = 0' if chosen == 'amdahl' else 'σ = κ = 0'}): the band and the intervals below range "
                     "over that family, its curves included wherever the data do not reject them")
        elif chosen != "usl":
            text += (f". The comparison recommends {model_label(chosen)}, which the plan does not read; the band and "
                     "the intervals below range over the USL's family")
        return text + "."

    @property
    def no_plan(self) -> str:
        """Why the plan's table is not shown (the curve gives no plan, or the data cannot support it)."""
        if isinstance(self.plan, PlanError):
            return f"No plan from this curve: {self.plan}."
        unusable = [r.message for r in self.evidence.reasons if r.grade == "unusable"]
        # the reasons carry their own parentheses: after a colon, not inside another pair
        return f"No plan is shown, because the data cannot support one: {'; '.join(unusable)}." if unusable else ""

    def plan_table(self):
        """The plan's figures, each with its one interval where it has one; None when there is no plan or the data
        cannot support one (``no_plan`` says why)."""
        plan = self.plan
        if isinstance(plan, PlanError) or not self.evidence.usable:
            return None
        import pandas as pd

        kind, figures = self.limit_kind, self.figures
        rows = [("usable throughput (the plan)", plan.usable_throughput, "ops/s",
                 (plan.usable_throughput_low, plan.usable_throughput_high)),
                ("binding limit", plan.limit_words(peak=kind), "", None),
                ("operating concurrency", plan.operating_concurrency, "clients", None)]
        for name, value in plan.limits.items():
            # the binding one's interval is the plan's, above
            rows.append((f"limit: {plan.limit_words(name, peak=kind)}", value, "ops/s", None))
        peak = figures["peak_throughput"]
        if kind == "peak":
            n_star = figures["peak_concurrency"]
            rows.append(("fitted peak concurrency", n_star.estimate, "clients", (n_star.low, n_star.high)))
        rows.append((f"fitted {kind} throughput", peak.estimate, "ops/s", (peak.low, peak.high)))
        best, at = self._best()
        rows.append((f"best measured throughput (at {integer(at)} clients)", best, "ops/s", None))

        def shown(span) -> str:
            if span is None or not math.isfinite(span[0]):
                return "—"
            return f"{number(span[0])} to {number(span[1]) if math.isfinite(span[1]) else 'unbounded'}"

        frame = pd.DataFrame([{"figure": f, "value": v if isinstance(v, str) else number(v, infinite="none"),
                               "interval": "" if isinstance(v, str) else shown(span), "unit": u}
                              for f, v, u, span in rows])
        frame.loc[frame["value"].isin(["none", "—"]), "unit"] = ""
        lvl = percent(self.level)
        return table(frame, {"figure": Column("figure", "text"), "value": Column("value", "text"),
                             "interval": Column(f"{lvl} interval", "text"), "unit": Column("unit", "text")},
                     caption="The plan read off the USL fit",
                     footnotes=['"none": the model has no peak (throughput keeps rising)',
                                f'"—": no interval is stated (a measured value, or a figure whose {lvl} interval is '
                                "not computed)"],
                     csv_name="plan.csv")

    @property
    def slo_objective(self) -> dict | None:
        """The SLO search's first p95 objective (absolute or relative), the one the fit can predict; None without."""
        return next((o for o in (self.slo or {}).get("objectives", []) if o.get("metric") == "p95"), None)

    @cached_property
    def slo_prediction(self):
        """The fit's prediction of the SLO search's answer: the throughput at which the fitted curve's p95 reaches
        the search's p95 bound (a relative bound: over the search's baseline p95), as ``capacity_from_fit`` reads
        a latency target; None without a p95 objective, the ``PlanError`` when the curve gives none."""
        from capmodel.plan import Objectives, capacity_from_fit

        objective = self.slo_objective
        if objective is None:
            return None
        try:
            if objective["relative"]:
                baseline = (self.slo or {}).get("baseline") or {}
                return capacity_from_fit(self.fit, Objectives(utilization_target=None,
                                                              latency_increase=objective["limit"]),
                                         self.level, baseline_p95_ms=baseline.get("p95_ms"),
                                         comparison=self.comparison)
            return capacity_from_fit(self.fit, Objectives(utilization_target=None, latency_p95_ms=objective["bound"]),
                                     self.level, comparison=self.comparison)
        except PlanError as exc:
            return exc

    def slo_words(self) -> str:
        """The measured capacity under the objectives beside the fit's prediction of it, in words."""
        slo = self.slo or {}
        said = "; ".join(_objective_words(o) for o in slo.get("objectives", []))
        grade = (slo.get("evidence") or {}).get("grade", "unusable")
        reasons = "; ".join(r["message"] for r in (slo.get("evidence") or {}).get("reasons", []))
        low, high = (list(slo.get("interval") or []) + [None, None])[:2]
        best = slo.get("max_rate")
        if best is None:
            text = f"Measured under {said}: no rate the search tried met them"
        else:
            span = (f" (interval {number(low)} to {number(high)} ops/s)" if low is not None and high is not None
                    else f" (interval up to {number(high)} ops/s)" if high is not None else "")
            text = f"Measured under {said}: the highest rate that met them was **{number(best)} ops/s**{span}"
        text += f". Evidence: **{grade}**" + (f" {aside(reasons)}" if reasons else "") + "."
        prediction = self.slo_prediction
        if prediction is None:
            return text + " The fit predicts p95 latencies only, so it gives no figure to set beside it."
        if isinstance(prediction, PlanError):
            return text + f" The fit gives no prediction of it: {prediction}."
        predicted = prediction.latency_throughput
        if not math.isfinite(predicted):
            return text + " The fitted curve reaches no such p95 latency, so it predicts no figure."
        span = (f", {percent(self.level)} interval {number(prediction.usable_throughput_low)} to "
                f"{number(prediction.usable_throughput_high)}"
                if shows_width(prediction.usable_throughput_low, prediction.usable_throughput_high) else "")
        text += (f" The USL fit of the concurrency sweep predicts **{number(predicted)} ops/s** at that p95{span} "
                 "(closed loop: the throughput at the concurrency where its p95 reaches the bound)")
        if best is not None:
            text += f", {predicted / best:.2f}x the measured rate"
        return text + "."

    def curve_table(self):
        return table(self.curve, {
            "concurrency": Column("concurrency (clients)", "int"), "throughput": Column("throughput (ops/s)", "int"),
            "latency_mean_ms": Column("mean latency (ms)"), "latency_p95_ms": Column("p95 latency (ms)"),
            "latency_p99_ms": Column("p99 latency (ms)"), "cpu_util": Column("server CPU", "percent"),
            "errors": Column("errors", "int"), "client_bound": Column("client-bound", "text")},
            caption="The measured steps", csv_name="curve.csv")

    def comparison_table(self):
        from capmodel.report.fit_report import FitReport

        return FitReport(self.curve, self.comparison, self.fit, "", self.level, 0, {}).comparison_table()

    def sweep_sentence(self) -> str:
        from capmodel.bench.sweep.describe import describe_sweep

        return describe_sweep(self.run, self.steps) if self.steps else ""


def _objective_words(objective: dict) -> str:
    """``p95 at most 5 ms``, ``p95 at most 5% above the baseline's``, ``errors at most 0.1%``."""
    metric, bound = objective.get("metric"), objective.get("bound")
    if metric == "errors":
        return f"errors at most {number(100 * (bound or 0), 3)}%"
    if objective.get("relative"):
        return f"{metric} at most {number(100 * objective['limit'], 3)}% above the baseline's ({number(bound, 3)} ms)"
    return f"{metric} at most {number(bound, 3)} ms"


def bench_report(curve, steps, run, server_name: str, workload: str, latency_target_ms: float, peak_fraction: float,
                 ops_per_user: float, level: float, inputs: dict, slo: dict | None = None) -> BenchReport:
    """What report 06 shows: a measured sweep fitted and planned.

    Parameters
    ----------
    curve : pandas.DataFrame
        The sweep's curve table (``run_sweep`` or ``read_bench_folder``).
    steps : list of dict
        Its step records.
    run : dict
        Its run record.
    server_name, workload : str
        Name the server and the workload in the answer.
    latency_target_ms : float
        A p95 target (0: none).
    peak_fraction : float
        The throughput planned at, as a fraction of the fitted peak.
    ops_per_user : float
        Ops/s per user, for users.
    level : float
        The intervals' coverage.
    inputs : dict
        What was read, for the provenance.
    slo : dict, optional
        An SLO search's answer (``slo.json``), set beside the fit's prediction of it.

    Returns
    -------
    BenchReport

    Raises
    ------
    InputError
        The curve is refused.
    PlanError
        ``peak_fraction`` or ``latency_target_ms`` out of range.
    """
    import capmodel
    from capmodel.plan import Objectives

    comparison = capmodel.compare_models(curve)
    fit = capmodel.fit_usl(curve)
    objectives = Objectives(utilization_target=None, peak_fraction=peak_fraction,
                            latency_p95_ms=latency_target_ms or None)
    return BenchReport(curve=curve, steps=steps, run=run, comparison=comparison, fit=fit, server_name=server_name,
                       workload=workload, objectives=objectives, latency_target_ms=latency_target_ms,
                       ops_per_user=ops_per_user, level=level, inputs=inputs, slo=slo)
