"""The replay workload from query shapes (``capmodel.observe.shapes.replay``), without a server.

The selectivity rule is checked by brute force: documents built from the workload's own template and filters built
from its own filter templates (the bench's template compiler), every filter matched against every document here by a
small matcher of equalities and ranges; the mean matches per filter must be the shape's target. The lab's log
(``tests/fixtures/shapes/mongod.log``) gives a workload that ``parse_workload`` accepts, with the log's mix and none of
the lab's values.
"""
from __future__ import annotations

import pandas as pd
import pytest
import yaml

from capmodel.bench.workload.definition import parse_workload
from capmodel.bench.workload.templates import WorkerContext, compile_template
from capmodel.errors import InputError
from capmodel.observe import query_shapes
from capmodel.observe.shapes.filter_shape import filter_shape, key_shape
from capmodel.observe.shapes.replay import parse_shape, replay_workload, shape_filter, value_domains
from capmodel.observe.shapes.result import QueryShapes
from capmodel.observe.shapes.sampling import Coverage
from tests.support.cli_run import run
from tests.support.shapes_lab import FIXTURE, leaked


def _matches(condition_filter: dict, document: dict) -> bool:
    for path, condition in condition_filter.items():
        value = document[path]
        if not isinstance(condition, dict):
            if value != condition:
                return False
            continue
        for op, bound in condition.items():
            ok = {"$gte": lambda: value >= bound, "$gt": lambda: value > bound, "$lt": lambda: value < bound,
                  "$lte": lambda: value <= bound, "$eq": lambda: value == bound, "$in": lambda: value in bound}[op]()
            if not ok:
                return False
    return True


def _mean_matches(spec: dict, operation: dict, draws: int = 200) -> float:
    ctx = WorkerContext(seed=1)
    build = compile_template(spec["document"])
    documents = [build(ctx) for _ in range(spec["records"])]
    make = compile_template(operation["filter"])
    return sum(sum(_matches(make(ctx), d) for d in documents) for _ in range(draws)) / draws


def _shapes(rows: list[dict]) -> QueryShapes:
    """A QueryShapes stand-in whose rows are the given ones (the replay reads ``rows`` and ``sources`` alone)."""
    table = pd.DataFrame([{"namespace": "app.items", "sort": "", "projection": "", "plan": "", "collscan": False,
                           "rate_per_s": 10.0, "returned_per_op": 0.0, "docs_examined_per_op": 0.0, **row}
                          for row in rows])

    class Shapes(QueryShapes):
        rows = table

    return Shapes(keys=(), tallies=(), coverage=Coverage(segments=()))


def test_shape_text_reads_back_as_the_filter_shape_wrote_it():
    """``parse_shape`` inverts ``filter_shape`` and ``key_shape``: the structure read back, written as the shapes
    write it, is the same text."""
    from capmodel.observe.shapes.filter_shape import _text

    for query in ({"a": 1, "b": {"$gte": 2, "$lt": 3}}, {"$or": [{"a": 1}, {"b": {"$in": [1, 2]}}]},
                  {"x.y": {"$elemMatch": {"z": 1}}}, {}):
        text = filter_shape(query)
        assert _text(parse_shape(text)) == text
    assert parse_shape(key_shape({"placed": -1, "b": 1})) == {"placed": -1, "b": 1}


@pytest.mark.parametrize("text, equal, ranges, unsupported", [
    ("{status: ?}", ("status",), {}, None),
    ("{customer: ?, placed: {$gte: ?, $lt: ?}}", ("customer",), {"placed": ("$gte", "$lt")}, None),
    ("{a: {$in: ?}, b: {$gt: ?}}", ("a",), {"b": ("$gt", None)}, None),
    ("{a: {$regex: ?}}", (), {}, "the operator $regex on a"),
    ("{$or: [{a: ?}, {b: ?}]}", (), {}, "the operator $or"),
    ("{a: {$gt: ?, $gte: ?}}", (), {}, "the operators $gt, $gte on a"),
])
def test_conditions_of_a_filter_shape(text, equal, ranges, unsupported):
    """Equalities (``?``, ``$eq``, ``$in``), ranges with their operators, and what has no rule, named."""
    conditions = shape_filter(text)
    assert (conditions.equal, conditions.ranges, conditions.unsupported) == (equal, ranges, unsupported)


