"""Report 01's results: Little's law, the utilization law, the USL fit, MVA against the USL, the knee and the
multi-class mix, each as a table for reading and, together, the answer; the notebook draws its figures from the same
objects (``curve``, ``fit``, ``mix``, ``what_if``, ``tenants``)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from capmodel.formatting import Column, integer, number, percent, r_squared, table
from capmodel.models.evidence import Evidence

if TYPE_CHECKING:
    from capmodel.models.mix.demands import MixFit, MixPrediction
    from capmodel.models.queueing.network import MulticlassResult
    from capmodel.models.usl.usl_fit import USLFit

QUESTION = "How far does a MongoDB system scale, and why does it stop?"


@dataclass
class MethodologyReport:
    """Everything report 01 shows.

    Attributes
    ----------
    dataset : str
        The curve's name.
    curve : pandas.DataFrame
        The curve.
    fit : USLFit
        The USL fitted to it.
    baseline : pandas.Series
        The bundled baseline.
    latency_target_ms : float
        The latency target.
    mva : pandas.DataFrame
        The USL beside exact MVA (``usl_vs_mva``).
    mix : MixFit
        Per-class demands from the bundled curves.
    what_if : MixPrediction
        The mix model against the third curve.
    tenants : MulticlassResult
        Two tenants sharing the database.
    tenant_threads : int
        Each tenant's threads.
    inputs : dict
        The files read.
    read_share : float
        The reads' share of the mixed curves.
    database_cpus : int
        The processors at the database station.
    upto : float
        The largest concurrency drawn.
    """
    dataset: str
    curve: pd.DataFrame
    fit: USLFit
    baseline: pd.Series
    latency_target_ms: float
    mva: pd.DataFrame
    mix: MixFit
    what_if: MixPrediction
    tenants: MulticlassResult
    tenant_threads: int
    inputs: dict
    read_share: float = 0.54
    database_cpus: int = 4
    upto: float = 128.0   # the largest concurrency drawn (0 given: 1.5 x the largest measured, as in report 02)

    question = QUESTION

    @cached_property
    def course(self):
        """The course's exercises, checks and MVA steps on the same numbers (``capmodel.report.course``)."""
        from capmodel.report.course import Course

        return Course(curve=self.curve, fit=self.fit, mix=self.mix, mva=self.mva, dataset=self.dataset,
                      read_share=self.read_share, database_cpus=self.database_cpus)

    @property
    def little(self) -> pd.DataFrame:
        """N, X, N/X in ms and, when measured, the mean latency and the relative difference."""
        n, x = self.curve["concurrency"].to_numpy(float), self.curve["throughput"].to_numpy(float)
        frame = pd.DataFrame({"n": n, "x": x, "r_ms": n / x * 1000.0})
        if "latency_mean_ms" in self.curve:
            frame["measured_ms"] = self.curve["latency_mean_ms"].to_numpy(float)
            frame["difference"] = frame["r_ms"] / frame["measured_ms"] - 1
        return frame

    @property
    def demand(self) -> float:
        """Seconds of the whole baseline VM per operation: D = U / X (utilization law)."""
        return float(self.baseline["cpu_util"]) / float(self.baseline["throughput"])

    @property
    def knee(self):
        """The largest N (and its X) whose mean response time N/X meets the latency target on the fitted USL
        (``USLFit.largest_concurrency_within``: ``.reachable``, ``.reason`` and ``.message`` say when there is
        none)."""
        return self.fit.largest_concurrency_within(self.latency_target_ms / 1000.0)

    @cached_property
    def ranking(self):
        """The rival models ranked on the curve (None when they cannot be)."""
        from capmodel.errors import CapmodelError
        from capmodel.models.usl.selection import compare_models

        try:
            return compare_models(self.curve, extrapolation=False)
        except CapmodelError:
            return None

    @cached_property
    def evidence(self) -> Evidence:
        """The USL fit's verdict as ``capmodel fit DATASET`` gives it: ``assess_fit`` with the ranking of the rival
        models (whether the USL is the model the data support)."""
        from capmodel.models.usl.verdict.assessment import assess_fit

        return assess_fit(self.fit, self.ranking)

    @property
    def figures(self) -> dict:
        """The USL fit's peak (or ceiling) and its concurrency with their intervals over the region its verdict
        reads them over, the one interval the page states for each."""
        from capmodel.models.usl.verdict.assessment import answer_region

        return self.fit.figure_intervals(region=answer_region(self.fit, self.ranking))

    def _limit(self, strong=lambda text: text) -> str:
        """Where the fitted USL peaks or levels off, with the intervals (or what the data support instead)."""
        from capmodel.models.usl.describe import limit_words
        from capmodel.models.usl.verdict.assessment import supported_instead

        if not self.evidence.usable:
            return f"the data cannot locate where the USL saturates; {supported_instead(self.fit, self.evidence)}"
        return limit_words(self.fit, self.figures, strong=strong)

    @property
    def short_answer(self) -> str:
        """The answer in one sentence, for the index of reports: where the fitted USL stops, and which term stops
        it."""
        fit = self.fit
        if not self.evidence.usable:
            return f"On {self.dataset}, {self._limit()}."
        why = (f"contention (σ = {number(fit.sigma)}) bends the curve and coherency (κ = {number(fit.kappa)}) turns "
               "it down" if math.isfinite(fit.peak_concurrency) else
               f"contention (σ = {number(fit.sigma)}) bends the curve towards its ceiling")
        return f"Fitted to {self.dataset}, the USL says {self._limit(lambda t: f'**{t}**')}: {why}."

    def little_table(self):
        return table(self.little, {
            "n": Column("threads N", "int"), "x": Column("throughput X (ops/s)", "int"),
            "r_ms": Column("R = N/X (ms)"), "measured_ms": Column("measured mean latency (ms)"),
            # two digits, as the answer names the largest ("within 0.56%", not 0.564%), with the column's decimals
            "difference": Column("difference", "percent", digits=2)},
            caption="Little's law against the measured latency",
            csv_name="littles_law.csv")

    @property
    def little_worst(self) -> str:
        """The largest gap between Little's law and the measured latency, as the Little's-law table's column spells
        its figures (one precision per column: "0.56%" beside "0.30%")."""
        return self.little_table().show_value("difference", self.little["difference"].abs().max())

    def utilization_table(self):
        b = self.baseline
        rows = pd.DataFrame([
            {"figure": "VM", "value": str(b["vm"])},
            {"figure": "measured throughput X", "value": f"{integer(b['throughput'])} ops/s"},
            {"figure": "CPU utilization U", "value": percent(b["cpu_util"])},
            {"figure": "service demand D = U/X", "value": f"{number(self.demand * 1e6)} µs of the whole VM per op"},
            {"figure": "throughput bound 1/D", "value": f"{integer(1 / self.demand)} ops/s"}])
        return table(rows, {"figure": Column("figure", "text"), "value": Column("value", "text")},
                     caption="The utilization law on the benchANT baseline", csv_name="utilization_law.csv")

    def capacity_loss_table(self):
        return table(self.fit.capacity_loss(self.curve["concurrency"]), {
            "concurrency": Column("clients", "int"), "ideal": Column("ideal λN (ops/s)", "int"),
            "throughput": Column("delivered (ops/s)", "int"),
            "contention_loss": Column("lost to contention (ops/s)", "int"),
            "coherency_loss": Column("lost to coherency (ops/s)", "int")},
            caption="Where the ideal throughput goes", csv_name="capacity_loss.csv")

    def mix_tables(self):
        params = self.mix.parameters.reset_index(names="class")
        demands = table(params, {"class": Column("class", "text"),
                                 "database_demand_ms": Column("database demand (ms)"),
                                 "delay_ms": Column("time outside the database (ms)"),
                                 "max_throughput_alone": Column("largest throughput alone (ops/s)", "int")},
                        caption="Demands fitted to two mixes", csv_name="demands.csv")
        errors = table(self.mix.fit_errors().reset_index(names="curve"), {
            "curve": Column("fitted curve", "text"),
            "mean_abs_throughput_error_pct": Column("mean absolute throughput error (%)")},
            caption="How well the demands reproduce the curves they were fitted to", csv_name="fit_errors.csv")
        return demands, errors

    def what_if_table(self):
        return table(self.what_if.table, {
            "concurrency": Column("clients", "int"), "measured_throughput": Column("measured (ops/s)", "int"),
            "predicted_throughput": Column("predicted (ops/s)", "int"),
            "throughput_error_pct": Column("throughput error (%)"),
            "measured_latency_ms": Column("measured latency (ms)"),
            "predicted_latency_ms": Column("predicted latency (ms)"), "latency_error_pct": Column("latency error (%)")},
            caption="A third mix, predicted and measured", csv_name="what_if.csv")

    def tenants_table(self):
        frame = self.tenants.table.reset_index(names="class")
        for column in ("response_time", "residence_database", "residence_client"):
            if column in frame:
                frame[column] = frame[column] * 1000.0
        return table(frame, {
            "class": Column("class", "text"), "population": Column("threads", "int"),
            "throughput": Column("throughput (ops/s)", "int"), "response_time": Column("response time (ms)"),
            "residence_database": Column("at the database (ms)"), "residence_client": Column("outside it (ms)")},
            caption=f"Two tenants of {self.tenant_threads} threads each (exact multi-class MVA)",
            csv_name="tenants.csv")

    @property
    def _knee_case(self):
        """The knee and which bound decides the clients: "no target" (none given), "past the peak" (the target binds
        only past the peak: the peak decides), "knee" (the target decides), "flat" (latency does not grow with
        load) or "unreachable" (the target is below the lightest load's latency)."""
        fit = self.fit
        if not self.latency_target_ms:   # 0: no target given, no knee to look for
            return None, "no target"
        knee = self.knee
        if not knee.reachable:
            return knee, "unreachable"
        if math.isfinite(fit.peak_concurrency) and knee.concurrency > fit.peak_concurrency:
            return knee, "past the peak"
        return knee, "knee" if math.isfinite(knee.concurrency) else "flat"

    @property
    def decision(self) -> str:
        """The decision in at most two short sentences, no brackets (``headline.decision_problems``): where
        throughput stops, and how many clients to carry; the intervals and the other laws follow in ``answer``."""
        from capmodel.models.usl.describe import limit_decision

        fit = self.fit
        where = limit_decision(fit, self.figures, f"Fitted to `{self.dataset}`", self.evidence.usable)
        if not self.evidence.usable:
            return where
        knee, case = self._knee_case
        target = f"{number(self.latency_target_ms)} ms"
        clients = {
            "past the peak": f" The peak binds before the {target} latency target: carry at most "
                             f"**{integer(fit.recommended_concurrency)} clients**.",
            "knee": "" if knee is None or not knee.reachable else
                    f" A {target} mean latency allows at most **{integer(math.floor(knee.concurrency))} clients**.",
            "unreachable": f" A {target} mean latency is out of reach: one request alone takes longer.",
        }
        return where + clients.get(case, "")

    @property
    def answer(self) -> str:
        """The answer under the decision, in short plain sentences (``headline.answer_problems``): how sure the peak
        is, what the other laws add; the parameters and the method follow in ``details``."""
        from capmodel.models.usl.describe import limit_range_words

        parts = [limit_range_words(self.fit, self.figures)] if self.evidence.usable else []
        if "difference" in self.little:
            parts.append(f"Little's law holds on `{self.dataset}` within "
                         f"{self.little_worst} at every thread count.")
        parts.append(f"On the `{self.baseline['vm']}` VM, the CPU each operation costs caps throughput at "
                     f"{integer(1 / self.demand)} ops/s however it is tuned.")
        return " ".join([*parts, "The fitted parameters, the knee and two tenants sharing the server follow below."])

    @property
    def details(self) -> str:
        """How the answer was worked out: each law on this data, the USL's parameters, the knee, several classes."""
        fit = self.fit
        little = self.little
        lines = []
        if "difference" in little:
            lines.append(f"- **Little's law** holds on `{self.dataset}`: N/X predicts the measured mean latency within "
                         f"{self.little_worst} at every thread count.")
        b = self.baseline
        lines.append(f"- **Utilization law**: at {percent(b['cpu_util'])} CPU and {integer(b['throughput'])} ops/s, "
                     f"one operation costs {number(self.demand * 1e6)} µs of the `{b['vm']}` VM, so it cannot exceed "
                     f"{integer(1 / self.demand)} ops/s however it is tuned.")
        lines.append(f"- **USL fit** of `{self.dataset}`: σ = {number(fit.sigma)}, κ = {number(fit.kappa)}, λ = "
                     f"{integer(fit.lambda_)} ops/s per client (R² = {r_squared(fit.r2)}); {self._limit()}.")
        knee, case = self._knee_case
        top = self.curve.loc[self.curve["concurrency"].idxmax()]
        target = f"{number(self.latency_target_ms)} ms"
        if case == "no target":
            lines.append("- **The knee**: no latency target was given (latency_target_ms = 0), so only the peak "
                         "bounds the clients" + (f": at most {integer(fit.recommended_concurrency)} clients "
                                                 f"({integer(fit.peak_throughput)} ops/s)."
                                                 if math.isfinite(fit.peak_concurrency) else
                                                 ", and on this fit throughput has no peak."))
        elif case == "past the peak":   # the retrograde branch: the peak binds before the target does
            lines.append(f"- **The knee**: the mean latency reaches {target} only at "
                         f"{number(knee.concurrency)} clients, past the peak (N* ≈ {number(fit.peak_concurrency)}): "
                         "throughput stops growing before the target binds, so the peak decides: at most "
                         f"{integer(fit.recommended_concurrency)} clients ({integer(fit.peak_throughput)} ops/s). At "
                         f"the largest measured load ({integer(top['concurrency'])} threads) it delivered "
                         f"{integer(top['throughput'])} ops/s: more clients, same work, longer waits.")
        elif case == "knee":
            lines.append(f"- **The knee**: with a {target} mean-latency target the system should carry at most "
                         f"{integer(math.floor(knee.concurrency))} clients ({integer(knee.throughput)} ops/s, "
                         f"{percent(knee.throughput / fit.peak_throughput)} of the peak). At the largest measured "
                         f"load ({integer(top['concurrency'])} threads) it delivered {integer(top['throughput'])} "
                         "ops/s: more clients, same work, longer waits.")
        elif case == "flat":
            lines.append(f"- **The knee**: on this fit the mean latency does not grow with load, so a {target} "
                         "target bounds neither the clients nor the throughput.")
        else:
            lines.append(f"- **The knee**: a {target} mean-latency target is unreachable on this fit: even at the "
                         f"lightest load a request takes {number(knee.zero_load_seconds * 1000)} ms.")
        t = self.tenants.table
        tenants = "; ".join(f"{name}: {integer(row['throughput'])} ops/s at {number(row['response_time'] * 1000)} ms"
                            for name, row in t.iterrows())
        lines.append(f"- **Several classes**: {self.what_if.describe()} Two tenants of {self.tenant_threads} threads "
                     f"each: {tenants}.")
        return "\n".join(lines)


