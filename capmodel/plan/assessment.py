"""The verdict on each VM of a plan, and on the plan's answer: what each capacity rests on.

A VM planned from one measured point gets its throughput at the utilization target by the utilization law
(X = U / D: throughput in proportion to utilization). That holds while the service demand D stays constant; above the
measured utilization nothing checks it (queues, locks and cache pressure grow with load), so a throughput scaled *up*
past the measured utilization is an extrapolation (weak), and so is a latency objective checked at the measured load
when the plan puts more load on the VM. A utilization taken from the baseline instead of measured on the VM is an
assumption (weak). A VM planned from a fitted curve carries its capacity's verdict (``capacity_from_fit``).
"""
from __future__ import annotations

import math

import pandas as pd

from capmodel.formatting import aside, number
from capmodel.models.evidence import Evidence, Reason

USL_FAMILY = ("linear", "amdahl", "usl")   # the models whose closed forms capacity planning reads (plan.scaling)
PLAN_MODELS = ("usl", "recommended")
SCALED_TOLERANCE = 1e-6                      # relative: a throughput this close to the measured one is the measured one


def compare_family(fit):
    """The ranking of the USL family on ``fit``'s curve (no extrapolation check), or None when it cannot be ranked."""
    from capmodel.errors import CapmodelError
    from capmodel.models.usl.selection import compare_models

    try:
        return compare_models(fit.curve, models=list(USL_FAMILY), extrapolation=False)
    except CapmodelError:
        return None


def choose_models(fits: dict, model: str, notes: list[str]) -> tuple[dict, dict]:
    """(fits to plan from, comparisons by VM). ``model='recommended'`` plans each VM from the model its comparison
    recommends; ``'usl'`` keeps the USL. Either way a note says when the two differ."""
    from capmodel.errors import PlanError

    if model not in PLAN_MODELS:
        raise PlanError(f"model (--model) must be one of {', '.join(PLAN_MODELS)}, got {model!r}")
    chosen, comparisons = {}, {}
    for vm, fit in fits.items():
        comparison = compare_family(fit)
        comparisons[vm] = comparison
        chosen[vm] = fit
        if comparison is None or comparison.recommended == fit.model:
            continue
        if model == "recommended":
            chosen[vm] = comparison.best_fit
            notes.append(f"{vm}: planned from the {comparison.recommended} model, which the comparison recommends "
                         f"{aside(comparison.reason)}, instead of the {fit.model}")
        else:
            notes.append(f"{vm}: planned from the {fit.model} model although the comparison recommends "
                         f"{comparison.recommended} {aside(comparison.reason)}; --model recommended plans from it")
    return chosen, comparisons


#: a p95 below this many ms (20 µs) is faster than any client-timed MongoDB round trip (a loopback request alone takes
#: tens of µs): the column holds seconds, not ms (a 1,000x slip that makes every ms target pass)
LEAST_P95_MS = 0.02


def p95_unit_reason(vm: str, p95_ms: float | None):
    """A weak ``latency_scale`` reason when a measured p95 is below ``LEAST_P95_MS`` (None otherwise)."""
    if p95_ms is None or not math.isfinite(p95_ms) or not 0 < p95_ms < LEAST_P95_MS:
        return None
    return Reason("latency_scale", "weak", f"{vm}: the measured p95 of {number(p95_ms, 3)} ms is faster than any "
                  f"client-timed MongoDB operation ({number(LEAST_P95_MS)} ms): is latency_p95_ms in seconds?",
                  float(p95_ms))


def assess_measured_vm(vm: str, measured: float, utilization: float | None, utilization_measured: bool,
                       planned: float, latency_checked: bool, p95_ms: float | None = None) -> Evidence:
    """A VM planned from one measured point: utilization assumed, throughput scaled past the measured load, latency
    not measured at the planned load, a p95 too fast to be in ms (``p95_ms``, given when a latency objective used
    it)."""
    reasons = [p95_unit_reason(vm, p95_ms)]
    if utilization is not None and not utilization_measured:
        reasons.append(Reason("utilization_assumed", "weak", f"{vm}: no utilization was measured; it is taken as "
                              f"the baseline's {utilization:.0%}", float(utilization)))
    scaled = (math.isfinite(planned) and math.isfinite(measured) and measured > 0
              and planned > measured * (1 + SCALED_TOLERANCE))
    if scaled and utilization is not None:
        reasons.append(Reason("utilization_extrapolation", "weak", f"{vm}: {measured:,.0f} ops/s measured at "
                              f"{utilization:.0%} utilization is scaled to {planned:,.0f} ops/s by the utilization "
                              f"law; nothing was measured above {utilization:.0%}", float(planned / measured)))
    if scaled and latency_checked:
        reasons.append(Reason("latency_unmeasured", "weak", f"{vm}: latency was measured at {measured:,.0f} ops/s, "
                              f"not at the planned {planned:,.0f} ops/s", float(planned / measured)))
    return Evidence.of(*reasons)


