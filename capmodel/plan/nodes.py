"""Node-count multipliers (the Micron brief): how many nodes of type B match an N-node cluster of type A.

Linear rule (the brief's): nodes_B = n_B x (X_A / X_B), with n_B the node count B was measured at and X the measured
cluster throughputs. Scalability-aware: B's throughput over node count follows a USL through its measured point,
X_B(n) = X_B(n_B) * usl(n) / usl(n_B); the answer is the smallest whole n with X_B(n) >= X_A, or unreachable when
the curve peaks below X_A.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from capmodel.constraints import Number
from capmodel.errors import PlanError
from capmodel.formatting import Column, integer, is_missing, money, number, table
from capmodel.jsonable import to_jsonable
from capmodel.models.evidence import Evidence, Reason
from capmodel.models.usl.closed_form import usl_throughput
from capmodel.plan.assessment import assess_scale_out
from capmodel.plan.checks import positive
from capmodel.plan.scaling import check_usl_parameters, units_for_throughput, units_interval

NODE_COLUMNS = ("workload", "reference_ops_per_s", "candidate_ops_per_s", "reference_nodes", "candidate_nodes")
ROUNDING = ("nearest", "up")


#: bootstrap samples of a fit over node count (``node_curve``)
BOOTSTRAP_SAMPLES = Number(int, 0, 100_000, text=False, name="bootstrap (--bootstrap)")

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
        from capmodel.data.curve import numeric_column
        from capmodel.errors import shown

        values = numeric_column(out[col], f"{where}column '{col}'")
        bad = ~(values > 0) | ~np.isfinite(values)
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise PlanError(f"{where}column '{col}', row {row + 1}: {shown(out[col].iloc[row])} must be a number > 0")
        if col.endswith("_nodes") and not bool((values == np.floor(values)).all()):
            row = int(np.flatnonzero((values != np.floor(values)).to_numpy())[0])
            raise PlanError(f"{where}column '{col}', row {row + 1}: {shown(out[col].iloc[row])} is not a whole "
                            "number of nodes")
        out[col] = values.astype(float)
    labels = out["workload"].map(lambda v: "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v))
    for row, label in enumerate(labels):
        if not label.strip():
            raise PlanError(f"{where}column 'workload', row {row + 1}: the workload has no name")
        if label in labels.iloc[:row].values:
            raise PlanError(f"{where}column 'workload', row {row + 1}: workload {shown(label)} appears twice "
                            f"(rows {labels.iloc[:row].tolist().index(label) + 1} and {row + 1}); name each row once")
    out["workload"] = labels
    return out


def nodes_needed_usl(target: float, candidate_ops: float, candidate_nodes: float, sigma: float, kappa: float,
                     max_nodes: float = math.inf) -> tuple[int | None, str]:
    """The smallest whole node count of the candidate type that reaches ``target`` ops/s under the USL.

    Parameters
    ----------
    target : float
        The throughput to reach, ops/s.
    candidate_ops, candidate_nodes : float
        The candidate cluster's measured throughput and node count.
    sigma, kappa : float
        The USL over node count.
    max_nodes : float, default inf
        The most nodes to consider.

    Returns
    -------
    tuple of (int or None, str)
        The node count (None when unreachable) and the reason in words.
    """
    return units_for_throughput(target, candidate_ops, candidate_nodes, sigma, kappa, max_nodes, "nodes", "ops/s")


def node_multipliers(table: pd.DataFrame, sigma: float = 0.0, kappa: float = 0.0, rounding: str = "nearest",
                     max_nodes: float = math.inf, usl_samples: pd.DataFrame | None = None, level: float = 0.95,
                     reference_node_cost: float | None = None, candidate_node_cost: float | None = None,
                     reference_rack_units: float | None = None, candidate_rack_units: float | None = None,
                     source: str | None = None) -> pd.DataFrame:
    """Per workload: the multiplier X_reference/X_candidate and the node count by the linear rule and under the USL.

    Parameters
    ----------
    table : pandas.DataFrame
        ``workload``, ``reference_ops_per_s``, ``candidate_ops_per_s``, ``reference_nodes``, ``candidate_nodes``.
    sigma, kappa : float, default 0.0
        The USL over node count.
    rounding : {"nearest", "up"}, default "nearest"
        How the linear count is rounded.
    max_nodes : float, default inf
        The most nodes to consider.
    usl_samples : pandas.DataFrame, optional
        ``sigma`` and ``kappa`` samples (a bootstrap of a fit over node count): adds the percentile interval
        ``nodes_usl_low``/``nodes_usl_high`` (an unreachable sample counts as infinitely many nodes).
    level : float, default 0.95
        That interval's coverage.
    reference_node_cost, candidate_node_cost, reference_rack_units, candidate_rack_units : float, optional
        Per node: add cost and rack-space columns.
    source : str, optional
        Names the table in messages.

    Returns
    -------
    pandas.DataFrame
        Per workload: ``multiplier``, ``nodes_linear``, ``nodes_usl`` (None when the USL cannot reach the reference
        throughput, ``usl_note`` saying why), ``usl_reachable`` and the optional columns.

    Raises
    ------
    PlanError
        An unknown rounding, a parameter out of range, or a table problem.
    """
    if rounding not in ROUNDING:
        raise PlanError(f"rounding must be one of {', '.join(ROUNDING)}, got {rounding!r}")
    check_usl_parameters(sigma, kappa, "node USL")
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
            lam = r["candidate_ops_per_s"] / float(usl_throughput(r["candidate_nodes"], sigma, kappa, 1.0))
            row["candidate_ops_at_nodes_usl"] = float(usl_throughput(n_usl, sigma, kappa, lam))
        if usl_samples is not None:
            row["nodes_usl_low"], row["nodes_usl_high"], row["usl_unreachable_share"] = units_interval(
                r["reference_ops_per_s"], r["candidate_ops_per_s"], r["candidate_nodes"], usl_samples, max_nodes,
                level)
        for kind, ref_value, cand_value in (("cost", reference_node_cost, candidate_node_cost),
                                            ("rack_units", reference_rack_units, candidate_rack_units)):
            if ref_value is not None:
                row[f"{kind}_reference"] = r["reference_nodes"] * ref_value
            if cand_value is not None:
                row[f"{kind}_linear"] = row["nodes_linear"] * cand_value
                row[f"{kind}_usl"] = n_usl * cand_value if n_usl is not None else math.nan
                if usl_samples is not None:
                    row[f"{kind}_usl_low"] = row["nodes_usl_low"] * cand_value
                    row[f"{kind}_usl_high"] = row["nodes_usl_high"] * cand_value
        rows.append(row)
    return pd.DataFrame(rows)


MICRON = "micron_ycsb_96threads"
MICRON_SOURCE = "Micron 5100 ECO brief (bundled)"


def node_sensitivity(table: pd.DataFrame, sigmas, kappa: float = 0.0, rounding: str = "nearest",
                     max_nodes: float = math.inf, source: str | None = None) -> pd.DataFrame:
    """Nodes needed per workload for each contention value σ.

    Parameters
    ----------
    table : pandas.DataFrame
        As for ``node_multipliers``.
    sigmas : sequence of float
        The contention values.
    kappa : float, default 0.0
        The coherency term, the same for every σ.
    rounding, max_nodes, source
        As for ``node_multipliers``.

    Returns
    -------
    pandas.DataFrame
        One row per σ, one column per workload (NaN where unreachable).
    """
    rows = []
    for s in sigmas:
        r = node_multipliers(table, sigma=s, kappa=kappa, rounding=rounding, max_nodes=max_nodes, source=source)
        rows.append({"sigma": float(s), **{w: (n if ok else math.nan)
                                           for w, n, ok in zip(r["workload"], r["nodes_usl"], r["usl_reachable"])}})
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class NodeStudy:
    """The result of ``plan_node_study``; ``describe()`` gives it in words.

    Attributes
    ----------
    rows : pandas.DataFrame
        One row per workload, as ``node_multipliers`` gives it.
    sigma, kappa : float
        The USL over node count.
    basis : str
        Where they came from ("assumed", or fitted to the node curve).
    rounding : str
        The linear rule's rounding.
    source : str
        The table's name.
    input_table : pandas.DataFrame
        The table as given.
    sensitivity : pandas.DataFrame or None
        The scan over contention values, when asked.
    evidence : Evidence
        The verdict on the answer; ``row_evidence`` has each workload's.
    """

    rows: pd.DataFrame
    sigma: float
    kappa: float
    basis: str
    rounding: str
    source: str
    input_table: pd.DataFrame
    sensitivity: pd.DataFrame | None = None
    evidence: Evidence = Evidence()
    row_evidence: dict = field(default_factory=dict)   # workload -> Evidence of its node count
    #: the node curve's name and the bootstrap samples behind the USL interval (when fitted to a curve)
    curve_source: str | None = None
    bootstrap: int | None = None
    #: the prices per node given: {"reference": ..., "candidate": ...}
    node_costs: dict = field(default_factory=dict)

    def summary(self) -> str:
        """What ``capmodel nodes`` prints: the source and the scaling, the table of node counts, unreachable
        workloads, the interval's and the costs' basis, the rounding note and the verdict."""
        rows = self.rows
        lines = [f"{self.source}; candidate scaling over node count: sigma = {number(self.sigma, 4)}, kappa = "
                 f"{number(self.kappa, 4)} ({self.basis})",
                 nodes_table(rows, lambda r: self.row_evidence[r["workload"]].usable).text()]
        lines += [f"workload {r['workload']}: {r['usl_note']}" for _, r in rows.iterrows() if not r["usl_reachable"]]
        if "nodes_usl_low" in rows.columns:
            lines.append("USL interval: 95% bootstrap percentile interval of the USL node count fitted to "
                         f"{self.curve_source} ({self.bootstrap} samples).")
        prices = [f"{side} {money(value)} per node" for side, value in self.node_costs.items()]
        if prices:
            lines.append(f"Costs: node count x cost per node ({', '.join(prices)}).")
        note = self.rounding_note()
        if note:
            lines.append(f"Rounding: {note}.")
        lines.append("")
        lines += self.evidence.lines()
        return "\n".join(lines)

    def to_json(self) -> dict:
        """The JSON of ``capmodel nodes --json``: the source, the USL over node count (with the bootstrap samples
        behind its interval, None when assumed), the rounding, one record per workload (with its evidence) and the
        study's evidence."""
        records = self.rows.astype(object).where(self.rows.notna(), None).to_dict(orient="records")
        for record in records:
            record["evidence"] = self.row_evidence[record["workload"]].to_json()
        return to_jsonable({"source": self.source, "usl": {"sigma": self.sigma, "kappa": self.kappa,
                                                           "basis": self.basis, "bootstrap": self.bootstrap},
                            "rounding": self.rounding, "rounding_note": self.rounding_note(), "rows": records,
                            "evidence": self.evidence.to_json()})

    def rounding_note(self) -> str | None:
        """Why the linear and the USL counts differ for a workload the USL, linear here, should agree on (None when
        no row shows it): the linear rule rounds ``nearest`` (the brief's way), the USL count is the smallest whole
        number of nodes that reaches the reference throughput."""
        if self.rounding != "nearest" or self.sigma != 0 or self.kappa != 0:
            return None
        differ = self.rows[self.rows["usl_reachable"] & (self.rows["nodes_usl"] != self.rows["nodes_linear"])]
        if differ.empty:
            return None
        r = differ.iloc[0]
        return (f"with sigma = kappa = 0 both rules are linear, but the linear rule rounds to the nearest node as the "
                f"brief does (workload {r['workload']}: {r['nodes_linear_exact']:.2f} -> {r['nodes_linear']:.0f}), "
                f"while the USL count is the smallest whole number of nodes that reaches the reference throughput "
                f"({r['nodes_usl']:.0f}); --rounding up makes the linear rule round up too")

    def unreachable_from(self) -> float | None:
        """The smallest contention of the sensitivity scan at which some workload is unreachable (None: none is)."""
        if self.sensitivity is None:
            return None
        unreachable = self.sensitivity.drop(columns="sigma").isna().any(axis=1)
        return float(self.sensitivity.loc[unreachable, "sigma"].min()) if unreachable.any() else None

    def describe(self) -> str:
        """The answer in words (markdown): per workload the linear and the USL count, the heaviest case, the extra."""
        lines, extra_total = [], 0
        for _, r in self.rows.iterrows():
            head = f"- YCSB {r['workload']}: multiplier {r['multiplier']:.2f} → **{r['nodes_linear']:.0f} nodes**"
            verdict = self.row_evidence.get(r["workload"])
            if r["usl_reachable"] and verdict is not None and not verdict.usable:
                lines.append(f"{head} by the linear rule; the data cannot support a USL count (see the evidence).")
            elif r["usl_reachable"]:
                extra = r["nodes_usl"] - r["nodes_linear"]
                extra_total += extra
                lines.append(f"{head} by the linear rule, **{r['nodes_usl']:.0f}** under the USL ({extra:+.0f}).")
            else:
                lines.append(f"{head} by the linear rule; **unreachable** under the USL ({r['usl_note']}).")
        worst = self.rows.loc[self.rows["multiplier"].idxmax()]
        text = [f"From {self.source}:", "", *lines, "",
                f"The heaviest case is YCSB {worst['workload']} (×{worst['multiplier']:.2f}). With contention "
                f"σ = {number(self.sigma, 6)} and coherency κ = {number(self.kappa, 6)} over node count "
                f"({self.basis}), the reachable "
                f"workloads need {extra_total:+.0f} candidate nodes in total beyond the linear rule's answers."]
        if self.sensitivity is not None:
            limit = self.unreachable_from()
            text.append(f"From σ = {number(limit, 6)} on, at least one workload cannot be matched by any number "
                        f"of candidate "
                        "nodes." if limit is not None else
                        "Every workload stays reachable over the contention values tried.")
        note = self.rounding_note()
        if note:
            text.append(f"Rounding: {note}.")
        text += ["", self.evidence.describe()]
        return "\n".join(text)


