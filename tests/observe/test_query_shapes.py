"""Query shapes from a log recorded on the embedded mongod 6.0.5 (``tests/fixtures/shapes/mongod.log``, made by
``python -m tests.support.shapes_lab``: the lab's four shapes, 8 rounds, slowms set to 0 after start).

Each figure is checked against the same figure computed here straight from the log's JSON lines (counts, examined per
returned, nearest-rank percentiles, the rate over the time from the "Profiler settings changed" entry to the last
line), and the lab's synthetic values are looked for in every output. Variants of the log (a sample rate, slowms
left at 100, cpuNanos, a cut line, an older text line) are made here from its lines, as each test says.
"""
from __future__ import annotations

import datetime as dt
import json
import math
import tracemalloc

import numpy as np
import pytest

from capmodel.errors import InputError
from capmodel.observe import query_shapes, shapes_from_profile
from capmodel.observe.shapes.entries import CUT_SHORT, NOT_JSON, WRITE_BATCH
from tests.support.cli_run import run
from tests.support.shapes_lab import FIXTURE, SHAPES, leaked, literals

NS = "shopdemo.orders"
ROUNDS = 8


def _lines():
    return FIXTURE.read_text().splitlines()


def _time(entry) -> float:
    return dt.datetime.fromisoformat(entry["t"]["$date"]).timestamp()


def _lab_entries():
    """The slow-query entries of the lab's four shapes, by shape name, read here with json alone."""
    out = {name: [] for name in SHAPES}
    for line in _lines():
        entry = json.loads(line)
        attr = entry.get("attr", {})
        if entry.get("msg") != "Slow query" or attr.get("ns") != NS:
            continue
        command = attr["command"]
        if attr.get("type") == "update":
            out["update"].append(attr)
        elif "find" in command and "_id" in command.get("filter", {}):
            out["lookup"].append(attr)
        elif "find" in command and "status" in command.get("filter", {}):
            out["scan"].append(attr)
        elif "find" in command:
            out["range"].append(attr)
    return out


def _row(shapes, name):
    operation, filter_text, _ = SHAPES[name]
    table = shapes.table
    rows = table[(table["namespace"] == NS) & (table["operation"] == operation)
                 & (table["filter_shape"] == filter_text)]
    assert len(rows) == 1, f"{name}: {len(rows)} rows"
    return rows.iloc[0]


def test_the_four_shapes_their_counts_plans_and_work():
    """Each of the lab's shapes is one row with ROUNDS operations and its plan (the scan named COLLSCAN, the range
    and the update on the index, the lookup IDHACK); keys and documents examined per operation and documents
    examined per returned and the replies' bytes per returned equal the sums of the log's own figures."""
    shapes = query_shapes(FIXTURE)
    entries = _lab_entries()
    for name, (_, _, plan) in SHAPES.items():
        row, attrs = _row(shapes, name), entries[name]
        assert row["count"] == len(attrs) == ROUNDS
        assert row["plan"] == plan and bool(row["collscan"]) == (plan == "COLLSCAN")
        assert row["query_hash"] == attrs[0].get("queryHash", "")
        docs = sum(a["docsExamined"] for a in attrs)
        assert row["docs_examined_per_op"] == pytest.approx(docs / ROUNDS)
        assert row["keys_examined_per_op"] == pytest.approx(sum(a["keysExamined"] for a in attrs) / ROUNDS)
        returned = sum(a.get("nreturned", 0) for a in attrs)
        if returned:
            assert row["docs_examined_per_returned"] == pytest.approx(docs / returned)
            assert row["reply_bytes_per_returned"] == pytest.approx(sum(a["reslen"] for a in attrs) / returned)
        else:
            assert np.isnan(row["reply_bytes_per_returned"])
    assert _row(shapes, "scan")["docs_examined_per_op"] == 60          # the whole collection, every time
    assert _row(shapes, "range")["sort"] == "{placed: -1}"


