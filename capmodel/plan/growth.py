"""Growth: the cheapest VM for a target user count, a plan for several targets, and the runway (months until a VM
runs out) under compound monthly user growth: months = ln(capacity / users) / ln(1 + g)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from capmodel.constraints import typed
from capmodel.errors import PlanError
from capmodel.formatting import plural
from capmodel.models.runway import runway_months
from capmodel.plan.checks import positive


def cheapest_for_target(vms: pd.DataFrame, target_users, utilization_target: float | None = None) -> dict:
    """The cheapest VM that carries ``target_users`` under the plan's objectives.

    Parameters
    ----------
    vms : pandas.DataFrame
        A planning table (``CapacityPlan.vms``).
    target_users : float
        A whole number of users (> 0).
    utilization_target : float, optional
        The plan's utilization target: adds the utilization the VM runs at for the target.

    Returns
    -------
    dict
        ``target_users``, ``vm`` (None when no VM carries it), ``monthly_cost``, ``users`` with ``users_low`` and
        ``users_high``, ``spare_users``, ``reason`` in words; when none does, ``largest_vm`` and ``shortfall_users``
        name the VM closest to the target (and ``utilization_needed`` on it).

    Raises
    ------
    PlanError
        ``target_users`` is not a whole number > 0.
    """
    target = positive(target_users, "target users")
    if not float(target).is_integer():   # a count of people: 0.5 users would be planned and printed as "0 users"
        raise PlanError(f"target users must be a whole number of users, got {typed(target)}")
    usable = vms[np.isfinite(vms["users"].astype(float))]
    fits = usable[usable["users"] >= target].sort_values(["monthly_cost", "users"], ascending=[True, False])
    row: dict[str, Any] = {"target_users": target, "vm": None}
    if not fits.empty:
        best = fits.iloc[0]
        row.update(
            vm=best["vm"], monthly_cost=float(best["monthly_cost"]), users=float(best["users"]),
            users_low=float(best.get("users_low", math.nan)), users_high=float(best.get("users_high", math.nan)),
            spare_users=float(best["users"] - target), cost_per_user=float(best["monthly_cost"]) / target,
            meets_target_at_low_end=bool(best.get("users_low", best["users"]) >= target),
            reason=carriers_words(len(fits), target),
        )
        if utilization_target is not None:
            row["utilization_at_target"] = utilization_target * target / float(best["users"])
        return row
    if usable.empty:
        row["reason"] = "no VM meets the objectives at all"
        return row
    largest = usable.sort_values("users", ascending=False).iloc[0]
    row.update(
        largest_vm=largest["vm"], largest_users=float(largest["users"]),
        shortfall_users=float(target - largest["users"]),
        reason=f"no single VM carries {target:,.0f} users under the objectives; the largest, {largest['vm']}, "
               f"carries {largest['users']:,.0f}",
    )
    if utilization_target is not None and largest.get("binding_limit", "utilization") == "utilization":
        needed = utilization_target * target / float(largest["users"])
        row["utilization_needed"] = needed
        if needed <= 1:
            row["reason"] += f" (it would need {needed:.1%} utilization)"
    return row


def carriers_words(count: int, target: float) -> str:
    """Why this VM, in words: 'the only VM that carries 40,000 users', 'cheapest of the 3 VMs that carry 1 user'."""
    users = plural(target, "user")
    if count == 1:
        return f"the only VM that carries {users}"
    return f"cheapest of the {plural(count, 'VM')} that carry {users}"


def growth_plan(vms: pd.DataFrame, targets, current_users: float | None = None, monthly_growth: float | None = None,
                utilization_target: float | None = None) -> pd.DataFrame:
    """One row per target: the cheapest VM that carries it and, with a growth rate, the month it is reached.

    Parameters
    ----------
    vms : pandas.DataFrame
        A planning table (``CapacityPlan.vms``).
    targets : sequence of float
        User counts (whole numbers).
    current_users : float, optional
        Today's users.
    monthly_growth : float, optional
        Their monthly growth; with ``current_users`` adds ``months_until_target``.
    utilization_target : float, optional
        The plan's utilization target, for the utilization each VM would run at.

    Returns
    -------
    pandas.DataFrame
        One row per target, as ``cheapest_for_target`` gives it.

    Raises
    ------
    PlanError
        A target is not a whole number > 0, or a growth or user count is out of range.
    """
    if targets is None or len(targets) == 0:
        return pd.DataFrame(columns=["target_users", "vm", "reason"])
    rows = [cheapest_for_target(vms, t, utilization_target) for t in targets]
    plan = pd.DataFrame(rows)
    plan["vm"] = pd.Series([r["vm"] for r in rows], dtype=object)   # None, not NaN, where no VM fits
    if monthly_growth is not None and current_users is not None:
        plan["months_until_target"] = runway_months(plan["target_users"].to_numpy(), current_users, monthly_growth,
                                                error=PlanError)
    return plan