#: a linear count whose fitted throughput falls this far short of the reference is contradicted by the node curve
LINEAR_SHORT = 0.05


def linear_short_reason(row, sigma: float, kappa: float) -> Reason | None:
    """A weak reason when the linear rule's node count delivers, on the fitted node curve, more than ``LINEAR_SHORT``
    less than the reference throughput (None otherwise)."""
    n, base = float(row["nodes_linear"]), float(row["candidate_nodes"])
    if not n > 0:
        return None
    lam = row["candidate_ops_per_s"] / float(usl_throughput(base, sigma, kappa, 1.0))
    delivered, wanted = float(usl_throughput(n, sigma, kappa, lam)), float(row["reference_ops_per_s"])
    if not delivered < wanted * (1 - LINEAR_SHORT):
        return None
    return Reason("linear_short", "weak", f"workload {row['workload']}: the linear rule's {integer(n)} nodes deliver "
                  f"{integer(delivered)} ops/s on the measured node curve, {1 - delivered / wanted:.0%} short of "
                  f"the reference {integer(wanted)} ops/s: the curve scales below linear, so the linear count "
                  "undersizes the cluster", float(delivered / wanted))


def plan_node_study(table: pd.DataFrame | None = None, sigma: float = 0.0, kappa: float = 0.0,
                    node_curve: pd.DataFrame | None = None, bootstrap: int = 200, rounding: str = "nearest",
                    max_nodes: float = 1000, reference_node_cost: float | None = None,
                    candidate_node_cost: float | None = None, reference_rack_units: float | None = None,
                    candidate_rack_units: float | None = None, sensitivity=(), source: str | None = None,
                    curve_source: str | None = None) -> NodeStudy:
    """Nodes of a candidate type needed to match a reference cluster, per workload.

    Each workload's throughput on both clusters gives a multiplier; the node count follows by the linear rule and under
    a USL over node count, assumed (``sigma``, ``kappa``) or fitted to ``node_curve``.

    Parameters
    ----------
    table : pandas.DataFrame, optional
        ``workload``, ``reference_ops_per_s``, ``candidate_ops_per_s``, ``reference_nodes``, ``candidate_nodes``; None
        plans the bundled Micron brief.
    sigma, kappa : float, default 0.0
        The USL over node count, when no ``node_curve`` is given.
    node_curve : pandas.DataFrame, optional
        A curve table whose concurrency is the node count: the USL is fitted to it.
    bootstrap : int, default 200
        Refits of ``node_curve`` for the node counts' intervals (0: none).
    rounding : {"nearest", "up"}, default "nearest"
        How the linear rule's node count is rounded.
    max_nodes : int, default 1000
        The most nodes to consider.
    reference_node_cost, candidate_node_cost : float, optional
        Cost of one node of each type: adds the clusters' costs.
    reference_rack_units, candidate_rack_units : float, optional
        Rack units of one node of each type: adds the clusters' rack space.
    sensitivity : sequence of float, default ()
        Contention values σ to scan the USL count over (``node_sensitivity``).
    source, curve_source : str, optional
        Name the inputs in messages.

    Returns
    -------
    NodeStudy

    Raises
    ------
    PlanError
        A table problem (named by column and row), a parameter out of range, or a node curve that shows no scaling.
    InputError
        ``node_curve`` is refused by the curve rules.

    Examples
    --------
    >>> from capmodel.plan import plan_node_study
    >>> study = plan_node_study(sigma=0.02)           # the bundled Micron brief
    >>> study.rows[["workload", "multiplier", "nodes_linear", "nodes_usl"]].round(2).head(2)
      workload  multiplier  nodes_linear  nodes_usl
    0        A        8.70            26         50
    1        B        9.63            29         62
    """
    from capmodel.constraints import Number

    max_nodes = Number(int, 1, 1_000_000, text=False).check(max_nodes, PlanError, "max nodes (--max-nodes)")
    bootstrap = BOOTSTRAP_SAMPLES.check(bootstrap, PlanError)
    if table is None:
        from capmodel.data import datasets

        table, source = datasets.load(MICRON), MICRON_SOURCE
    samples, basis, fit = None, "assumed", None
    if node_curve is not None:
        from capmodel.models.usl.fit import fit_usl
        from capmodel.plan.scaling import refuse_no_scaling

        fit = fit_usl(node_curve)
        refuse_no_scaling(fit, curve_source or "the node curve", "node")
        sigma, kappa, basis = fit.sigma, fit.kappa, f"fitted to {curve_source or 'the node curve'}"
        samples = fit.bootstrap(bootstrap).samples if bootstrap else None
    rows = node_multipliers(
        table, sigma=sigma, kappa=kappa, rounding=rounding, max_nodes=max_nodes, usl_samples=samples,
        reference_node_cost=reference_node_cost, candidate_node_cost=candidate_node_cost,
        reference_rack_units=reference_rack_units, candidate_rack_units=candidate_rack_units, source=source)
    scan = (node_sensitivity(table, sensitivity, kappa, rounding, max_nodes, source)
            if sensitivity is not None and len(sensitivity) else None)
    answers = {f"workload {r['workload']}": (r["nodes_usl"] if r["usl_reachable"] else None)
               for _, r in rows.iterrows()}
    measured = {f"workload {r['workload']}": r["candidate_nodes"] for _, r in rows.iterrows()}
    evidence, per = assess_scale_out(answers, fit, measured, f"sigma = {number(sigma, 6)}, kappa = "
                                                             f"{number(kappa, 6)}", "nodes")
    row_evidence = {r["workload"]: per[f"workload {r['workload']}"] for _, r in rows.iterrows()}
    if fit is not None:   # the linear count printed beside a measured curve that says it falls short
        for _, r in rows.iterrows():
            short = linear_short_reason(r, sigma, kappa)
            if short is not None:
                row_evidence[r["workload"]] = row_evidence[r["workload"]] + Evidence.of(short)
                evidence = evidence + Evidence.of(short)
    costs = {side: value for side, value in (("reference", reference_node_cost), ("candidate", candidate_node_cost))
             if value is not None}
    return NodeStudy(rows=rows, sigma=sigma, kappa=kappa, basis=basis, rounding=rounding, source=source or "",
                     input_table=table, sensitivity=scan, evidence=evidence, row_evidence=row_evidence,
                     curve_source=curve_source if node_curve is not None else None,
                     bootstrap=bootstrap if node_curve is not None else None, node_costs=costs)


