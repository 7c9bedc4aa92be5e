"""Report 09 (query shapes) on the bundled sample: its tables, figures and sentences against figures computed here.

From the bundled log itself, read with the json module: each mix shape's operations (its "Slow query" entries on
``shopdemo.orders``, told apart by the filter's fields and the command), and its rate over the span in which the log
shows ``slowms`` 0 (between its two "Profiler settings changed" entries); both against the page's table and the
operations ``scripts/make_shapes_sample.py`` counted as it ran them. From the fitted demands: the load factor at which
the CPU saturates, by the bottleneck law's closed form f = (cores − B) / Σ_s f_s·X_s·D_s (Lazowska et al.,
*Quantitative System Performance*, 1984, ch. 5), against the figure's line and the sentences; the shares of CPU
(X_s·D_s over B + Σ X·D) against the bars; the shape that breaks the server (the largest share at the asked load)
against the decision.
"""
from __future__ import annotations

import base64
import datetime as dt
import gzip
import html
import json
import re
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
import pytest

from capmodel.formatting import number
from capmodel.observe.shapes.files import bundled_shapes_sample
from capmodel.report.headline import MIME, decision_problems
from capmodel.report.shapes_report import shapes_report
from tests.support.rendered_reports import SMALL

pytestmark = pytest.mark.notebooks
NAME = "09_query_shapes"
#: per mix shape: the command and the filter's top-level fields, as the log writes them
MIX = {"scan": ("find", ("status",)), "range": ("find", ("customer", "placed")),
       "update": ("update", ("customer", "placed")), "lookup": ("find", ("_id",))}
FILTERS = {"scan": "{status: ?}", "range": "{customer: ?, placed: {$gte: ?, $lt: ?}}",
           "update": "{customer: ?, placed: ?}", "lookup": "{_id: ?}"}


def _moment(entry) -> float:
    return dt.datetime.fromisoformat(entry["t"]["$date"]).timestamp()


def _mix_shape(entry) -> str | None:
    """The mix shape (a key of MIX) of a "Slow query" entry, told by its command and its filter's fields."""
    command = entry["attr"].get("command", {})
    if "find" in command:
        kind, fields = "find", tuple(command.get("filter", {}))
    elif "q" in command:              # an update statement's own entry (its batch is skipped)
        kind, fields = "update", tuple(command["q"])
    else:
        return None
    return next((name for name, (op, keys) in MIX.items() if (kind, fields) == (op, keys)), None)


def _epoch(text: str) -> float:
    return dt.datetime.fromisoformat(text).timestamp()


def window_cpu(samples, start: float, end: float) -> float:
    """The samples' CPU (cores) over [start, end]: the mean of those wholly inside, weighted by their lengths."""
    ends = [t.timestamp() for t in pd.to_datetime(samples["time"], utc=True)]
    inside = [(cores, length) for stop, length, cores in zip(ends, samples["interval_s"], samples["cpu_cores"])
              if stop - length >= start and stop <= end]
    return sum(cores * length for cores, length in inside) / sum(length for _, length in inside)


def replay_entries() -> list[tuple[float, str]]:
    """(time, mix shape) of each operation of the replay workload in the bundled replay log, on its namespace."""
    replay = bundled_shapes_sample()["replay"]
    with gzip.open(Path(bundled_shapes_sample()["log"]).parent / replay["log"], "rt") as lines:
        entries = [json.loads(line) for line in lines]
    return [(_moment(e), name) for e in entries if e.get("msg") == "Slow query"
            and e["attr"].get("ns") == replay["namespace"] and (name := _mix_shape(e)) is not None]


