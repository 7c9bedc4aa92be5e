"""The shapes' demands end to end on a real mongod (tests/support/shape_demand_lab.py, one run): the embedded server,
pinned to one core with FTDC on and every operation logged, runs the lab's four shapes each alone, then in phases of
a second with random mixes; ``capmodel shapes LOG --ftdc DIR --what-if 1=2 --json`` gives each shape a CPU per
operation from the regression on the server's own CPU, with its interval, and the what-if's answer. Checked against
what the lab measured: each shape's CPU per operation alone, the throughput at which the server, held to half a core,
saturates at the what-if's mix, and each operation of the replay workload written from the phases' log, run alone,
against its shape alone (bounds a shared 2-core machine holds in a short run; benchmarks/bench_shapes.py prints the
tight figures of longer ones)."""
from __future__ import annotations

import json

import pytest

from tests.support import cpu_quota
from tests.support.cli_run import run
from tests.support.shape_demand_lab import run_demand_lab
from tests.support.shapes_lab import SHAPES, leaked

pytestmark = pytest.mark.mongod
ALONE_S, PHASES, REPLAY_S = 3.0, 20, 4.0
#: a shape's fitted CPU per operation against the same shape measured alone, the what-if's saturation against the
#: measured one, and a replayed operation alone against its shape alone: the bounds of a short run (issue 30 asks
#: 15 %, which the longer runs of bench_shapes.py show)
DEMAND_BOUND, SATURATION_BOUND, REPLAY_BOUND = 0.30, 0.25, 0.30


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """The lab's run (the server stopped, its files kept), with the saturation run where a CPU quota can be set."""
    saturate = ("scan", 3.0) if cpu_quota.available() else None
    return run_demand_lab(tmp_path_factory.mktemp("shapes"), ALONE_S, PHASES, saturate=saturate, n_bootstrap=100,
                          saturate_s=3.0, replay_s=REPLAY_S)


def test_each_shapes_fitted_demand_is_its_demand_measured_alone(lab):
    """The CPU per operation fitted from the phases (a regression on the server's CPU) is within DEMAND_BOUND of the
    shape's CPU per operation measured alone (the server's CPU over the shape's rate, the idle CPU taken off), or
    the fit's stated interval holds that figure (a fit on twenty one-second phases is no more precise than that)."""
    demands = [row for row in lab.rows if row["shape"] in SHAPES]
    assert [row["shape"] for row in demands] == list(SHAPES)
    for row in demands:
        assert row["alone_ms"] > 0 and row["low_ms"] < row["fitted_ms"] < row["high_ms"], row
        assert abs(row["fitted_ms"] / row["alone_ms"] - 1) <= DEMAND_BOUND \
            or row["low_ms"] <= row["alone_ms"] <= row["high_ms"], row


def test_each_replayed_operation_costs_what_its_shape_costs(lab):
    """Each operation of the replay workload (``replay_workload`` from the phases' log), run alone by bench, costs the
    server a CPU per operation within REPLAY_BOUND of its production shape's run alone: the replay's fidelity in
    CPU (its fidelity in mix: tests/observe/test_replay_workload_live.py)."""
    demands = [row for row in lab.rows if row["shape"] in SHAPES]
    for row in demands:
        assert row["replay_ms"] > 0, row
        assert abs(row["replay_ms"] / row["alone_ms"] - 1) <= REPLAY_BOUND, row


def test_the_what_ifs_saturation_is_the_measured_one(lab):
    """The collection scan tripled: the server held to half a core saturates (its quota used up in most periods) at a
    throughput within SATURATION_BOUND of the what-if's, (0.5 - B) / the CPU the asked mix needs per second."""
    if not cpu_quota.available():
        pytest.skip("no cgroup v1 cpu controller to write to: the server cannot be held to half a core here")
    (row,) = [row for row in lab.rows if row["shape"].startswith("saturation")]
    assert row["throttled"] >= 0.8 and row["cpu_cores"] >= 0.9 * 0.5, row
    assert abs(row["fitted_ms"] / row["alone_ms"] - 1) <= SATURATION_BOUND, row


def test_cpu_per_shape_and_the_what_if_from_the_servers_own_cpu(lab, tmp_path):
    """Each of the four shapes has a positive CPU per operation from the regression (not apportioned), inside its
    interval, in shapes.csv and --json; the what-if names a shape and a load factor above 1 (the server was far from
    saturated); the counts are the operations run; none of the lab's values looked for reaches an output."""
    log, ftdc, namespace, done = lab.log, lab.ftdc, lab.namespace, lab.phases
    out = tmp_path / "out"
    printed = run("shapes", log, "--slowms", "0", "--ftdc", ftdc, "--interval", "0.1", "--what-if", "1=2",
                  "--bootstrap", "50", "--out", out, "--json")
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
    assert leaked(0, written) == []
