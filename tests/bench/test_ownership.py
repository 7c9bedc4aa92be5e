"""Against the real embedded mongod: capmodel never adopts, drops or reloads a collection it did not create
(ownership is the collection UUID recorded at creation), even an empty user collection with a ``$jsonSchema``
validator and an index, and a workload cannot reach beyond its own collection (``op: command`` with ``{drop:
victim}`` is refused).
"""
from __future__ import annotations

import pytest

from capmodel.bench.workload.ownership import MARKER_COLLECTION, prepare_collection
from capmodel.bench.sweep.config import BenchConfig
from capmodel.bench.sweep.sweep import run_sweep
from capmodel.bench.workload.definition import load_workload, parse_workload
from capmodel.errors import BenchError, InputError

FAST = dict(duration=0.3, warmup=0.1, calibrate=False)
VALIDATOR = {"$jsonSchema": {"bsonType": "object", "required": ["field0"]}}


def _snapshot(db, name):
    """What a user would lose: options (the validator), indexes and documents, compared as they are."""
    info = next(iter(db.list_collections(filter={"name": name})))
    return info["options"], info["info"]["uuid"], sorted(db[name].index_information().items()), \
        list(db[name].find().sort("_id"))


@pytest.fixture
def db(mongod):
    client = mongod.client()
    database = client["capmodel_test_owner"]
    client.drop_database(database.name)
    yield database
    client.drop_database(database.name)
    client.close()


def test_an_empty_foreign_collection_is_refused_and_with_allow_existing_used_as_it_is(mongod, db, tmp_path):
    db.create_collection("usertable", validator=VALIDATOR)
    db["usertable"].create_index("field1", name="my_precious_index")
    before = _snapshot(db, "usertable")
    cfg = BenchConfig(workload="ycsb-c", concurrency=[1], records=50, database=db.name, **FAST)
    with pytest.raises(BenchError, match=r"usertable already exists \(empty\) and was not created by capmodel"):
        run_sweep(mongod.uri, cfg, tmp_path / "a", progress=False)
    assert _snapshot(db, "usertable") == before
    allowed = BenchConfig(**{**cfg.to_dict(), "allow_existing": True})
    assert run_sweep(mongod.uri, allowed, tmp_path / "b", progress=False).run["data"] == "as-is"
    other_records = BenchConfig(**{**allowed.to_dict(), "records": 80})  # the run that used to drop it
    assert run_sweep(mongod.uri, other_records, tmp_path / "c", progress=False).run["data"] == "as-is"
    assert _snapshot(db, "usertable") == before  # same UUID, validator, indexes, (no) documents
    assert db[MARKER_COLLECTION].find_one({"_id": "usertable"}) is None


def test_a_marker_without_the_collections_uuid_proves_nothing(db):
    workload = load_workload("ycsb-c", records=10)
    db["usertable"].insert_one({"_id": "precious"})
    db.create_collection("other")
    # the marker the old code wrote, or one a user copied: no UUID, or another collection's UUID
    for forged in ({"created_by": "capmodel", "fingerprint": workload.fingerprint(), "records": 10},
                   {"created_by": "capmodel", "fingerprint": "x", "records": 10,
                    "uuid": next(iter(db.list_collections(filter={"name": "other"})))["info"]["uuid"]}):
        db[MARKER_COLLECTION].replace_one({"_id": "usertable"}, {"_id": "usertable", **forged}, upsert=True)
        with pytest.raises(BenchError, match="not created by capmodel"):
            prepare_collection(db, workload)
        assert list(db["usertable"].find()) == [{"_id": "precious"}]


def test_its_own_collection_is_reused_rebuilt_and_a_recreated_one_is_not_its_own(db):
    workload = load_workload("ycsb-c", records=10)
    coll, action, _ = prepare_collection(db, workload)
    assert action == "load"
    marker = db[MARKER_COLLECTION].find_one({"_id": "usertable"})
    assert marker["uuid"] == next(iter(db.list_collections(filter={"name": "usertable"})))["info"]["uuid"]
    coll.insert_many([{"_id": i} for i in range(10)])
    assert prepare_collection(db, workload)[1] == "reuse"
    rebuilt, action, _ = prepare_collection(db, load_workload("ycsb-c", records=20))  # ours: dropped and recreated
    assert action == "load" and rebuilt.count_documents({}) == 0
    assert db[MARKER_COLLECTION].find_one({"_id": "usertable"})["uuid"] != marker["uuid"]
    # someone else drops it and creates their own under the same name: the marker no longer matches
    db.drop_collection("usertable")
    db.create_collection("usertable", validator=VALIDATOR)
    with pytest.raises(BenchError, match="not created by capmodel"):
        prepare_collection(db, workload)
    assert next(iter(db.list_collections(filter={"name": "usertable"})))["options"] == {"validator": VALIDATOR}


