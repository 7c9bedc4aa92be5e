"""The planning table: every VM of a catalog with its usable throughput, users, binding limit and economics, each with
an interval, plus recommendations per target user count.

Inputs are a catalog joined with measurements (``catalog.join_measurements``) and/or fitted curves per VM, a
``UserLoad`` (ops/s per user) and ``Objectives``. Intervals: the plan is evaluated at the ends of every stated range
(baseline throughput, relative throughput) and at the ends of fitted capacities' intervals (their ranges over the
fits' likelihood regions, ``capacity_from_fit``); each figure's interval is the span of those evaluations.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from capmodel.errors import PlanError
from capmodel.formatting import aside
from capmodel.models.runway import runway_months
from capmodel.plan.assessment import fitted_evidence, plan_evidence
from capmodel.plan.calibration import UserLoad
from capmodel.plan.capacity import (
    FitCapacity,
    Objectives,
    capacity_from_fit,
    curve_service_demand,
    throughput_at_utilization_target,
)
from capmodel.plan.catalog import require_vm, validate_catalog, validate_measurements
from capmodel.plan.economics import add_economics, pareto_frontier
from capmodel.plan.growth import growth_plan
from capmodel.plan.intervals import finite_range
from capmodel.plan.latency import p95_at_throughput_ms, point_meets_latency, qualitative_columns

INTERVAL_COLUMNS = (
    "measured_throughput", "throughput", "usable_throughput", "users", "throughput_per_cost",
    "throughput_per_cost_vs_baseline", "cost_per_user", "cost_per_1000_users", "cost_per_1000_ops",
)
ONE_SIDED = " †"
ONE_SIDED_NOTE = ("†: the estimate is an end of its interval, which is one-sided: a measured VM's stated range ends "
                  "at the figure used (a relative throughput stated as 2.5-2.6x and used as 2.6x); a fitted VM's "
                  "interval ends at its fitted figure")
SCENARIOS = [("value", "value")] + [(r, b) for r in ("low", "high") for b in ("low", "high")]


def _value(row: pd.Series, name: str, side: str) -> float:
    col = name if side == "value" else f"{name}_{side}"
    value = row.get(col, math.nan)
    return math.nan if value is None or pd.isna(value) else float(value)


def _measured(row: pd.Series, side: str, workload: UserLoad) -> float:
    relative = _value(row, "relative_throughput", side)
    if math.isnan(relative):
        return _value(row, "throughput", side)
    if workload.baseline_throughput is None:
        raise PlanError(f"VM '{row['vm']}' has a relative throughput but the workload has no baseline throughput to "
                        "scale it by (ops per user alone does not give one); calibrate from a baseline (users and "
                        "ops/s) or give the baseline throughput")
    return relative * workload.baseline_throughput


def _evaluate(table, workload, objectives, fit_caps, reference_util, baseline_p95, rel_side, base_side,
              baseline_vm, unsupported=frozenset()) -> pd.DataFrame:
    wl = workload.at(base_side)
    rows = []
    for _, row in table.iterrows():
        out = {"vm": row["vm"], "monthly_cost": float(row["monthly_cost"])}
        cap = fit_caps.get(row["vm"])
        if cap is not None:
            def pick(name, cap=cap):
                if rel_side == "value" or math.isnan(getattr(cap, f"{name}_{rel_side}")):
                    return getattr(cap, name)
                return getattr(cap, f"{name}_{rel_side}")
            unusable = row["vm"] in unsupported   # the curve's verdict forbids a capacity: no users planned
            out.update(measured_throughput=math.nan, throughput=math.nan if unusable else pick("throughput"),
                       usable_throughput=math.nan if unusable else pick("usable_throughput"),
                       binding_limit="unsupported" if unusable else cap.binding_limit,
                       latency_ok=(cap.usable_throughput > 0) if objectives.has_latency else None,
                       latency_note=cap.latency_basis)
        else:
            measured = _measured(row, rel_side, wl)
            util = _value(row, "cpu_util", "value")
            util = reference_util if math.isnan(util) else util
            throughput = throughput_at_utilization_target(measured, util, objectives)
            ok, why = point_meets_latency(row, objectives, baseline_p95)
            failed = ok is False
            out.update(
                measured_throughput=measured, throughput=throughput,
                usable_throughput=math.nan if failed else throughput,
                binding_limit="latency" if failed else (
                    "utilization" if objectives.utilization_target is not None and util is not None
                    else "measured load"),
                latency_ok=ok, latency_note=why,
            )
        out["users"] = out["usable_throughput"] / wl.ops_per_user
        rows.append(out)
    return add_economics(pd.DataFrame(rows), baseline_vm)


#: the table's note on "none", by what its VMs' "none" rows are: objectives failed (o), unsupported curves (u);
#: {see}: where the page shows which objective failed (report 03: its latency table), or nothing
_NONE_NOTES = {
    frozenset("o"): '"none": the VM fails an objective{see}, so it carries no users',
    frozenset("u"): '"none": the VM\'s curve supports no capacity (unsupported: see its evidence), so no users '
                    'are planned on it',
    frozenset("ou"): '"none": the VM fails an objective{see}, or its curve supports no capacity (unsupported: see '
                     'its evidence), so it carries no users',
}


def none_note(limits, without_users, see: str = "") -> list[str]:
    """The note on "none" that is true of a VM table's rows without users (``limits``: each row's binding limit,
    ``without_users``: whether the row carries none); no such row, no note. Plan's table and report 03's use it;
    ``see`` names where the page shows the failed objective ("the latency table"), said only when a row failed the
    latency objective."""
    rows = [limit for limit, none in zip(limits, without_users) if none]
    kinds = frozenset("u" if limit == "unsupported" else "o" for limit in rows)
    pointer = f" (see {see})" if see and "latency" in rows else ""
    return [_NONE_NOTES[kinds].format(see=pointer)] if kinds else []


def _estimate(row: pd.Series, name: str, shown) -> str:
    """A figure and its interval for reading (``shown``: a capmodel.formatting function); "none" when missing."""
    from capmodel.formatting import is_missing, shows_width

    value, low, high = row.get(name), row.get(f"{name}_low"), row.get(f"{name}_high")
    if is_missing(value) or not math.isfinite(float(value)):
        return "none"
    text = shown(value)
    if not shows_width(low, high, shown):
        return text
    # an end equal to the estimate is one-sided, not degenerate: the input's stated range ends at the figure used
    # (benchANT: s3-2xlarge-8 "2.5-2.6x", used 2.6x); the marker sends the reader to the table's footnote
    edge = ONE_SIDED if text in (shown(low), shown(high)) else ""
    return f"{text} ({shown(low)} to {shown(high)}){edge}"


def _tidy(x: float) -> float:
    return float(f"{x:.12g}") if math.isfinite(x) else x


@dataclass
class CapacityPlan:
    """The result of ``plan_vms``: one row per VM, the inputs and the assumptions made.

    ``recommend(targets)`` picks the cheapest VM per target, ``frontier()`` gives the Pareto frontier of cost against
    users, ``vm_table()`` and ``summary()`` show the plan, ``evidence`` is its verdict.

    Attributes
    ----------
    vms : pandas.DataFrame
        One row per VM: ``usable_throughput``, ``users``, ``binding_limit``, ``latency_ok``, the economics
        (``cost_per_1000_users`` ...), each figure with ``_low`` and ``_high``, and ``pareto``.
    workload : Workload
        Ops/s per user.
    objectives : Objectives
        What each VM was held to.
    baseline_vm : str or None
        The baseline VM.
    level : float
        The intervals' coverage.
    notes : list of str
        The assumptions made and the VMs left out.
    fit_capacities : dict
        ``{vm: FitCapacity}`` of the fitted VMs.
    vm_evidence : dict
        ``{vm: Evidence}``, each VM's verdict.
    """

    vms: pd.DataFrame
    workload: UserLoad
    objectives: Objectives
    baseline_vm: str | None
    level: float
    notes: list[str] = field(default_factory=list)
    fit_capacities: dict[str, FitCapacity] = field(default_factory=dict)
    vm_evidence: dict = field(default_factory=dict)   # VM name -> Evidence (capmodel.plan.assessment)

    @property
    def objectives_text(self) -> str:
        """The objectives in words, saying where the utilization target was applied to a fitted peak (no CPU
        utilization measured) rather than to a measured utilization."""
        on_peak = [vm for vm, capacity in self.fit_capacities.items() if capacity.utilization_on_peak]
        every = bool(on_peak) and len(on_peak) == len(self.vms)
        return self.objectives.describe(on_peak=True if every else on_peak)

    @property
    def evidence(self):
        """The verdict on the plan as a whole (``evidence_for()``: every planned VM's reasons together); each VM's own
        is in ``vm_evidence``."""
        return self.evidence_for()

    def evidence_for(self, vms=None):
        """The verdict on an answer naming ``vms`` (default: every planned VM): their reasons together."""
        from capmodel.plan.assessment import combined

        return combined(self.vm_evidence, list(self.vms["vm"]) if vms is None else vms)

    def recommend(self, targets, current_users: float | None = None,
                  monthly_growth: float | None = None) -> pd.DataFrame:
        """One row per target user count: the cheapest VM that carries it (or why none does)."""
        if current_users is None:
            current_users = self.workload.baseline_users
        return growth_plan(self.vms, targets, current_users, monthly_growth, self.objectives.utilization_target)

    def frontier(self) -> pd.DataFrame:
        """Pareto frontier of monthly cost against users."""
        return pareto_frontier(self.vms)

    def vm_table(self):
        """Every VM under the objectives, as a ``capmodel.formatting.Table`` (figures with their intervals)."""
        from capmodel.formatting import Column, integer, money, number, table

        currency = {str(c) for c in self.vms.get("currency", pd.Series(dtype=object)).dropna()}
        unit = currency.pop() if len(currency) == 1 else ""
        cost = f"{unit}/month" if unit else "per month"
        frame = pd.DataFrame([{
            "vm": r["vm"], "monthly_cost": r["monthly_cost"], "throughput": _estimate(r, "throughput", integer),
            "per_cost": _estimate(r, "throughput_per_cost", number),
            "usable": _estimate(r, "usable_throughput", integer), "users": _estimate(r, "users", integer),
            "per_users": _estimate(r, "cost_per_1000_users", money), "limit": str(r["binding_limit"]).replace("_", " ")}
            for _, r in self.vms.iterrows()])
        made = table(frame, {
            "vm": Column("VM", "text"), "monthly_cost": Column(f"cost ({cost})", "money"),
            "throughput": Column("throughput (ops/s)"), "per_cost": Column(f"ops/s per {unit or 'cost unit'}"),
            "usable": Column("usable (ops/s)"), "users": Column("users"),
            "per_users": Column(f"per 1,000 users ({cost})"), "limit": Column("binding limit", "text")},
            footnotes=none_note(frame["limit"], frame["users"] == "none"))
        if frame.map(lambda v: str(v).endswith(ONE_SIDED)).any().any():
            made.footnotes = [*made.footnotes, ONE_SIDED_NOTE]
        return made

    def summary(self) -> str:
        lines = [f"User load: {self.workload.summary()}", f"Objectives: {self.objectives_text}"]
        if self.baseline_vm:
            lines.append(f"Baseline VM: {self.baseline_vm}")
        lines.append("")
        lines.append(self.vm_table().text())
        frontier = ", ".join(self.frontier()["vm"])
        lines += ["", f"Pareto frontier (cost vs users): {frontier or 'none'}"]
        lines += [f"Note: {n}" for n in self.notes]
        lines += ["", "Evidence per VM:"] + [f"  {vm}: {self.vm_evidence[vm].grade}" + (
            " " + aside('; '.join(r.message.removeprefix(vm + ': ') for r in self.vm_evidence[vm].reasons))
            if self.vm_evidence[vm].reasons else "") for vm in self.vms["vm"] if vm in self.vm_evidence]
        return "\n".join(lines)


def _planned_rows(catalog, fits, source, notes) -> pd.DataFrame:
    """Catalog rows that have a measurement or a fitted curve, measurements checked; the others named in ``notes``."""
    table = validate_catalog(catalog, source)
    for vm in fits:
        require_vm(table, vm)
    measured_cols = [c for c in ("throughput", "relative_throughput") if c in table.columns]
    has_measure = table[measured_cols].notna().any(axis=1) if measured_cols else pd.Series(False, index=table.index)
    keep = has_measure | table["vm"].isin(fits)
    if not keep.any():
        raise PlanError(f"{source + ': ' if source else ''}no VM has a throughput, relative_throughput or fitted curve")
    if not keep.all():
        notes.append(f"left out (nothing measured): {', '.join(table.loc[~keep, 'vm'])}")
    table = table[keep]
    by_point = ~table["vm"].isin(fits)
    if by_point.any():
        checked = validate_measurements(table[by_point], source)
        checked.index = table.index[by_point]
        table = pd.concat([checked, table[~by_point]]).sort_index()
    return table.reset_index(drop=True)


def _reference_utilization(table, workload, base_row, fits, objectives, notes) -> float | None:
    """Utilization at which VMs without a measured one are taken to have been measured: the baseline's."""
    reference = workload.baseline_utilization
    if reference is None and base_row is not None and not pd.isna(base_row.get("cpu_util", math.nan)):
        reference = float(base_row["cpu_util"])
    if reference is not None and objectives.utilization_target is not None:
        cpu = table["cpu_util"] if "cpu_util" in table.columns else pd.Series(math.nan, index=table.index)
        assumed = table.loc[cpu.isna() & ~table["vm"].isin(fits), "vm"]
        if len(assumed):
            notes.append(f"no utilization measured for {', '.join(assumed)}: taken as measured at the baseline's "
                         f"{reference:.0%}")
    return reference


def _idle_peak_fraction(fits, objectives) -> list[str]:
    """A note when the peak fraction adds no limit: on a curve with no utilization measured, the utilization target is
    itself taken as that fraction of the fitted peak (plan.capacity), so a peak fraction at or above it never binds."""
    target, fraction = objectives.utilization_target, objectives.peak_fraction
    if target is None or fraction is None or fraction < target:
        return []
    unmeasured = [vm for vm, fit in fits.items() if curve_service_demand(fit.curve) is None]
    if not unmeasured:
        return []
    return [f"the peak fraction ({fraction:.0%}) adds no limit for {', '.join(unmeasured)}: with no utilization "
            f"measured on their curves the utilization target ({target:.0%}) is taken as {target:.0%} of the fitted "
            "peak, at or below it; give a peak fraction below the utilization target, or raise the target"]


def _baseline_p95_ms(table, workload, base_row, baseline_vm, fits, objectives) -> float | None:
    """The baseline's p95 (ms) a relative latency target is measured against (None: compare in words)."""
    if objectives.latency_increase is None:
        return None
    if base_row is None:
        raise PlanError("a relative latency target needs a baseline VM to compare with")
    if baseline_vm in fits:
        if workload.baseline_throughput is None:
            raise PlanError("a relative latency target on fitted curves needs the baseline throughput")
        return p95_at_throughput_ms(fits[baseline_vm], workload.baseline_throughput)
    if not pd.isna(base_row.get("latency_p95_ms", math.nan)):
        return float(base_row["latency_p95_ms"])
    if not qualitative_columns(table):
        raise PlanError("a relative latency target needs latency_p95_ms (or <op>_latency_vs_baseline columns) for "
                        "the baseline VM")
    return None


def _with_intervals(evaluations: list[pd.DataFrame]) -> pd.DataFrame:
    """The point evaluation with ``<col>_low``/``<col>_high``: the span of each figure over all evaluations."""
    vms = evaluations[0]
    for col in INTERVAL_COLUMNS:
        if col in vms.columns:
            stacked = np.vstack([e[col].to_numpy(dtype=float) for e in evaluations])
            ends = [finite_range(stacked[:, i]) for i in range(stacked.shape[1])]
            vms[f"{col}_low"] = [e[0] for e in ends]
            vms[f"{col}_high"] = [e[1] for e in ends]
    numeric = vms.select_dtypes("float").columns
    vms[numeric] = vms[numeric].apply(lambda col: col.map(_tidy))  # drop float noise such as 24999.999999999996
    return vms


def plan_vms(catalog: pd.DataFrame, workload: UserLoad, objectives: Objectives | None = None,
             baseline_vm: str | None = None, fits: dict | None = None, level: float = 0.95,
             current_users: float | None = None, monthly_growth: float | None = None,
             source: str | None = None, comparisons: dict | None = None) -> CapacityPlan:
    """Plan every VM of a catalog: its usable throughput, users, binding limit and economics, each with an interval.

    VMs with a measurement or a fitted curve are planned; the others are left out and ``notes`` says so. Each figure's
    interval is the span of the plan evaluated at the ends of every stated range and of the fitted capacities'
    intervals.

    Parameters
    ----------
    catalog : pandas.DataFrame
        The VMs and their prices, joined with measurements (``join_measurements``) where there are some.
    workload : Workload
        Ops/s per user (``calibrate_user_load`` or ``user_load_from_ops_per_user``).
    objectives : Objectives, optional
        Default ``Objectives()``: 80 % utilization.
    baseline_vm : str, optional
        The baseline VM: relative throughputs and a relative latency target are measured against it.
    fits : dict, optional
        ``{vm: fit}``, fitted curves.
    level : float, default 0.95
        The intervals' coverage.
    current_users : float, optional
        Today's users, for the runways.
    monthly_growth : float, optional
        Their monthly growth.
    source : str, optional
        Names the catalog in messages.
    comparisons : dict, optional
        ``{vm: ModelComparison}``: each fitted VM's verdict then says whether its model is the recommended one.

    Returns
    -------
    CapacityPlan

    Raises
    ------
    PlanError
        ``level`` is out of range, a catalog or measurement problem, an unknown baseline VM, a latency target without
        latency measurements, or no VM to plan.
    """
    objectives = objectives or Objectives()
    if not 0 < level < 1:
        raise PlanError(f"confidence level must be between 0 and 1, got {level!r}")
    fits = dict(fits or {})
    notes: list[str] = []
    table = _planned_rows(catalog, fits, source, notes)
    base_row = require_vm(table, baseline_vm, "baseline VM") if baseline_vm is not None else None
    reference_util = _reference_utilization(table, workload, base_row, fits, objectives, notes)
    baseline_p95 = _baseline_p95_ms(table, workload, base_row, baseline_vm, fits, objectives)
    if objectives.latency_p95_ms is not None and "latency_p95_ms" not in table.columns and len(fits) < len(table):
        raise PlanError("a latency target needs a latency_p95_ms column in the measurements (or fitted curves)")
    if objectives.peak_fraction is not None and len(fits) < len(table):
        notes.append("the peak fraction applies only to VMs with a fitted curve")
    notes += _idle_peak_fraction(fits, objectives)

    fit_caps = {vm: capacity_from_fit(fit, objectives, level, baseline_p95_ms=baseline_p95,
                                      comparison=(comparisons or {}).get(vm))
                for vm, fit in fits.items()}

    fitted = fitted_evidence(fits, fit_caps, comparisons or {})
    unsupported = frozenset(vm for vm, verdict in fitted.items() if not verdict.usable)
    vms = _with_intervals([_evaluate(table, workload, objectives, fit_caps, reference_util, baseline_p95, r, b,
                                     baseline_vm, unsupported) for r, b in SCENARIOS])
    for vm in sorted(unsupported):
        notes.append(f"{vm}: no users planned: its fitted curve cannot support a capacity (evidence unusable: "
                     + "; ".join(r.message.removeprefix(vm + ": ") for r in fitted[vm].reasons
                                 if r.grade == "unusable") + ")")
    for extra in ("family", "vcpu", "ram_gb", "storage", "currency", "batch"):
        if extra in table.columns:
            vms[extra] = table[extra].to_numpy()
    vms["pareto"] = vms["vm"].isin(set(pareto_frontier(vms)["vm"]))
    for _, r in vms[vms["latency_ok"] == False].iterrows():  # noqa: E712 - three-valued column
        notes.append(f"{r['vm']} fails the latency objective ({r['latency_note']}); no users planned on it")
    evidence = plan_evidence(table, vms, fitted, objectives, reference_util)
    for vm, verdict in evidence.items():
        notes.extend(r.message for r in verdict.reasons
                     if r.code in ("utilization_extrapolation", "latency_unmeasured"))
    if monthly_growth is not None:
        users_now = current_users if current_users is not None else workload.baseline_users
        if users_now is None:
            raise PlanError("a runway needs the current number of users (current_users, --current-users; or a "
                            "baseline with its users, --baseline-users)")
        for suffix in ("", "_low", "_high"):
            vms[f"runway_months{suffix}"] = runway_months(vms[f"users{suffix}"].to_numpy(), users_now, monthly_growth,
                                                          error=PlanError)
    return CapacityPlan(vms=vms, workload=workload, objectives=objectives, baseline_vm=baseline_vm, level=level,
                        notes=notes, fit_capacities=fit_caps, vm_evidence=evidence)