def log_counts() -> tuple[dict, float]:
    """Operations per mix shape in the bundled log, and the seconds over which slowms was 0."""
    sample = bundled_shapes_sample()
    with gzip.open(sample["log"], "rt") as lines:
        entries = [json.loads(line) for line in lines]
    changes = [e for e in entries if e.get("msg") == "Profiler settings changed"]
    on = next(_moment(e) for e in changes if e["attr"]["to"]["slowms"] == 0)
    off = next(_moment(e) for e in changes if e["attr"]["from"]["slowms"] == 0)
    counts = dict.fromkeys(MIX, 0)
    for e in entries:
        attr = e.get("attr", {})
        if e.get("msg") != "Slow query" or attr.get("ns") != "shopdemo.orders":
            continue
        command = attr.get("command", {})
        if "find" in command:
            kind, fields = "find", tuple(command.get("filter", {}))
        elif "q" in command:              # an update statement's own entry (its batch is skipped)
            kind, fields = "update", tuple(command["q"])
        else:
            continue
        for name, (op, keys) in MIX.items():
            if (kind, fields) == (op, keys):
                counts[name] += 1
    return counts, off - on


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """The report rendered with the small parameters, and its notebook read."""
    from capmodel.report.render import render

    out = tmp_path_factory.mktemp("page09")
    runs, _ = render([NAME], out, {NAME: dict(SMALL[NAME])})
    assert runs[0].error is None, runs[0].error
    return out, nbformat.read(out / f"{NAME}.ipynb", as_version=4)


@pytest.fixture(scope="module")
def report():
    return shapes_report(**SMALL[NAME])      # as the page is rendered


def _figures(nb) -> list[dict]:
    return [o["data"]["application/vnd.plotly.v1+json"] for c in nb.cells for o in c.get("outputs", [])
            if "application/vnd.plotly.v1+json" in o.get("data", {})]


def _values(array) -> list:
    """A figure's array as numbers: plotly writes numeric arrays as base64 ("bdata" with its dtype)."""
    if isinstance(array, dict) and "bdata" in array:
        return np.frombuffer(base64.b64decode(array["bdata"]), dtype=array["dtype"]).tolist()
    return list(array)


def _text(nb) -> str:
    parts = []
    for c in nb.cells:
        for o in c.get("outputs", []):
            parts.append(o.get("data", {}).get("text/html", "") or o.get("text", ""))
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", " ".join(parts))))


def test_each_shapes_operations_and_rate_are_the_logs(report):
    """Each mix shape's operations in the shapes table are the log's entries counted here and the operations the
    recording script ran; its rate is that count over the span the log shows slowms 0 (within 0.1%)."""
    counts, span = log_counts()
    made = bundled_shapes_sample()["operations"]
    rows = report.shapes.rows.set_index("filter_shape")
    for name, text in FILTERS.items():
        row = rows.loc[text]
        assert row["count"] == counts[name] == made[name], name
        assert row["rate_per_s"] == pytest.approx(counts[name] / span, rel=1e-3), name
    scan = rows.loc[FILTERS["scan"]]
    assert bool(scan["collscan"]) and scan["docs_examined_per_op"] == bundled_shapes_sample()["documents"]


def test_page_table_shows_the_counts_and_names_the_collection_scan(rendered):
    """The page's figures table shows each shape's count as counted from the log, and its shapes table names the
    collection scan as one."""
    counts, _ = log_counts()
    text = _text(rendered[1])
    for name in MIX:
        assert f"{counts[name]:,}" in text, name
    assert "collection scan (COLLSCAN)" in text


def test_saturation_factor_is_the_closed_form_of_the_fitted_demands(report):
    """The what-if's load factor is (cores − B) / Σ f·X·D with the fitted demands; the asked shape is rank 4, the
    collection scan, tripled; the server's cores are the FTDC's (one: the pinned mongod)."""
    w = report.what_if
    d = w.demands
    assert d.cores == bundled_shapes_sample()["cores"] == 1
    scan = report.shapes.rows.index[report.shapes.rows["filter_shape"] == FILTERS["scan"]][0] + 1
    assert scan == 4 and report.asked == "shape 4 x3"
    asked = sum(d.baseline[s] * w.factors.get(s, 1.0) * d.cpu_per_op[s] for s in d.classes)
    assert w.load_factor_that_fits == pytest.approx((d.cores - d.background_cores) / asked, rel=1e-9)
    assert w.utilization == pytest.approx((d.background_cores + asked) / d.cores, rel=1e-9)


