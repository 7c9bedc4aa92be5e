"""The URI's options resolved once, with the same precedence under both bindings: an explicit flag
(``--read-preference``, ``--write-concern``) wins over the URI, as ``capmodel bench --help`` says; the URI's own
timeouts win over capmodel's defaults. Checked on the real 3-member embedded replica set for pymongo and mongojet:
reads go where the flag says (the members' own opcounters, and the primary's profiler: no query on the benchmark's
database reached it), writes carry the write concern the flag names (the
primary's profiler records the write concern each insert arrived with and where it came from)."""
from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from pymongo import MongoClient

from capmodel.bench.client import telemetry
from capmodel.bench.cluster.connection import client_options
from capmodel.bench.sweep.config import BenchConfig
from capmodel.bench.sweep.sweep import run_sweep

DB = "capmodel_test_uri_options"


def config(**kw):
    base = {"timeout_ms": 7000, "server_selection_timeout_ms": 3000, "read_preference": None, "write_concern": None}
    return SimpleNamespace(**{**base, **kw})


def test_flags_win_over_the_uri_and_the_uri_over_defaults():
    uri = "mongodb://u:p@h1:1,h2:2/db?replicaSet=rs&readPreference=primary&W=1&connectTimeoutMS=500&maxPoolSize=3"
    target, options = client_options(uri, config(read_preference="secondary", write_concern="majority"), 40)
    # the flagged options and the pool leave the URI; everything else stays as written
    assert target == "mongodb://u:p@h1:1,h2:2/db?replicaSet=rs&connectTimeoutMS=500"
    assert options == {"maxConnecting": 32, "appName": "capmodel-bench", "serverSelectionTimeoutMS": 3000,
                       "timeoutMS": 7000, "maxPoolSize": 40, "readPreference": "secondary", "w": "majority"}
    # without flags the URI's choices stand; the Rust driver gets no timeoutMS
    target, options = client_options(uri, config(), 40, "mongojet")
    assert "readPreference=primary" in target and "W=1" in target
    assert "readPreference" not in options and "w" not in options and "timeoutMS" not in options
    assert client_options("mongodb://h", config(write_concern="2"), 8)[1]["w"] == 2


def _queries(ports):
    """port -> (role, opcounters.query) from each member directly."""
    counts = {}
    for port in ports:
        with MongoClient(port=port, directConnection=True, serverSelectionTimeoutMS=5000) as c:
            role = "primary" if c.admin.command("hello").get("isWritablePrimary") else "secondary"
            counts[port] = (role, telemetry.server_snapshot(c)["opcounters.query"])
    return counts


@pytest.mark.parametrize("binding", ["mongojet", "pymongo"])
def test_flags_beat_the_uri_on_a_real_replica_set(replica_set, tmp_path, binding):
    database = f"{DB}_{binding}"
    primary_client = MongoClient(replica_set.uri, serverSelectionTimeoutMS=5000)
    primary_client[database].command("profile", 2, slowms=0)      # the primary records every insert it serves
    uri = f"{replica_set.uri}&readPreference=primary&w=1"           # the URI asks for the opposite of the flags
    cfg = BenchConfig(workload="ycsb-d", concurrency=[2], duration=1.0, warmup=0.2, records=300, calibrate=False,
                      database=database, read_preference="secondary", write_concern="majority", binding=binding)
    try:
        before = _queries(replica_set.ports)
        result = run_sweep(uri, cfg, tmp_path, progress=False)
        after = _queries(replica_set.ports)
        step = result.steps[0]
        reads, inserts = step["latency"]["read"]["count"], step["latency"]["insert"]["count"]
        assert step["error_count"] == 0 and reads > 100 and inserts > 0, step.get("errors")   # the kinds, if any
        secondary = sum(after[p][1] - before[p][1] for p in after if after[p][0] == "secondary")
        primary = sum(after[p][1] - before[p][1] for p in after if after[p][0] == "primary")
        assert secondary >= reads          # every measured read was served by a secondary
        # the primary's own counter moves a little with its internal traffic (oplog fetchers, the session cache:
        # 6 to 19 queries in our runs, whatever the load), far from the step's reads; its profiler shows that not
        # one query on the benchmark's database reached it
        assert primary < 0.25 * reads
        assert primary_client[database]["system.profile"].count_documents({"op": "query"}) == 0
        profiled = list(primary_client[database]["system.profile"].find({"op": "insert"}))
        concerns = [(p.get("writeConcern") or {}) for p in profiled]
        # the load's inserts and the step's: each one arrived with the flag's w, supplied by the client
        assert sum(p.get("ninserted", 0) for p in profiled) >= 300 + inserts
        assert {(c.get("w"), c.get("provenance")) for c in concerns} == {("majority", "clientSupplied")}
        assert json.loads((tmp_path / "run.json").read_text())["config"]["binding"] == binding
    finally:
        primary_client[database].command("profile", 0)
        primary_client.drop_database(database)
        primary_client.close()
