"""Report 06's result: a sweep (run now, or read from an existing ``capmodel bench --out`` folder), its fits, the plan
read off the fit, the verdict and the answer; the notebook's figures draw the same curve and fit."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from capmodel.errors import InputError, PlanError
from capmodel.formatting import Column, integer, number, plural, table
from capmodel.models.assessment import assess_fit, supported_instead
from capmodel.models.evidence import Evidence

QUESTION = "What does this MongoDB deliver, and how many users can it carry?"
BENCHANT_OPS_PER_USER = 0.26   # the benchANT study: 6,500 ops/s for 25,000 users


def read_bench_folder(folder: str | Path) -> tuple[object, list, dict]:
    """The curve, steps and run record of a ``capmodel bench --out`` folder (``InputError`` naming what is missing)."""
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


@dataclass
class BenchReport:
    curve: object
    steps: list
    run: dict
    comparison: object
    fit: object
    server_name: str
    workload: str
    objectives: object
    latency_target_ms: float
    ops_per_user: float
    level: float
    inputs: dict

    question = QUESTION

    @property
    def mongodb_version(self) -> str | None:
        return (self.run.get("versions") or {}).get("mongodb")

    @property
    def borrowed(self) -> dict:
        if self.ops_per_user == BENCHANT_OPS_PER_USER:
            return {f"ops per user {number(self.ops_per_user)}": "the benchANT study: 6,500 ops/s for 25,000 users"}
        return {}

    @property
    def plan(self):
        """The capacity read off the fit, or the ``PlanError`` saying why the curve gives none."""
        from capmodel.plan import capacity_from_fit

        try:
            return capacity_from_fit(self.fit, self.objectives)
        except PlanError as exc:
            return exc

    @property
    def evidence(self) -> Evidence:
        """The planned capacity's verdict (``capacity_from_fit``'s: the fit judged at the concurrency the plan runs
        the server at, and the latency target's fate) and whether the USL it plans from is the model the comparison
        recommends; without a plan, the fit's own verdict (``assess_fit``)."""
        plan = self.plan
        if isinstance(plan, PlanError):
            return assess_fit(self.fit, self.comparison, level=self.level)
        return plan.evidence

    @property
    def answer(self) -> str:
        best = self.curve.loc[self.curve["throughput"].idxmax()]
        text = (f"The sweep of {self.workload} against {self.server_name} measured at best "
                f"**{number(best['throughput'])} ops/s** (at {integer(best['concurrency'])} clients).")
        plan = self.plan
        if isinstance(plan, PlanError):
            return text + f" No plan from this curve: {plan}."
        if not self.evidence.usable:   # what the data support instead, in the words ``capmodel fit`` prints
            return text + f" The data cannot support a planned capacity; {supported_instead(self.fit, self.evidence)}."
        text += (f" Under {self.objectives.describe()}, it sustains **{number(plan.usable_throughput)} ops/s** at "
                 f"about {number(plan.operating_concurrency, 2)} clients (binding limit: "
                 f"{plan.binding_limit.replace('_', ' ')})")
        if self.ops_per_user:
            text += (f", which at {number(self.ops_per_user)} ops/s per user is "
                     f"**{integer(plan.usable_throughput / self.ops_per_user)} users**")
        return text + "."

    @property
    def fit_note(self) -> str:
        """What the fit section is for: the plan below uses the USL only when there is a plan below."""
        return "Every rival model is fitted and ranked" + (
            "; the plan below uses the USL, whose peak and latency answers it needs." if self.plan_table() is not None
            else "; no plan is drawn from them (the Plan section says why).")

    @property
    def no_plan(self) -> str:
        """Why the plan's table is not shown (the curve gives no plan, or the data cannot support it)."""
        if isinstance(self.plan, PlanError):
            return f"No plan from this curve: {self.plan}."
        unusable = [r.message for r in self.evidence.reasons if r.grade == "unusable"]
        # the reasons carry their own parentheses: after a colon, not inside another pair
        return f"No plan is shown, because the data cannot support one: {'; '.join(unusable)}." if unusable else ""

    def plan_table(self):
        """The plan's figures; None when there is no plan or the data cannot support one (``no_plan`` says why)."""
        plan = self.plan
        if isinstance(plan, PlanError) or not self.evidence.usable:
            return None
        rows = [("usable throughput", plan.usable_throughput, "ops/s"),
                ("binding limit", plan.binding_limit.replace("_", " "), ""),
                ("operating concurrency", plan.operating_concurrency, "clients"),
                ("throughput at the peak fraction", plan.throughput, "ops/s"),
                ("throughput at the latency target", plan.latency_throughput, "ops/s"),
                ("peak concurrency", plan.peak_concurrency, "clients"),
                ("peak throughput", plan.peak_throughput, "ops/s")]
        rows += [(f"limit: {k.replace('_', ' ')}", v, "ops/s") for k, v in plan.limits.items()]
        import pandas as pd

        shown = [(f, v if isinstance(v, str) else number(v, infinite="none"), u) for f, v, u in rows]
        frame = pd.DataFrame([{"figure": f, "value": v, "unit": "" if v in ("none", "—") else u}
                              for f, v, u in shown])
        return table(frame, {"figure": Column("figure", "text"), "value": Column("value", "text"),
                             "unit": Column("unit", "text")}, caption="The plan read off the USL fit",
                     footnotes=['"none": the model has no peak (throughput keeps rising)'], csv_name="plan.csv")

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


def bench_report(curve, steps, run, server_name: str, workload: str, latency_target_ms: float, peak_fraction: float,
                 ops_per_user: float, level: float, inputs: dict) -> BenchReport:
    """Fit and plan a measured sweep (from ``run_sweep`` or ``read_bench_folder``)."""
    import capmodel
    from capmodel.plan import Objectives

    comparison = capmodel.compare_models(curve)
    fit = capmodel.fit_usl(curve)
    objectives = Objectives(utilization_target=None, peak_fraction=peak_fraction, latency_p95_ms=latency_target_ms or None)
    return BenchReport(curve=curve, steps=steps, run=run, comparison=comparison, fit=fit, server_name=server_name,
                       workload=workload, objectives=objectives, latency_target_ms=latency_target_ms,
                       ops_per_user=ops_per_user, level=level, inputs=inputs)