def test_latency_percentiles_and_rate_against_the_log():
    """p50/p95/p99 are the nearest-rank percentiles of the shape's durationMillis, and the rate is its operations
    over the seconds from slowms 0 (the "Profiler settings changed" entry) to the last line of the log."""
    shapes = query_shapes(FIXTURE)
    entries = [json.loads(line) for line in _lines()]
    changed = next(_time(e) for e in entries if e.get("msg") == "Profiler settings changed")
    complete_s = _time(entries[-1]) - changed
    assert shapes.coverage.complete_s == pytest.approx(complete_s)
    assert shapes.coverage.window_s == pytest.approx(_time(entries[-1]) - _time(entries[0]))
    for name, attrs in _lab_entries().items():
        row = _row(shapes, name)
        durations = np.array([a["durationMillis"] for a in attrs], float)
        for column, q in (("latency_p50_ms", 50), ("latency_p95_ms", 95), ("latency_p99_ms", 99)):
            assert row[column] == np.percentile(durations, q, method="inverted_cdf")
        assert row["latency_mean_ms"] == pytest.approx(durations.mean())
        assert row["rate_per_s"] == pytest.approx(ROUNDS / complete_s)
    # the log started at slowms 100: the verdict says the rates are of the part after the change
    assert shapes.evidence.codes() == ["partly_slow_operations"]


def test_a_latency_under_the_logs_millisecond_is_said_as_such():
    """The log's durations are whole milliseconds: a percentile under one reads "under 1 ms" in the sentences (and
    "under 1" in a table), never "0 ms"; one of a millisecond or more reads as its figure."""
    from capmodel.observe.shapes.result import logged_latency

    shapes = query_shapes(FIXTURE)
    said = shapes.describe().splitlines()
    for name in SHAPES:
        row = _row(shapes, name)
        line = next(text for text in said if text.startswith(f"{row['shape']} "))
        for column, words in (("latency_p50_ms", "p50"), ("latency_p99_ms", "p99")):
            expected = "under 1" if row[column] < 1 else f"{row[column]:g}"
            assert f"{words} {expected} ms" in line, (line, row[column])
    assert [logged_latency(v) for v in (0.0, 0.5, 1.0, 7.0)] == ["under 1", "under 1", 1.0, 7.0]
    assert math.isnan(logged_latency(math.nan))


def test_no_value_from_the_data_reaches_an_output(tmp_path):
    """None of the lab's values (customers, statuses, ids, the placed numbers) is in shapes.csv, shapes.json or
    what the command prints, as text or --json; the filters keep their paths and operators."""
    secret = literals(ROUNDS)
    assert sum(any(value in line for value in secret) for line in _lines()) >= 4 * ROUNDS   # the log has them
    printed = run("shapes", FIXTURE, "--out", tmp_path / "a")
    printed_json = run("shapes", FIXTURE, "--out", tmp_path / "b", "--json")
    assert printed.returncode == printed_json.returncode == 0
    outputs = [printed.stdout, printed_json.stdout] + [p.read_text() for p in (tmp_path / "a").iterdir()]
    assert "{customer: ?, placed: {$gte: ?, $lt: ?}}" in outputs[0]
    assert sorted({value for text in outputs for value in leaked(ROUNDS, text)}) == []
    record = json.loads((tmp_path / "a" / "shapes.json").read_text())
    assert record["format_version"] == 1 and {r["shape"] for r in record["shapes"]} == set(
        line.split(",")[0] for line in (tmp_path / "a" / "shapes.csv").read_text().splitlines()[1:])


def test_a_sample_rate_weighs_each_logged_operation():
    """With sampleRate 0.25 from the change on (the log's settings line rewritten), each logged operation stands for
    four: operations and rate x4, count unchanged, and the log can have seen 25 % of them."""
    path = FIXTURE.parent / "unused"
    lines = [line.replace('"to":{"level":0,"slowms":0,"sampleRate":1}', '"to":{"level":0,"slowms":0,"sampleRate":0.25}')
             for line in _lines()]
    assert lines != _lines()
    full, sampled = query_shapes(FIXTURE), _shapes_of(lines, path)
    for name in SHAPES:
        assert _row(sampled, name)["count"] == ROUNDS
        assert _row(sampled, name)["operations"] == 4 * ROUNDS
        assert _row(sampled, name)["rate_per_s"] == pytest.approx(4 * _row(full, name)["rate_per_s"])
    assert sampled.coverage.share_seen == 0.25


