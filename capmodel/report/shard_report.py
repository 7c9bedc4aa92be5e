"""Report 05's result: shards and clients for a target insert rate under a USL over shard count; the answer, the
verdict and the tables come from the same ``ShardStudy`` the figures draw."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from capmodel.formatting import Column, integer, number, percent, table, unnested
from capmodel.models.evidence import Evidence
from capmodel.studies import DOCUMENTDB_SHARDS, DOCUMENTDB_TARGET_RATE

if TYPE_CHECKING:
    from capmodel.plan.shards import ShardStudy

STUDY_PER_SHARD = DOCUMENTDB_TARGET_RATE / DOCUMENTDB_SHARDS   # the DocumentDB post's rate per shard (05's default)
QUESTION = "How many shards, and how many clients, for a target insert rate?"
BUNDLED_INTRO = ("The AWS DocumentDB elastic-cluster insert benchmark scaled writes \"to over a million inserts per "
                 "second on the 16-shard elastic cluster\", driving 1 and 2 shards with 128 client processes and 64 "
                 "per shard beyond. Throughput over shard count follows a USL through the per-shard rate (the request "
                 "router acting as contention σ, cross-shard coordination as coherency κ); the shards needed are the "
                 "smallest count that reaches the target, and the clients follow Little's law (or the post's "
                 "per-shard rule).")


@dataclass
class ShardReport:
    """Everything report 05 shows.

    Attributes
    ----------
    study : ShardStudy
        The plan.
    borrowed : dict
        Figures taken from the DocumentDB post rather than given.
    """
    study: ShardStudy
    borrowed: dict
    #: the target and the per-shard rate are the DocumentDB study's: the page introduces the study and its table
    on_study: bool = False

    question = QUESTION
    intro = BUNDLED_INTRO

    @property
    def row(self) -> dict:
        return self.study.rows[0]

    @property
    def evidence(self) -> Evidence:
        """The study's verdict (as ``capmodel shards --json`` prints it)."""
        return self.study.evidence

    @property
    def efficiency_words(self) -> str:
        """The plan's efficiency as the scenario table's column spells it (one precision per column: 100.0% beside
        84.7%), or as a percentage alone when there are no scenarios."""
        efficiency = self.row["efficiency"]
        scenarios = self.scenario_table()
        if scenarios is None or "efficiency" not in scenarios.columns:   # no scenario reaches the target
            return percent(efficiency)
        return scenarios.show_value("efficiency", efficiency)

    @property
    def short_answer(self) -> str:
        """The answer's first sentence, for the index of reports: the shards and clients for the target."""
        r, m = self.row, self.study.model
        target = f"{integer(r['target_rate'])} inserts/s"
        if r["shards"] is None:
            reason = str(r["reason"]).removeprefix("unreachable: ")   # not "cannot be reached: unreachable: ..."
            return f"A target of {target} **cannot be reached**: {reason}."
        return (f"A target of {target} needs **{integer(r['shards'])} shards** (linear estimate "
                f"{integer(r['linear_shards'])}) at {integer(m['per_shard_throughput'])} inserts/s per shard with "
                f"σ = {number(m['sigma'])} and κ = {number(m['kappa'])}, delivering {integer(r['throughput'])} "
                f"inserts/s at {self.efficiency_words} of linear efficiency, driven by "
                f"**{integer(r['clients'])} client processes** ({m['clients_rule']}).")

    @property
    def decision(self) -> str:
        """The decision in at most two short sentences, no brackets (``headline.decision_problems``): the shards and
        client processes to plan, and the contention under which none suffice; the model's figures follow in
        ``answer``."""
        r, m = self.row, self.study.model
        target = f"{integer(r['target_rate'])} inserts/s"
        if r["shards"] is None:
            return f"**{target} cannot be reached** with at most {integer(m['max_shards'])} shards."
        text = (f"Plan **{integer(r['shards'])} shards** driven by **{integer(r['clients'])} client processes** for "
                f"{target}.")
        out = self.unreachable_sigmas
        if out:
            text += (f" If contention σ reaches {number(min(out))}, no number of shards up to "
                     f"{integer(m['max_shards'])} does.")
        return text

    @property
    def answer(self) -> str:
        """The answer under the decision, in short plain sentences (``headline.answer_problems``): what the shards
        deliver and how the clients split (the contention under which no count suffices is the decision's); the
        model's figures follow in ``details``."""
        r, m = self.row, self.study.model
        if r["shards"] is None:
            return "The model's figures and each contention scenario follow below."
        text = (f"{integer(r['shards'])} shards at {integer(m['per_shard_throughput'])} inserts/s each deliver "
                f"{integer(r['throughput'])} inserts/s, {self.efficiency_words} of linear efficiency. The "
                f"{integer(r['clients'])} client processes split as {unnested(m['clients_rule'])}.")
        return text + " The model's figures and each contention scenario follow below."

    @property
    def details(self) -> str:
        """How the answer was worked out: the model's figures, the linear estimate, the unreachable scenarios."""
        m = self.study.model
        text = self.short_answer
        out = self.unreachable_sigmas
        if out:
            kappa = f" (κ = {number(m['kappa'])})" if m["kappa"] else ""   # κ alone can make it so
            text += (f" Unreachable within {integer(m['max_shards'])} shards when σ is "
                     f"{', '.join(number(s) for s in out)}{kappa}.")
        return text

    @property
    def unreachable_sigmas(self) -> list:
        """The contention scenarios under which no number of shards up to the limit reaches the target."""
        scen = self.study.scenarios
        return [] if scen is None else scen.loc[scen["shards"].isna(), "sigma"].tolist()

    @property
    def scenarios(self):
        """The study's contention scenarios (a copy), each row with its linear estimate (``plan_shards`` carries it
        on unreachable rows too)."""
        scen = self.study.scenarios
        return None if scen is None else scen.copy()

    def scenario_table(self):
        if self.study.scenarios is None:
            return None
        frame = self.scenarios
        frame["shards"] = frame["shards"].fillna(float("inf"))
        return table(frame, {
            "sigma": Column("contention σ"), "kappa": Column("coherency κ"),
            "shards": Column("shards", "int"), "linear_shards": Column("linear estimate (shards)", "int"),
            "throughput": Column("inserts/s delivered", "int"), "efficiency": Column("efficiency", "percent"),
            "clients": Column("client processes", "int")},
            caption="Shards and clients per contention scenario",
            footnotes=[f'"unreachable": more shards than the limit of {integer(self.study.model["max_shards"])}, '
                       "or a peak below the target", '"—": no value where the target is unreachable'],
            csv_name="scenarios.csv")

    def config_table(self, config):
        return table(config, {
            "cluster": Column("cluster", "text"), "shards": Column("shards", "int", missing="—"),
            "client_processes": Column("client processes", "int"), "vcpu_per_shard": Column("vCPU per shard", "int"),
            "batch_size": Column("batch size (documents)", "int"), "duration_s": Column("duration (s)", "int"),
            "secondary_indexes": Column("secondary indexes", "int"),
            "shard_key": Column("shard key", "text", missing="—")},
            caption="The benchmark's set-up (DocumentDB post)", csv_name="benchmark_setup.csv",
            footnotes=['"—": not sharded (the instance-based cluster)'])


