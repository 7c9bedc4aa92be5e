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
from capmodel.formatting import interval_words, percent
from capmodel.plan.calibration import calibrate_workload, workload_from_ops_per_user
from capmodel.plan.capacity import Objectives
from capmodel.plan.catalog import join_measurements
from capmodel.plan.planner import CapacityPlan, plan_vms

BENCHANT = {"catalog": "benchant_vms", "measurements": "benchant_throughput", "baseline": "benchant_baseline"}
BENCHANT_SOURCE = "benchANT study (bundled)"
BENCHANT_OBJECTIVES = Objectives(utilization_target=0.8, latency_increase=0.05)  # "no more than 5% above"


@dataclass(frozen=True)
class PlanStudy:
    """The result of ``plan_study``: the ``plan`` (one row per VM in ``plan.vms``), the ``recommendations`` (one
    row per target), where the inputs came from (``source``) and the growth rate the runways assume."""

    plan: CapacityPlan
    recommendations: pd.DataFrame
    source: str
    monthly_growth: float | None = None

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
        parts = [f"Objectives: {self.plan.objectives.describe()}; workload {self.plan.workload.summary()}.", ""]
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
    """A USL fit per VM of a curve table whose ``system`` column names the VM of each row."""
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


def _measured_throughput(table: pd.DataFrame, vm: str | None, fits: dict) -> float | None:
    """The baseline VM's measured throughput (absolute column), when none was given."""
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
    """Plan every VM of ``catalog`` and recommend one per target user count.

    ``catalog``: vm, monthly_cost [, family, vcpu, ram_gb, storage, currency] (None: the bundled benchANT study, whose
    baseline fills in every baseline keyword not given); ``measurements``: per-VM rows joined by vm; ``fits``: VM name
    -> fitted USL (see ``fit_per_vm``). The workload comes from ``ops_per_user`` or from the baseline (users and
    throughput, the throughput defaulting to the baseline VM's measured one; ``baseline_range`` (low, high) gives the
    intervals). ``objectives`` default to the study's (80% utilization, p95 within 5% of the baseline) for the bundled
    catalog and to 80% utilization alone otherwise. ``growth`` (monthly) adds runways; ``level`` is the intervals'.
    ``source`` and ``measurements_source`` name the inputs in messages. ``model``: ``usl`` (default) plans fitted VMs
    from the given fits and flags those whose comparison of the USL family prefers another model; ``recommended``
    plans each from the model its comparison recommends.
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
        workload = workload_from_ops_per_user(ops_per_user)
    else:
        if baseline_users is None:
            raise PlanError("give the users served at the baseline (baseline_users, --baseline-users; with a baseline "
                            "VM or throughput) or the ops/s per user (ops_per_user, --ops-per-user)")
        if baseline_throughput is None:
            baseline_throughput = _measured_throughput(pd.DataFrame(table), baseline_vm, fits)
        if baseline_throughput is None:
            raise PlanError("give the ops/s at the baseline (baseline_throughput, --baseline-throughput), or a "
                            "baseline VM whose measurements hold an absolute throughput")
        low, high = baseline_range if baseline_range is not None else (None, None)
        workload = calibrate_workload(baseline_users, baseline_throughput, baseline_utilization, low, high)
    plan = plan_vms(table, workload, objectives if objectives is not None else Objectives(), baseline_vm=baseline_vm,
                    fits=fits, level=level,
                    current_users=current_users, monthly_growth=growth, source=source, comparisons=comparisons)
    plan.notes.extend(model_notes)
    recommendations = plan.recommend(list(targets or []), current_users, growth)
    return PlanStudy(plan=plan, recommendations=recommendations, source=source or "", monthly_growth=growth)
