"""Shard scale-out (the DocumentDB elastic-cluster insert benchmark): shards needed for a target insert rate, and the
client concurrency needed to drive it.

Throughput over shard count follows a USL through the per-shard throughput X(1): X(s) = X(1) s / (1 + sigma (s-1) +
kappa s (s-1)), the request router's overhead acting as contention (sigma) and cross-shard coordination as coherency
(kappa). Clients: by Little's law N = X R / batch (each client waits R seconds per batch of ``batch_size`` documents),
or, without a measured batch latency, the benchmark's own rule: 64 client processes per shard, at least 128
(128, 128, 256, 512, 1024 for 1, 2, 4, 8, 16 shards).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from capmodel.constraints import Number, Sequence, checked, typed, with_name
from capmodel.errors import PlanError
from capmodel.formatting import Column, integer, number, percent, plural, table
from capmodel.jsonable import to_jsonable
from capmodel.models.evidence import Evidence, Reason
from capmodel.models.usl.closed_form import usl_throughput
from capmodel.plan.assessment import assess_scale_out
from capmodel.plan.checks import KAPPA, POSITIVE, SIGMA, positive
from capmodel.plan.scaling import units_for_throughput, units_interval
from capmodel.studies import DOCUMENTDB_MAX_SHARDS, DOCUMENTDB_SHARDS, DOCUMENTDB_TARGET_RATE

CLIENTS_PER_SHARD = 64            # 256/4, 512/8, 1024/16 in the AWS post
MIN_CLIENTS = 128                 # 1- and 2-shard clusters were driven by 128 processes

# What each input of ``plan_shard_study`` may be (capmodel.constraints), named as the messages say it.
SHARD_CONSTRAINTS = {
    "target_rates": Sequence(with_name(POSITIVE, "target rate"), name="target rates"),
    "per_shard_throughput": with_name(POSITIVE, "per-shard throughput"),
    "sigma": SIGMA,
    "kappa": KAPPA,
    "bootstrap": Number(int, 0, 100_000, name="bootstrap"),
    "level": Number(float, 0.0, 1.0, low_open=True, high_open=True, name="level", required=True),
    "max_shards": Number(int, 1, 1_000_000, name="max shards"),   # a count of shards: whole
    "batch_size": Number(int, 1, 1_000_000, name="batch size", required=True),
    "batch_latency_ms": with_name(POSITIVE, "batch latency (ms)"),
    "clients_per_shard": Number(int, 1, 1_000_000, name="clients per shard"),
    "min_clients": Number(int, 1, 1_000_000_000, name="min clients"),
    "scenarios": Sequence(with_name(SIGMA, "sigma"), name="scenarios"),
}


def shards_needed(target_rate: float, per_shard_throughput: float, sigma: float = 0.0, kappa: float = 0.0,
                  max_shards: float = DOCUMENTDB_MAX_SHARDS) -> tuple[int | None, str]:
    """The smallest shard count whose throughput reaches ``target_rate`` under the USL.

    Parameters
    ----------
    target_rate, per_shard_throughput : float
        Inserts/s wanted and of one shard (> 0).
    sigma, kappa : float, default 0.0
        The USL over shard count.
    max_shards : float, default 32
        The most shards to consider.

    Returns
    -------
    tuple of (int or None, str)
        The count (None when unreachable) and the reason in words.

    Raises
    ------
    PlanError
        A rate is not > 0.
    """
    target = positive(target_rate, "target rate")
    per_shard = positive(per_shard_throughput, "per-shard throughput")
    return units_for_throughput(target, per_shard, 1.0, sigma, kappa, max_shards, "shards", "inserts/s")


def clients_needed(shards: int, throughput: float | None = None, batch_size: int = 1000,
                   batch_latency_s: float | None = None, clients_per_shard: int = CLIENTS_PER_SHARD,
                   min_clients: int = MIN_CLIENTS) -> int:
    """Client processes to drive ``shards`` shards: Little's law with a batch latency, else the per-shard rule.

    Parameters
    ----------
    shards : int
        The shard count.
    throughput : float, optional
        Inserts/s, needed with ``batch_latency_s``.
    batch_size : int, default 1000
        Documents per batch.
    batch_latency_s : float, optional
        Seconds per batch: clients = ⌈throughput / batch_size × batch_latency_s⌉.
    clients_per_shard : int, default 64
        Otherwise, clients per shard ...
    min_clients : int, default 128
        ... and at least this many.

    Returns
    -------
    int

    Raises
    ------
    PlanError
        A value needed by Little's law is not > 0.
    """
    if batch_latency_s is not None:
        x = positive(throughput, "throughput")
        return math.ceil(x / positive(batch_size, "batch size") * positive(batch_latency_s, "batch latency") - 1e-9)
    return max(int(min_clients), int(clients_per_shard) * int(shards))


def plan_shards(target_rate: float, per_shard_throughput: float, sigma: float = 0.0, kappa: float = 0.0,
                max_shards: float = DOCUMENTDB_MAX_SHARDS, batch_size: int = 1000,
                batch_latency_s: float | None = None, clients_per_shard: int = CLIENTS_PER_SHARD,
                min_clients: int = MIN_CLIENTS, usl_samples=None, level: float = 0.95) -> dict:
    """Shards for one target rate, their throughput, their efficiency against linear, and the clients to drive them.

    Parameters
    ----------
    target_rate : float
        Inserts/s to reach.
    per_shard_throughput : float
        Inserts/s of one shard.
    sigma, kappa : float, default 0.0
        The USL over shard count.
    max_shards : float, default 32
        The most shards to consider.
    batch_size, batch_latency_s, clients_per_shard, min_clients
        The clients rule, as for ``clients_needed``.
    usl_samples : pandas.DataFrame, optional
        ``sigma`` and ``kappa`` samples: adds ``shards_low``/``shards_high`` (an unreachable sample counts as
        infinitely many shards).
    level : float, default 0.95
        That interval's coverage.

    Returns
    -------
    dict
        ``shards`` (None when unreachable, ``reason`` saying why), ``linear_shards`` (always), and where reachable
        ``throughput``, ``efficiency`` and ``clients``.

    Raises
    ------
    PlanError
        A rate is not > 0 or a parameter is out of range.
    """
    shards, reason = shards_needed(target_rate, per_shard_throughput, sigma, kappa, max_shards)
    # the linear estimate does not depend on sigma or kappa: every row carries it, reachable or not
    row = {"target_rate": float(target_rate), "per_shard_throughput": float(per_shard_throughput), "sigma": sigma,
           "kappa": kappa, "shards": shards, "reason": reason,
           "linear_shards": math.ceil(target_rate / per_shard_throughput - 1e-9)}
    if usl_samples is not None:
        row["shards_low"], row["shards_high"], row["unreachable_share"] = units_interval(
            target_rate, per_shard_throughput, 1.0, usl_samples, max_shards, level)
    if shards is None:
        return row
    throughput = float(usl_throughput(shards, sigma, kappa, per_shard_throughput))
    row.update(
        throughput=throughput,
        efficiency=throughput / (shards * per_shard_throughput),
        clients=clients_needed(shards, throughput, batch_size, batch_latency_s, clients_per_shard, min_clients),
    )
    return row


DOCUMENTDB_SOURCE = "DocumentDB elastic-cluster insert benchmark (bundled)"


@dataclass(frozen=True)
class ShardStudy:
    """The result of ``plan_shard_study``; ``describe()`` gives it in words.

    Attributes
    ----------
    source : str
        The inputs' name.
    model : dict
        Per-shard throughput, σ, κ, where they came from, the limits, the clients rule and the peak.
    rows : list of dict
        One per target, as ``plan_shards`` gives it.
    scenarios : pandas.DataFrame or None
        One row per target and contention value, when asked.
    evidence : Evidence
        The verdict on the answer; ``row_evidence`` has each row's.
    """

    source: str
    model: dict
    rows: list[dict]
    scenarios: pd.DataFrame | None = None
    evidence: Evidence = Evidence()
    row_evidence: tuple = ()   # one Evidence per row of ``rows``

    def to_json(self) -> dict:
        """The JSON of ``capmodel shards --json``: the source, the model, one row per target (unreachable targets
        carry None and the reason; each row its evidence) and the study's evidence."""
        return to_jsonable({"source": self.source, "model": self.model, "rows": self._json_rows(),
                            "evidence": self.evidence.to_json()})

    def _json_rows(self) -> list[dict]:
        """One JSON row per target with its evidence: what ``to_json`` holds and the text table shows."""
        rows = [_json_row(plan) for plan in self.rows]
        for row, verdict in zip(rows, self.row_evidence):
            row["evidence"] = verdict.to_json()
        return to_jsonable(rows)

    def summary(self) -> str:
        """What ``capmodel shards`` prints: the source, the model with its peak, its warnings, the table of shards
        per target and the verdict."""
        m = self.model
        at = number(m["peak_shards"])          # a USL peak may fall between shard counts: 3.5 shards
        peak = (f"peak {integer(m['peak_throughput'])} inserts/s at {at} shard{'' if at == '1' else 's'}"
                if m["peak_shards"] is not None else
                f"ceiling {integer(m['peak_throughput'])} inserts/s" if m["peak_throughput"] is not None
                else "linear, no peak")
        lines = [f"Source: {self.source}; {m['basis']}",
                 f"Model: {number(m['per_shard_throughput'])} inserts/s per shard, sigma = {number(m['sigma'], 4)}, "
                 f"kappa = {number(m['kappa'], 4)} ({peak}); at most {plural(m['max_shards'], 'shard')}; clients: "
                 f"{m['clients_rule']}"]
        lines.extend(f"Warning: {w}" for w in m.get("warnings", []))
        lines.append(shards_table(m, self._json_rows()).text())
        lines += [""] + self.evidence.lines()
        return "\n".join(lines)

    def describe(self) -> str:
        """The answer in words (markdown): shards and clients per target, and the shard count per scenario."""
        m = self.model
        text = []
        unusable = [not e.usable for e in self.row_evidence] or [False] * len(self.rows)
        for row, unsupported in zip(self.rows, unusable):
            if row["shards"] is None:
                verdict = f"**cannot be reached**: {row['reason']}."
            elif unsupported:
                verdict = "has **no shard count the data can support** (see the evidence)."
            else:
                verdict = (f"needs **{plural(row['shards'], 'shard')}** (linear estimate "
                           f"{integer(row['linear_shards'])}), delivering {number(row['throughput'])} inserts/s at "
                           f"{row['efficiency']:.0%} of linear efficiency, driven by "
                           f"**{plural(row['clients'], 'client process', 'client processes')}** "
                           f"({m['clients_rule']}).")
            text.append(f"At {number(m['per_shard_throughput'])} inserts/s per shard, a target of "
                        f"{number(row['target_rate'])} inserts/s with σ = {number(m['sigma'], 6)} and κ = "
                        f"{number(m['kappa'], 6)} "
                        f"{verdict}")
            if self.scenarios is not None:
                mine = self.scenarios[self.scenarios["target_rate"] == row["target_rate"]]
                reached = mine.dropna(subset=["shards"])
                spread = ", ".join(f"σ = {number(r.sigma, 6)}: {int(r.shards)}" for r in reached.itertuples())
                unreachable = ", ".join(f"σ = {number(s, 6)}"
                                        for s in mine.loc[mine["shards"].isna(), "sigma"]) or "none"
                text.append(f"Across the contention scenarios the shard count is {spread or 'never reachable'}; "
                            f"unreachable within {number(m['max_shards'], 6)} shards: {unreachable}.")
            text.append("")
        text.append(self.evidence.describe())
        return "\n".join(text).strip()