def test_slowms_above_zero_gives_counts_and_no_rate():
    """Without the settings change (slowms stays at its default 100) the log saw only slow operations: counts are
    kept, no shape has a rate, and the verdict is unusable with the advice to log every operation."""
    lines = [line for line in _lines() if "Profiler settings changed" not in line]
    shapes = _shapes_of(lines)
    assert _row(shapes, "scan")["count"] == ROUNDS and math.isnan(_row(shapes, "scan")["rate_per_s"])
    assert shapes.evidence.grade == "unusable" and "slowms: 0" in shapes.evidence.next_step.text


def test_a_rotated_log_takes_the_settings_from_its_first_change():
    """A log that starts at the "Profiler settings changed" line (the lines before it rotated away, the command
    line's options with them): the change's "from" says what held before, so nothing is assumed; every operation
    after it was eligible, so the rates cover the whole window and the verdict is sound."""
    lines = _lines()
    first = next(i for i, line in enumerate(lines) if "Profiler settings changed" in line)
    shapes = _shapes_of(lines[first:])
    assert shapes.evidence.grade == "sound", shapes.evidence.codes()
    assert shapes.coverage.complete_s == pytest.approx(shapes.coverage.window_s)
    assert _row(shapes, "scan")["count"] == ROUNDS
    assert _row(shapes, "scan")["rate_per_s"] == pytest.approx(ROUNDS / shapes.coverage.window_s)


def test_cpu_per_operation_from_cpunanos():
    """mongod 6.3+ on Linux writes cpuNanos (6.0.5 does not: it is added here to the scan's lines, 200 µs then 400
    µs alternately): cpu_ms_per_op is their mean, 0.3 ms, inside its 95 % t interval of the 8 values."""
    lines, k = [], 0
    for line in _lines():
        if '"filter":{"status"' in line and '"Slow query"' in line:
            line = line.replace('"durationMillis"', f'"cpuNanos":{200_000 if k % 2 == 0 else 400_000},"durationMillis"')
            k += 1
        lines.append(line)
    row = _row(_shapes_of(lines), "scan")
    values = np.array([0.2, 0.4] * 4)
    half = 2.3646 * values.std(ddof=1) / math.sqrt(8)       # t(0.975, 7)
    assert row["cpu_source"] == "cpuNanos" and row["cpu_ms_per_op"] == pytest.approx(0.3)
    assert row["cpu_ms_per_op_low"] == pytest.approx(0.3 - half, rel=1e-3)
    assert row["cpu_ms_per_op_high"] == pytest.approx(0.3 + half, rel=1e-3)


def test_lines_of_other_kinds_are_counted():
    """A text-format line (a log before 4.4), a blank line and a last line cut short are skipped and counted; the
    write batches' own entries are not operations (their statements are); an operation the server logged without a
    command (mongod leaves it out where the operation has no description) is one of its type."""
    undescribed = ('{"t":{"$date":"2026-11-29T15:28:11.000+00:00"},"id":51803,"msg":"Slow query","attr":{"type":'
                   '"killcursors","ns":"shopdemo.orders","durationMillis":0}}')
    lines = ["2019-01-01T00:00:00.000+0000 I COMMAND  [conn1] command test.x command: find", ""] + _lines()
    lines.insert(60, undescribed)
    shapes = _shapes_of(lines, tail='{"t":{"$date":"2026-11-29T15:')
    assert shapes.skipped[NOT_JSON] == 1 and shapes.skipped[CUT_SHORT] == 1
    assert shapes.rows.set_index("operation").loc["killcursors", "filter_shape"] == ""
    assert shapes.skipped[WRITE_BATCH] == ROUNDS
    assert _row(shapes, "update")["count"] == ROUNDS