def methodology_report(dataset: str = "plgm_workload1", baseline: str = "benchant_baseline", upto: float = 128,
                       latency_target_ms: float = 5.0, read_share: float = 0.54, database_cpus: int = 4,
                       tenant_threads: int = 32) -> MethodologyReport:
    """What report 01 shows: the methods on bundled data.

    A USL fit beside exact MVA, per-class demands and a mix what-if from three curves, and two tenants in a
    multi-class network.

    Parameters
    ----------
    dataset : str, default "plgm_workload1"
        The curve fitted.
    baseline : str, default "benchant_baseline"
        The bundled baseline shown.
    upto : float, default 128
        The largest concurrency drawn (0: 1.5 × the largest measured).
    latency_target_ms : float, default 5.0
        The latency target shown.
    read_share : float, default 0.54
        The reads' share of the mixed curve.
    database_cpus : int, default 4
        The processors at the database station.
    tenant_threads : int, default 32
        Each tenant's threads.

    Returns
    -------
    MethodologyReport

    Raises
    ------
    InputError
        An unknown dataset or a parameter out of range.
    """
    import capmodel
    from capmodel.models.mix.demands import fit_mix_demands
    from capmodel.models.queueing.multiclass import multiclass_mva
    from capmodel.models.queueing.usl_mva import usl_vs_mva

    curve = capmodel.datasets.load_curve(dataset)
    fit = capmodel.fit_usl(curve)
    upto = float(upto or 1.5 * float(curve["concurrency"].max()))   # 0 means what it means in report 02
    mva = usl_vs_mva(fit, concurrency=np.unique(np.linspace(1, upto, 33).round()))
    mixed = {"read": read_share, "write": 1 - read_share}
    mix = fit_mix_demands({"plgm_workload1": (capmodel.datasets.load_curve("plgm_workload1"), {"read": 1.0}),
                           "plgm_workload2": (capmodel.datasets.load_curve("plgm_workload2"), mixed)},
                          servers=database_cpus)
    what_if = mix.compare(capmodel.datasets.load_curve("plgm_workload3"), mixed, "plgm_workload3")
    demands, servers = mix.network()
    tenants = multiclass_mva(demands, {"read": tenant_threads, "write": tenant_threads}, servers=servers)
    inputs = {name: str(capmodel.datasets.path(name)) for name in dict.fromkeys(
        [dataset, baseline, "plgm_workload1", "plgm_workload2", "plgm_workload3"])}
    return MethodologyReport(dataset=dataset, curve=curve, fit=fit, baseline=capmodel.datasets.load(baseline).iloc[0],
                             latency_target_ms=latency_target_ms, mva=mva, mix=mix, what_if=what_if, tenants=tenants,
                             tenant_threads=tenant_threads, inputs=inputs, upto=upto,
                             read_share=read_share, database_cpus=database_cpus)
