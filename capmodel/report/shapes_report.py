"""Report 09's result: the query shapes of a mongod's JSON log (or the bundled sample), each shape's CPU per operation
from the server's own CPU over the same window (FTDC), the what-if per shape, the inputs the page hashes and names,
and its answer and decision in the words the headline and the index show. The notebook holds the parameters, this
call and the figures."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from capmodel.formatting import Column, number, percent, plural, table
from capmodel.observe.shapes.files import bundled_shapes_sample

if TYPE_CHECKING:
    from capmodel.observe.shapes.result import QueryShapes
    from capmodel.observe.shapes.what_if import ShapesWhatIf

QUESTION = "Which queries break this server first, and when?"
#: what the page says of the bundled sample, above its tables
SHAPES_SAMPLE_NOTE = (
    "The bundled sample is the JSON log (every operation logged: slowms 0) and the FTDC of capmodel's embedded "
    "`mongod`, pinned to one CPU, while a capmodel load on the other CPU ran a known application mix on a "
    "collection of 20,000 synthetic documents: a collection scan, an indexed range query with a sort, an update by "
    "that index and an `_id` lookup, in 2-second phases each with its own random rate per shape, so that a "
    "regression on the server's CPU can tell the shapes apart. Not anyone's production data (see `data/README.md`).")
#: the parameters that need the server's CPU, unused when only a log is given
_CPU_ONLY = ["since", "until", "cores", "interval", "what_if", "level", "bootstrap"]


def shape_name(row) -> str:
    """A shape as sentences name it: its operation, namespace and filter shape, "the collection scan" first where
    its plan is one."""
    what = f"{row['operation']} on {row['namespace']} {row['filter_shape']}".rstrip()
    return f"the collection scan {what}" if row["collscan"] else what


@dataclass
class ShapesReport:
    """Everything report 09 shows; ``shapes_report`` builds it.

    Attributes
    ----------
    shapes : QueryShapes
        The log's shapes.
    what_if : ShapesWhatIf or None
        The demands and the what-if; None without the server's CPU (``why_no_what_if`` says why).
    asked : str
        The what-if as the page writes it ("shape 4 x3"), or "the observed load".
    source : str
        The log (and FTDC) as sentences name them.
    inputs : dict
        The files the headline hashes.
    unused : list of str
        The parameters these inputs leave unused.
    mongodb_version : str or None
    bundled : bool
        The bundled sample was read.
    why_no_what_if : str
        Why there is no what-if ("" when there is one).
    """

    shapes: QueryShapes
    what_if: ShapesWhatIf | None
    asked: str
    source: str
    inputs: dict
    unused: list
    mongodb_version: str | None = None
    bundled: bool = False
    why_no_what_if: str = ""
    question: str = field(default=QUESTION, init=False)

    @property
    def ranks(self) -> dict:
        """Shape id -> its rank in the shapes table (1 = most operations), as the what-if parameter names shapes."""
        return {sid: i + 1 for i, sid in enumerate(self.shapes.rows["shape"])}

    @property
    def labels(self) -> dict:
        """Shape id -> the short name its bars carry ("#4 find {status: ?}")."""
        return {r["shape"]: f"#{self.ranks[r['shape']]} {r['operation']} {r['filter_shape']}".rstrip()
                for _, r in self.shapes.rows.iterrows()}

    @property
    def evidence(self):
        return self.what_if.evidence if self.what_if is not None else self.shapes.evidence

    def _limiting(self) -> tuple[int, str]:
        """The rank and the name of the shape that breaks the server (with a what-if)."""
        assert self.what_if is not None
        sid = self.what_if.limiting_shape
        row = self.shapes.rows.set_index("shape").loc[sid]
        return self.ranks[sid], shape_name({**row, "shape": sid})

    @property
    def answer(self) -> str:
        """The answer in short plain sentences (``details`` has the what-if's own words, its shapes and intervals)."""
        where = "the bundled sample's log" if self.bundled else f"the log of {self.source}"
        found = f"{plural(len(self.shapes.rows), 'query shape')} in {where}."
        w = self.what_if
        if w is None:
            return f"{found} No what-if: {self.why_no_what_if}"
        low, high = w.low, w.high
        return (f"{found} At {self.asked} the CPU is {percent(w.utilization)} of the server's, between "
                f"{percent(low['utilization'])} and {percent(high['utilization'])}; it saturates at "
                f"{number(w.load_factor_that_fits)} times that load, between {number(low['load_factor_that_fits'])} "
                f"and {number(high['load_factor_that_fits'])} times. Shape {self._limiting()[0]} breaks it first.")

    @property
    def details(self) -> str:
        """How the answer was worked out: the what-if's own words, its shapes named by their rank in the table as
        the page names them; the busiest shapes where there is no what-if."""
        if self.what_if is None:
            return self.shapes.describe(top=5)
        return self.what_if.describe(names={sid: f"shape {rank}" for sid, rank in self.ranks.items()})

    @property
    def meanings(self) -> dict:
        """What the "not given" log and FTDC mean for these inputs (the bundled sample's), for the headline."""
        return ({"log": "the bundled sample's log", "ftdc": "the bundled sample's FTDC",
                 "since": "the sample's window", "until": "the sample's window"} if self.bundled else {})

    @property
    def short_answer(self) -> str:
        """One sentence for the index of reports."""
        w = self.what_if
        if w is None:
            return (f"The log holds {plural(len(self.shapes.rows), 'query shape')}, the busiest "
                    f"{shape_name(self.shapes.rows.iloc[0])}; without the server's CPU no shape's demand is known.")
        rank, name = self._limiting()
        fits = f"**{number(w.load_factor_that_fits)}x** that load"
        return (f"Shape {rank}, {name}, breaks the server first: at {self.asked} the CPU saturates at {fits}."
                if w.utilization < 1 else f"At {self.asked} the server does not fit: it needs "
                f"**{percent(w.utilization)}** of its CPU, most of it for shape {rank}, {name}.")

    @property
    def decision(self) -> str:
        """The decision in at most two short sentences, no brackets (``headline.decision_problems``)."""
        w = self.what_if
        if w is None:
            return ("**No what-if without the server's CPU**: give the FTDC of the log's window to learn which "
                    "shape breaks the server first.")
        row = self.shapes.rows.set_index("shape").loc[w.limiting_shape]
        which = (f"Shape {self._limiting()[0]}, a {'collection scan' if row['collscan'] else row['operation']} on "
                 f"{row['namespace']}")
        if w.utilization >= 1:
            return (f"**{self.asked.capitalize()} does not fit**: the server would need {percent(w.utilization)} of "
                    f"its CPU. {which} takes the largest share.")
        return (f"**{which}, breaks the server first**: at {self.asked} the CPU saturates at "
                f"{number(w.load_factor_that_fits)} times that load.")

    @property
    def bundled_note(self) -> str | None:
        return SHAPES_SAMPLE_NOTE if self.bundled else None

    def _numbered(self) -> pd.DataFrame:
        rows = (self.what_if.shapes_table if self.what_if is not None else self.shapes.table)
        rows.insert(0, "rank", range(1, len(rows) + 1))
        rows["plan_shown"] = ["collection scan (COLLSCAN)" if c else (p or "none") for c, p in
                              zip(rows["collscan"], rows["plan"])]
        return rows

    def shapes_table(self):
        """The shapes, one row each, by rank (a ``capmodel.formatting.Table``): operation, namespace, filter shape and
        plan, a collection scan named as such."""
        return table(self._numbered(), {
            "rank": Column("#", "int"), "shape": Column("shape", "text"), "operation": Column("operation", "text"),
            "namespace": Column("namespace", "text"), "filter_shape": Column("filter (values removed)", "text"),
            "plan_shown": Column("plan", "text")}, caption="The query shapes of the log, most operations first",
            csv_name="shapes.csv")

    def figures_table(self):
        """Each shape's figures by rank (a ``capmodel.formatting.Table``): operations logged, rate, latency
        percentiles, documents examined per returned, CPU per operation and its source."""
        return table(self._numbered(), {
            "rank": Column("#", "int"), "count": Column("operations", "int"), "rate_per_s": Column("rate (ops/s)"),
            "latency_p50_ms": Column("p50 (ms)"), "latency_p95_ms": Column("p95 (ms)"),
            "latency_p99_ms": Column("p99 (ms)"),
            "docs_examined_per_returned": Column("examined per returned"),
            "cpu_ms_per_op": Column("CPU per op (ms)"), "cpu_source": Column("CPU from", "text", missing="—")},
            caption="Each shape's rate, latency, work and CPU", csv_name="shape_figures.csv",
            footnotes=["—: no figure (no document returned, or a shape outside the CPU regression)"])

    def what_if_table(self):
        """The what-if per fitted shape (a ``capmodel.formatting.Table``): observed and asked rate, CPU per operation,
        share of the CPU at the asked load, rate at saturation, latency at the asked load (with a what-if)."""
        assert self.what_if is not None
        w = self.what_if.table
        w.insert(0, "rank", [self.ranks[s] for s in w["shape"]])
        w = w.sort_values("rank")
        return table(w, {
            "rank": Column("#", "int"), "observed_per_s": Column("observed (ops/s)"),
            "factor": Column("factor"), "asked_per_s": Column("asked (ops/s)"),
            "cpu_ms_per_op": Column("CPU per op (ms)"), "cpu_share": Column("CPU share", "percent"),
            "saturation_per_s": Column("at saturation (ops/s)"), "latency_ms": Column("latency (ms)")},
            caption=f"The shapes at {self.asked}", csv_name="what_if.csv",
            footnotes=["—: no latency: the server does not fit the asked load"])


def factor_items(text: str) -> list[str]:
    """The ``SHAPE=FACTOR`` items of the ``what_if`` parameter, written ``SHAPExFACTOR`` ("4x3": papermill reads no
    ``=`` in a parameter's value) or ``SHAPE=FACTOR``, comma-separated (a shape id is hexadecimal: no x in it)."""
    items = [part.strip() for part in str(text).split(",") if part.strip()]
    return [item if "=" in item or "x" not in item else "=".join(item.rsplit("x", 1)) for item in items]


def _asked_words(report_factors: dict, ranks: dict) -> str:
    """The what-if as the page writes it: "shape 4 x3", "shapes 1 x2 and 4 x3"; "the observed load" for none."""
    parts = [f"{ranks[sid]} x{number(f)}" for sid, f in sorted(report_factors.items(), key=lambda kv: ranks[kv[0]])
             if f != 1.0]
    if not parts:
        return "the observed load"
    return ("shape " if len(parts) == 1 else "shapes ") + (" and ".join(parts) if len(parts) <= 2 else
                                                           ", ".join(parts[:-1]) + " and " + parts[-1])


def shapes_report(log: str = "", ftdc: str = "", since: str = "", until: str = "", cores: float = 0.0,
                  interval: float = 0.1, what_if: str = "4x3", level: float = 0.95,
                  bootstrap: int = 200) -> ShapesReport:
    """Read the log (and the FTDC) and answer report 09's question.

    Parameters
    ----------
    log : str
        mongod JSON log files or folders, comma-separated (gzip allowed); "" reads the bundled sample (its log and
        FTDC).
    ftdc : str
        The server's ``diagnostic.data`` folder (or FTDC files) over the log's window; "" none (no what-if), or the
        bundled sample's with no log.
    since, until : str
        The FTDC window, ISO 8601 (UTC); "" the bundled sample's, or all of the files given.
    cores : float
        The CPUs the mongod may use; 0 takes what the FTDC reports.
    interval : float
        Seconds the log's operations are counted in; at most half the FTDC's sample length (0.1 against one-second
        samples), each sample is a point of the demand fit with the shapes' rates over its own window
        (``capmodel.observe.shapes.demand.shape_intervals``).
    what_if : str
        ``SHAPExFACTOR`` (or ``SHAPE=FACTOR``), comma-separated: a shape's rank in the shapes table or its id, and
        the factor of its rate; "" the observed load.
    level, bootstrap
        As ``capmodel.observe.shapes.what_if.shapes_what_if`` takes them.

    Returns
    -------
    ShapesReport
    """
    from capmodel.errors import InputError
    from capmodel.observe import observe_ftdc, query_shapes
    from capmodel.observe.ftdc import ftdc_files
    from capmodel.observe.ftdc_samples import metadata_identity
    from capmodel.observe.shapes.what_if import ftdc_cores, parse_factors, resolve_shapes, shapes_what_if

    bundled = not log
    sample = bundled_shapes_sample() if bundled else {}
    logs = [sample["log"]] if bundled else [part.strip() for part in log.split(",") if part.strip()]
    ftdc_path = sample["ftdc"] if bundled else (ftdc or None)
    factors = parse_factors(factor_items(what_if), "what_if")
    shapes = query_shapes(logs, interval_s=interval if ftdc_path else None)
    resolve_shapes(shapes, factors)             # an unknown shape is an error with or without the CPU
    read = ftdc_files(ftdc_path) if ftdc_path else []
    inputs = {("log" if len(logs) == 1 else f"log {Path(p).name}"): str(p) for p in logs}
    inputs.update({(f"ftdc {f.name}" if len(read) > 1 else "ftdc"): str(f) for f in read})
    source = ("the bundled sample" if bundled else
              f"{Path(logs[0]).name}" + (f" and {plural(len(logs) - 1, 'more file')}" if len(logs) > 1 else ""))
    version = sample.get("mongod") or (metadata_identity(ftdc_path)["version"] if read else None)
    if not ftdc_path:
        return ShapesReport(shapes, None, "the observed load", source, inputs, ["ftdc", *_CPU_ONLY], version,
                            bundled, "the server's CPU over the log's window (its FTDC, the ftdc parameter) is not "
                            "given, so no shape has a CPU per operation.")
    samples = observe_ftdc(ftdc_path, since or sample.get("since"), until or sample.get("until")).samples
    used_cores = cores or ftdc_cores(samples, Path(ftdc_path).name, "the cores parameter")
    try:
        answer = shapes_what_if(shapes, samples, used_cores, factors, n_bootstrap=bootstrap, level=level)
    except InputError as exc:
        if factors:                      # a what-if the user asked for that cannot run is their error
            raise
        return ShapesReport(shapes, None, "the observed load", source, inputs, _CPU_ONLY, version, bundled,
                            str(exc))
    asked = _asked_words(answer.factors, {sid: i + 1 for i, sid in enumerate(shapes.rows["shape"])})
    return ShapesReport(shapes, answer, asked, source, inputs, [], version, bundled)