def test_figures_draw_the_shares_and_the_saturation_factor(rendered, report):
    """The CPU-share bars are X·D over the CPU used (background included) at the observed and the asked load; the
    ramp's vertical line stands at the closed-form factor and its stacked bands sum to B + f·Σ f_s·X_s·D_s."""
    share, ramp = _figures(rendered[1])
    d, w = report.what_if.demands, report.what_if
    observed = {s: d.baseline[s] * d.cpu_per_op[s] for s in d.classes}
    asked = {s: observed[s] * w.factors.get(s, 1.0) for s in d.classes}
    labels = report.labels
    for trace, cores in zip(share["data"], (observed, asked)):
        total = d.background_cores + sum(cores.values())
        bars = dict(zip(trace["y"], _values(trace["x"])))
        for s in d.classes:
            assert bars[labels[s]] == pytest.approx(100 * cores[s] / total, rel=1e-6), s
        assert bars["background"] == pytest.approx(100 * d.background_cores / total, rel=1e-6)
    factor = (d.cores - d.background_cores) / sum(asked.values())
    line = [s for s in ramp["layout"]["shapes"] if s["x0"] == s["x1"]]
    assert len(line) == 1 and line[0]["x0"] == pytest.approx(factor, rel=1e-9)
    last = [_values(trace["y"])[-1] for trace in ramp["data"]]
    x = _values(ramp["data"][0]["x"])[-1]
    assert sum(last) == pytest.approx(d.background_cores + x * sum(asked.values()), rel=1e-9)


def test_decision_names_the_shape_with_the_largest_share_and_the_factor(rendered, report):
    """The decision names the shape whose rate x CPU per operation is largest at the asked load (the collection scan)
    and the closed-form factor as printed; it is two short sentences or fewer, no brackets; the headline is the one
    of the page, and the page has the replay's section (no "not yet" left)."""
    w = report.what_if
    d = w.demands
    largest = max(d.classes, key=lambda s: d.baseline[s] * w.factors.get(s, 1.0) * d.cpu_per_op[s])
    assert w.limiting_shape == largest
    assert report.shapes.rows.set_index("shape").loc[largest, "filter_shape"] == FILTERS["scan"]
    factor = (d.cores - d.background_cores) / sum(d.baseline[s] * w.factors.get(s, 1.0) * d.cpu_per_op[s]
                                                    for s in d.classes)
    assert "a collection scan on shopdemo.orders" in report.decision
    assert f"{number(factor)} times" in report.decision
    assert decision_problems(report.decision) == []
    headline = [o["data"][MIME] for c in rendered[1].cells for o in c.get("outputs", []) if MIME in o.get("data", {})]
    assert len(headline) == 1 and headline[0]["decision"] == report.decision
    markdown = " ".join(c.source for c in rendered[1].cells if c.cell_type == "markdown")
    assert "## A workload that replays production" in markdown and "not yet" not in markdown


def test_a_log_without_ftdc_gives_the_shapes_and_says_why_no_what_if(tmp_path):
    """With a log and no FTDC the report has the shapes but no what-if, says why, and marks the CPU's parameters
    unused; an unknown shape in what_if is an error naming it."""
    from capmodel.errors import InputError

    log = bundled_shapes_sample()["log"]
    alone = shapes_report(log=str(log), what_if="")
    assert alone.what_if is None and "FTDC" in alone.decision and "what_if" in alone.unused
    assert decision_problems(alone.decision) == []
    # a log of your own and no replay log: the workload, and how to measure its fidelity, no fidelity
    assert alone.workload is not None and alone.fidelity is None and alone.alone is None
    assert "`replay_log`" in alone.fidelity_words and "capmodel bench --workload replay.yaml" in alone.how_to_run
    with pytest.raises(InputError, match="no shape '9'"):
        shapes_report(log=str(log), what_if="9x2")


def test_bundled_sample_is_small():
    """The bundled sample, its replay included, stays small (the wheel carries it)."""
    folder = Path(bundled_shapes_sample()["log"]).parent
    assert sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) < 300_000


def test_a_load_that_does_not_fit_is_said_so_with_the_cpu_it_needs():
    """Shape 4 x30 needs more than the one core (B + Σ f·X·D > 1 with the fitted demands): the decision says it does
    not fit, with that utilization, in two short sentences without brackets, and the verdict is unusable."""
    from capmodel.formatting import percent

    over = shapes_report(what_if="4x30", bootstrap=0)
    w = over.what_if
    d = w.demands
    needed = (d.background_cores + sum(d.baseline[s] * w.factors.get(s, 1.0) * d.cpu_per_op[s]
                                       for s in d.classes)) / d.cores
    assert needed > 1 and w.utilization == pytest.approx(needed, rel=1e-9)
    assert over.decision.startswith("**Shape 4 x30 does not fit**") and percent(needed) in over.decision
    assert decision_problems(over.decision) == [] and over.evidence.grade == "unusable"


