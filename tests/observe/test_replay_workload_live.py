"""The replay workload on a real mongod: the lab's known mix (tests/support/shapes_lab.py ``run_mix``, 40 rounds of
its four shapes) run on the session's embedded server with every operation logged; ``capmodel shapes LOG --workload
FILE`` writes its replay; ``capmodel bench --workload FILE`` runs it on the same server (its own database, data it
loads itself); ``capmodel shapes LOG --replay-log LOG --json`` then sets the shapes of the replay's log against the
lab's."""
from __future__ import annotations

import json

import pytest
import yaml

from tests.support.cli_run import run
from tests.support.shapes_lab import SHAPES, leaked, run_mix

pytestmark = pytest.mark.mongod
ROUNDS = 40
#: the largest difference of a shape's share of the operations, replay against production (the mix is drawn at
#: random per operation: some thousands of operations in the replay keep it within a point; the bound leaves room)
MIX_BOUND = 0.05


def test_the_replay_runs_under_bench_and_its_log_holds_the_same_shapes(mongo_client, mongod, tmp_path):
    """The workload runs (exit 0, a curve of one step with operations); every lab shape is found in the replay's log
    with the same operation, filter shape and sort; each shape's share of the replay within MIX_BOUND of production's;
    the range query's and the scan's documents returned per operation of the same order as production's (the data
    were sized to them: within a factor 3, the replay's inserts grow the collection); no lab value in the file."""
    database = mongo_client["replay_live"]
    database.command("profile", 0, slowms=0)
    try:
        namespace = run_mix(database, ROUNDS)
        workload = tmp_path / "replay.yaml"
        written = run("shapes", mongod.logpaths[0], "--out", tmp_path / "shapes", "--workload", workload,
                      "--namespace", namespace)
        assert written.returncode == 0, written.stderr
        bench = run("bench", "--uri", mongod.uri, "--workload", workload, "--database", "replay_live_bench",
                    "--concurrency", "2", "--duration", "2", "--warmup", "0.5", "--out", tmp_path / "bench",
                    "--quiet", "--json")
        assert bench.returncode == 0, bench.stderr
    finally:
        database.command("profile", 0, slowms=100)
    text = workload.read_text()
    assert leaked(ROUNDS, text) == []
    assert yaml.safe_load(text)["records"] == 60                      # the lab's collection, as the scan examined it
    done = run("shapes", mongod.logpaths[0], "--out", tmp_path / "again", "--namespace", namespace,
               "--replay-log", mongod.logpaths[0], "--json")
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    fidelity = {row["filter_shape"]: row for row in record["fidelity"]["shapes"]}
    replay_rows = {row["shape"]: row for row in record["shapes"]}
    production = {(r["operation"], r["filter_shape"]): r for r in record["shapes"] if r["namespace"] == namespace}
    assert record["fidelity"]["missing"] == []
    for name, (operation, text_shape, _) in SHAPES.items():
        row = fidelity[text_shape]
        assert row["operation"] == operation and row["replay_shape"] is not None, name
        assert abs(row["mix_error"]) <= MIX_BOUND, (name, row)
        replayed = replay_rows[row["replay_shape"]]
        original = production[(operation, text_shape)]
        assert (replayed["filter_shape"], replayed["sort"]) == (original["filter_shape"], original["sort"]), name
        assert replayed["operations"] >= 100, name                 # thousands in all: the mix is a measured one
        if name in ("range", "scan"):
            ratio = replayed["returned_per_op"] / original["returned_per_op"]
            assert 1 / 3 <= ratio <= 3, (name, ratio)
