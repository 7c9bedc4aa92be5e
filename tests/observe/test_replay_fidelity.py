"""``capmodel shapes LOG --ftdc DIR --replay-log LOG --json`` on the bundled sample: production's CPU per operation in
the fidelity is the what-if's fit, with its interval (the same figures the what-if prints beside it); the replay's
log alone has no CPU per operation (no ``cpuNanos`` before MongoDB 6.3), so no CPU error and no verdict on the
interval are given for it."""
from __future__ import annotations

import json
import math
from pathlib import Path

from capmodel.observe.shapes.files import bundled_shapes_sample
from tests.support.cli_run import run


def test_the_fidelity_takes_productions_cpu_and_its_interval_from_the_what_if(tmp_path):
    sample = bundled_shapes_sample()
    replay_log = Path(sample["log"]).parent / sample["replay"]["log"]
    printed = run("shapes", sample["log"], "--ftdc", sample["ftdc"], "--interval", "1", "--bootstrap", "30",
                  "--replay-log", replay_log, "--out", tmp_path, "--json")
    assert printed.returncode == 0, printed.stderr
    record = json.loads(printed.stdout)
    fitted = {row["shape"]: row for row in record["what_if"]["shapes"]}
    rows = record["fidelity"]["shapes"]
    assert len(rows) == len(sample["replay"]["workload_operations"])
    for row in rows:
        fit = fitted[row["shape"]]
        assert (row["production_cpu_ms_per_op"], row["production_cpu_ms_per_op_low"],
                row["production_cpu_ms_per_op_high"]) == (fit["cpu_ms_per_op"], fit["cpu_ms_per_op_low"],
                                                          fit["cpu_ms_per_op_high"])
        assert fit["cpu_ms_per_op_low"] < fit["cpu_ms_per_op"] < fit["cpu_ms_per_op_high"]
        assert row["replay_cpu_ms_per_op"] is None or math.isnan(row["replay_cpu_ms_per_op"])
        assert row["cpu_error"] is None and row["cpu_inside"] is None