def test_the_method_calls_each_shape_by_its_rank_as_the_page_does(report):
    """The "how it was worked out" section is the what-if's own account with each shape called by its rank in the
    shapes table ("shape 4"), as the decision and the tables call them: no shape id is left in it."""
    details = report.details
    ranks = report.ranks
    limiting = ranks[report.what_if.limiting_shape]
    assert details.startswith(f"At {report.asked} ")
    assert f"The shape that breaks it: shape {limiting} (" in details
    assert not [sid for sid in ranks if sid in details]


def test_the_workload_replays_the_namespaces_shapes_with_their_shares(report):
    """The workload's operations are the shapes of shopdemo.orders it can replay (finds and updates with equality
    and range filters: the four of the mix), busiest first, each with its share of those shapes' operations."""
    rows = report.shapes.rows
    mine = rows[(rows["namespace"] == "shopdemo.orders") & rows["operation"].isin(["find", "update"])]
    assert set(mine["filter_shape"]) == set(FILTERS.values())
    shares = (mine.set_index("shape")["operations"] / mine["operations"].sum()).to_dict()
    ops = report.workload.spec["operations"]
    assert [op["name"] for op in ops] == [f"shape_{sid}" for sid in mine.sort_values(
        "operations", ascending=False)["shape"]]
    for op, item in zip(ops, report.workload.replayed):
        assert item["share"] == pytest.approx(shares[item["shape"]], rel=1e-12)
        assert op["weight"] == pytest.approx(shares[item["shape"]], abs=1e-6)
    assert report.workload.spec["records"] == bundled_shapes_sample()["documents"]
    page = report.workload_rows()
    assert list(page["share"]) == [item["share"] for item in report.workload.replayed]


def test_fidelity_shares_are_the_counts_of_both_logs(report):
    """The replay's share of each shape is its entries in the bundled replay log over the mix's window, counted
    here from the gzipped log; production's its entries in the production log; the mix error their difference."""
    window = bundled_shapes_sample()["replay"]["mix"]
    start, end = _epoch(window["start"]), _epoch(window["end"])
    counts = dict.fromkeys(MIX, 0)
    for when, name in replay_entries():
        counts[name] += start <= when <= end
    production, _ = log_counts()
    table = report.fidelity.table.set_index("filter_shape")
    for name, text in FILTERS.items():
        row = table.loc[text]
        assert row["replay_operations"] == counts[name], name
        assert row["replay_share"] == pytest.approx(counts[name] / sum(counts.values()), rel=1e-12), name
        assert row["production_share"] == pytest.approx(production[name] / sum(production.values()), rel=1e-12)
        assert row["mix_error"] == pytest.approx(row["replay_share"] - row["production_share"], abs=1e-15)
    assert report.fidelity.missing == []