def assess_fitted_vm(vm: str, fit, capacity, comparison=None) -> Evidence:
    """A VM planned from a fitted curve: its capacity's verdict (``capacity_from_fit``'s: the curve's reasons, the
    capacity's own interval, the fit's on its peak when the capacity is read off it, the latency target's fate),
    each reason named by VM. Without a capacity (none could be planned), the fit's own verdict."""
    from capmodel.models.usl.verdict.assessment import fit_verdict

    verdict = capacity.evidence if capacity is not None else fit_verdict(fit, comparison)
    return Evidence(tuple(Reason(r.code, r.grade, f"{vm}: {r.message}", r.value, r.next_step)
                          for r in verdict.reasons))


def fitted_evidence(fits: dict, capacities: dict, comparisons: dict) -> dict:
    """VM name -> Evidence for every VM planned from a fitted curve."""
    return {vm: assess_fitted_vm(vm, fit, capacities.get(vm), comparisons.get(vm)) for vm, fit in fits.items()}


def plan_evidence(table: pd.DataFrame, vms: pd.DataFrame, fitted: dict, objectives,
                  reference_utilization: float | None) -> dict:
    """VM name -> Evidence for every planned VM (``table``: the planned catalog rows; ``vms``: the planning table;
    ``fitted``: the fitted VMs' verdicts, from ``fitted_evidence``)."""
    out = {}
    measured_util = table.set_index("vm")["cpu_util"] if "cpu_util" in table.columns else pd.Series(dtype=float)
    for _, row in vms.iterrows():
        vm = row["vm"]
        if vm in fitted:
            out[vm] = fitted[vm]
            continue
        own = measured_util.get(vm, math.nan)
        has_own = own is not None and not pd.isna(own)
        utilization = float(own) if has_own else reference_utilization
        if objectives.utilization_target is None:
            utilization = None
        p95 = (table.set_index("vm")["latency_p95_ms"].get(vm) if objectives.has_latency
               and "latency_p95_ms" in table.columns else None)
        out[vm] = assess_measured_vm(vm, float(row["measured_throughput"]), utilization, has_own,
                                     float(row["throughput"]), row.get("latency_ok") in (True,),
                                     None if p95 is None or pd.isna(p95) else float(p95))
    return out


def combined(evidence: dict, vms) -> Evidence:
    """The verdict of an answer naming ``vms``: their reasons together."""
    total = Evidence()
    for vm in vms:
        if vm in evidence:
            total = total + evidence[vm]
    return total


def assess_scale_out(answers: dict, fit=None, measured: dict | None = None, assumed: str = "",
                     unit: str = "nodes") -> tuple[Evidence, dict]:
    """The verdict on node or shard counts: (the study's, one per answer). ``answers``: label -> the count answered
    (None where unreachable). With a ``fit`` over the count, ``assess_fit`` at the largest answer and each answer's
    extrapolation beyond the measured curve; without, the assumed scaling (``assumed``: its parameters in words) and
    each answer's multiple of the count it was measured at (``measured``: label -> count; weak at most, since the
    answer is explicitly conditional on the assumption)."""
    from capmodel.models.usl.verdict.assessment import EXTRAPOLATION_WEAK, assess_fit, check_extrapolation

    per, counts = {}, [n for n in answers.values() if n is not None]
    if fit is not None:
        largest = float(max(fit.concurrency))
        for label, n in answers.items():
            per[label] = Evidence.of(check_extrapolation(n, largest, f"{label}: the {unit[:-1]} count", unit))
        study = assess_fit(fit, answer_concurrency=max(counts) if counts else None, unit=unit,
                           what=f"the largest {unit[:-1]} count")
        if counts:   # each count's extrapolation is its own reason below
            study = Evidence(tuple(r for r in study.reasons if r.code != "extrapolation"))
        for verdict in per.values():
            study = study + verdict
        return study, per
    basis = Reason("assumed_scaling", "weak", f"the {unit[:-1]} counts rest on assumed scaling ({assumed}), not on "
                   f"a curve measured over {unit}")
    for label, n in answers.items():
        base = (measured or {}).get(label)
        reasons = []
        if n is not None and base and n / base > EXTRAPOLATION_WEAK:
            reasons.append(Reason("extrapolation", "weak", f"{label}: {n:,.0f} {unit} is {n / base:.1f}x the "
                                  f"{number(base, 6)} measured; the count follows from the assumed scaling, not from a "
                                  "measurement at that size", float(n / base)))
        per[label] = Evidence.of(*reasons)
    study = Evidence.of(basis)
    for verdict in per.values():
        study = study + verdict
    return study, per