@pytest.mark.parametrize("bad, words", [
    ('{"t":{"$date":"2026-11-29T15:', "not a JSON log entry"),
    ('{"t":{"$date":"2026-11-29T15:29:12.000+00:00"},"id":51803,"msg":"Slow query","attr":{"ns":"a.b","command":'
     '{"find":"b"},"durationMillis":"slow"}}', "durationMillis is not a number >= 0"),
    ('{"t":{"$date":"2026-11-29T15:29:12.000+00:00"},"id":51803,"msg":"Slow query","attr":{"command":{}}}',
     "a slow-query entry without ns"),
    ('{"t":{"$date":"2026-11-29T15:29:12.000+00:00"},"id":51803,"msg":"Slow query","attr":{"ns":"a.b","command":'
     '"find","durationMillis":1}}', "a slow-query entry whose command is not an object"),
    ('{"t":{"$date":"yesterday"},"id":51803,"msg":"Slow query","attr":{"ns":"a.b","command":{"find":"b"},'
     '"durationMillis":1}}', "the entry's time is not a date"),
])
def test_a_bad_line_is_named_by_file_and_line(tmp_path, bad, words):
    """A line that should be an entry and is not, in mid-file: InputError naming the file and its line number; the
    command prints that one line and exits 2, no traceback."""
    lines = _lines()
    lines.insert(40, bad)
    path = tmp_path / "mongod.log"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=f"^{path}: line 41: {words}"):
        query_shapes(path)
    done = run("shapes", path, "--out", tmp_path / "o")
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1
    assert f"{path}: line 41: {words}" in done.stderr and "Traceback" not in done.stderr


def test_a_folder_of_logs_and_profile_documents(tmp_path):
    """A folder is read file by file (a rotated mongod.log.1 with it); the same operations as system.profile
    documents (the profiler's op/ns/command/millis/ts, made here from the log's entries) give the same shapes."""
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "mongod.log.1").write_text(FIXTURE.read_text())
    (tmp_path / "logs" / "notes.txt").write_text("not a log")
    shapes = query_shapes(tmp_path / "logs")
    assert shapes.sources == (str(tmp_path / "logs" / "mongod.log.1"),)
    documents = []
    for line in _lines():
        entry = json.loads(line)
        attr = entry.get("attr", {})
        if entry.get("msg") == "Slow query" and attr.get("ns") == NS and attr.get("type") != "command" or \
                entry.get("msg") == "Slow query" and "find" in attr.get("command", {}):
            op = {"update": "update", "remove": "remove"}.get(attr.get("type"), "query")
            documents.append({**{k: v for k, v in attr.items() if k not in ("type", "durationMillis")}, "op": op,
                              "millis": attr["durationMillis"], "ts": dt.datetime.fromisoformat(entry["t"]["$date"])})
    profiled = shapes_from_profile(documents)
    for name in SHAPES:
        assert _row(profiled, name)["count"] == ROUNDS
        assert _row(profiled, name)["shape"] == _row(shapes, name)["shape"]


def test_memory_stays_bounded_on_a_long_log(tmp_path):
    """Operations of one shape (the scan's line repeated, one second apart, durations 0 to 49 ms): reading four
    times as many (4,000 against 1,000) takes about the same memory at its peak (one tally and its histogram's bins;
    no per-interval counts unless asked), and the median is the durations' own, 24 ms."""
    line = next(line for line in _lines() if '"filter":{"status"' in line and '"Slow query"' in line)
    entry = json.loads(line)
    start = _time(entry)
    peaks = {}
    for operations in (1_000, 4_000):
        path = tmp_path / f"long{operations}.log"
        with path.open("w") as out:
            out.write('{"t":{"$date":"2026-11-29T00:00:00.000+00:00"},"id":21951,"msg":"Options set by command '
                      'line","attr":{"options":{"operationProfiling":{"slowOpThresholdMs":0}}}}\n')
            for i in range(operations):
                entry["t"]["$date"] = dt.datetime.fromtimestamp(start + i, dt.timezone.utc).isoformat()
                entry["attr"]["durationMillis"] = i % 50
                out.write(json.dumps(entry) + "\n")
        tracemalloc.start()
        shapes = query_shapes(path)
        peaks[operations] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert _row(shapes, "scan")["count"] == operations and len(shapes.tallies) == 1
        assert _row(shapes, "scan")["latency_p50_ms"] == 24
        assert shapes.evidence.grade == "sound"       # the options said slowms 0 from the start
    assert peaks[4_000] < 1.3 * peaks[1_000] + 100_000, peaks


def _shapes_of(lines, path=None, tail=None):
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "mongod.log"
        target.write_text("\n".join(lines) + "\n" + (tail or ""))
        return query_shapes(target)