def test_replay_cpu_per_op_is_the_window_cpu_less_idle_over_the_rate(report):
    """Each replayed operation's CPU per operation is the server's CPU over its alone window (the FTDC samples wholly
    inside it) less the idle window's, over its rate there (its entries in the replay log, counted here); production's
    is the fitted demand of the what-if."""
    from capmodel.observe import observe_ftdc

    sample = bundled_shapes_sample()
    replay = sample["replay"]
    samples = observe_ftdc(sample["ftdc"]).samples
    idle = window_cpu(samples, _epoch(replay["idle"]["start"]), _epoch(replay["idle"]["end"]))
    entries = replay_entries()
    names = {item["name"]: item["shape"] for item in report.workload.replayed}
    table = report.fidelity.table.set_index("shape")
    demands = report.what_if.demands
    assert set(replay["alone"]) == set(names)
    for op_name, window in replay["alone"].items():
        sid = names[op_name]
        mix_name = next(n for n, text in FILTERS.items() if text == table.loc[sid, "filter_shape"])
        start, end = _epoch(window["start"]), _epoch(window["end"])
        rate = sum(name == mix_name and start <= when <= end for when, name in entries) / (end - start)
        expected = (window_cpu(samples, start, end) - idle) / rate * 1000
        assert table.loc[sid, "replay_cpu_ms_per_op"] == pytest.approx(expected, rel=1e-9), mix_name
        assert table.loc[sid, "production_cpu_ms_per_op"] == pytest.approx(demands.cpu_per_op[sid] * 1000, rel=1e-9)
        assert table.loc[sid, "cpu_error"] == pytest.approx(expected / (demands.cpu_per_op[sid] * 1000) - 1,
                                                            rel=1e-9)
        # production's interval is the demand's; the replay's figure is inside it or not
        low, high = report.what_if.demand_low[sid] * 1000, report.what_if.demand_high[sid] * 1000
        assert (table.loc[sid, "production_cpu_ms_per_op_low"], table.loc[sid, "production_cpu_ms_per_op_high"]) \
            == pytest.approx((low, high), rel=1e-9)
        assert report.fidelity.cpu_inside[table.index.get_loc(sid)] is (low <= expected <= high)


def test_an_alone_window_narrowed_to_its_operations_entries(report):
    """With ``edge_s``, each alone window becomes its operation's first to last entry in it, ``edge_s`` in from each,
    and the rate and the CPU are read over that: recomputed here from the replay log's entries."""
    from capmodel.observe import observe_ftdc
    from capmodel.observe.shapes.fidelity import alone_cpu

    sample = bundled_shapes_sample()
    replay, edge = sample["replay"], 0.4
    samples = observe_ftdc(sample["ftdc"]).samples
    log = Path(sample["log"]).parent / replay["log"]
    narrowed = alone_cpu(report.shapes, report.workload, log, samples, replay["alone"], replay["idle"],
                         edge_s=edge).set_index("name")
    idle = window_cpu(samples, _epoch(replay["idle"]["start"]), _epoch(replay["idle"]["end"]))
    entries = replay_entries()
    filters = report.shapes.rows.set_index("shape")["filter_shape"]
    assert set(narrowed.index) == set(replay["alone"])
    for item in report.workload.replayed:
        mix_name = next(n for n, text in FILTERS.items() if text == filters[item["shape"]])
        window = replay["alone"][item["name"]]
        times = [when for when, name in entries if name == mix_name
                 and _epoch(window["start"]) <= when <= _epoch(window["end"])]
        start, end = min(times) + edge, max(times) - edge
        rate = sum(start <= when <= end for when in times) / (end - start)
        row = narrowed.loc[item["name"]]
        assert (row["start"], row["end"]) == pytest.approx((start, end), abs=1e-6)
        assert row["cpu_ms_per_op"] == pytest.approx((window_cpu(samples, start, end) - idle) / rate * 1000,
                                                     rel=1e-9)


def test_page_shows_the_workload_and_its_fidelity_and_no_lab_value(rendered, report):
    """The page shows the workload's table, how to run it, and the fidelity table with the sentence on its largest
    errors, spelled as the table spells them; no value of the lab's data (strings starting zq) is in the page, its
    tables' CSVs or the workload file."""
    page = (rendered[0] / f"{NAME}.html").read_text(encoding="utf-8")
    links = re.findall(r'data:text/csv;charset=utf-8;base64,([A-Za-z0-9+/=]+)"', page)
    csvs = [base64.b64decode(data).decode() for data in links]
    visible = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.DOTALL | re.IGNORECASE)
    text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", visible)))
    assert "The replay workload's operations" in text and "capmodel bench --workload replay.yaml" in text
    fidelity = report.fidelity_table()
    assert fidelity.caption in text
    for row in fidelity.cells():
        assert " ".join(row) in text
    errors = report.fidelity.table["mix_error"]
    largest = errors[errors.abs().idxmax()]       # signed: the replay's share less production's
    assert f"largest mix error is {fidelity.show_value('mix_error_points', 100 * largest)} points" in text
    assert re.sub(r"`", "", report.fidelity_words) in text
    assert len(csvs) >= 5 and not re.search("zq", " ".join([text, *csvs]), re.IGNORECASE)
    assert "zq" not in report.workload.to_yaml().lower()
