"""Report 03's result: a VM capacity study (the bundled benchANT one, a user's catalog, or measured curves per VM),
its verdict, its answer and its tables; the notebook draws its figures from the same ``study``."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from capmodel.data.readers import DEFAULT_VM_COLUMN
from capmodel.formatting import Column, integer, interval_words, money, number, percent, table
from capmodel.models.evidence import Evidence

if TYPE_CHECKING:
    from capmodel.plan.study import PlanStudy

QUESTION = "Which VM carries our users at each growth stage, and what does a user cost?"
BUNDLED_INTRO = ("The benchANT capacity-planning study of six Open Telekom Cloud VMs, redone as a computation: from "
                 "the baseline (users served, throughput and CPU at the baseline VM) and what was measured on each "
                 "candidate, the usable throughput under a utilization target and a latency objective, users per VM, "
                 "cost per user, the Pareto frontier of cost against users, the growth runway, and the cheapest VM "
                 "for each growth target.")
USER_INTRO = ("A capacity plan of the VMs in {source}: the usable throughput of each under a utilization target"
              "{latency}, users per VM, cost per user, the Pareto frontier of cost against users, {runway}and the "
              "cheapest VM for each growth target.")


@dataclass
class PlanReport:
    """Everything report 03 shows.

    Attributes
    ----------
    study : PlanStudy
        The plan.
    inputs : dict
        The files read.
    bundled : bool
        The bundled study was planned.
    source : str
        The catalog's name.
    borrowed : dict
        Figures taken from the study rather than given.
    current_users : float or None
        The users the growth starts from.
    """

    study: PlanStudy
    inputs: dict
    bundled: bool
    source: str
    borrowed: dict = field(default_factory=dict)
    current_users: float | None = None    # the users the growth starts from (given, or the baseline's)

    question = QUESTION

    @property
    def vms(self):
        return self.study.vms

    @property
    def currency(self) -> str:
        values = [c for c in self.vms.get("currency", []) if isinstance(c, str) and c]
        return values[0] if values and len(set(values)) == 1 else ""

    @property
    def cost_unit(self) -> str:
        return f"{self.currency}/month" if self.currency else "per month"

    @property
    def intro(self) -> str:
        """What this report is about: the bundled study's story only when the bundled study is the input."""
        if self.bundled:
            return BUNDLED_INTRO
        objectives = self.study.plan.objectives     # a latency objective and a runway only where the plan has them
        latency = objectives.latency_p95_ms is not None or objectives.latency_increase is not None
        runway = "runway_months" in self.vms.columns and self.vms["runway_months"].notna().any()
        return USER_INTRO.format(source=self.source, latency=" and a latency objective" if latency else "",
                                 runway="the growth runway, " if runway else "")

    @property
    def parameter_meanings(self) -> dict:
        """What report 03's "not given" values (0, "") mean for these inputs, where the notebook's comments (written
        of the bundled study) do not hold: on a catalog of one's own there is no study baseline to fall back on."""
        if self.bundled:
            return {}
        plan = self.study.plan
        from_ops = plan.workload.baseline_users is None
        load = "none: the load per user is ops_per_user" if from_ops else "none"
        meanings = {"baseline_vm": f'"" means {load}', "baseline_users": f"0 means {load}",
                    "ops_per_user": "0 means derived from baseline_users at baseline_vm",
                    "current_users": ("0 means the baseline's" if not from_ops else
                                      "0 means none: no runway without today's users")}
        if plan.objectives.latency_p95_ms is None and plan.objectives.latency_increase is None:
            meanings["latency_p95_ms"] = "0 means no latency objective (a relative one needs a baseline VM)"
        return meanings

    @property
    def unused_parameters(self) -> tuple:
        """Report 03's parameters these inputs made moot: the relative latency target without a relative objective,
        the growth without users to grow from."""
        objectives = self.study.plan.objectives
        unused = []
        if objectives.latency_increase is None:
            unused.append("latency_increase")
        if self.current_users is None:     # no users to grow from
            unused.append("growth")
        return tuple(unused)

    @property
    def evidence(self) -> Evidence:
        """The study's verdict (``PlanStudy.evidence``: the reasons of the VMs the answer names), as ``capmodel plan
        --json`` prints it."""
        return self.study.evidence

    @property
    def target_levels(self) -> dict[str, float]:
        """Each target as a level the users-per-VM bars are read against: its words -> its users."""
        targets = self.study.recommendations.get("target_users", [])
        return {f"target: {integer(t)} users": float(t) for t in targets}

    def _target_sentence(self, row) -> str:
        users = integer(row["target_users"])
        if not isinstance(row.get("vm"), str):
            largest = row.get("largest_vm")
            if isinstance(largest, str):
                return (f"No single VM carries **{users} users**; the largest, {largest}, carries "
                        f"{integer(row['largest_users'])}.")
            return f"No VM carries **{users} users** under the objectives."
        vm = self.vms.set_index("vm").loc[row["vm"]]
        span = interval_words(row["users"], vm["users_low"], vm["users_high"], integer)
        text = (f"For **{users} users**: **{row['vm']}** at {money(row['monthly_cost'], self.cost_unit)} carries "
                f"{integer(row['users'])} users{span}.")
        months = row.get("months_until_target")
        if self.study.monthly_growth and months is not None and math.isfinite(months):
            start = f" from today's {integer(self.current_users)}" if self.current_users else ""
            text += (f" Growing {percent(self.study.monthly_growth)} a month{start}, users reach {users} in "
                     f"{number(months, 3)} months.")
        return text

    @property
    def answer(self) -> str:
        parts = [self._target_sentence(r) for _, r in self.study.recommendations.iterrows()]
        priced = self.vms.dropna(subset=["cost_per_1000_users"])
        if priced.empty:
            parts.append("No VM meets the objectives, so none has a cost per user.")
        else:
            best = priced.sort_values("cost_per_1000_users").iloc[0]
            parts.append(f"The cheapest per user is **{best['vm']}** at "
                         f"{money(best['cost_per_1000_users'], self.currency)} per 1,000 users a month.")
        return " ".join(parts)

    @property
    def details(self) -> str:
        """How the answer was worked out: the objectives and workload, where each VM's throughput comes from, and
        why a figure the answer gives with only a lower or an upper end (``formatting.interval_words``) is one."""
        from capmodel.plan.planner import ONE_SIDED_NOTE

        text = f"{self.assumptions} {self.throughput_note}"
        vms = self.vms.set_index("vm")
        one_sided = [r["vm"] for _, r in self.study.recommendations.iterrows() if isinstance(r.get("vm"), str)
                     and interval_words(r["users"], vms.loc[r["vm"], "users_low"], vms.loc[r["vm"], "users_high"],
                                        integer).startswith((", at least", ", at most"))]
        if one_sided:
            text += (f" The users {', '.join(one_sided)} carries are given with one end only because "
                     f"{ONE_SIDED_NOTE.removeprefix('†: ')}.")
        return text

    @property
    def decision(self) -> str:
        """The decision in at most two short sentences, no brackets (``headline.decision_problems``): the VM to plan
        for each target and the targets no single VM carries; the ranges, dates and the cheapest per user follow in
        ``answer``."""
        carried, beyond = [], []
        for _, row in self.study.recommendations.iterrows():
            users = integer(row["target_users"])
            if isinstance(row.get("vm"), str):
                carried.append(f"**{row['vm']}** for {users} users at {money(row['monthly_cost'], self.cost_unit)}")
            else:
                beyond.append(users)
        text = f"Plan {'; '.join(carried)}." if carried else ""
        if beyond:
            text += f" No single VM carries {' or '.join(beyond)} users under the objectives."
        if not text:   # no targets: the cheapest per user
            priced = self.vms.dropna(subset=["cost_per_1000_users"])
            if priced.empty:
                return "**No VM** meets the objectives."
            best = priced.sort_values("cost_per_1000_users").iloc[0]
            cost = money(best["cost_per_1000_users"], self.currency)
            return f"The cheapest per user is **{best['vm']}**, at {cost} per 1,000 users a month."
        return text.strip()

    @property
    def short_answer(self) -> str:
        """The answer in one sentence, for the index of reports: the VM for each target (or that none carries it)."""
        parts = []
        for _, row in self.study.recommendations.iterrows():
            users = integer(row["target_users"])
            if isinstance(row.get("vm"), str):
                parts.append(f"**{row['vm']}** carries {users} users at {money(row['monthly_cost'], self.cost_unit)} "
                             f"(up to {integer(row['users'])})")
            elif isinstance(row.get("largest_vm"), str):
                parts.append(f"no single VM carries {users} (the largest, {row['largest_vm']}, carries "
                             f"{integer(row['largest_users'])})")
            else:
                parts.append(f"no VM carries {users} users under the objectives")
        if not parts:   # no targets: the cheapest per user
            from capmodel.report.index_entry import one_sentence

            return one_sentence(self.answer)
        text = "; ".join(parts)
        return text[0].upper() + text[1:] + "."

    @property
    def throughput_note(self) -> str:
        """What the throughput figure shows, for the input given: fitted curves, or measured rows."""
        if "curves" in self.inputs:
            return ("The throughput each VM may carry under the utilization objective, from the USL fitted to its "
                    "measured curve: the target applied to the CPU per operation where the curve has cpu_util, else "
                    "to the fitted peak; with its interval over the fit's likelihood region.")
        return "Measured throughput per VM (or derived from its measured ratio to the baseline), with its interval."

    @property
    def assumptions(self) -> str:
        plan = self.study.plan
        return f"Objectives: {plan.objectives_text}; workload {plan.workload.summary()}."

    def vm_table(self):
        from capmodel.plan.planner import none_note
        from capmodel.plots.costs import FULL_NOW

        cost = self.cost_unit
        vms = self.vms
        if "runway_months" in vms.columns:   # a runway of 0 in its bar's words (the runway figure), not "0.0"
            vms = vms.astype({"runway_months": object}).assign(runway_months=[
                FULL_NOW if isinstance(m, (int, float)) and m == 0 else m for m in vms["runway_months"]])
        return table(vms, {
            "vm": Column("VM", "text"), "monthly_cost": Column(f"monthly cost ({cost})", "money"),
            "throughput": Column("throughput (ops/s)", "int"),
            "usable_throughput": Column("usable (ops/s)", "int", missing="none"),
            "binding_limit": Column("binding limit", "text"), "users": Column("users", "int", missing="none"),
            "cost_per_1000_users": Column(f"per 1,000 users ({cost})", "money", missing="none"),
            "pareto": Column("on the Pareto front", "text"),
            "runway_months": Column("runway (months)", missing="none", decimals=1)},
            caption="Every VM under the objectives",
            footnotes=none_note(vms.get("binding_limit", [""] * len(vms)), vms["users"].isna()
                                if "users" in vms.columns else [False] * len(vms), see="the latency table"),
            csv_name="vms.csv")

    def latency_table(self):
        return table(self.vms, {"vm": Column("VM", "text"), "latency_ok": Column("meets the latency objective",
                                                                                  "text"),
                                "latency_note": Column("how it was judged", "text", missing=""),
                                "binding_limit": Column("binding limit", "text")},
                     caption="The latency objective", csv_name="latency.csv",
                     footnotes=['"—": no latency objective was set, or no latency was measured for this VM'])

    def recommendation_table(self):
        return table(self.study.recommendations, {
            "target_users": Column("target users", "int"), "vm": Column("VM", "text", missing="none fits"),
            "monthly_cost": Column(f"monthly cost ({self.cost_unit})", "money", missing="—"),
            "users": Column("users carried", "int"), "spare_users": Column("spare users", "int"),
            "months_until_target": Column("months until reached", missing="—", decimals=1),
            "reason": Column("why", "text")},
            caption="Recommendation per growth target",
            footnotes=['"none fits": no single VM carries the target under the objectives'],
            csv_name="recommendations.csv")


