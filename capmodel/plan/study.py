"""A VM capacity study in one call: ``plan_study(catalog=..., measurements=..., baseline_vm=..., targets=...,
objectives=...)`` plans every VM, recommends the cheapest one per target user count and says so in words.

``capmodel plan`` maps its options onto these keywords and the capacity-plan report calls it directly. Without a
catalog it plans the bundled benchANT OTC study (data/benchant_*.csv): baseline m3-xlarge-8-SAS carrying 25,000 users
at 6,500 ops/s (6,000-7,000) and 80% CPU, under the study's objective "p95 no more than 5% above the baseline".
Inputs are tables and fits, never file names: reading files is the caller's job (``capmodel.read_table``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from capmodel.errors import PlanError
from capmodel.formatting import integer, interval_words, money, percent, plural, shows_width
from capmodel.jsonable import to_jsonable
from capmodel.plan.calibration import calibrate_user_load, user_load_from_ops_per_user
from capmodel.plan.capacity import Objectives
from capmodel.plan.catalog import join_measurements
from capmodel.plan.planner import CapacityPlan, plan_vms

BENCHANT = {"catalog": "benchant_vms", "measurements": "benchant_throughput", "baseline": "benchant_baseline"}
BENCHANT_SOURCE = "benchANT study (bundled)"
BENCHANT_OBJECTIVES = Objectives(utilization_target=0.8, latency_increase=0.05)  # "no more than 5% above"


@dataclass(frozen=True)
class PlanStudy:
    """The result of ``plan_study``: the plan of every VM and one recommendation per target.

    ``describe()`` gives the answer in words, ``evidence`` its verdict (the reasons of the VMs it names), ``vms`` the
    planning table.

    Attributes
    ----------
    plan : CapacityPlan
        One row per VM in ``plan.vms``, the workload, objectives and notes.
    recommendations : pandas.DataFrame
        One row per target: ``target_users``, the cheapest ``vm`` that carries it (None, with a ``reason``, when none
        does), its ``monthly_cost`` and ``users``, and ``months_until_target`` with a growth rate.
    source : str
        Where the inputs came from.
    monthly_growth : float or None
        The growth rate the runways assume.
    """

    plan: CapacityPlan
    recommendations: pd.DataFrame
    source: str
    monthly_growth: float | None = None
    #: the users today the runways start from (None: the baseline's)
    current_users: float | None = None

    @property
    def vms(self) -> pd.DataFrame:
        """The planning table: one row per VM (see ``capmodel.plan.planner``)."""
        return self.plan.vms

    def answer_vms(self) -> list[str]:
        """The VMs the answer names: the recommended ones and the cheapest per user."""
        priced = self.vms.dropna(subset=["cost_per_1000_users"])
        cheapest = [] if priced.empty else [priced.sort_values("cost_per_1000_users").iloc[0]["vm"]]
        return list(dict.fromkeys(self.recommended_vms() + cheapest))

    @property
    def evidence(self):
        """The verdict on the study's answer: the reasons of the VMs it names (each VM's own is in
        ``plan.vm_evidence``)."""
        return self.plan.evidence_for(self.answer_vms())

    def recommended_vms(self) -> list[str]:
        """The VMs recommended for some target, in target order (targets no VM carries left out)."""
        return [vm for vm in self.recommendations.get("vm", []) if isinstance(vm, str)]

    def describe(self) -> str:
        """The answer in words (markdown): objectives, the VM per target, the cheapest per user, the frontier."""
        vms = self.vms.set_index("vm")
        lines = [_target_line(r, vms, self.monthly_growth) for _, r in self.recommendations.iterrows()]
        priced = self.vms.dropna(subset=["cost_per_1000_users"])
        failed = ", ".join(self.vms.loc[self.vms["latency_ok"] == False, "vm"]) or "none"  # noqa: E712 - three-valued column
        parts = [f"Objectives: {self.plan.objectives_text}; workload {self.plan.workload.summary()}.", ""]
        if lines:
            parts += lines + [""]
        if priced.empty:
            parts.append("No VM meets the objectives, so none has a cost per user.")
        else:
            best = priced.sort_values("cost_per_1000_users").iloc[0]
            parts.append(f"The cheapest VM per user is **{best['vm']}** ({best['cost_per_1000_users']:.2f} per 1,000 "
                         f"users per month); the Pareto frontier of cost against users is "
                         f"{', '.join(self.plan.frontier()['vm'])}.")
        parts[-1] += f" VMs failing the latency objective: {failed}."
        base = self.plan.baseline_vm
        if base and math.isfinite(vms.loc[base, "users"]):
            parts[-1] += f" The baseline {base} carries {vms.loc[base, 'users']:,.0f} users."
        parts += ["", self.evidence.describe()]
        return "\n".join(parts)

    def summary(self) -> str:
        """Everything ``capmodel plan`` prints: the VM per target first (when targets were given) with the verdict,
        then the plan of every VM, the currency, the runways (with a growth rate) and, without targets, the verdict."""
        currency = _currency(self.plan)
        lines = self.evidence.lines()
        evidence = [f"Evidence of the answer (the VMs it names): {lines[0].removeprefix('evidence: ')}", *lines[1:]]
        out = []
        if not self.recommendations.empty:     # the answer first: the VM per target and its verdict, then the plan
            out += ["Recommendations:", *_recommendation_lines(self.recommendations, currency, self.monthly_growth),
                    *evidence, ""]
        out.append(self.plan.summary())
        if currency:
            out.append(f"Costs are per month in {currency} (the catalog's currency).")
        if self.monthly_growth is not None:
            current = self.current_users if self.current_users is not None else self.plan.workload.baseline_users
            if current is not None:   # always, past plan_vms: it refuses a growth rate without the users today
                out += ["", *_runway_lines(self.plan, self.monthly_growth, current)]
        if self.recommendations.empty:
            out += ["", *evidence]
        return "\n".join(out)

    def to_json(self) -> dict:
        """The JSON contract of ``capmodel plan --json``: the load per user, the objectives, one row per VM (each
        with its own evidence), the recommendations, the Pareto frontier, the notes and the study's evidence."""
        plan = self.plan
        vms = plan.vms[[c for c in VM_FIELDS if c in plan.vms.columns]]
        recs = self.recommendations.astype(object).where(self.recommendations.notna(), None)
        load = plan.workload
        rows = vms.astype(object).where(vms.notna(), None).to_dict(orient="records")
        for row in rows:
            verdict = plan.vm_evidence.get(row["vm"])
            row["evidence"] = verdict.to_json() if verdict is not None else None
        return to_jsonable({
            "workload": {"ops_per_user": load.ops_per_user, "ops_per_user_low": load.ops_per_user_low,
                         "ops_per_user_high": load.ops_per_user_high, "baseline_users": load.baseline_users,
                         "baseline_throughput": load.baseline_throughput,
                         "baseline_utilization": load.baseline_utilization, "baseline_vm": plan.baseline_vm},
            "objectives": {"utilization_target": plan.objectives.utilization_target,
                           "peak_fraction": plan.objectives.peak_fraction,
                           "latency_p95_ms": plan.objectives.latency_p95_ms,
                           "latency_increase": plan.objectives.latency_increase},
            "level": plan.level,
            "vms": rows,
            "recommendations": recs.to_dict(orient="records"),
            "pareto_frontier": list(plan.frontier()["vm"]),
            "notes": plan.notes,
            "evidence": self.evidence.to_json(),
        })