def _whole_shard_counts(curve, source: str) -> None:
    """Refuse a shard count (the curve's concurrency) that is not a whole number >= 1, naming its row."""
    for row, count in enumerate(curve["concurrency"].tolist(), start=1):
        if not (count >= 1 and float(count).is_integer()):
            raise PlanError(f"{source}: row {row}: shard count (concurrency) {typed(count)} must be a whole "
                            f"number >= 1")


def _fitted_model(curve, bootstrap: int, source: str) -> tuple[dict, object, object]:
    """The USL fitted to ``curve`` over shard count, its bootstrap samples (or None) and the fit."""
    from capmodel.errors import CapmodelError
    from capmodel.models.usl.fit import fit_usl

    _whole_shard_counts(curve, source)
    try:
        fit = fit_usl(curve)
    except CapmodelError as exc:
        raise type(exc)(f"{source}: {exc}") from None
    from capmodel.plan.scaling import refuse_no_scaling

    refuse_no_scaling(fit, source, "shard")
    samples = fit.bootstrap(bootstrap).samples if bootstrap else None
    model = {"per_shard_throughput": fit.lambda_, "sigma": fit.sigma, "kappa": fit.kappa,
             "basis": f"fitted to {source} (USL over shard count, {fit.n_points} points, r2 {fit.r2:.4f})",
             "r2": fit.r2, "n_points": fit.n_points, "warnings": list(fit.warnings)}
    return model, samples, fit