UNSUPPORTED = "unsupported"   # a count whose own verdict is unusable: not printed as a number


def _span(r, name: str, kind: str) -> str:
    """"low to high" of a bootstrap interval, through the formatting layer ("" without one)."""
    low, high = r.get(f"{name}_low"), r.get(f"{name}_high")
    if is_missing(low) or is_missing(high):
        return ""
    shown = integer if kind == "int" else money
    return f"{shown(low)} to {shown(high)}"


def nodes_table(rows, supported):
    """The rows as a ``capmodel.formatting.Table`` with the columns the options asked for; ``supported(row)`` is
    False where the row's USL count has an unusable verdict (its USL figures then read "unsupported")."""
    frame = rows.copy()
    ok = [bool(supported(r)) for _, r in rows.iterrows()]
    reach = rows["usl_reachable"].astype(bool).tolist()
    for name in ("nodes_usl", "cost_usl", "rack_units_usl"):
        if name in frame.columns:
            frame[name] = [float("inf") if not live else (v if good else UNSUPPORTED)
                           for v, good, live in zip(rows[name].astype(object), ok, reach)]
    for name, kind in (("nodes_usl", "int"), ("cost_usl", "money")):
        if f"{name}_low" in frame.columns:
            frame[f"{name}_interval"] = [_span(r, name, kind) for _, r in rows.iterrows()]
    columns = {
        "workload": Column("workload", "text"), "multiplier": Column("multiplier", decimals=2),
        "nodes_linear": Column("nodes, linear", "int"), "nodes_usl": Column("nodes, USL", "int"),
        "nodes_usl_interval": Column("USL interval (nodes)", "text"),
        "cost_reference": Column("cost, reference", "money"), "cost_linear": Column("cost, linear", "money"),
        "cost_usl": Column("cost, USL", "money"), "cost_usl_interval": Column("cost USL interval", "text"),
        "rack_units_reference": Column("RU, reference", "int"), "rack_units_linear": Column("RU, linear", "int"),
        "rack_units_usl": Column("RU, USL", "int")}
    return table(pd.DataFrame(frame), columns, footnotes=[
        '"unreachable": no number of candidate nodes reaches the reference throughput under the USL',
        f'"{UNSUPPORTED}": the data cannot support that node count (see the evidence below; --json keeps the figure)'])