def _target_line(r: pd.Series, vms: pd.DataFrame, growth: float | None) -> str:
    months = r.get("months_until_target", math.nan)
    when = (f", reached in {months:,.1f} months at {percent(growth)} a month"
            if growth is not None and months is not None and math.isfinite(months) else "")
    if not isinstance(r["vm"], str):
        return f"- **{r['target_users']:,.0f} users**{when}: {r['reason']}."
    row = vms.loc[r["vm"]]
    currency = row.get("currency", "")
    currency = f" {currency}" if isinstance(currency, str) and currency else ""
    return (f"- **{r['target_users']:,.0f} users**{when}: **{r['vm']}** at {r['monthly_cost']:,.2f}{currency}/month; "
            f"it carries {r['users']:,.0f} users{interval_words(r['users'], row['users_low'], row['users_high'])}, "
            f"{row['cost_per_1000_users']:.2f} per 1,000 users per month.")


def fit_per_vm(curves: pd.DataFrame) -> dict:
    """A USL fit per VM of a curve table whose ``system`` column names the VM of each row.

    Parameters
    ----------
    curves : pandas.DataFrame
        A curve table with ``system``, ``concurrency`` and ``throughput``.

    Returns
    -------
    dict
        ``{vm: USLFit}``, in the order the VMs first appear.

    Raises
    ------
    PlanError
        No ``system`` column.
    InputError
        A VM's curve is refused (the message names the VM).
    """
    from capmodel.errors import InputError
    from capmodel.models.usl.fit import fit_usl

    if "system" not in curves.columns:
        raise PlanError("the curves need a 'system' column naming the VM of each row")
    fits = {}
    for vm, group in curves.groupby("system", sort=False):
        try:
            fits[str(vm)] = fit_usl(group.reset_index(drop=True))
        except InputError as exc:     # the curve rules' refusal, named by the VM whose rows it is about
            raise InputError(f"VM {vm}: {exc}") from None
    return fits