def _refuse_mixed(given: dict, fitted: bool) -> None:
    """Inputs that exclude each other: a fitted curve and assumed scaling; Little's law and the per-shard rule."""
    assumed = [name for name in ("per_shard_throughput", "sigma", "kappa") if given[name] is not None]
    if fitted and assumed:
        raise PlanError(f"a fitted curve gives the per-shard throughput, sigma and kappa; do not also give "
                        f"{', '.join(SHARD_CONSTRAINTS[name].name for name in assumed)}")
    rule = [name for name in ("clients_per_shard", "min_clients") if given[name] is not None]
    if given["batch_latency_ms"] is not None and rule:
        raise PlanError(f"a batch latency sizes the clients by Little's law; do not also give "
                        f"{' or '.join(SHARD_CONSTRAINTS[name].name for name in rule)}")


#: a batch latency below this many ms per document (1 µs) is faster than MongoDB writes a document: the latency was
#: given in seconds (0.05 for 50 ms), and Little's law sizes the clients 1,000x too few (1 client for 1M inserts/s)
LEAST_MS_PER_DOCUMENT = 0.001


def batch_latency_reason(batch_latency_ms: float | None, batch_size: int):
    """A weak ``latency_scale`` reason when the batch latency is implausibly fast per document (None otherwise)."""
    if batch_latency_ms is None or not batch_latency_ms / batch_size < LEAST_MS_PER_DOCUMENT:
        return None
    per_document_us = batch_latency_ms / batch_size * 1000.0
    return Reason("latency_scale", "weak", f"a batch of {batch_size:,} documents in {number(batch_latency_ms, 6)} ms "
                  f"is {number(per_document_us, 3)} µs per document, faster than a database writes one (at least "
                  f"{number(LEAST_MS_PER_DOCUMENT * 1000)} µs): is --batch-latency-ms in seconds? The client "
                  "processes, by Little's law, scale with it", float(batch_latency_ms))