def test_value_domains_follow_the_rule():
    """The rule's figures worked by hand: an equality alone on 60 records matching 5 -> a domain of 12; two equalities
    matching 1 of 10,000 -> 100 each (sqrt(10,000)); a range field's domain is the records; a range with an equality
    of domain 100 matching 2 -> width 2 x 100 = 200; a range alone matching 50 of 10,000 -> width 50; an unset
    equality with a range share the factor 10,000 / 4 = 2,500: 50 each, width 4 x 50 = 200."""
    assert value_domains([("s", shape_filter("{status: ?}"), 5.0)], 60) == ({"status": 12}, {})
    shapes = [("pair", shape_filter("{a: ?, b: ?}"), 1.0),
              ("ranged", shape_filter("{a: ?, t: {$gte: ?, $lt: ?}}"), 2.0),
              ("alone", shape_filter("{t: {$lt: ?}}"), 50.0), ("mixed", shape_filter("{c: ?, u: {$gt: ?}}"), 4.0)]
    domains, widths = value_domains(shapes, 10_000)
    assert domains == {"a": 100, "b": 100, "t": 10_000, "u": 10_000, "c": 50}
    assert widths == {"ranged": {"t": 200}, "alone": {"t": 50}, "mixed": {"u": 200}}


def test_replayed_filters_match_the_observed_documents():
    """Documents from the workload's template and filters from its templates, matched here one by one: each shape's
    mean matches per operation are its target (returned per operation; an update's: examined per operation) within
    sampling error (the values are random: 15 %)."""
    shapes = _shapes([
        {"shape": "s1", "operation": "find", "filter_shape": "{status: ?}", "operations": 100.0, "collscan": True,
         "returned_per_op": 25.0, "docs_examined_per_op": 1000.0},
        {"shape": "s2", "operation": "find", "filter_shape": "{customer: ?, placed: {$gte: ?, $lt: ?}}",
         "operations": 50.0, "returned_per_op": 8.0, "docs_examined_per_op": 8.0, "sort": "{placed: -1}"},
        {"shape": "s3", "operation": "update", "filter_shape": "{customer: ?, region: ?}", "operations": 80.0,
         "docs_examined_per_op": 4.0},
        {"shape": "s4", "operation": "delete", "filter_shape": "{placed: {$lt: ?}}", "operations": 5.0,
         "docs_examined_per_op": 30.0}])
    workload = replay_workload(shapes)
    spec = workload.spec
    assert spec["records"] == 1000                       # the collection scan examined 1,000 per operation
    targets = {"shape_s1": 25.0, "shape_s2": 8.0, "shape_s3": 4.0, "shape_s4": 30.0}
    for operation in spec["operations"]:
        measured = _mean_matches(spec, operation)
        assert measured == pytest.approx(targets[operation["name"]], rel=0.15), operation["name"]
    rows = {row["name"]: row for row in workload.replayed}
    assert {name: round(row["share"], 4) for name, row in rows.items()} == {
        "shape_s1": round(100 / 235, 4), "shape_s2": round(50 / 235, 4), "shape_s3": round(80 / 235, 4),
        "shape_s4": round(5 / 235, 4)}
    assert spec["rate"] == 40.0


def test_the_replays_documents_are_the_size_the_replies_say():
    """The lab's documents are 82 bytes of BSON (``bson.encode`` of one of them); the size the replies' bytes give
    (the range query's, 7.25 documents per reply) is that, and the replay's documents, built from its template with
    their record key and encoded by ``bson``, are that size."""
    import bson

    lab = bson.encode({"_id": "zq-id-1", "customer": "zq-cust-1", "placed": 1000007, "status": "zq-status-1"})
    spec = replay_workload(query_shapes(FIXTURE)).spec
    ctx = WorkerContext(seed=0)
    build = compile_template(spec["document"])
    sizes = {len(bson.encode({"_id": f"r{k}", **build(ctx)})) for k in (10, 59)}   # the keys of records 10 and 59
    assert sizes == {len(lab)} == {82}


def test_the_labs_log_gives_a_workload_bench_accepts():
    """The fixture's namespace: its four lab shapes and the load's insert replayed, each weight its share of the
    operations counted straight from the log's rows; the createIndexes and other namespaces left out with a reason;
    the file parses as a workload with the production rate; none of the lab's values is in it."""
    shapes = query_shapes(FIXTURE)
    workload = replay_workload(shapes)
    mine = shapes.rows[shapes.rows["namespace"] == "shopdemo.orders"]
    replayable = mine[mine["operation"].isin(["find", "update", "insert"])]
    total = replayable["operations"].sum()
    text = workload.to_yaml()
    parsed = parse_workload(yaml.safe_load(text), source="replay.yaml")
    assert {op.name: round(op.proportion, 4) for op in parsed.operations} == {
        f"shape_{r['shape']}": round(r["operations"] / total, 4) for _, r in replayable.iterrows()}
    assert parsed.rate == pytest.approx(replayable["rate_per_s"].sum(), rel=1e-3)
    assert parsed.records == 60 and parsed.indexes == [{"name": "customer_1_placed_1",
                                                        "keys": {"customer": 1, "placed": 1}}]
    why = workload.left_out
    assert "createIndexes is not replayed" in why[mine[mine["operation"] == "createIndexes"]["shape"].iloc[0]]
    assert all(sid in why for sid in shapes.rows.loc[shapes.rows["namespace"] != "shopdemo.orders", "shape"])
    assert leaked(8, text) == []
    for row in workload.replayed:
        assert f"{row['shape']} {row['operation']}" in text      # each operation says the shape it stands for