def _bundled_study() -> tuple[pd.DataFrame, pd.DataFrame, pd.Series]:
    from capmodel.data import datasets

    return (datasets.load(BENCHANT["catalog"]), datasets.load(BENCHANT["measurements"]),
            datasets.load(BENCHANT["baseline"]).iloc[0])


def measured_throughput(table: pd.DataFrame, vm: str | None, fits) -> float | None:
    """The baseline VM's measured throughput (its absolute ``throughput`` in the catalog or measurements), the
    baseline throughput when none is given; None for a VM with none, or with a fitted curve (a name in ``fits``)."""
    if vm is None or vm in fits or "throughput" not in table.columns:
        return None
    row = table[table["vm"] == vm]
    if row.empty or row["throughput"].isna().all():
        return None
    return float(row["throughput"].iloc[0])


def plan_study(catalog: pd.DataFrame | None = None, measurements: pd.DataFrame | None = None,
               fits: dict | None = None, baseline_vm: str | None = None, baseline_users: float | None = None,
               baseline_throughput: float | None = None, baseline_range: tuple[float, float] | None = None,
               baseline_utilization: float | None = None, ops_per_user: float | None = None, targets=(),
               objectives: Objectives | None = None, growth: float | None = None,
               current_users: float | None = None, level: float = 0.95,
               source: str | None = None, measurements_source: str | None = None, model: str = "usl") -> PlanStudy:
    """Plan every VM of a catalog and recommend the cheapest for each target user count.

    The workload (ops/s per user) comes from ``ops_per_user`` or from a baseline (users at a throughput); each VM's
    usable throughput under the objectives comes from its measurement or its fitted curve; users, costs and their
    intervals follow.

    Parameters
    ----------
    catalog : pandas.DataFrame, optional
        The VMs: ``vm``, ``monthly_cost`` and optionally ``family``, ``vcpu``, ``ram_gb``, ``storage``, ``currency``.
        None plans the bundled benchANT study, whose baseline fills in every baseline parameter not given.
    measurements : pandas.DataFrame, optional
        Per-VM measurements joined on ``vm`` (``join_measurements``).
    fits : dict, optional
        ``{vm: fit}``, fitted curves (``fit_per_vm`` makes them from a curve table with a ``system`` column).
    baseline_vm : str, optional
        The VM the baseline was measured on.
    baseline_users : float, optional
        The users the baseline served.
    baseline_throughput : float, optional
        Its ops/s; default the baseline VM's measured throughput.
    baseline_range : tuple of float, optional
        ``(low, high)`` of the baseline throughput, for the intervals.
    baseline_utilization : float, optional
        The baseline's CPU utilization (0–1).
    ops_per_user : float, optional
        The workload directly, instead of a baseline.
    targets : sequence of float, default ()
        User counts to recommend a VM for (whole numbers).
    objectives : Objectives, optional
        Default the study's (80 % utilization, p95 within 5 % of the baseline's) for the bundled catalog, 80 %
        utilization alone otherwise.
    growth : float, optional
        Monthly growth of the users (0.05 for 5 %), for the month each target is reached.
    current_users : float, optional
        Today's users, the start of that growth.
    level : float, default 0.95
        The intervals' coverage.
    source, measurements_source : str, optional
        Name the inputs in messages.
    model : {"usl", "recommended"}, default "usl"
        ``usl`` plans fitted VMs from the given fits and flags those whose comparison of the USL family prefers another
        model; ``recommended`` plans each from the model its comparison recommends.

    Returns
    -------
    PlanStudy

    Raises
    ------
    PlanError
        A catalog or measurement problem (named by file, column and row), an unknown baseline VM, measurements or fits
        without a catalog, no way to work out the workload, or no VM to plan.
    InputError
        A VM's curve is refused by the curve rules.

    Examples
    --------
    >>> from capmodel.plan import plan_study
    >>> study = plan_study(targets=[5000, 20000])            # the bundled benchANT study
    >>> study.recommendations[["target_users", "vm", "monthly_cost"]]
       target_users               vm  monthly_cost
    0        5000.0  m3-xlarge-8-SAS        797.76
    1       20000.0  m3-xlarge-8-SAS        797.76
    >>> study.evidence.grade
    'weak'
    """
    from capmodel.plan.assessment import choose_models

    model_notes: list[str] = []
    fits, comparisons = choose_models(dict(fits or {}), model, model_notes)
    if catalog is None:
        if measurements is not None or fits:
            raise PlanError("measurements and fitted curves need a catalog (catalog, --catalog: the prices of the VMs)")
        catalog, measurements, baseline = _bundled_study()
        source = source or BENCHANT_SOURCE
        baseline_vm = baseline_vm if baseline_vm is not None else str(baseline["vm"])
        if ops_per_user is None:
            baseline_users = baseline_users if baseline_users is not None else float(baseline["users"])
            if baseline_throughput is None:
                baseline_throughput = float(baseline["throughput"])
                if baseline_range is None:
                    baseline_range = (float(baseline["throughput_low"]), float(baseline["throughput_high"]))
            if baseline_utilization is None:
                baseline_utilization = float(baseline["cpu_util"])
        objectives = objectives if objectives is not None else BENCHANT_OBJECTIVES
    table = catalog if measurements is None else join_measurements(catalog, measurements, source,
                                                                   measurements_source or source)
    known = [str(v) for v in pd.DataFrame(table)["vm"]] if "vm" in pd.DataFrame(table).columns else []
    if baseline_vm is not None and known and str(baseline_vm) not in known and str(baseline_vm) not in (fits or {}):
        # named before the calibration, whose complaint (no absolute throughput) would hide the misspelled name
        raise PlanError(f"unknown baseline VM {str(baseline_vm)[:60]!r} (known: {', '.join(known[:20])}"
                        f"{' ...' if len(known) > 20 else ''})")
    if ops_per_user is not None:
        workload = user_load_from_ops_per_user(ops_per_user)
    else:
        if baseline_users is None:
            raise PlanError("give the users served at the baseline (baseline_users, --baseline-users; with a baseline "
                            "VM or throughput) or the ops/s per user (ops_per_user, --ops-per-user)")
        if baseline_throughput is None:
            baseline_throughput = measured_throughput(pd.DataFrame(table), baseline_vm, fits)
        if baseline_throughput is None:
            raise PlanError("give the ops/s at the baseline (baseline_throughput, --baseline-throughput), or a "
                            "baseline VM whose measurements hold an absolute throughput")
        low, high = baseline_range if baseline_range is not None else (None, None)
        workload = calibrate_user_load(baseline_users, baseline_throughput, baseline_utilization, low, high)
    plan = plan_vms(table, workload, objectives if objectives is not None else Objectives(), baseline_vm=baseline_vm,
                    fits=fits, level=level,
                    current_users=current_users, monthly_growth=growth, source=source, comparisons=comparisons)
    plan.notes.extend(model_notes)
    recommendations = plan.recommend(list(targets or []), current_users, growth)
    return PlanStudy(plan=plan, recommendations=recommendations, source=source or "", monthly_growth=growth,
                     current_users=current_users)