def _command_workload(command, collection="mine"):
    return {"name": "cmd", "collection": collection, "operations": [{"op": "command", "command": command}]}


@pytest.mark.parametrize("command", [
    {"drop": "victim"}, {"dropDatabase": 1}, {"drop": "mine"}, {"renameCollection": "capmodel_bench.mine", "to": "x"},
    {"createUser": "eve", "pwd": "x", "roles": ["root"]}, {"dropAllUsersFromDatabase": 1}, {"shutdown": 1},
    {"setParameter": 1, "notablescan": 1}, {"collMod": "mine"}, {"dropIndexes": "mine", "index": "*"},
    {"find": "victim"}, {"delete": "victim", "deletes": [{"q": {}, "limit": 0}]}, {"aggregate": 1, "pipeline": []},
    {"aggregate": "mine", "pipeline": [{"$out": "victim"}], "cursor": {}},
    {"aggregate": "mine", "pipeline": [{"$merge": {"into": "victim"}}], "cursor": {}},
    {"gen": "choice", "values": [{"drop": "victim"}]}, {"ping": 1, "$db": "admin"},
])
def test_destructive_or_foreign_commands_are_refused_when_loaded(command):
    with pytest.raises(InputError, match=r"^my\.yaml: operation 'command'"):
        parse_workload(_command_workload(command), "my.yaml")


@pytest.mark.parametrize("pipeline", [
    [{"$out": "victim"}], [{"$match": {}}, {"$merge": "victim"}], [{"$lookup": {"from": "victim", "as": "v"}}],
    [{"$unionWith": "victim"}], [{"$facet": {"x": [{"$lookup": {"from": "victim", "as": "v"}}]}}],
])
def test_aggregate_pipelines_may_not_write_or_read_elsewhere(pipeline):
    spec = {"name": "agg", "collection": "mine", "operations": [{"op": "aggregate", "pipeline": pipeline}]}
    with pytest.raises(InputError, match=r"agg\.yaml: operation 'aggregate'\.pipeline"):
        parse_workload(spec, "agg.yaml")


def test_allowed_commands_still_run_and_the_victim_survives(mongod, db, tmp_path):
    """The reported failure, end to end: a workload file with {drop: victim} is refused before anything runs; the
    allowed commands on the workload's own collection work against the server."""
    db["victim"].insert_many([{"_id": i} for i in range(100)])
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\ncollection: mine\noperations:\n  - {op: command, command: {drop: victim}}\n")
    cfg = BenchConfig(workload=str(bad), concurrency=[1], database=db.name, **FAST)
    with pytest.raises(InputError, match=r"bad\.yaml: operation 'command'.*'drop' is not allowed"):
        run_sweep(mongod.uri, cfg, tmp_path / "out", progress=False)
    assert db["victim"].count_documents({}) == 100
    good = tmp_path / "good.yaml"
    good.write_text("name: good\ncollection: mine\nrecords: 20\nfields: {count: 1, length: 8}\noperations:\n"
                    "  - {op: command, name: count, command: {count: mine}}\n"
                    "  - {op: command, name: ping, command: {ping: 1}}\n"
                    "  - {op: aggregate, pipeline: [{$lookup: {from: mine, localField: _id, foreignField: _id, "
                    "as: same}}, {$limit: 1}]}\n")
    result = run_sweep(mongod.uri, BenchConfig(**{**cfg.to_dict(), "workload": str(good)}), tmp_path / "ok",
                       progress=False)
    step = result.steps[0]
    assert step["status"] == "ok" and step["error_count"] == 0
    assert {"count", "ping", "aggregate"} <= set(step["latency"])
    assert db["victim"].count_documents({}) == 100 and db["mine"].count_documents({}) == 20
