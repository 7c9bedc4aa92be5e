"""Query shapes from a real mongod: the lab's known mix (tests/support/shapes_lab.py: a collection scan, an indexed
range query, an update and an ``_id`` lookup, 20 of each) run on the session's embedded server with every operation
logged (slowms 0), read back from its JSON log and from ``system.profile`` (profiling level 2)."""
from __future__ import annotations

import json

from capmodel.observe import query_shapes, shapes_from_profile
from tests.support.cli_run import run
from tests.support.shapes_lab import SHAPES, leaked, run_mix

ROUNDS = 20


def _rows(shapes, namespace):
    table = shapes.table[shapes.table["namespace"] == namespace]
    return {name: table[(table["operation"] == operation) & (table["filter_shape"] == text)]
            for name, (operation, text, _) in SHAPES.items()}


def test_the_known_mix_from_the_servers_log(mongo_client, mongod, tmp_path):
    """Every shape of the mix is one row of exactly ROUNDS operations with its plan (COLLSCAN for the scan), the
    rate positive, and none of the mix's values in shapes.csv or shapes.json."""
    database = mongo_client["shapes_live"]
    database.command("profile", 0, slowms=0)
    try:
        namespace = run_mix(database, ROUNDS)
    finally:
        database.command("profile", 0, slowms=100)
    shapes = query_shapes(mongod.logpaths[0])
    for name, rows in _rows(shapes, namespace).items():
        assert len(rows) == 1, name
        row = rows.iloc[0]
        assert row["count"] == ROUNDS and row["plan"] == SHAPES[name][2], name
        assert row["rate_per_s"] > 0
    from capmodel.observe.shapes.files import write_shapes

    paths = write_shapes(shapes, tmp_path / "out")
    written = paths["table"].read_text() + paths["record"].read_text()
    assert leaked(ROUNDS, written) == []


def test_the_known_mix_from_system_profile(mongo_client, mongod, tmp_path):
    """The same mix recorded by the profiler (level 2: every operation) and read with pymongo gives the same four
    shapes, ROUNDS operations each; so does ``capmodel shapes --profile URI/DATABASE``, which reads the profiler's
    level from the server (level 2: every operation eligible, a sound verdict)."""
    database = mongo_client["shapes_profiled"]
    database.command("profile", 2)
    try:
        namespace = run_mix(database, ROUNDS)
        shapes = shapes_from_profile(database["system.profile"].find().sort("ts", 1), slowms=0)
        printed = run("shapes", "--profile", f"{mongod.uri.rstrip('/')}/shapes_profiled", "--out", tmp_path / "o",
                      "--json")
    finally:
        database.command("profile", 0)
    for name, rows in _rows(shapes, namespace).items():
        assert len(rows) == 1 and rows.iloc[0]["count"] == ROUNDS, name
        assert rows.iloc[0]["plan"] == SHAPES[name][2]
    assert shapes.evidence.grade == "sound"
    assert printed.returncode == 0, printed.stderr
    record = json.loads(printed.stdout)
    counted = {(r["operation"], r["filter_shape"]): r["count"] for r in record["shapes"] if r["namespace"] == namespace}
    assert all(counted[(operation, text)] == ROUNDS for operation, text, _ in SHAPES.values())
    assert record["evidence"]["grade"] == "sound"
    database["system.profile"].drop()


def test_profile_options_refused(mongod, tmp_path):
    """--profile without a database in the URI, or with log files too, is one line and exit 2."""
    done = run("shapes", "--profile", mongod.uri, "--out", tmp_path / "o")
    assert done.returncode == 2 and "name the database whose system.profile to read" in done.stderr
    done = run("shapes", "x.log", "--profile", f"{mongod.uri.rstrip('/')}/db", "--out", tmp_path / "o")
    assert done.returncode == 2 and done.stderr == "capmodel: error: give log files or folders, or --profile URI " \
                                                   "(one of the two)\n"
