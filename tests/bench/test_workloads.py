"""Workload files and templates: the bundled YCSB definitions, the insert benchmark, validation and generators."""
from __future__ import annotations

import datetime as dt

import pytest

from capmodel.bench.workload.templates import WorkerContext, compile_template
from capmodel.bench.workload.definition import load_workload, parse_workload, workload_names
from capmodel.errors import InputError

# The proportions and distributions of the YCSB core workloads, transcribed from the files workloads/workloada ..
# workloadf of brianfrankcooper/YCSB (and the wiki page "Core Workloads"). YCSB's requestdistribution=zipfian is
# implemented by CoreWorkload as a ScrambledZipfianGenerator, hence "scrambled_zipfian".
YCSB = {
    "ycsb-a": ({"read": 0.5, "update": 0.5}, "scrambled_zipfian"),
    "ycsb-b": ({"read": 0.95, "update": 0.05}, "scrambled_zipfian"),
    "ycsb-c": ({"read": 1.0}, "scrambled_zipfian"),
    "ycsb-d": ({"read": 0.95, "insert": 0.05}, "latest"),
    "ycsb-e": ({"scan": 0.95, "insert": 0.05}, "scrambled_zipfian"),
    "ycsb-f": ({"read": 0.5, "readmodifywrite": 0.5}, "scrambled_zipfian"),
}


def test_every_bundled_workload_loads():
    names = workload_names()
    assert set(YCSB) | {"docdb-insert", "orders-mix"} <= set(names)
    for name in names:
        assert load_workload(name).operations


@pytest.mark.parametrize("name", sorted(YCSB))
def test_ycsb_core_workloads_match_ycsb_definitions(name):
    proportions, distribution = YCSB[name]
    w = load_workload(name)
    assert {o.kind: pytest.approx(o.proportion) for o in w.operations} == proportions
    assert w.distribution == distribution
    # CoreWorkload defaults and the files' recordcount: 1000 records of 10 fields x 100 bytes, hashed insert order
    assert (w.records, len(w.field_names), w.field_length, w.key_order) == (1000, 10, 100, "hashed")
    assert w.readallfields is True and w.writeallfields is False
    assert "workloads/workload" + name[-1] in w.source


def test_ycsb_e_scans_up_to_100_records_uniformly():
    w = load_workload("ycsb-e")
    assert (w.scan_max_length, w.scan_length_distribution) == (100, "uniform")


def test_insert_benchmark_follows_the_documentdb_post():
    # seed 004: customerId int(10000), productId int(1000000), quantity int(100000), orderDate date(), 1 KB text,
    # three compound secondary indexes, batch size 1,000
    w = load_workload("docdb-insert")
    assert w.document["customerId"] == {"gen": "int", "min": 0, "max": 10000}
    assert w.document["productId"]["max"] == 1_000_000 and w.document["quantity"]["max"] == 100_000
    assert w.document["textField"] == {"gen": "string", "length": 1024}
    assert [i["name"] for i in w.indexes] == ["idx_customerId_orderDate", "idx_customerId_productId",
                                             "idx_productId_orderDate"]
    assert w.indexes[1]["keys"] == {"customerId": 1, "productId": 1}
    assert [(o.kind, o.params["batch"]) for o in w.operations] == [("insert", 1000)]
    assert w.throughput_unit == "documents" and not w.has_keys


def test_overrides_and_custom_file(tmp_path):
    assert load_workload("ycsb-b", records=50, collection="t2").records == 50
    path = tmp_path / "mine.yaml"
    path.write_text("name: mine\ncollection: c\nrecords: 10\ndocument: {a: {gen: int, min: 1, max: 3}}\n"
                    "operations:\n  - {op: find, weight: 3, filter: {a: 2}}\n  - {op: insert, weight: 1}\n")
    w = load_workload(path)
    assert [(o.name, o.proportion) for o in w.operations] == [("find", 0.75), ("insert", 0.25)]


@pytest.mark.parametrize("spec, message", [
    ({"operations": {"read": 1}}, "needs record keys"),
    ({"operations": {"fly": 1}}, "unknown op 'fly'"),
    ({"operations": {"insert": 0}, "document": {"a": 1}}, "weights sum to 0"),
    ({"operations": [{"op": "delete"}], "document": {"a": 1}}, "delete needs a 'filter'"),
    ({"operations": [{"op": "aggregate", "pipeline": {}}]}, "needs a 'pipeline' list"),
    ({"operations": [{"op": "insert", "batch": 0}], "document": {"a": 1}}, "'batch' must be an integer >= 1"),
    ({"operations": {"insert": 1}, "document": {"a": {"gen": "int", "min": 5}}}, "needs 'max'"),
    ({"operations": {"insert": 1}, "document": {"a": {"gen": "uuid"}}}, "unknown generator 'uuid'"),
    ({"operations": {"insert": 1}, "records": -1, "document": {"a": 1}}, "'records' must be an integer >= 0"),
    ({"operations": {"insert": 1}, "document": {"a": 1}, "colour": "red"}, "unknown key"),
    ({"operations": {"insert": 1}, "document": {"a": 1}, "keys": {"distribution": "normal"}}, "keys.distribution"),
])
def test_validation_names_the_problem(spec, message):
    with pytest.raises(InputError, match=message) as info:
        parse_workload({"name": "w", **spec}, source="w.yaml")
    assert str(info.value).startswith("w.yaml")


def test_unknown_workload_lists_bundled_ones():
    with pytest.raises(InputError, match="ycsb-a"):
        load_workload("ycsb-z")


def test_templates_generate_values_in_range():
    ctx = WorkerContext(seed=1, next_key=lambda: "user7")
    build = compile_template({
        "n": {"gen": "int", "min": 3, "max": 5},
        "z": {"gen": "int", "min": 1, "max": 100, "distribution": "zipfian"},
        "x": {"gen": "float", "min": 0, "max": 1},
        "s": {"gen": "string", "length": 1024},
        "v": {"gen": "string", "min_length": 2, "max_length": 4},
        "c": {"gen": "choice", "values": ["a", "b"], "weights": [0, 1]},
        "d": {"gen": "date", "start": "2024-01-01", "end": "2024-01-02"},
        "k": {"gen": "key"},
        "nested": [{"lit": 1}, {"gen": "bool", "p": 1.0}],
        "seq": {"gen": "sequence", "start": 10},
    })
    docs = [build(ctx) for _ in range(2000)]
    assert {d["n"] for d in docs} == {3, 4, 5}
    assert all(1 <= d["z"] <= 100 for d in docs)
    assert sum(d["z"] == 1 for d in docs) > sum(d["z"] == 50 for d in docs)  # zipfian: 1 is the most popular
    assert all(0 <= d["x"] < 1 for d in docs)
    assert {len(d["s"]) for d in docs} == {1024} and docs[0]["s"] != docs[1]["s"]
    assert {len(d["v"]) for d in docs} == {2, 3, 4}
    assert {d["c"] for d in docs} == {"b"}
    start = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    assert all(start <= d["d"] < start + dt.timedelta(days=1) for d in docs)
    assert {d["k"] for d in docs} == {"user7"}
    assert docs[0]["nested"] == [{"lit": 1}, True]
    assert [d["seq"] for d in docs[:3]] == [10, 11, 12]
    assert docs[0] is not docs[1] and docs[0]["nested"] is not docs[1]["nested"]  # fresh objects every time