def plan_report(catalog: str = "", measurements: str = "", curves: str = "", vm_column: str = DEFAULT_VM_COLUMN,
                ops_per_user: float = 0.0, baseline_vm: str = "", baseline_users: float = 0.0, targets=(),
                objectives=None, growth: float = 0.05, current_users: float = 0.0,
                level: float = 0.95, concurrency: str = "", throughput: str = "",
                load_per_user: float = 0.0) -> PlanReport:
    """What report 03 shows: the inputs read and the study planned as ``capmodel plan`` plans it.

    "" or 0 means not given. A runway needs today's users: the baseline's or ``current_users``.

    Parameters
    ----------
    catalog, measurements, curves : str, default ""
        Files: the VM catalog, per-VM measurements, and measured curves with a column naming each row's VM. No catalog:
        the bundled benchANT study.
    vm_column : str, default "vm"
        That column of ``curves`` (its other spellings, such as ``system``, are found too), as ``plan --vm-column``.
    ops_per_user : float, default 0.0
        The workload directly, instead of a baseline.
    baseline_vm : str, default ""
        The VM the baseline was measured on.
    baseline_users : float, default 0.0
        The users it served.
    targets : sequence of float, default ()
        User counts to recommend a VM for.
    objectives : Objectives, optional
        As for ``plan_study``.
    growth : float, default 0.05
        Monthly growth of the users.
    current_users : float, default 0.0
        Today's users.
    level : float, default 0.95
        The intervals' coverage.
    concurrency, throughput : str, default ""
        The columns of ``curves`` holding them, as ``plan --concurrency`` and ``--throughput``; "" recognises them.
    load_per_user : float, default 0.0
        A what-if on the ops/s one user generates (report 03's live control): it replaces ``ops_per_user`` where that
        is given; on a load derived from a baseline, the baseline's users become its throughput over this load (the
        same measurement with heavier or lighter users) and today's users stay the baseline's. 0: as given.

    Returns
    -------
    PlanReport

    Raises
    ------
    InputError
        Measurements or curves without a catalog, a file refused, or ``vm_column`` missing.
    PlanError
        As ``plan_study`` raises it.
    """
    from capmodel.data.readers import read_catalog, read_curve
    from capmodel.errors import InputError
    from capmodel.plan.study import fit_per_vm, plan_study

    if (measurements or curves) and not catalog:
        raise InputError("parameters measurements and curves need a catalog (the prices of the VMs)")
    fits = {}
    if curves:
        measured = read_curve(curves, system=vm_column, concurrency=concurrency or None,
                              throughput=throughput or None)
        if "system" not in measured.columns:
            raise InputError(f"parameter vm_column: {curves} has no column '{vm_column}' naming each row's VM")
        fits = fit_per_vm(measured)
    if ops_per_user and not current_users and not baseline_users:
        growth = 0.0  # nothing to grow from: no runway, and no sentence about one
    catalog_table = read_catalog(catalog) if catalog else None
    measured_table = read_catalog(measurements) if measurements else None

    def plan(ops_per_user, baseline_users, current_users):
        return plan_study(catalog=catalog_table, measurements=measured_table, fits=fits,
                          baseline_vm=baseline_vm or None, baseline_users=baseline_users or None,
                          ops_per_user=ops_per_user or None, targets=list(targets), objectives=objectives,
                          growth=growth or None, current_users=current_users or None, level=level,
                          source=catalog or None, measurements_source=measurements or None)

    if load_per_user and ops_per_user:     # a load given directly: the what-if replaces it
        ops_per_user, load_per_user = load_per_user, 0.0
    study = plan(ops_per_user, baseline_users, current_users)
    derived = study.plan.workload
    if load_per_user and derived.baseline_throughput:
        # the same baseline measurement with heavier or lighter users: as many users at it as its throughput over
        # the load per user; today's users (the runway's start) stay the baseline's
        current_users = current_users or derived.baseline_users
        study = plan(0.0, derived.baseline_throughput / load_per_user, current_users)
    inputs = {k: v for k, v in {"catalog": catalog, "measurements": measurements, "curves": curves}.items() if v}
    if not catalog:
        from capmodel import datasets
        from capmodel.plan.study import BENCHANT

        inputs = {name: str(datasets.path(ds)) for name, ds in BENCHANT.items()}
    start = current_users or getattr(study.plan.workload, "baseline_users", None)   # the growth's, as plan_vms's
    return PlanReport(study=study, inputs=inputs, bundled=not catalog,
                      source=Path(catalog).name if catalog else "the bundled benchANT study",
                      current_users=start if start and math.isfinite(start) else None)
