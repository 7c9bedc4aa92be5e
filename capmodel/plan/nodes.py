"""Node-count multipliers (the Micron brief): how many nodes of type B match an N-node cluster of type A.

Linear rule (the brief's): nodes_B = n_B x (X_A / X_B), with n_B the node count B was measured at and X the measured
cluster throughputs. Scalability-aware: B's throughput over node count follows a USL through its measured point,
X_B(n) = X_B(n_B) * usl(n) / usl(n_B); the answer is the smallest whole n with X_B(n) >= X_A, or unreachable when
the curve peaks below X_A.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from capmodel.errors import PlanError
from capmodel.plan.checks import positive
from capmodel.plan.scaling import check_parameters, units_for_throughput, units_interval, usl

NODE_COLUMNS = ("workload", "reference_ops_per_s", "candidate_ops_per_s", "reference_nodes", "candidate_nodes")
ROUNDING = ("nearest", "up")


def _round(x: float, rounding: str) -> int:
    # "nearest" as the brief does it: 3 x 8.7 = 26.1 -> "about 26"; halves go up (25.5 -> 26).
    return math.floor(x + 0.5) if rounding == "nearest" else math.ceil(x - 1e-9)


def validate_node_table(table: pd.DataFrame, source: str | None = None) -> pd.DataFrame:
    """Check a node table: workload, reference/candidate cluster ops/s and node counts (all > 0)."""
    where = f"{source}: " if source else ""
    missing = [c for c in NODE_COLUMNS if c not in table.columns]
    if missing:
        raise PlanError(f"{where}missing column '{missing[0]}' (needs {', '.join(NODE_COLUMNS)})")
    out = table.copy().reset_index(drop=True)
    for col in NODE_COLUMNS[1:]:
        values = pd.to_numeric(out[col], errors="coerce")
        bad = ~(values > 0) | ~np.isfinite(values)
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise PlanError(f"{where}column '{col}', row {row + 1}: {out[col].iloc[row]!r} must be a number > 0")
        out[col] = values.astype(float)
    out["workload"] = out["workload"].astype(str)
    return out


def nodes_needed_usl(target: float, candidate_ops: float, candidate_nodes: float, sigma: float, kappa: float,
                     max_nodes: float = math.inf) -> tuple[int | None, str]:
    """Smallest whole node count of the candidate type that reaches ``target`` ops/s under the USL (None, reason)."""
    return units_for_throughput(target, candidate_ops, candidate_nodes, sigma, kappa, max_nodes, "nodes")


def node_multipliers(table: pd.DataFrame, sigma: float = 0.0, kappa: float = 0.0, rounding: str = "nearest",
                     max_nodes: float = math.inf, usl_samples: pd.DataFrame | None = None, level: float = 0.95,
                     reference_node_cost: float | None = None, candidate_node_cost: float | None = None,
                     reference_rack_units: float | None = None, candidate_rack_units: float | None = None,
                     source: str | None = None) -> pd.DataFrame:
    """One row per workload: multiplier X_A/X_B, nodes by the linear rule and under the USL, cost and rack space.

    ``usl_samples`` (DataFrame with sigma, kappa: e.g. a bootstrap of a fit over node count) adds percentile
    intervals ``nodes_usl_low``/``nodes_usl_high`` (an unreachable sample counts as infinitely many nodes).
    """
    if rounding not in ROUNDING:
        raise PlanError(f"rounding must be one of {', '.join(ROUNDING)}, got {rounding!r}")
    check_parameters(sigma, kappa, "node USL")
    for name, value in (("reference node cost", reference_node_cost), ("candidate node cost", candidate_node_cost),
                        ("reference rack units", reference_rack_units), ("candidate rack units", candidate_rack_units)):
        if value is not None:
            positive(value, name)
    table = validate_node_table(table, source)
    rows = []
    for _, r in table.iterrows():
        multiplier = r["reference_ops_per_s"] / r["candidate_ops_per_s"]
        exact = r["candidate_nodes"] * multiplier
        n_usl, why = nodes_needed_usl(r["reference_ops_per_s"], r["candidate_ops_per_s"], r["candidate_nodes"],
                                      sigma, kappa, max_nodes)
        row = {
            "workload": r["workload"], "reference_ops_per_s": r["reference_ops_per_s"],
            "candidate_ops_per_s": r["candidate_ops_per_s"], "reference_nodes": r["reference_nodes"],
            "candidate_nodes": r["candidate_nodes"], "multiplier": multiplier, "nodes_linear_exact": exact,
            "nodes_linear": _round(exact, rounding), "nodes_usl": n_usl, "usl_reachable": n_usl is not None,
            "usl_note": why,
        }
        if n_usl is not None:
            lam = r["candidate_ops_per_s"] / float(usl(r["candidate_nodes"], sigma, kappa))
            row["candidate_ops_at_nodes_usl"] = float(usl(n_usl, sigma, kappa, lam))
        if usl_samples is not None:
            row["nodes_usl_low"], row["nodes_usl_high"], row["usl_unreachable_share"] = units_interval(
                r["reference_ops_per_s"], r["candidate_ops_per_s"], r["candidate_nodes"], usl_samples, max_nodes,
                level)
        for kind, ref_value, cand_value in (("cost", reference_node_cost, candidate_node_cost),
                                            ("rack_units", reference_rack_units, candidate_rack_units)):
            if ref_value is not None and cand_value is not None:
                row[f"{kind}_reference"] = r["reference_nodes"] * ref_value
                row[f"{kind}_linear"] = row["nodes_linear"] * cand_value
                row[f"{kind}_usl"] = n_usl * cand_value if n_usl is not None else math.nan
        rows.append(row)
    return pd.DataFrame(rows)
