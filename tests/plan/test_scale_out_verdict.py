"""``capmodel nodes`` and ``capmodel shards`` through the real CLI: the verdict on the counts (assumed scaling,
extrapolation beyond what was measured, a fitted curve's verdict), the costs in the JSON, the rounding note, and
advice that names options that exist. What the text shows of them is in test_plan_words.py."""
import json
import math

import numpy as np
import pandas as pd
import pytest

from tests.support import cli_run
from capmodel import datasets
from capmodel.models.usl.closed_form import usl_throughput


def cli(*argv):
    return cli_run.run(*argv)                # main() in this process: the test is about the text, not the process


def ok(*argv):
    proc = cli(*argv)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def node_curve(tmp_path, largest=8, noisy=True):
    # B over node count: USL sigma 0.03, kappa 0.001, 800 ops/s per node, measured at 1..largest nodes (±2%)
    n = np.array([m for m in (1, 2, 3, 4, 6, 8, 12, 16) if m <= largest], dtype=float)
    noise = np.resize([1, 1.02, 0.98, 1.01, 0.99, 1.0], len(n)) if noisy else 1.0
    path = tmp_path / "nodecurve.csv"
    pd.DataFrame({"Nodes": n, "ops": usl_throughput(n, 0.03, 0.001, 800.0) * noise}).to_csv(path, index=False)
    return path


def test_bundled_micron_nodes_are_weak_and_explain_their_rounding():
    record = json.loads(ok("nodes", "--json"))
    assert record["evidence"]["grade"] == "weak"
    codes = [r["code"] for r in record["evidence"]["reasons"]]
    assert codes[0] == "assumed_scaling" and codes.count("extrapolation") == 5
    rows = {r["workload"]: r for r in record["rows"]}
    # workload D: 35 nodes by the USL (linear here) from a 3-node measurement: 35 / 3 = 11.7x
    d = rows["D"]["evidence"]["reasons"][0]
    assert d["value"] == pytest.approx(35 / 3) and d["grade"] == "weak"
    # A: 3 x 7120.1 / 818.3 = 26.10 -> 26 by the nearest rule; the USL needs ceil(26.10) = 27
    exact = 3 * 7120.1 / 818.3
    assert (round(exact), math.ceil(exact)) == (26, 27)
    note = record["rounding_note"]
    assert "26.10 -> 26" in note and "(27)" in note
    assert note.startswith("with sigma = kappa = 0 both rules are linear") and "--rounding up" in note
    # rounding up makes them agree, and the note goes away
    up = json.loads(ok("nodes", "--rounding", "up", "--json"))
    assert all(r["nodes_linear"] == r["nodes_usl"] for r in up["rows"]) and up["rounding_note"] is None


def test_nodes_far_beyond_the_measured_curve_is_unusable(tmp_path):
    curve = node_curve(tmp_path, largest=4, noisy=False)     # measured at 1..4 nodes, exactly on the USL
    target = float(usl_throughput(20, 0.03, 0.001, 800.0))                # reached at 20 nodes: 5x the largest measured
    table = tmp_path / "nodes.csv"
    table.write_text("workload,reference_ops_per_s,candidate_ops_per_s,reference_nodes,candidate_nodes\n"
                     f"big,{target - 1e-6},800,3,1\n")
    args = ["nodes", "--table", str(table), "--node-curve", str(curve), "--concurrency", "Nodes", "--throughput",
            "ops", "--bootstrap", "0"]
    record = json.loads(ok(*args, "--json"))
    n = record["rows"][0]["nodes_usl"]
    assert n == 20 and n / 4 > 4                 # more than 4x the largest measured node count
    assert record["rows"][0]["evidence"]["grade"] == "unusable" and record["evidence"]["grade"] == "unusable"


def test_node_curve_advice_names_options_that_exist(tmp_path):
    curve = node_curve(tmp_path)
    proc = cli("nodes", "--node-curve", str(curve))
    assert proc.returncode == 2 and "map it with --concurrency COL" in proc.stderr
    assert "--concurrency" in ok("nodes", "--help")
    proc = cli("nodes", "--concurrency", "Nodes")
    assert proc.returncode == 2 and "--node-curve" in proc.stderr


def test_shards_carry_their_verdict():
    record = json.loads(ok("shards", "--json"))
    assert record["evidence"]["reasons"][0]["code"] == "assumed_scaling"
    # the bundled study measured 16 shards and answers 16: no extrapolation
    assert record["rows"][0]["shards"] == 16 and record["rows"][0]["evidence"]["grade"] == "sound"
    given = json.loads(ok("shards", "--per-shard-throughput", "70000", "--target-rate", "1000000", "--json"))
    # ceil(1,000,000 / 70,000) = 15 shards from a one-shard rate: 15x, weak (the answer is conditional on it)
    assert given["rows"][0]["shards"] == 15
    assert given["rows"][0]["evidence"]["reasons"][0]["value"] == pytest.approx(15.0)
    assert record["evidence"]["grade"] == "weak"


def test_shards_fitted_far_beyond_the_curve_is_unusable(tmp_path):
    curve = node_curve(tmp_path, largest=4, noisy=False)
    target = float(usl_throughput(20, 0.03, 0.001, 800.0)) - 1e-6
    args = ["shards", "--curve", str(curve), "--concurrency", "Nodes", "--throughput", "ops", "--bootstrap", "0",
            "--target-rate", f"{target}"]
    record = json.loads(ok(*args, "--json"))
    shards = record["rows"][0]["shards"]
    assert shards == 20 and record["rows"][0]["evidence"]["grade"] == "unusable"
    assert record["evidence"]["grade"] == "unusable"
    assert [r["code"] for r in record["evidence"]["reasons"]] == ["extrapolation"]


def test_bundled_plgm_as_a_shard_curve_is_sound_within_range(tmp_path):
    # a real curve (plgm workload 1) read as throughput over shard count: a target the measured range reaches
    curve = datasets.load_curve("plgm_workload1")
    target = float(curve["throughput"].iloc[2])   # reached inside the measured range
    path = tmp_path / "c.csv"
    curve[["concurrency", "throughput"]].to_csv(path, index=False)
    record = json.loads(ok("shards", "--curve", str(path), "--bootstrap", "0", "--target-rate", f"{target}",
                           "--max-shards", "1000", "--json"))
    assert record["rows"][0]["shards"] <= curve["concurrency"].max()
    assert "extrapolation" not in [r["code"] for r in record["rows"][0]["evidence"]["reasons"]]
