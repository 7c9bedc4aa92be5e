"""``capmodel bench`` end to end, and read preference on the embedded replica set (real servers, no mocks)."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest
from pymongo import MongoClient

from capmodel.bench.client import telemetry
from capmodel.bench.sweep.files import read_steps
from capmodel.bench.sweep.config import BenchConfig
from capmodel.bench.sweep.sweep import run_sweep
from capmodel.cli import main
from capmodel.data.curve import validate_curve

FAST = ["--duration", "0.5", "--warmup", "0.2", "--records", "300"]


def test_bench_cli_json_and_fit(mongod, tmp_path, capsys):
    out = tmp_path / "run"
    code = main(["bench", "--uri", mongod.uri, "--workload", "ycsb-a", "--concurrency", "1,2,4,8", "--out", str(out),
                 "--database", "capmodel_test_cli", "--json", *FAST])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["status"] == "complete" and [r["concurrency"] for r in summary["curve"]] == [1, 2, 4, 8]
    assert summary["client_ceiling_ops_per_s"] > 0
    assert {p.name for p in out.iterdir()} >= {"curve.csv", "steps.jsonl", "run.json"}
    validate_curve(pd.read_csv(out / "curve.csv"))
    assert main(["fit", str(out / "curve.csv"), "--json"]) == 0  # the curve table is read as it is
    fit = json.loads(capsys.readouterr().out)
    assert fit["n_points"] == 4


@pytest.mark.parametrize("argv, message", [
    (["--workload", "ycsb-z"], "unknown workload 'ycsb-z'"),
    (["--concurrency", "1,x"], "--concurrency"),
    (["--concurrency", "0,2"], "an integer from 1 to 10,000, got 0"),
    (["--database", "admin"], "not allowed"),
    (["--adaptive", "--concurrency", "4"], "at least two values"),
])
def test_bench_cli_bad_options_exit_2_with_one_line(argv, message, tmp_path, capsys):
    code = main(["bench", "--uri", "mongodb://127.0.0.1:1", "--out", str(tmp_path / "x"), *argv])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_unreachable_uri_is_a_clear_error(tmp_path, capsys):
    code = main(["bench", "--uri", "mongodb://u:Pw-9876@127.0.0.1:1/?serverSelectionTimeoutMS=300",
                 "--out", str(tmp_path / "x"), "--concurrency", "1", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "cannot reach MongoDB at mongodb://u:***@127.0.0.1:1/" in err and "Pw-9876" not in err


def test_bench_cli_without_uri_starts_and_stops_an_embedded_server(tmp_path):
    out = tmp_path / "embedded"
    proc = subprocess.run([sys.executable, "-m", "capmodel.cli", "bench", "--workload", "ycsb-c", "--concurrency",
                           "1,2", "--out", str(out), *FAST], capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    run = json.loads((out / "run.json").read_text())
    assert run["status"] == "complete" and run["uri"].startswith("mongodb://127.0.0.1:")
    port = int(run["uri"].split(":")[2].split("/")[0])
    with pytest.raises(Exception):  # the embedded server is gone
        MongoClient(port=port, serverSelectionTimeoutMS=300).admin.command("ping")
    assert "cpu_util" in pd.read_csv(out / "curve.csv").columns  # mongod's CPU, measured through its pids


def test_ctrl_c_keeps_completed_steps_and_resume_finishes(mongod, tmp_path):
    out = tmp_path / "interrupted"
    argv = [sys.executable, "-m", "capmodel.cli", "bench", "--uri", mongod.uri, "--workload", "ycsb-c",
            "--concurrency", "1,2,3,4", "--out", str(out), "--database", "capmodel_test_cli", "--quiet",
            "--duration", "1", "--warmup", "0.2", "--records", "300"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    steps = out / "steps.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (steps.exists() and steps.read_text().count("\n") >= 1):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "interrupted" in err
    done = read_steps(steps)
    assert 1 <= len(done) < 4 and all(s["status"] == "ok" for s in done)
    # the one line says what was kept and how to go on (not "interrupted" alone)
    kept = f"{len(done)} completed step{'' if len(done) == 1 else 's'} in {steps}"
    assert err.strip().splitlines()[-1] == (f"capmodel: interrupted; kept {kept} and {out / 'curve.csv'}: run the "
                                            "same command with --resume to go on"), err
    assert json.loads((out / "run.json").read_text())["status"] == "interrupted"
    resumed = subprocess.run(argv[:-6] + ["--resume"], capture_output=True, text=True, timeout=180)
    assert resumed.returncode == 0, resumed.stderr
    final = read_steps(steps)
    assert [s["concurrency"] for s in final] == [1, 2, 3, 4]
    assert final[: len(done)] == done


def _member_queries(ports):
    counts = {}
    for port in ports:
        with MongoClient(port=port, directConnection=True, serverSelectionTimeoutMS=5000) as c:
            hello = c.admin.command("hello")
            role = "primary" if hello.get("isWritablePrimary") else "secondary"
            counts[port] = (role, telemetry.server_snapshot(c)["opcounters.query"])
    return counts


def test_secondary_preferred_reads_are_served_by_secondaries(replica_set, tmp_path):
    # load first (writes go to the primary), then measure a read-only sweep with secondaryPreferred
    cfg = BenchConfig(workload="ycsb-c", concurrency=[2], duration=0.8, warmup=0.2, records=300, calibrate=False,
                      database="capmodel_test_rs", read_preference="secondaryPreferred", write_concern="majority")
    before = _member_queries(replica_set.ports)
    result = run_sweep(replica_set.uri, cfg, tmp_path, progress=False)
    after = _member_queries(replica_set.ports)
    reads = result.steps[0]["latency"]["read"]["count"]
    assert reads > 0 and result.steps[0]["error_count"] == 0
    secondary = sum(after[p][1] - before[p][1] for p in after if after[p][0] == "secondary")
    primary = sum(after[p][1] - before[p][1] for p in after if after[p][0] == "primary")
    assert secondary >= reads
    assert primary < 0.05 * reads  # the primary served (almost) none of them
    assert json.loads((tmp_path / "run.json").read_text())["config"]["read_preference"] == "secondaryPreferred"


# Issue 11, point 4: every numeric option finite and in its documented range, refused before anything connects
# (each of these used to run until killed, allocate terabytes, or start thousands of processes)
@pytest.mark.parametrize("argv, message", [
    (["--warmup", "nan"], "--warmup must be a number from 0 to 3,600, got nan"),
    (["--duration", "inf"], "--duration must be a number from 0.001 to 86,400, got inf"),
    (["--warmup", "inf"], "--warmup must be a number from 0 to 3,600, got inf"),
    (["--concurrency", "100000000"], "--concurrency: every value must be an integer from 1 to 10,000, got 100000000"),
    (["--concurrency", "1,2", "--processes", "5000"], "--processes 5000 is more than this sweep can use"),
    (["--timeout-ms", "0"], "--timeout-ms must be an integer from 1 to 86,400,000, got 0"),
    (["--rate", "inf"], "--rate must be a number from 0.001 to 10,000,000, got inf"),
    (["--rate", "1e12"], "--rate must be a number from 0.001 to 10,000,000"),
    (["--rate", "1000000", "--duration", "100"], "schedules 102,000,000 operations a step; at most 10,000,000"),
    (["--repeat", "0"], "--repeat must be an integer from 1 to 1,000, got 0"),
    (["--max-steps", "0", "--adaptive", "--concurrency", "1,8"], "--max-steps must be an integer from 1"),
    (["--concurrency", "1,1e999"], "--concurrency: every number must be finite, got '1,1e999'"),   # a float overflow: inf
])
def test_unbounded_options_are_refused_with_one_line(argv, message, tmp_path, capsys):
    code = main(["bench", "--uri", "mongodb://127.0.0.1:1", "--out", str(tmp_path / "x"), *argv])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x").exists()  # refused before anything was written


def test_an_unreachable_host_fails_within_the_server_selection_timeout(tmp_path, capsys):
    """pymongo's timeoutMS also bounds server selection: the README's 5 s must not become --timeout-ms (here 60 s).
    The message states the budget pymongo waited ('no server answered within 0.3 s'), so no clock is read here."""
    import re

    code = main(["bench", "--uri", "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=300", "--timeout-ms", "60000",
                 "--out", str(tmp_path / "x"), "--concurrency", "1", "--quiet"])
    err = capsys.readouterr().err
    waited = float(re.search(r"no server answered within ([0-9.]+) s", err).group(1))
    assert code == 2 and "cannot reach MongoDB" in err and waited <= 0.3
