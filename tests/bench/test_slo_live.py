"""``--slo`` against the real embedded mongod: the search writes ``slo.json`` beside the usual files, every rate it
calls met has medians within the bounds in the step records themselves (``steps.jsonl``), its open-loop steps are not
curve points, and the options it cannot take are refused before anything connects."""
from __future__ import annotations

import json
import statistics
import subprocess
import sys

import pytest

from capmodel.bench.sweep.config import BenchConfig
from capmodel.bench.sweep.files import read_steps
from capmodel.bench.sweep.sweep import run_sweep
from capmodel.errors import BenchError


def test_a_search_writes_its_answer_and_each_verdict_follows_the_step_records(mongod, tmp_path):
    client = mongod.client()
    client.drop_database("capmodel_test_slo")
    cfg = BenchConfig(workload="ycsb-c", records=500, concurrency=[8], database="capmodel_test_slo", duration=0.4,
                      warmup=0.2, calibrate=False, slo=["p95<=2ms", "errors<=1%"], max_steps=4)
    try:
        result = run_sweep(mongod.uri, cfg, tmp_path / "run", progress=False)
    finally:
        client.drop_database("capmodel_test_slo")
        client.close()
    written = json.loads((tmp_path / "run" / "slo.json").read_text())
    assert written == json.loads(json.dumps(result.slo.to_json()))
    assert written["objectives"][0]["bound"] == 2.0 and written["objectives"][1]["bound"] == 0.01
    steps = read_steps(tmp_path / "run" / "steps.jsonl")
    by_number = {s["step"]: s for s in steps}
    assert [s["phase"] for s in steps][0] == "slo-probe" and all(s["phase"] == "slo" for s in steps[1:])
    judged = written["met"] + written["missed"]
    assert 1 <= len(judged) <= 4
    for rate in judged:
        records = [by_number[n] for n in rate["steps"]]
        assert all(r["target_rate"] == pytest.approx(rate["rate"]) for r in records)
        p95 = statistics.median(r["latency"]["all"]["p95_ms"] for r in records)
        kept_up = statistics.median(r["ops_per_s"] for r in records) >= 0.95 * rate["rate"]
        errors = statistics.median(r["error_count"] / (r["operations"] + r["error_count"]) for r in records)
        assert rate["met"] == (p95 <= 2.0 and kept_up and errors <= 0.01 and all(r["status"] == "ok" for r in records))
    met = [r["rate"] for r in written["met"]]
    assert written["max_rate"] == (max(met) if met else None)
    assert list(result.curve["concurrency"]) == [8]   # the closed-loop probe is the one curve point
    assert result.run["slo"]["grade"] == written["evidence"]["grade"]


@pytest.mark.parametrize("options, says", [
    (["--slo", "p95<5ms"], "--slo 'p95<5ms': write a bound as METRIC<=VALUE"),
    (["--slo", "p95<=5ms", "--rate", "100"], "--slo chooses its own rates and repeats: leave out --rate"),
    (["--slo", "p95<=5ms", "--adaptive", "--concurrency", "1,8"], "leave out --adaptive"),
])
def test_options_an_slo_search_cannot_take_are_refused_in_one_line(tmp_path, options, says):
    proc = subprocess.run([sys.executable, "-m", "capmodel.cli", "bench", "--out",
                           str(tmp_path / "o"), "--uri", "mongodb://127.0.0.1:1/", *options],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and says in proc.stderr and proc.stderr.count("\n") == 1
    assert not (tmp_path / "o").exists()


def test_an_slo_search_is_not_resumed(tmp_path):
    cfg = BenchConfig(workload="ycsb-c", slo=["p95<=5ms"])
    from capmodel.bench.sweep.sweep import Sweep

    with pytest.raises(BenchError, match="--resume cannot continue an SLO search"):
        Sweep("mongodb://127.0.0.1:1/", cfg, tmp_path / "o", resume=True)._prepare_out()
