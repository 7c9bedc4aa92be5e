"""Workload YAML numbers and names a server would meet too late (hostile round six).

Before: ``read: .inf`` or ``.nan`` as a weight was accepted (every proportion then NaN); weights written ``1e308``
(text to YAML 1.1) were read from the text, two of ``1.0e+308`` summed to infinity; a 300-byte collection name
went to the server, which refuses namespaces over 255 bytes, after the run had started; ``scan: {max_length:
1e11}`` was accepted, and a zipfian scan length over 10^9 values costs 31 s per client before its first operation.
Refused now when the file is loaded, naming the file and the key, before anything connects.
"""
from __future__ import annotations

import pytest

from capmodel.bench.workload.definition import MAX_COLLECTION_BYTES, MAX_SCAN_LENGTH, load_workload
from capmodel.cli import main

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
