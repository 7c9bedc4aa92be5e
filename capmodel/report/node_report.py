"""Report 04's result: legacy nodes to match a cluster of new ones, by the linear rule and under a USL over node
count; the answer, the verdict and the tables come from the same ``NodeStudy`` the figures draw."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from capmodel.formatting import Column, aside, number, table, unnested
from capmodel.models.evidence import Evidence

if TYPE_CHECKING:
    from capmodel.plan.nodes import NodeStudy

QUESTION = "How many legacy nodes match a cluster of new ones?"
BUNDLED_INTRO = ("The Micron 5100 ECO brief compares a 3-node SSD cluster with a 3-node HDD cluster under YCSB A–F "
                 "and states a \"legacy nodes needed\" multiplier: nodes_HDD = 3 × X_SSD / X_HDD. That rule assumes "
                 "the HDD cluster scales perfectly with node count; below, the same question under a Universal "
                 "Scalability Law over node count.")
USER_INTRO = ("The candidate nodes needed to match the reference cluster, per workload of {source}: by the linear "
              "rule (candidate nodes × reference throughput / candidate throughput) and under a Universal "
              "Scalability Law over node count.")


def _span(values) -> str:
    values = sorted(int(v) for v in values)
    return f"{values[0]:,}" if values[0] == values[-1] else f"{values[0]:,} to {values[-1]:,}"


@dataclass
class NodeReport:
    """Everything report 04 shows.

    Attributes
    ----------
    study : NodeStudy
        The plan.
    inputs : dict
        The files read.
    bundled : bool
        The bundled Micron brief was planned.
    """
    study: NodeStudy
    inputs: dict
    bundled: bool

    question = QUESTION

    @property
    def rows(self):
        return self.study.rows

    @property
    def intro(self) -> str:
        return BUNDLED_INTRO if self.bundled else USER_INTRO.format(source=self.study.source)

    @property
    def evidence(self) -> Evidence:
        """The study's verdict (as ``capmodel nodes --json`` prints it)."""
        return self.study.evidence

    @property
    def answer(self) -> str:
        """The answer under the decision, in short plain sentences (``headline.answer_problems``): the count without
        contention, why a workload is out of reach, the contention it tolerates; the USL's figures follow in
        ``details``."""
        rows = self.rows
        text = f"Without contention the candidate cluster would need {_span(rows['nodes_linear'])} nodes."
        out = rows[~rows["usl_reachable"].astype(bool)]
        if len(out) == 1:
            text += (f" YCSB {out.iloc[0]['workload']} cannot be matched: "
                     f"{unnested(out.iloc[0]['usl_note'].removeprefix('unreachable: '))}.")
        elif len(out):      # each workload's peak is in the table below: the headline stays short
            text += (f" YCSB {', '.join(out['workload'])} cannot be matched: on each the candidate cluster's "
                     "throughput peaks below the reference's.")
        sensitivity = self.sensitivity_answer()
        return f"{text} {sensitivity}".strip() + " The contention figures and each workload's count follow below."

    @property
    def details(self) -> str:
        """How the answer was worked out: the linear rule and the USL over node count, with its figures."""
        rows = self.rows
        reach = rows[rows["usl_reachable"].astype(bool)]
        text = (f"By the linear rule the candidate cluster needs **{_span(rows['nodes_linear'])} nodes** "
                f"(YCSB {', '.join(rows['workload'])}); under a USL over node count with σ = "
                f"{number(self.study.sigma)} and κ = {number(self.study.kappa)} it needs ")
        text += f"**{_span(reach['nodes_usl'])} nodes**" if len(reach) else "more than any cluster"
        out = rows[~rows["usl_reachable"].astype(bool)]
        if len(out):
            text += "".join(f"; YCSB {r['workload']} is **unreachable** "
                            f"{aside(r['usl_note'].removeprefix('unreachable: '))}" for _, r in out.iterrows())
        return text + "."

    @property
    def decision(self) -> str:
        """The decision in at most two short sentences, no brackets (``headline.decision_problems``): the nodes the
        candidate cluster needs under the USL, and which workloads no cluster of candidates matches; the linear rule
        and the contention figures follow in ``answer``."""
        rows = self.rows
        reachable = rows["usl_reachable"].astype(bool)
        reach, out = rows[reachable], rows[~reachable]
        lead = (f"Plan **{_span(reach['nodes_usl'])} candidate nodes** per workload." if len(reach) else
                "**No candidate cluster** matches the reference on any workload.")
        if not len(out) or not len(reach):
            return lead
        return f"{lead} No number of candidate nodes matches YCSB {', '.join(out['workload'])}."

    @property
    def short_answer(self) -> str:
        """The answer in one sentence, for the index of reports (the linear rule's count against the USL's)."""
        return self.details

    def sensitivity_answer(self) -> str:
        limit = self.study.unreachable_from()
        if self.study.sensitivity is None:
            return ""
        if limit is None:
            return "Every workload stays reachable over the contention values tried."
        return (f"From a contention σ of {number(limit)} on, at least one workload cannot be matched by any number of "
                "candidate nodes.")

    def nodes_table(self):
        frame = self.rows.copy()
        for column in ("stated_multiplier", "stated_nodes_low", "stated_nodes_high"):
            if column in self.study.input_table.columns:
                frame[column] = self.study.input_table[column].to_numpy()
        frame["nodes_usl"] = frame["nodes_usl"].where(frame["usl_reachable"].astype(bool), float("inf"))
        return table(frame, {
            "workload": Column("YCSB workload", "text"),
            "reference_ops_per_s": Column("reference (ops/s)", "int"),
            "candidate_ops_per_s": Column("candidate (ops/s)", "int"),
            "multiplier": Column("multiplier", decimals=2),
            "stated_multiplier": Column("brief's multiplier", decimals=1),
            "nodes_linear": Column("nodes, linear rule", "int"),
            "stated_nodes_low": Column("brief's nodes (low)", "int"),
            "stated_nodes_high": Column("brief's nodes (high)", "int"),
            "nodes_usl": Column("nodes under the USL", "int")},
            caption="Candidate nodes per workload",
            footnotes=['"unreachable": the candidate cluster’s throughput peaks below the reference'],
            csv_name="nodes.csv")

    def sensitivity_table(self):
        if self.study.sensitivity is None:
            return None
        frame = self.study.sensitivity.fillna(float("inf"))
        cols = {"sigma": Column("contention σ")}
        cols.update({c: Column(f"YCSB {c} (nodes)", "int") for c in frame.columns if c != "sigma"})
        return table(frame, cols, caption=f"Nodes needed as contention grows (κ = {number(self.study.kappa)})",
                     footnotes=['"unreachable": no number of candidate nodes matches the reference'],
                     csv_name="sensitivity.csv")


