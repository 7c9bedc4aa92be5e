"""Economics of a planned catalog: throughput per unit of monthly cost (benchANT's "throughput/cost ratio"), cost per
user and per 1,000 users, cost per 1,000 ops/s of usable capacity, and the Pareto frontier of cost against capacity."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from capmodel.errors import PlanError


def _divide(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(b > 0, a / np.where(b > 0, b, 1.0), math.nan)
    return out


def add_economics(table: pd.DataFrame, baseline_vm: str | None = None) -> pd.DataFrame:
    """Add the economics columns to a planning table.

    Parameters
    ----------
    table : pandas.DataFrame
        With ``vm``, ``monthly_cost``, ``throughput``, ``usable_throughput`` and ``users``.
    baseline_vm : str, optional
        Adds ``throughput_per_cost_vs_baseline``, relative to this VM.

    Returns
    -------
    pandas.DataFrame
        A copy with ``throughput_per_cost``, ``cost_per_user``, ``cost_per_1000_users`` and ``cost_per_1000_ops``
        (NaN where a divisor is not > 0).

    Raises
    ------
    PlanError
        ``baseline_vm`` is not in the table.
    """
    out = table.copy()
    out["throughput_per_cost"] = _divide(out["throughput"], out["monthly_cost"])
    out["cost_per_user"] = _divide(out["monthly_cost"], out["users"])
    out["cost_per_1000_users"] = 1000.0 * out["cost_per_user"]
    out["cost_per_1000_ops"] = _divide(out["monthly_cost"], out["usable_throughput"] / 1000.0)
    if baseline_vm is not None:
        base = out.loc[out["vm"] == baseline_vm, "throughput_per_cost"]
        if base.empty:
            raise PlanError(f"unknown baseline VM '{baseline_vm}' (known: {', '.join(out['vm'])})")
        out["throughput_per_cost_vs_baseline"] = out["throughput_per_cost"] / float(base.iloc[0])
    return out


def pareto_frontier(table: pd.DataFrame, cost: str = "monthly_cost", capacity: str = "users") -> pd.DataFrame:
    """The rows no other row beats (as cheap or cheaper with at least as much capacity, better in one), by cost.

    Parameters
    ----------
    table : pandas.DataFrame
        A planning table.
    cost : str, default "monthly_cost"
        The column to minimise.
    capacity : str, default "users"
        The column to maximise; rows where it is missing (a VM that fails the latency target) are not candidates.

    Returns
    -------
    pandas.DataFrame
        The frontier's rows, cheapest first.

    Raises
    ------
    PlanError
        A named column is missing.
    """
    for col in (cost, capacity):
        if col not in table.columns:
            raise PlanError(f"pareto frontier: no column '{col}'")
    rows = table[np.isfinite(table[capacity].astype(float)) & np.isfinite(table[cost].astype(float))]
    rows = rows.sort_values([cost, capacity], ascending=[True, False], kind="stable")
    keep, best = [], -math.inf
    for index, value in rows[capacity].items():
        if value > best:
            keep.append(index)
            best = value
    return rows.loc[keep]
