"""No server-side JavaScript in a workload unless the user passes ``--allow-server-js``: ``$where``, ``$function`` and
``$accumulator`` are refused at load time, at any depth, naming the file, the operation and the operator; the
allowed path runs on the real mongod (the JavaScript's own result is read back from the documents) and the refused
one never reaches it (the benchmark database is never created).
"""
from __future__ import annotations

import pytest
import yaml

from capmodel.bench.sweep.config import BenchConfig
from capmodel.bench.sweep.sweep import run_sweep
from capmodel.bench.workload.definition import load_workload, parse_workload
from capmodel.cli import main
from capmodel.errors import InputError

JS = "function() { return true; }"
FN = {"body": "function(x) { return x + 1; }", "args": ["$n"], "lang": "js"}
ACC = {"init": "function() { return 0; }", "accumulate": "function(s, v) { return s + v; }", "accumulateArgs": ["$n"],
       "merge": "function(a, b) { return a + b; }", "lang": "js"}

PLACES = [
    ("where", {"op": "find", "filter": {"$where": JS}}, "$where"),
    ("in $or", {"op": "find", "filter": {"$or": [{"n": 1}, {"$where": JS}]}}, "$where"),
    ("in $nor", {"op": "find", "filter": {"$nor": [{"$and": [{"$where": JS}]}]}}, "$where"),
    ("in $elemMatch", {"op": "find", "filter": {"tags": {"$elemMatch": {"$where": JS}}}}, "$where"),
    ("$expr $function", {"op": "find", "filter": {"$expr": {"$gt": [{"$function": FN}, 1]}}}, "$function"),
    ("$accumulator", {"op": "aggregate", "pipeline": [{"$group": {"_id": None, "s": {"$accumulator": ACC}}}]},
     "$accumulator"),
    ("$lookup pipeline", {"op": "aggregate", "pipeline": [{"$lookup": {"from": "t", "as": "x", "pipeline": [
        {"$match": {"$expr": {"$function": FN}}}]}}]}, "$function"),
    ("$facet", {"op": "aggregate", "pipeline": [{"$facet": {"a": [{"$match": {"$where": JS}}]}}]}, "$where"),
    ("$unionWith pipeline", {"op": "aggregate", "pipeline": [{"$unionWith": {"coll": "t", "pipeline": [
        {"$addFields": {"y": {"$function": FN}}}]}}]}, "$function"),
    ("update pipeline", {"op": "update", "filter": {"n": 1}, "update": [{"$set": {"y": {"$function": FN}}}]},
     "$function"),
    ("find command", {"op": "command", "command": {"find": "t", "filter": {"$where": JS}}}, "$where"),
    ("aggregate command", {"op": "command", "command": {"aggregate": "t", "cursor": {}, "pipeline": [
        {"$group": {"_id": 1, "s": {"$accumulator": ACC}}}]}}, "$accumulator"),
    ("count command", {"op": "command", "command": {"count": "t", "query": {"$where": JS}}}, "$where"),
    ("generated", {"op": "find", "filter": {"gen": "choice", "values": [{"n": 1}, {"$where": JS}]}}, "$where"),
    ("projection", {"op": "find", "filter": {}, "projection": {"y": {"$function": FN}}}, "$function"),
]


def _spec(operation: dict) -> dict:
    return {"name": "js", "collection": "t", "operations": [{"name": "the_op", **operation}]}


@pytest.mark.parametrize("label, operation, operator", PLACES, ids=[p[0] for p in PLACES])
def test_server_javascript_is_refused_at_any_depth_naming_file_operation_and_operator(label, operation, operator):
    with pytest.raises(InputError) as info:
        parse_workload(_spec(operation), "team/workload.yaml")
    message = str(info.value)
    assert message.startswith("team/workload.yaml: operation 'the_op'")
    assert f"{operator} runs JavaScript on the server" in message and "--allow-server-js" in message


@pytest.mark.parametrize("label, operation, operator", PLACES, ids=[p[0] for p in PLACES])
def test_with_allow_server_js_the_same_operations_load(label, operation, operator):
    assert parse_workload(_spec(operation), "w.yaml", allow_server_js=True).operations[0].name == "the_op"


def test_a_field_named_like_an_operator_in_a_value_is_not_javascript():
    workload = parse_workload(_spec({"op": "find", "filter": {"note": "$where is just text"}}), "w.yaml")
    assert workload.operations[0].params["filter"] == {"note": "$where is just text"}


def _write_workload(tmp_path, update):
    path = tmp_path / "js.yaml"
    path.write_text(yaml.safe_dump({
        "name": "js-update", "collection": "js_t", "records": 20, "keys": {"prefix": "k", "order": "ordered"},
        "document": {"n": {"gen": "int", "min": 1, "max": 5}},
        "operations": [{"op": "update", "filter": {"_id": {"gen": "key"}}, "update": update}]}))
    return path


def test_the_refused_workload_never_reaches_the_server(mongod, tmp_path, capsys):
    database = "capmodel_test_js_refused"
    client = mongod.client()
    client.drop_database(database)
    path = _write_workload(tmp_path, [{"$set": {"touched": {"$function": {"body": "function() { while (true) {} }",
                                                                        "args": [], "lang": "js"}}}}])
    code = main(["bench", "--uri", mongod.uri, "--workload", str(path), "--concurrency", "1", "--duration", "0.3",
                 "--warmup", "0.1", "--database", database, "--out", str(tmp_path / "out"), "--quiet"])
    err = capsys.readouterr().err
    try:
        assert code == 2 and len(err.strip().splitlines()) == 1
        assert f"{path}: operation 'update'.update: $function runs JavaScript on the server" in err
        assert database not in client.list_database_names()  # nothing was loaded, nothing ran
    finally:
        client.close()


def test_the_allowed_workload_really_runs_javascript_on_the_real_mongod(mongod, tmp_path):
    database = "capmodel_test_js_allowed"
    client = mongod.client()
    client.drop_database(database)
    path = _write_workload(tmp_path, [{"$set": {"touched": {"$function": {
        "body": "function(n) { return n * 1000 + 7; }", "args": ["$n"], "lang": "js"}}}}])
    with pytest.raises(InputError, match="--allow-server-js"):
        load_workload(path)
    cfg = BenchConfig(workload=str(path), concurrency=[1], duration=0.5, warmup=0.1, calibrate=False,
                      database=database, binding="pymongo", allow_server_js=True)
    try:
        result = run_sweep(mongod.uri, cfg, tmp_path / "out", progress=False)
        assert result.steps[0]["status"] == "ok" and result.steps[0]["error_count"] == 0
        touched = list(client[database]["js_t"].find({"touched": {"$exists": True}}))
        assert touched, "no update ran the JavaScript"
        assert all(doc["touched"] == doc["n"] * 1000 + 7 for doc in touched)  # the server computed it, in JS
    finally:
        client.drop_database(database)
        client.close()