def shard_report(target_rate: float, per_shard_throughput: float, sigma: float, kappa: float, scenarios=(),
                 batch_size: int = 1000, batch_latency_ms: float = 0.0, max_shards: int = 32) -> ShardReport:
    """What report 05 shows: shards and clients for one target rate, as ``capmodel shards`` plans them.

    Parameters
    ----------
    target_rate : float
        Inserts/s to reach.
    per_shard_throughput : float
        Inserts/s of one shard; the study's own figure (1,000,000 / 16) lets the plan use the study's basis.
    sigma, kappa : float
        The USL over shard count.
    scenarios : sequence of float, default ()
        Contention values to plan the target under too.
    batch_size : int, default 1000
        Documents per batch.
    batch_latency_ms : float, default 0.0
        A batch's latency, for Little's law (0: the study's per-shard rule).
    max_shards : int, default 32
        The most shards to consider.

    Returns
    -------
    ShardReport

    Raises
    ------
    PlanError
        As ``plan_shard_study`` raises it.
    """
    from capmodel.plan import plan_shard_study

    # the post's rate was measured on 16 shards: handed over as "given", the plan would take it as one shard's
    # measurement and call every count an extrapolation from one shard; None lets the plan use the study's basis
    study_rate = per_shard_throughput == STUDY_PER_SHARD
    study = plan_shard_study([target_rate], per_shard_throughput=None if study_rate else per_shard_throughput,
                             sigma=sigma, kappa=kappa,
                             max_shards=max_shards, batch_size=batch_size, batch_latency_ms=batch_latency_ms or None,
                             scenarios=list(scenarios))
    borrowed = {}
    if study_rate:
        borrowed[f"per-shard rate {integer(per_shard_throughput)} inserts/s"] = "the DocumentDB post: 1,000,000 / 16"
    if not batch_latency_ms:
        borrowed["64 client processes per shard, at least 128"] = "the DocumentDB post"
    on_study = study_rate and target_rate == DOCUMENTDB_TARGET_RATE
    return ShardReport(study=study, borrowed=borrowed, on_study=on_study)