#: the columns of a VM row in the JSON, in order
VM_FIELDS = (
    "vm", "family", "vcpu", "ram_gb", "storage", "currency", "monthly_cost", "measured_throughput", "throughput",
    "throughput_low", "throughput_high", "usable_throughput", "usable_throughput_low", "usable_throughput_high",
    "binding_limit", "latency_ok", "latency_note", "users", "users_low", "users_high", "throughput_per_cost",
    "throughput_per_cost_low", "throughput_per_cost_high", "throughput_per_cost_vs_baseline", "cost_per_user",
    "cost_per_user_low", "cost_per_user_high", "cost_per_1000_users", "cost_per_1000_users_low",
    "cost_per_1000_users_high", "cost_per_1000_ops", "pareto", "runway_months", "runway_months_low",
    "runway_months_high",
)


def _tenths(value) -> str:
    """Months to one decimal, as the figure they stand beside."""
    return f"{value:,.1f}"


def _months(value, growth: float = 0.0) -> str:
    """A number of months for reading: 'now' at 0, 'never' when users do not grow (or shrink), else one decimal."""
    if value is None or value != value:
        return "unknown"
    if value == float("inf"):
        return "never (users shrink)" if growth < 0 else "never (no growth)"
    return "now (already there)" if value == 0 else f"{_tenths(value)} months"   # one decimal, as the reports