def plan_shard_study(target_rates=None, per_shard_throughput: float | None = None, sigma: float | None = None,
                     kappa: float | None = None, curve=None, bootstrap: int = 200, level: float = 0.95,
                     max_shards: float | None = None, batch_size: int = 1000, batch_latency_ms: float | None = None,
                     clients_per_shard: int | None = None, min_clients: int | None = None, scenarios=(),
                     source: str | None = None) -> ShardStudy:
    """Shards and client processes for each target insert rate.

    The USL over shard count is assumed (``per_shard_throughput``, ``sigma``, ``kappa``) or fitted to ``curve``, not
    both. The clients follow by Little's law with ``batch_latency_ms``, else ``clients_per_shard`` per shard, at least
    ``min_clients``.

    Parameters
    ----------
    target_rates : sequence of float, optional
        Inserts per second to plan for; default the DocumentDB study's 1,000,000.
    per_shard_throughput : float, optional
        Inserts/s of one shard; default 1,000,000 / 16, as in the study.
    sigma, kappa : float, optional
        The USL over shard count (default 0).
    curve : pandas.DataFrame, optional
        A curve table whose concurrency is the shard count: the USL is fitted to it.
    bootstrap : int, default 200
        Refits of ``curve`` for the shard count's interval.
    level : float, default 0.95
        That interval's coverage.
    max_shards : float, optional
        The most shards to consider (default 32, the service's limit).
    batch_size : int, default 1000
        Documents per insert batch.
    batch_latency_ms : float, optional
        The latency of one batch: the clients by Little's law.
    clients_per_shard : int, optional
        Default 64.
    min_clients : int, optional
        Default 128.
    scenarios : sequence of float, default ()
        Contention values σ to plan each target under too.
    source : str, optional
        Names the inputs in messages.

    Returns
    -------
    ShardStudy

    Raises
    ------
    PlanError
        A parameter out of range, both an assumed model and a curve, or a curve that shows no scaling.
    InputError
        ``curve`` is refused by the curve rules.

    Examples
    --------
    >>> from capmodel.plan import plan_shard_study
    >>> row = plan_shard_study().rows[0]                 # the DocumentDB study
    >>> row["shards"], row["clients"]
    (16, 1024)
    """
    from capmodel.models.usl.closed_form import usl_peak

    given = checked(SHARD_CONSTRAINTS, dict(
        target_rates=target_rates, per_shard_throughput=per_shard_throughput, sigma=sigma, kappa=kappa,
        bootstrap=bootstrap, level=level, max_shards=max_shards, batch_size=batch_size,
        batch_latency_ms=batch_latency_ms, clients_per_shard=clients_per_shard, min_clients=min_clients,
        scenarios=scenarios), PlanError)
    _refuse_mixed(given, curve is not None)
    target_rates, per_shard_throughput, sigma, kappa, bootstrap, level, max_shards, batch_size, batch_latency_ms, \
        clients_per_shard, min_clients, scenarios = (given[name] for name in (
            "target_rates", "per_shard_throughput", "sigma", "kappa", "bootstrap", "level", "max_shards",
            "batch_size", "batch_latency_ms", "clients_per_shard", "min_clients", "scenarios"))
    samples, fit, measured_shards = None, None, 1.0
    if curve is not None:
        source = source or "the shard curve"
        model, samples, fit = _fitted_model(curve, bootstrap, source)
    else:
        bundled = per_shard_throughput is None
        measured_shards = float(DOCUMENTDB_SHARDS) if bundled else 1.0
        per_shard = DOCUMENTDB_TARGET_RATE / DOCUMENTDB_SHARDS if bundled else per_shard_throughput
        rate_basis = (f"per-shard throughput from the study ({DOCUMENTDB_TARGET_RATE:,.0f} inserts/s / "
                      f"{DOCUMENTDB_SHARDS} shards)" if bundled else "per-shard throughput given")
        usl_basis = "linear (sigma = kappa = 0)" if sigma is None and kappa is None else "sigma/kappa given"
        model = {"per_shard_throughput": per_shard, "sigma": sigma or 0.0, "kappa": kappa or 0.0,
                 "basis": f"assumed: {rate_basis}, {usl_basis}"}
        source = DOCUMENTDB_SOURCE if bundled else (source or "given")
    targets = target_rates or [DOCUMENTDB_TARGET_RATE]
    max_shards = max_shards if max_shards is not None else DOCUMENTDB_MAX_SHARDS
    latency_s = batch_latency_ms / 1000.0 if batch_latency_ms is not None else None
    per_shard_clients = clients_per_shard if clients_per_shard is not None else CLIENTS_PER_SHARD
    min_clients = min_clients if min_clients is not None else MIN_CLIENTS
    peak_shards, peak_throughput = usl_peak(model["sigma"], model["kappa"], model["per_shard_throughput"])
    model.update(
        max_shards=max_shards, batch_size=batch_size, batch_latency_ms=batch_latency_ms,
        clients_per_shard=None if latency_s else per_shard_clients, min_clients=None if latency_s else min_clients,
        clients_rule=(f"Little's law, {number(batch_latency_ms, 6)} ms per batch of {batch_size}" if latency_s
                      else f"{per_shard_clients} per shard, at least {min_clients}"),
        peak_shards=peak_shards if peak_shards != math.inf else None,
        peak_throughput=peak_throughput if peak_throughput != math.inf else None,
        level=level if samples is not None else None,
    )
    options: dict[str, Any] = dict(max_shards=max_shards, batch_size=batch_size, batch_latency_s=latency_s,
                                   clients_per_shard=per_shard_clients, min_clients=min_clients)
    rows = [plan_shards(t, model["per_shard_throughput"], model["sigma"], model["kappa"], usl_samples=samples,
                        level=level, **options) for t in targets]
    scan = None
    if scenarios:
        scan = pd.DataFrame([plan_shards(t, model["per_shard_throughput"], s, model["kappa"], **options)
                             for t in targets for s in scenarios])
    labels = [f"{row['target_rate']:,.0f}/s" for row in rows]
    evidence, per = assess_scale_out({label: row["shards"] for label, row in zip(labels, rows)}, fit,
                                     {label: measured_shards for label in labels},
                                     f"{number(model['per_shard_throughput'])}/s per shard, sigma = "
                                     f"{number(model['sigma'], 6)}, "
                                     f"kappa = {number(model['kappa'], 6)}", "shards")
    evidence = evidence + Evidence.of(batch_latency_reason(batch_latency_ms, batch_size))
    return ShardStudy(source=source, model=model, rows=rows, scenarios=scan, evidence=evidence,
                      row_evidence=tuple(per[label] for label in labels))


