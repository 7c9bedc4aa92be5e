"""Report 09's result: the query shapes of a mongod's JSON log (or the bundled sample), each shape's CPU per operation
from the server's own CPU over the same window (FTDC), the what-if per shape, the workload that replays the shapes
and its fidelity (with a log of the replay having run), the inputs the page hashes and names, and its answer and
decision in the words the headline and the index show. The notebook holds the parameters, this call and the
figures."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from capmodel.formatting import Column, integer, markdown_literal, number, percent, plural, table
from capmodel.observe.shapes.files import bundled_shapes_sample
from capmodel.observe.shapes.result import LATENCY_QUANTILES, UNRESOLVED, logged_latency

if TYPE_CHECKING:
    from capmodel.observe.shapes.fidelity import ReplayFidelity
    from capmodel.observe.shapes.replay import ReplayWorkload
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
#: the database ``capmodel bench`` replays in where the page says how to run the workload
REPLAY_DATABASE = "capmodel_replay"
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
    workload : ReplayWorkload or None
        The workload that replays the shapes of one namespace (``replay_workload``); None where none can be written
        (``why_no_workload`` says why).
    fidelity : ReplayFidelity or None
        The replay's shares and CPU per operation against production's, with a log of the replay having run.
    alone : pandas.DataFrame or None
        Each replayed operation's CPU measured alone (``alone_cpu``), where the replay recorded its windows (the
        bundled sample).
    replay_source : str
        The replay's log as sentences name it: its files' names, or "the bundled sample's replay" ("" without one).
    replay_info : dict
        How the bundled sample's replay ran (its ``sample.json``'s ``replay``); empty otherwise.
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
    workload: ReplayWorkload | None = None
    fidelity: ReplayFidelity | None = None
    alone: pd.DataFrame | None = None
    why_no_workload: str = ""
    replay_source: str = ""
    replay_info: dict = field(default_factory=dict)
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
    def what_was_read(self) -> str:
        """What the log held, as markdown, one item a line of ``QueryShapes.describe()`` (its filter shapes shown as
        written)."""
        return "\n".join(f"- {markdown_literal(line)}" for line in self.shapes.describe().splitlines())

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
        if not self.bundled:
            return {} if self.replay_source else {"replay_log": "none: the replay's fidelity is not measured"}
        return {"log": "the bundled sample's log", "ftdc": "the bundled sample's FTDC",
                "since": "the sample's window", "until": "the sample's window",
                **({"replay_log": "the bundled sample's replay"} if self.replay_info else {})}

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
        rows = self._numbered()
        for column in LATENCY_QUANTILES:
            rows[column] = rows[column].map(logged_latency)
        return table(rows, {
            "rank": Column("#", "int"), "count": Column("operations", "int"), "rate_per_s": Column("rate (ops/s)"),
            "latency_p50_ms": Column("p50 (ms)"), "latency_p95_ms": Column("p95 (ms)"),
            "latency_p99_ms": Column("p99 (ms)"),
            "docs_examined_per_returned": Column("examined per returned"),
            "cpu_ms_per_op": Column("CPU per op (ms)"), "cpu_source": Column("CPU from", "text", missing="—")},
            caption="Each shape's rate, latency, work and CPU", csv_name="shape_figures.csv",
            footnotes=["—: no figure (no document returned, or a shape outside the CPU regression)",
                       f"{UNRESOLVED}: under a millisecond, the log's resolution (its durations are whole "
                       "milliseconds)"])

    def what_if_table(self):
        """The what-if per fitted shape (a ``capmodel.formatting.Table``): observed and asked rate, CPU per operation,
        share of the CPU at the asked load, rate at saturation, latency at the asked load (with a what-if)."""
        assert self.what_if is not None
        w = self.what_if.table
        w.insert(0, "rank", [self.ranks[s] for s in w["shape"]])
        w = w.sort_values("rank")
        w["latency_ms"] = w["latency_ms"].astype(object).where(w["latency_resolved"], UNRESOLVED)
        return table(w, {
            "rank": Column("#", "int"), "observed_per_s": Column("observed (ops/s)"),
            "factor": Column("factor"), "asked_per_s": Column("asked (ops/s)"),
            "cpu_ms_per_op": Column("CPU per op (ms)"), "cpu_share": Column("CPU share", "percent"),
            "saturation_per_s": Column("at saturation (ops/s)"), "latency_ms": Column("latency (ms)")},
            caption=f"The shapes at {self.asked}", csv_name="what_if.csv",
            footnotes=["—: no latency: the server does not fit the asked load",
                       f"{UNRESOLVED}: the shape ran in under a millisecond, the log's resolution (its durations "
                       "are whole milliseconds)"])

    def _rank_of(self, sid: str) -> int:
        return self.ranks[sid]

    def workload_rows(self) -> pd.DataFrame:
        """The workload's operations, one row each in its order: the shape's rank, the operation's name and kind, the
        shape's filter, its share of the replayed operations and its rate in the replay (the workload's rate times
        its share)."""
        assert self.workload is not None
        spec = self.workload.spec
        kinds = {op["name"]: op["op"] for op in spec["operations"]}
        rate = float(spec.get("rate", float("nan")))
        return pd.DataFrame([{"rank": self._rank_of(r["shape"]), "name": r["name"], "kind": kinds[r["name"]],
                              "filter_shape": r["filter_shape"] or "{}", "share": r["share"],
                              "rate_per_s": rate * r["share"]} for r in self.workload.replayed])

    def workload_table(self):
        """What the workload holds (a ``capmodel.formatting.Table``): per operation its shape's rank, its name in the
        file, its kind, the filter shape, its share of the operations and its rate."""
        return table(self.workload_rows(), {
            "rank": Column("#", "int"), "name": Column("operation", "text"), "kind": Column("kind", "text"),
            "filter_shape": Column("filter (values removed)", "text"), "share": Column("share", "percent"),
            "rate_per_s": Column("rate (ops/s)")},
            caption="The replay workload's operations", csv_name="replay_operations.csv")

    @property
    def workload_words(self) -> str:
        """What the workload holds and loads, in plain sentences (or why there is none)."""
        if self.workload is None:
            return f"No replay workload: {self.why_no_workload}"
        w, spec = self.workload, self.workload.spec
        shapes_of = int((self.shapes.rows["namespace"] == w.namespace).sum())
        left = [why for why in w.left_out.values() if not why.endswith("another namespace")]
        which = (f"all {plural(shapes_of, 'shape')}" if len(w.replayed) == shapes_of else
                 f"{len(w.replayed)} of the {plural(shapes_of, 'shape')}")
        size = next((found.group(1) for note in w.notes if (found := re.match(r"Document size: ([\d,]+) bytes",
                                                                               note))), None)
        words = (f"The workload replays {which} on {w.namespace}" + (f"; it leaves out {'; '.join(left)}" if left
                                                                     else "") +
                 f". It loads {integer(spec['records'])} documents into a collection of its own, "
                 f"{spec['collection']}: each field a filter names holds integers drawn from a range sized so that "
                 "each operation matches as many documents as its shape did in production. No value comes from the "
                 "log.")
        if size is not None and "padding" in spec["document"]:
            words += f" Each document is padded to {size} bytes, the size production's replies show."
        rate = spec.get("rate")
        if rate is not None:
            words += f" In production the shapes ran at {number(rate)} operations per second in all."
        return words

    @property
    def how_to_run(self) -> str:
        """How to write the workload and run it (Markdown), and how to measure its fidelity."""
        rate = self.workload.spec.get("rate") if self.workload is not None else None
        pace = f" --rate {number(rate)}" if rate is not None else ""
        return ("Write the workload from your log, run it against the server to test (its own database, one "
                "client, paced at production's rate) with every operation logged there (`slowms` 0), and read its "
                "fidelity from that server's log (the last command, or this report's parameter `replay_log`):\n\n"
                "```\ncapmodel shapes LOG --out shapes --workload replay.yaml\n"
                f"capmodel bench --workload replay.yaml --uri mongodb://HOST:27017 --database {REPLAY_DATABASE} \\\n"
                f"    --concurrency 1{pace} --duration 60 --out replay-run\n"
                "capmodel shapes LOG --out shapes --replay-log REPLAY_LOG\n```")

    def fidelity_rows(self) -> pd.DataFrame:
        assert self.fidelity is not None
        rows = self.fidelity.table.copy()
        rows.insert(0, "rank", [self._rank_of(s) for s in rows["shape"]])
        names = {r["shape"]: r["name"] for r in self.workload.replayed} if self.workload is not None else {}
        rows.insert(1, "name", [names.get(s, s) for s in rows["shape"]])
        rows["mix_error_points"] = 100 * rows["mix_error"]
        rows["cpu_inside"] = self.fidelity.cpu_inside
        return rows

    def fidelity_table(self):
        """The replay against production (a ``capmodel.formatting.Table``): per replayed operation its share of the
        operations on each side and their difference (points), its CPU per operation on each side (production's with
        its interval), the relative error and whether the replay's figure lies inside production's interval."""
        return table(self.fidelity_rows(), {
            "rank": Column("#", "int"), "name": Column("operation", "text"),
            "production_share": Column("share in production", "percent"),
            "replay_share": Column("share in the replay", "percent"),
            "mix_error_points": Column("mix error (points)"),
            "production_cpu_ms_per_op": Column("CPU per op, production (ms)", interval=(
                "production_cpu_ms_per_op_low", "production_cpu_ms_per_op_high")),
            "replay_cpu_ms_per_op": Column("CPU per op, replay (ms)"),
            "cpu_error": Column("CPU error", "percent"),
            "cpu_inside": Column("replay inside production's interval", "text")},
            caption="The replay against production, per operation", csv_name="replay_fidelity.csv",
            footnotes=["—: not measured"])

    @property
    def fidelity_words(self) -> str:
        """What the fidelity table's largest errors are, spelled as the table spells them; or how to measure the
        fidelity where there is no replay log."""
        if self.workload is None:
            return ""
        if self.fidelity is None:
            return ("No log of this workload having run is given, so its fidelity is not measured here: run it with "
                    "every operation logged and give that log as `replay_log`.")
        f, rows, shown = self.fidelity, self.fidelity_rows(), self.fidelity_table()
        if f.missing and len(f.missing) == len(rows):
            return f.describe()
        mix = rows.loc[rows["mix_error"].abs().idxmax()]
        words = (f"The largest mix error is {shown.show_value('mix_error_points', mix['mix_error_points'])} "
                 f"points, shape {int(mix['rank'])}: {shown.show_value('production_share', mix['production_share'])} "
                 f"of the operations in production, {shown.show_value('replay_share', mix['replay_share'])} in the "
                 "replay.")
        measured = rows.dropna(subset=["cpu_error"])
        if len(measured):
            cpu = measured.loc[measured["cpu_error"].abs().idxmax()]
            ours = shown.cells()[rows.index.get_loc(cpu.name)][list(shown.columns).index("production_cpu_ms_per_op")]
            theirs = shown.show_value("replay_cpu_ms_per_op", cpu["replay_cpu_ms_per_op"])
            words += (f" The largest CPU error is {shown.show_value('cpu_error', cpu['cpu_error'])}, shape "
                      f"{int(cpu['rank'])}: {ours} ms per operation in production, {theirs} ms in the replay.")
            judged = measured["cpu_inside"].map(lambda v: isinstance(v, bool))
            if judged.any():
                inside = int(measured.loc[judged, "cpu_inside"].map(bool).sum())
                level = f"{self.what_if.level:.0%} " if self.what_if is not None else ""
                words += (f" {inside} of the {int(judged.sum())} replayed operations with both figures run inside "
                          f"production's {level}interval: an error there is one production's data cannot tell from "
                          "none.")
        else:
            words += " No shape has a CPU per operation on both sides, so the CPU is not compared."
        if f.missing:
            words += (f" The replay's log holds no operation of "
                      f"{', '.join(f'shape {self._rank_of(s)}' for s in f.missing)}.")
        return words

    @property
    def fidelity_method(self) -> str:
        """Where each figure of the fidelity table comes from, in plain sentences."""
        if self.fidelity is None:
            return ""
        info = self.replay_info
        if info:
            ran = (f"The bundled replay ran this workload on the sample's server right after production, in its own "
                   f"database, on one client ({info.get('binding', 'pymongo')} binding) at production's rate for "
                   f"{number(info.get('mix_seconds'))} seconds, every operation logged. Shares are of the replayed "
                   f"operations: production's from its log, the replay's from its log over that run.")
        else:
            ran = (f"Shares are of the replayed operations: production's from its log, the replay's from "
                   f"{self.replay_source}.")
        production = ("Production's CPU per operation is the demand fitted above (the what-if's)." if
                      self.what_if is not None else "Production's CPU per operation needs the server's FTDC.")
        if self.alone is not None and len(self.alone):
            idle, busy = self.alone["idle_cores"].iloc[0], self.alone["cpu_cores"]
            replay = (f" The replay's is each operation run alone for {number(info.get('alone_seconds'))} seconds at "
                      f"up to {number(info.get('alone_rate_per_s'))} operations per second: the server's CPU over "
                      f"that run less its idle CPU ({percent(idle)} of a core), divided by the operation's rate in "
                      f"the log. Alone, the operations kept the server between {percent(busy.min())} and "
                      f"{percent(busy.max())} of a core busy; a figure resting on a few percent of a core is the least "
                      "precise.")
        else:
            replay = (" The replay's CPU per operation is not measured: run each operation alone and read the "
                      "server's CPU, as `benchmarks/bench_replay.py` does.")
        return f"{ran} {production}{replay}"


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
                  bootstrap: int = 200, replay_log: str = "") -> ShapesReport:
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
    replay_log : str
        mongod JSON logs of the replay workload having run (every operation logged), comma-separated: its fidelity
        against the log; "" the bundled sample's replay with the bundled sample, none with a log of your own.

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
    replays = [part.strip() for part in replay_log.split(",") if part.strip()]
    if replays:
        inputs.update({("replay log" if len(replays) == 1 else f"replay log {Path(p).name}"): p for p in replays})
    elif bundled and "replay" in sample:
        inputs["replay log"] = str(Path(sample["log"]).parent / sample["replay"]["log"])
    if not ftdc_path:
        report = ShapesReport(shapes, None, "the observed load", source, inputs, ["ftdc", *_CPU_ONLY], version,
                              bundled, "the server's CPU over the log's window (its FTDC, the ftdc parameter) is not "
                              "given, so no shape has a CPU per operation.")
        return _with_replay(report, sample, replays, None)
    samples = observe_ftdc(ftdc_path, since or sample.get("since"), until or sample.get("until")).samples
    used_cores = cores or ftdc_cores(samples, Path(ftdc_path).name, "the cores parameter")
    try:
        answer = shapes_what_if(shapes, samples, used_cores, factors, n_bootstrap=bootstrap, level=level)
    except InputError as exc:
        if factors:                      # a what-if the user asked for that cannot run is their error
            raise
        report = ShapesReport(shapes, None, "the observed load", source, inputs, _CPU_ONLY, version, bundled,
                              str(exc))
        return _with_replay(report, sample, replays, ftdc_path)
    asked = _asked_words(answer.factors, {sid: i + 1 for i, sid in enumerate(shapes.rows["shape"])})
    return _with_replay(ShapesReport(shapes, answer, asked, source, inputs, [], version, bundled), sample, replays,
                        ftdc_path)


def _with_replay(report: ShapesReport, sample: dict, replays: list, ftdc_path) -> ShapesReport:
    """``report`` with the replay workload of its shapes and, with a replay log (the bundled sample's where it is read
    and none is given), the replay's fidelity; the bundled replay's CPU per operation from its operations' windows
    alone (``alone_cpu``)."""
    import tempfile

    from capmodel.errors import InputError
    from capmodel.observe import observe_ftdc, query_shapes
    from capmodel.observe.shapes.fidelity import alone_cpu, log_window, replay_fidelity
    from capmodel.observe.shapes.replay import replay_workload

    try:
        report.workload = replay_workload(report.shapes, namespace=sample.get("namespace"))
    except InputError as exc:
        report.why_no_workload = str(exc)
        return report
    info = sample.get("replay") if report.bundled and not replays else None
    if info is None and not replays:
        return report
    if info is None:
        replay_shapes = query_shapes(replays)
        report.replay_source = ", ".join(Path(p).name for p in replays)
    else:
        log = Path(sample["log"]).parent / info["log"]
        with tempfile.TemporaryDirectory(prefix="capmodel-replay-") as folder:
            mix = log_window(log, info["mix"]["start"], info["mix"]["end"], Path(folder) / "mix.log")
            replay_shapes = query_shapes(mix, slowms=info.get("slowms", 0))
        report.replay_source, report.replay_info = "the bundled sample's replay", info
        if ftdc_path:
            report.alone = alone_cpu(report.shapes, report.workload, log, observe_ftdc(ftdc_path).samples,
                                     info["alone"], info["idle"])
    replay_cpu = (None if report.alone is None else
                  {r["shape"]: r["cpu_ms_per_op"] for _, r in report.alone.iterrows()})
    report.fidelity = replay_fidelity(report.shapes, replay_shapes, report.workload, production_cpu=report.what_if,
                                      replay_cpu=replay_cpu)
    return report
