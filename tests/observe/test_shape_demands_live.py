"""The shapes command end to end on a real mongod: the embedded server with FTDC on (one sample a second) and every
operation logged runs the lab's four shapes in 10 phases of a second, each with its own random mix
(tests/support/shapes_lab.py ``run_phases``); ``capmodel shapes LOG --ftdc DIR --what-if 1=2 --json`` then gives each
shape a CPU per operation from the regression on the server's own CPU, with its interval, and the what-if's answer.
The demands' accuracy against each shape measured alone is issue 30's point 4, not checked here."""
from __future__ import annotations

import json

import pytest

from tests.support.cli_run import run
from tests.support.shapes_lab import SHAPES, literals, run_phases

pytestmark = pytest.mark.mongod
PHASES = 10


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """(log, FTDC folder, namespace, operations per phase) of the phased run, the server stopped."""
    from capmodel.bench.server import embedded_server

    dbpath = tmp_path_factory.mktemp("shapes") / "db"
    with embedded_server(dbpath=dbpath, diagnostic_data=True) as server:
        client = server.client()
        try:
            database = client["shapes_phased"]
            database.command("profile", 0, slowms=0)
            namespace, done = run_phases(database, PHASES)
        finally:
            client.close()
        log = server.logpaths[0]
    return log, dbpath / "diagnostic.data", namespace, done


def test_cpu_per_shape_and_the_what_if_from_the_servers_own_cpu(recorded, tmp_path):
    """Each of the four shapes has a positive CPU per operation from the regression (not apportioned), inside its
    interval, in shapes.csv and --json; the what-if names a shape and a load factor above 1 (the server was far from
    saturated); the counts are the operations run; none of the lab's values looked for reaches an output."""
    log, ftdc, namespace, done = recorded
    out = tmp_path / "out"
    printed = run("shapes", log, "--ftdc", ftdc, "--interval", "1", "--what-if", "1=2", "--bootstrap", "50",
                  "--out", out, "--json")
    assert printed.returncode == 0, printed.stderr
    record = json.loads(printed.stdout)
    what_if = record["what_if"]
    rows = {(r["operation"], r["filter_shape"]): r for r in what_if["shapes"]}
    counts = {(r["operation"], r["filter_shape"]): r["count"] for r in record["shapes"]
              if r["namespace"] == namespace}
    for name, (operation, text, _) in SHAPES.items():
        assert counts[(operation, text)] == sum(phase[name] for phase in done), name
        row = rows[(operation, text)]
        assert row["cpu_source"] == "regression" and row["cpu_ms_per_op"] > 0, name
        assert row["cpu_ms_per_op_low"] <= row["cpu_ms_per_op"] <= row["cpu_ms_per_op_high"], name
    assert 0 < what_if["utilization"] < 1 and what_if["load_factor_that_fits"] > 1
    assert what_if["limiting_shape"] in {r["shape"] for r in what_if["shapes"]}
    codes = [reason["code"] for reason in what_if["evidence"]["reasons"]]
    assert "cpu_apportioned" not in codes, codes        # the phases' mixes told the shapes apart
    written = (out / "shapes.csv").read_text() + (out / "shapes.json").read_text() + printed.stdout
    assert [value for value in literals(0) if value in written] == []
