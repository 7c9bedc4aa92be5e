"""Workload files a shared YAML may hold are refused when the file is loaded, naming the file and the key, before
anything connects: no unbounded growth (an alias bomb, ``fields: {count: 1e8, length: 1e8}``), no traceback (a list,
binary or deeply nested file), numbers and names a server would meet too late (an infinite or NaN weight, weights
that sum to infinity, a collection name over the server's 255-byte namespace, a scan length a zipfian generator
cannot draw in time), and request-distribution options checked against the distribution they belong to."""
from __future__ import annotations

import resource

import pytest

from capmodel.bench.workload.definition import MAX_COLLECTION_BYTES, MAX_SCAN_LENGTH, load_workload
from capmodel.cli import main
from capmodel.errors import InputError


def _bomb() -> str:
    """The 'billion laughs' in YAML: nine levels of nine aliases, 9**9 (387 million) strings when expanded."""
    lines = ["name: bomb", "collection: c", "l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for level in range(1, 9):
        lines.append(f"l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * 9) + "]")
    lines.append("operations: [{op: find, filter: {x: *l8}}]")
    return "\n".join(lines) + "\n"


def test_the_alias_bomb_is_refused_before_it_grows(tmp_path):
    """Refused from the composed node graph, before any object is built (the peak memory stays under 100 MB; its
    time and memory are measured by benchmarks/bench_hostile.py, not asserted here)."""
    path = tmp_path / "bomb.yaml"
    path.write_text(_bomb())
    assert path.stat().st_size < 1500
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    with pytest.raises(InputError, match=r"bomb\.yaml: the YAML expands to more than 200,000 values"):
        load_workload(path)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before < 100 * 1024


# sizes below follow estimated_size: a key's length + 2, a string generator its length; fields: count x (length + 12)
@pytest.mark.parametrize("text, message", [
    ("name: f\nrecords: 1000\nfields: {count: 100000000, length: 100000000}\noperations: {read: 1}\nkeys: {}\n",
     "'fields' makes documents of about 10,000,001,200,000,000 bytes; MongoDB's limit is 16,777,216"),
    ("name: f\nrecords: 1000\nfields: {count: 100, length: 10000}\noperations: {read: 1}\nkeys: {}\n",
     "1,000 of them held at once (1,001,200,000 bytes); at most 268,435,456"),
    ("name: d\nrecords: 10\ndocument: {s: {gen: string, length: 1000000000000}}\n"
     "operations: [{op: find, filter: {}}]\n",
     "'document' makes documents of about 1,000,000,000,003 bytes"),
    ("name: i\noperations: [{op: insert, batch: 100000, document: {s: {gen: string, length: 100000}}}]\n",
     "operation 'insert': 'document' makes documents of about 100,003 bytes, 100,000 of them held at once"),
    ("- op: read\n- op: update\n", "a workload file must be a YAML mapping, not a list"),
    ("name: deep\nx: " + "[" * 5000 + "]" * 5000 + "\n", "nested more than 64 levels deep"),
    ("name: r\nrecords: " + "9" * 400 + "\noperations: {read: 1}\n", "'records' must be an integer >= 0 and <= "),
    ("a: &a [*a]\n", "a YAML alias refers to itself"),
    ("name: [unclosed\n", "not valid YAML at line 2"),
])
def test_awkward_workload_files_are_one_clear_error(tmp_path, text, message):
    path = tmp_path / "w.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        load_workload(path)
    assert str(info.value).startswith(str(path)) and message in str(info.value)
    assert len(str(info.value)) < 400


@pytest.mark.parametrize("content, message", [
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary content, not text (NUL byte at byte offset 8)"),
    (b"name: caf\xe9\n", "not UTF-8 text (byte offset 9)"),
    (b"x" * (2 * 2**20), "2,097,152 bytes is more than the 1,048,576 this file may have"),
])
def test_binary_or_huge_workload_files_exit_2_with_one_line(tmp_path, capsys, content, message):
    path = tmp_path / "w.yaml"
    path.write_bytes(content)
    code = main(["bench", "--uri", "mongodb://127.0.0.1:1", "--workload", str(path), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and message in err and str(path) in err and len(err.strip().splitlines()) == 1


KEYS = "keys: {prefix: user, order: hashed, distribution: uniform}\nfields: {count: 2, length: 10}\n"


def _workload(tmp_path, operations="{read: 0.5, update: 0.5}", collection="usertable", extra=""):
    path = tmp_path / "w.yaml"
    path.write_text(f"name: w\ncollection: '{collection}'\nrecords: 100\n{KEYS}{extra}operations: {operations}\n")
    return path


@pytest.mark.parametrize("operations, words", [
    ("{read: .inf, update: 1}", "weight inf must be a number from 0 to 1,000,000,000,000"),
    ("{read: .nan, update: 1}", "weight nan must be a number from 0 to 1,000,000,000,000"),
    ("{read: -.inf, update: 1}", "weight -inf must be a number from 0 to 1,000,000,000,000"),
    ("{read: 1.0e+308, update: 1.0e+308}", "weight 1e+308 must be a number from 0 to 1,000,000,000,000"),
    ("{read: 1e308, update: 1}", "weight '1e308' is not a number"),
    ("{read: '0.5', update: 0.5}", "weight '0.5' is not a number"),
    ("{read: true, update: 1}", "weight True is not a number"),
    ("[{op: read, weight: [1]}]", "weight [1] is not a number"),
])
def test_an_operation_weight_that_is_no_finite_number_is_refused_at_load(tmp_path, capsys, operations, words):
    path = _workload(tmp_path, operations)
    with pytest.raises(Exception) as info:
        load_workload(str(path))
    assert type(info.value).__name__ == "InputError"
    assert str(path) in str(info.value) and "operations[0]" in str(info.value) and words in str(info.value)
    # the command refuses it before connecting (nothing listens on port 1)
    status = main(["bench", "--uri", "mongodb://127.0.0.1:1/", "--workload", str(path), "--out",
                   str(tmp_path / "out"), "--duration", "1", "--concurrency", "1"])
    out, err = capsys.readouterr()
    assert status == 2 and words in err and "cannot reach" not in err
    assert not any((tmp_path / "out" / name).exists() for name in ("run.json", "steps.jsonl", "curve.csv"))


def test_relative_weights_of_any_finite_scale_still_load():
    # 1 and 3 are 25% and 75%, as 0.25 and 0.75 are
    from capmodel.bench.workload.definition import parse_workload

    spec = {"name": "w", "collection": "c", "records": 10, "keys": {"order": "hashed"},
            "fields": {"count": 1, "length": 1}}
    small = parse_workload({**spec, "operations": {"read": 0.25, "update": 0.75}}, "w.yaml")
    large = parse_workload({**spec, "operations": {"read": 1e11, "update": 3e11}}, "w.yaml")
    assert [o.proportion for o in small.operations] == [o.proportion for o in large.operations] == [0.25, 0.75]


@pytest.mark.parametrize("collection, words", [
    ("x" * (MAX_COLLECTION_BYTES + 1), f"is {MAX_COLLECTION_BYTES + 1:,} bytes long; at most {MAX_COLLECTION_BYTES}"),
    ("é" * (MAX_COLLECTION_BYTES // 2 + 1), f"is {2 * (MAX_COLLECTION_BYTES // 2 + 1):,} bytes long"),
])
def test_a_collection_name_too_long_for_a_namespace_is_refused(tmp_path, collection, words):
    path = _workload(tmp_path, collection=collection)
    with pytest.raises(Exception) as info:
        load_workload(str(path))
    assert words in str(info.value) and "255 bytes" in str(info.value)


def test_the_longest_collection_name_still_loads(tmp_path):
    # capmodel_bench (or a --database of at most 63 bytes), the dot and the name: within MongoDB's 255 bytes
    assert 63 + 1 + MAX_COLLECTION_BYTES <= 255
    assert load_workload(str(_workload(tmp_path, collection="x" * MAX_COLLECTION_BYTES))).collection == \
        "x" * MAX_COLLECTION_BYTES


@pytest.mark.parametrize("value", [MAX_SCAN_LENGTH + 1, 10**11, 0, "100", True])
def test_a_scan_length_out_of_range_is_refused(tmp_path, value):
    path = _workload(tmp_path, "{scan: 1}", extra=f"scan: {{max_length: {value!r}, length_distribution: zipfian}}\n")
    with pytest.raises(Exception) as info:
        load_workload(str(path))
    assert f"scan.max_length must be an integer from 1 to {MAX_SCAN_LENGTH:,}" in str(info.value)


@pytest.mark.parametrize("weights", [[-1, 2], [float("nan"), 1], [0, 0], [float("inf"), 1], ["1", 1], [True, 1]])
def test_a_choice_generator_with_weights_that_are_no_finite_proportions_is_refused(weights):
    from capmodel.bench.workload.definition import parse_workload

    spec = {"name": "w", "collection": "c", "records": 10, "operations": [{"op": "insert"}],
            "document": {"x": {"gen": "choice", "values": ["a", "b"], "weights": weights}}}
    with pytest.raises(Exception) as info:
        parse_workload(spec, "w.yaml")
    assert type(info.value).__name__ == "InputError"
    assert "w.yaml" in str(info.value) and "'weights' must be numbers from 0 to 1,000,000,000,000, not all 0" in str(info.value)


def test_a_choice_generator_with_plain_weights_still_loads():
    from capmodel.bench.workload.definition import parse_workload

    spec = {"name": "w", "collection": "c", "records": 10, "operations": [{"op": "insert"}],
            "document": {"x": {"gen": "choice", "values": ["a", "b"], "weights": [1, 3]}}}
    assert parse_workload(spec, "w.yaml").collection == "c"


BASE = ("name: t\nrecords: 1000\nkeys: {prefix: user, order: hashed, distribution: DIST}\n"
        "fields: {count: 2, length: 10}\noperations: {read: 1}\n")


def write(tmp_path, dist):
    path = tmp_path / "w.yaml"
    path.write_text(BASE.replace("DIST", dist))
    return path


@pytest.mark.parametrize("dist, message", [
    ("zipfian, thetta: 0.5", "keys.thetta does not apply to the zipfian distribution (it takes theta, method)"),
    ("uniform, theta: 0.5", "keys.theta does not apply to the uniform distribution (it takes no options)"),
    ("zipfian, theta: x", "keys.theta must be a number, got 'x'"),
    ("zipfian, theta: 5", "theta 5 must be between 0 and 1"),
    ("hotspot, hot_data: 1.5", "hot_data must be in (0, 1)"),
    ("zipfian, method: fast", "method 'fast' must be 'gray' or 'exact'"),
])
def test_distribution_options_are_refused_when_read(tmp_path, dist, message):
    """theta 'x' raised a TypeError from the generator; 'thetta' and a theta under uniform were dropped in silence;
    a theta of 5 was refused only when the sweep drew its first key, after the server was reached."""
    path = write(tmp_path, dist)
    with pytest.raises(InputError) as info:
        load_workload(path)
    assert str(info.value).startswith(str(path)) and message in str(info.value)


def test_good_options_still_load(tmp_path):
    assert load_workload(write(tmp_path, "zipfian, theta: 0.8")).distribution_options == {"theta": 0.8}
    assert load_workload(write(tmp_path, "hotspot, hot_data: 0.1, hot_ops: 0.9")).distribution == "hotspot"


def test_the_cli_refuses_before_reaching_a_server(tmp_path, capsys):
    code = main(["bench", "--uri", "mongodb://127.0.0.1:1/", "--workload", str(write(tmp_path, "zipfian, theta: x")),
                 "--concurrency", "1,2", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and "keys.theta must be a number" in err and "Traceback" not in err


def test_key_reads_on_no_records_and_no_inserts_are_refused(tmp_path, capsys):
    """bench --workload ycsb-b --records 0 (or a file with records: 0) timed 95% reads of keys that do not exist."""
    path = tmp_path / "w.yaml"
    path.write_text(BASE.replace("DIST", "uniform").replace("records: 1000", "records: 0"))
    with pytest.raises(InputError, match="'records' is 0 and nothing inserts, so read would ask for keys"):
        load_workload(path)
    with pytest.raises(InputError, match="so read, update would ask"):
        load_workload("ycsb-b", records=0)
    assert load_workload("ycsb-d", records=0).records == 0          # reads of the latest inserts: keys appear
    assert load_workload("docdb-insert").records == 0               # insert-only
    code = main(["bench", "--uri", "mongodb://127.0.0.1:1/", "--records", "0", "--concurrency", "1,2",
                 "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and "'records' is 0" in err and "cannot reach" not in err