def _recommendation_lines(recommendations, currency: str = "", growth: float | None = None) -> list[str]:
    lines = []
    for _, r in recommendations.iterrows():
        when = ""
        if growth is not None and "months_until_target" in r:
            when = f" [reached in {_months(r['months_until_target'], growth)} at {percent(growth)} a month]"
        if isinstance(r.get("vm"), str):
            lines.append(f"{integer(r['target_users']):>10} users -> {r['vm']} ({money(r['monthly_cost'], currency)}"
                         f"/month, {integer(r['users'])} users capacity){when}")
        else:
            lines.append(f"{integer(r['target_users']):>10} users -> none: {r['reason']}{when}")
    return lines


def _runway_lines(plan, growth: float, current_users: float) -> list[str]:
    """Per VM: months until users growing by ``growth`` a month from ``current_users`` fill it, with the interval."""
    lines = [f"Runway at {percent(growth)} monthly growth from {plural(current_users, 'user')} (months until each VM "
             "is full):"]
    for _, r in plan.vms.iterrows():
        low, high = r.get("runway_months_low"), r.get("runway_months_high")
        span = f" (interval {_tenths(low)} to {_tenths(high)})" if shows_width(low, high, _tenths) else ""
        full = "no users planned on it" if r["users"] != r["users"] else _months(r["runway_months"], growth) + span
        if r["users"] == r["users"] and current_users > r["users"]:   # "already there" hid a VM 4x too small
            full = (f"now: already over, {integer(current_users)} users today against the {integer(r['users'])} "
                    "it carries")
        lines.append(f"  {r['vm']:<20} {full}")
    return lines


def _currency(plan) -> str:
    """The catalog's currency when it has one (one value for all VMs), else empty."""
    if "currency" not in plan.vms.columns:
        return ""
    values = {str(c) for c in plan.vms["currency"].dropna()}
    return values.pop() if len(values) == 1 else ""