def _json_row(plan: dict) -> dict:
    """One target's row of the JSON contract: unreachable targets carry None and the reason."""
    reachable = plan["shards"] is not None
    row = {"target_rate": plan["target_rate"], "shards": plan["shards"], "reachable": reachable,
           "reason": plan["reason"] or None}
    for key in ("throughput", "efficiency", "linear_shards", "clients"):
        row[key] = plan.get(key)
    for key in ("shards_low", "shards_high", "unreachable_share"):
        if key in plan:
            row[key] = plan[key]
    return row


def shards_table(model: dict, rows: list[dict]):
    """The rows as a ``capmodel.formatting.Table``: a count the data cannot support reads "unsupported", a target
    no shard count reaches reads "unreachable" with its reason."""
    shown = []
    for r in rows:
        row = {"target_rate": r["target_rate"], "linear_shards": r["linear_shards"]}
        if r["reachable"] and r.get("evidence", {}).get("grade") == "unusable":
            row.update(shards="unsupported", note="the data cannot support a shard count here (see the evidence)")
        elif r["reachable"]:
            row.update(shards=r["shards"], throughput=r["throughput"], efficiency=r["efficiency"],
                       clients=r["clients"])
            if "shards_low" in r:
                row["note"] = (f"{integer(r['shards_low'])} to {integer(r['shards_high'])} shards, "
                               f"{percent(model['level'])} bootstrap")
        else:
            row.update(shards=float("inf"), note=r["reason"])
        shown.append(row)
    return table(pd.DataFrame(shown), {
        "target_rate": Column("target (inserts/s)", "num"), "shards": Column("shards", "int"),
        "linear_shards": Column("linear estimate (shards)", "int"),
        "throughput": Column("delivered (inserts/s)", "num"), "efficiency": Column("efficiency", "percent", digits=3),
        "clients": Column("client processes", "int"), "note": Column("note", "text", missing="")},
        footnotes=['"unreachable": no shard count up to the limit reaches the target',
                   '"—": no figure where there is no shard count'])