def node_report(table_file: str = "", sigma: float = 0.0, kappa: float = 0.0, sensitivity=(), rounding="nearest",
                max_nodes: float = 1000) -> NodeReport:
    """What report 04 shows: the node study of a table planned as ``capmodel nodes`` plans it.

    Parameters
    ----------
    table_file : str, default ""
        The node table's file; "" plans the bundled Micron brief.
    sigma, kappa : float, default 0.0
        The USL over node count.
    sensitivity : sequence of float, default ()
        Contention values to scan.
    rounding : {"nearest", "up"}, default "nearest"
        The linear rule's rounding.
    max_nodes : float, default 1000
        The most nodes to consider.

    Returns
    -------
    NodeReport

    Raises
    ------
    InputError
        The file is refused.
    PlanError
        As ``plan_node_study`` raises it.
    """
    from capmodel.data.readers import read_table
    from capmodel.plan import plan_node_study

    study = plan_node_study(read_table(table_file) if table_file else None, sigma=sigma, kappa=kappa,
                            rounding=rounding, max_nodes=max_nodes, sensitivity=list(sensitivity),
                            source=table_file or None)
    if table_file:
        inputs = {"table": table_file}
    else:
        from capmodel import datasets
        from capmodel.plan.nodes import MICRON

        inputs = {"table": str(datasets.path(MICRON))}
    return NodeReport(study=study, inputs=inputs, bundled=not table_file)