def test_a_finds_next_batches_count_with_it():
    """A collection scan whose find examined 1,212 documents and returned 101 per operation, and whose getMores (one
    per find) examined 788 and returned 66: the collection is 2,000 documents, the target 167 per find, the status
    domain 2,000 / 167 = 12; the getMore is not an operation of its own (named: counted with its find)."""
    shapes = _shapes([
        {"shape": "f1", "operation": "find", "filter_shape": "{status: ?}", "operations": 50.0, "collscan": True,
         "returned_per_op": 101.0, "docs_examined_per_op": 1212.0, "keys_examined_per_op": 0.0,
         "reply_bytes_per_returned": 90.0},
        {"shape": "g1", "operation": "getMore", "filter_shape": "{status: ?}", "operations": 50.0, "collscan": True,
         "returned_per_op": 66.0, "docs_examined_per_op": 788.0, "keys_examined_per_op": 0.0,
         "reply_bytes_per_returned": 90.0}])
    workload = replay_workload(shapes)
    assert workload.spec["records"] == 2000
    assert workload.spec["document"]["status"] == {"gen": "int", "min": 0, "max": 11}
    assert [row["target"] for row in workload.replayed] == [167.0]
    assert workload.left_out == {"g1": "getMore {status: ?}: counted with its find"}


def test_unreplayable_shapes_are_named_not_approximated():
    """A shape with an operator the rule does not cover is left out with the operator named; a namespace with
    nothing replayable is refused."""
    shapes = _shapes([{"shape": "a1", "operation": "find", "filter_shape": "{name: {$regex: ?}}", "operations": 9.0},
                      {"shape": "a2", "operation": "find", "filter_shape": "{k: ?}", "operations": 1.0,
                       "returned_per_op": 1.0, "docs_examined_per_op": 1.0}])
    workload = replay_workload(shapes)
    assert workload.left_out == {"a1": "find {name: {$regex: ?}}: no selectivity rule for the operator $regex on name"}
    assert [row["name"] for row in workload.replayed] == ["shape_a2"]
    assert "left out: a1" in workload.to_yaml()
    with pytest.raises(InputError, match="no shape of app.items can be replayed"):
        replay_workload(_shapes([{"shape": "a1", "operation": "find", "filter_shape": "{$expr: ?}",
                                  "operations": 1.0}]))
    with pytest.raises(InputError, match="no shapes of the namespace 'x.y'"):
        replay_workload(shapes, namespace="x.y")


def test_the_range_generator():
    """``{gen: range}`` holds ``width`` integers of [min, max]: both bounds a random start and start + width; one
    bound alone the top or the bottom ``width``; a width beyond the span refused."""
    ctx = WorkerContext(seed=3)
    both = compile_template({"gen": "range", "min": 0, "max": 99, "width": 10, "lower": "$gte", "upper": "$lt"})
    for _ in range(200):
        condition = both(ctx)
        assert condition["$lt"] - condition["$gte"] == 10 and 0 <= condition["$gte"] <= 90
    assert compile_template({"gen": "range", "min": 0, "max": 99, "width": 10, "lower": "$gt"})(ctx) == {"$gt": 89}
    assert compile_template({"gen": "range", "min": 0, "max": 99, "width": 10, "upper": "$lte"})(ctx) == {"$lte": 9}
    with pytest.raises(InputError, match="a width from 1 to max - min"):
        compile_template({"gen": "range", "min": 0, "max": 9, "width": 11, "lower": "$gte"})
    with pytest.raises(InputError, match="range needs 'lower'"):
        compile_template({"gen": "range", "min": 0, "max": 9, "width": 1})


def test_a_workloads_rate_is_checked():
    """``rate`` is a number of operations per second; anything else refused naming the file."""
    spec = {"records": 0, "operations": [{"op": "insert"}], "document": {"a": 1}}
    assert parse_workload({**spec, "rate": 12.5}).rate == 12.5
    with pytest.raises(InputError, match="w.yaml: 'rate' must be operations per second"):
        parse_workload({**spec, "rate": "fast"}, source="w.yaml")


def test_the_workload_options_of_the_command(tmp_path):
    """``--workload FILE`` writes the file; ``--namespace`` without it is refused in one line."""
    out = tmp_path / "replay.yaml"
    done = run("shapes", FIXTURE, "--out", tmp_path / "o", "--workload", out, "--records", "120")
    assert done.returncode == 0, done.stderr
    assert yaml.safe_load(out.read_text())["records"] == 120 and str(out) in done.stdout
    done = run("shapes", FIXTURE, "--out", tmp_path / "o", "--namespace", "shopdemo.orders")
    assert done.returncode == 2 and done.stderr == ("capmodel: error: --namespace sets the replay workload: give "
                                                    "--workload FILE or --replay-log LOG\n")
