"""The mongojet binding (the default) beside pymongo's, against the real embedded mongod: every operation kind, the
same counts on both drivers, operation counts the server confirms, and the URI options the Rust driver is given."""
from __future__ import annotations

import itertools
import json

import pytest

from capmodel.bench.client import async_workers, telemetry
from capmodel.bench.client.bindings import MongojetBinding
from capmodel.bench.client.runner import Runner
from capmodel.bench.sweep.files import read_steps
from capmodel.cli import main
from capmodel.errors import BenchError
from tests.support.loaded_collections import loaded

DB = "capmodel_test_drivers"
_names = itertools.count()


@pytest.fixture(scope="module")
def client(mongod):
    c = mongod.client(maxPoolSize=200, timeoutMS=20_000)
    yield c
    c.drop_database(DB)
    c.close()


def jet(mongod, collection):
    return MongojetBinding(async_workers.client(mongod.uri, {"maxPoolSize": 64}).get_database(DB)[collection],
                          timeout_s=20.0)


@pytest.mark.parametrize("name", ["orders-mix", "ycsb-a", "ycsb-e", "ycsb-f", "ycsb-d"])
def test_mongojet_runs_every_operation_kind_and_the_server_counts_them(client, mongod, name):
    coll, w, keys = loaded(client[DB], name, records=500)
    before = telemetry.server_snapshot(client)
    result = Runner(jet(mongod, w.collection), w, keys, seed=3).run(4, duration=1.0, warmup=0.2)
    after = telemetry.server_snapshot(client)
    assert result.errors == {} and result.runner_failures == 0 and result.stuck_workers == 0
    assert all(result.latency[op.name]["count"] > 0 for op in w.operations)
    # the server saw at least the operations the runner measured (it also saw the warm-up and the pings)
    served = sum(after[f"op_latency.{k}.ops"] - before[f"op_latency.{k}.ops"] for k in ("reads", "writes", "commands"))
    assert served >= result.operations


def test_mongojet_inserts_count_documents_and_keys_never_collide(client, mongod):
    coll, w, keys = loaded(client[DB], "docdb-insert", records=0)
    w.operations[0].params["batch"] = 20
    result = Runner(jet(mongod, w.collection), w, keys, seed=6).run(3, duration=0.6, warmup=0.1)
    assert result.errors == {} and result.documents == 20 * result.operations > 0
    assert coll.count_documents({}) >= result.documents


def test_counted_and_open_loops_on_mongojet(client, mongod):
    coll, w, keys = loaded(client[DB], "ycsb-c", records=200)
    runner = Runner(jet(mongod, w.collection), w, keys, seed=7)
    counted = runner.run(4, duration=None, warmup=0.1, operations=500)
    assert counted.operations + counted.error_count == 500
    open_loop = runner.run(2, duration=1.0, warmup=0.2, rate=200)
    assert open_loop.mode == "open" and open_loop.operations + open_loop.error_count == 200  # uniform: exactly


def test_pymongo_binding_stays_available_on_the_command_line(mongod, tmp_path, capsys):
    out = tmp_path / "pymongo"
    code = main(["bench", "--uri", mongod.uri, "--workload", "ycsb-c", "--records", "200", "--concurrency", "2",
                 "--duration", "0.5", "--warmup", "0.1", "--binding", "pymongo", "--database", DB, "--out", str(out),
                 "--quiet"])
    assert code == 0, capsys.readouterr().err
    assert json.loads((out / "run.json").read_text())["config"]["binding"] == "pymongo"
    assert read_steps(out / "steps.jsonl")[0]["status"] == "ok"


def test_uri_options_for_the_rust_driver_are_added_once():
    assert async_workers.with_options("mongodb://h:1", {"maxPoolSize": 8}) == "mongodb://h:1/?maxPoolSize=8"
    merged = async_workers.with_options("mongodb://u:p@h:1/db?w=1", {"maxPoolSize": 8, "appName": "x"})
    assert merged == "mongodb://u:p@h:1/db?w=1&maxPoolSize=8&appName=x"
    with pytest.raises(BenchError, match="maxPoolSize given both in the URI and as an option"):
        async_workers.with_options("mongodb://h:1/?maxpoolsize=4", {"maxPoolSize": 8})


