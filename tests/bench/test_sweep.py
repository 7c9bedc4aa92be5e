"""Sweeps against the real embedded mongod: output files, resume, data safety, faults, adaptive concurrency choice."""
from __future__ import annotations

import json
import threading

import numpy as np
import pandas as pd
import pytest

from capmodel.bench.sweep.adaptive import choose_next
from capmodel.bench.sweep.files import curve_table, read_steps
from capmodel.bench.client.measurements import decode_histogram
from capmodel.bench.workload.ownership import MARKER_COLLECTION
from capmodel.bench.sweep.config import BenchConfig
from capmodel.bench.sweep.sweep import run_sweep
from capmodel.data.curve import validate_curve
from capmodel.errors import BenchError

FAST = dict(duration=0.5, warmup=0.2, records=300, calibrate=False)


def test_grid_sweep_writes_curve_steps_and_run(mongod, tmp_path):
    cfg = BenchConfig(workload="ycsb-b", concurrency=[1, 2, 4], repeat=2, database="capmodel_test_sweep", **FAST)
    result = run_sweep(mongod.uri, cfg, tmp_path, progress=False, server_pids=mongod.pids)
    steps = read_steps(tmp_path / "steps.jsonl")
    assert [(s["concurrency"], s["repeat"]) for s in steps] == [(c, r) for c in (1, 2, 4) for r in (1, 2)]
    assert all(s["status"] == "ok" and s["error_count"] == 0 for s in steps)
    curve = validate_curve(pd.read_csv(tmp_path / "curve.csv"), source="curve.csv")
    assert len(curve) == 6 and set(curve["workload"]) == {"ycsb-b"}
    assert curve["throughput"].tolist() == pytest.approx([s["throughput"] for s in steps])
    assert (curve["latency_p50_ms"] <= curve["latency_p99_ms"]).all()
    assert curve["cpu_util"].between(0, 1).all()  # the embedded server's pids were measured
    assert {"latency_read_p99_ms", "latency_update_p99_ms", "client_bound"} <= set(curve.columns)
    for s in steps:
        assert decode_histogram(s["histograms"]["read"]).get_total_count() == s["latency"]["read"]["count"]
        assert s["server"]["opcounters.query"] >= s["latency"]["read"]["count"]  # the server saw those reads
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["status"] == "complete" and run["config"]["concurrency"] == [1, 2, 4]
    assert run["versions"]["mongodb"] == mongod.version and run["host"]["cpu_count"] >= 1
    assert result.curve.shape[0] == 6
    from capmodel.cli import main

    assert main(["fit", str(tmp_path / "curve.csv"), "--json"]) == 0  # the curve is fit as it is


def test_rerun_reuses_the_loaded_collection_and_refuses_to_overwrite_steps(mongod, tmp_path):
    cfg = BenchConfig(workload="ycsb-c", concurrency=[1], database="capmodel_test_sweep", **FAST)
    run_sweep(mongod.uri, cfg, tmp_path / "a", progress=False)
    second = run_sweep(mongod.uri, cfg, tmp_path / "b", progress=False)
    assert second.run["data"] == "reuse"
    with pytest.raises(BenchError, match="--resume"):
        run_sweep(mongod.uri, cfg, tmp_path / "b", progress=False)


def test_resume_runs_only_missing_steps_and_drops_a_torn_line(mongod, tmp_path):
    cfg = BenchConfig(workload="ycsb-c", concurrency=[1, 2, 3], database="capmodel_test_sweep", **FAST)
    run_sweep(mongod.uri, cfg, tmp_path, progress=False)
    path = tmp_path / "steps.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:2]) + "\n" + lines[2][: len(lines[2]) // 2])  # crash while writing step 3
    kept = [json.loads(line)["started_at"] for line in lines[:2]]
    with pytest.raises(BenchError, match="different configuration"):
        run_sweep(mongod.uri, BenchConfig(**{**cfg.to_dict(), "duration": 2.0}), tmp_path, resume=True,
                  progress=False)
    result = run_sweep(mongod.uri, cfg, tmp_path, resume=True, progress=False)
    steps = read_steps(path)
    assert [s["concurrency"] for s in steps] == [1, 2, 3]
    assert [s["started_at"] for s in steps[:2]] == kept
    assert len(result.curve) == 3


def test_refuses_foreign_collections_and_touches_nothing_else(mongod, tmp_path):
    client = mongod.client()
    try:
        client["capmodel_test_foreign"]["usertable"].insert_one({"_id": "precious"})
        client["userdata"]["orders"].insert_one({"_id": 1, "keep": True})
        dbs_before = set(client.list_database_names())
        cfg = BenchConfig(workload="ycsb-c", concurrency=[1], database="capmodel_test_foreign", **FAST)
        with pytest.raises(BenchError, match="was not created by capmodel"):
            run_sweep(mongod.uri, cfg, tmp_path / "refused", progress=False)
        assert client["capmodel_test_foreign"]["usertable"].find_one({"_id": "precious"}) is not None
        # told to, it benchmarks the collection as it is, without loading or dropping
        allowed = BenchConfig(**{**cfg.to_dict(), "allow_existing": True})
        result = run_sweep(mongod.uri, allowed, tmp_path / "allowed", progress=False)
        assert result.run["data"] == "as-is"
        assert client["capmodel_test_foreign"]["usertable"].count_documents({}) == 1
        assert client["userdata"]["orders"].find_one({"_id": 1}) == {"_id": 1, "keep": True}
        assert set(client.list_database_names()) == dbs_before
        assert MARKER_COLLECTION not in client["capmodel_test_foreign"].list_collection_names()
    finally:
        client.drop_database("userdata")
        client.drop_database("capmodel_test_foreign")
        client.close()


@pytest.mark.parametrize("name", ["admin", "local", "config", "a.b"])
def test_system_databases_are_refused(name):
    with pytest.raises(BenchError, match="not allowed"):
        BenchConfig(database=name).check()


def test_credentials_never_reach_files_or_messages(mongod, tmp_path, capsys):
    client = mongod.client()
    secret = "S3cret-Pw-4711"
    client.admin.command("createUser", "capmodel_bench_user", pwd=secret, roles=["root"])
    try:
        uri = f"mongodb://capmodel_bench_user:{secret}@127.0.0.1:{mongod.port}/?authSource=admin"
        cfg = BenchConfig(workload="ycsb-c", concurrency=[1], database="capmodel_test_sweep", **FAST)
        result = run_sweep(uri, cfg, tmp_path, progress=False, log=print)
        assert result.run["uri"] == f"mongodb://capmodel_bench_user:***@127.0.0.1:{mongod.port}/?authSource=admin"
        wrong = uri.replace(secret, "Wr0ng-" + secret)
        with pytest.raises(BenchError) as info:
            run_sweep(wrong, cfg, tmp_path / "wrong", progress=False)
        assert secret not in str(info.value) and "***" in str(info.value)
        out = capsys.readouterr()
        for path in tmp_path.rglob("*"):
            if path.is_file():
                assert secret not in path.read_text()
        assert secret not in out.out + out.err
    finally:
        client.admin.command("dropUser", "capmodel_bench_user")
        client.close()


def test_killing_mongod_mid_sweep_ends_the_step_with_errors(tmp_path):
    """A dedicated server, killed while a step runs: the step ends with its errors recorded; the sweep stops."""
    import os
    import signal
    import time

    from capmodel.bench.server import embedded_server

    with embedded_server() as server:
        cfg = BenchConfig(workload="ycsb-c", concurrency=[2, 4, 8], duration=2.0, warmup=0.2, records=200,
                          calibrate=False, timeout_ms=2000, server_selection_timeout_ms=1000)
        outcome = {}

        def sweep():
            try:
                run_sweep(server.uri, cfg, tmp_path, progress=False)
            except BaseException as exc:  # noqa: BLE001 - the outcome is what the test checks
                outcome["error"] = exc

        thread = threading.Thread(target=sweep, daemon=True)
        thread.start()
        steps_path = tmp_path / "steps.jsonl"
        deadline = time.monotonic() + 60
        while not (steps_path.exists() and steps_path.read_text().count("\n") >= 1) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1.0)  # inside the second step's 2 s window (0.2 s warm-up)
        for pid in server.pids:
            os.kill(pid, signal.SIGKILL)
        thread.join(120)
        assert not thread.is_alive(), "the sweep hung after the server died"
    assert isinstance(outcome.get("error"), BenchError)
    assert "--resume" in str(outcome["error"])
    steps = read_steps(tmp_path / "steps.jsonl")
    assert steps[0]["status"] == "ok" and steps[0]["concurrency"] == 2
    failed = steps[1]
    assert failed["status"] == "failed" and failed["concurrency"] == 4 and failed["error_count"] > 0
    # pymongo's names, and mongojet's (the default binding) for a server that cannot be selected
    assert set(failed["errors"]) & {"AutoReconnect", "ServerSelectionTimeoutError", "NetworkTimeout",
                                    "ExecutionTimeout", "ConnectionFailure", "ServerSelectionError"}
    assert len(steps) == 2  # stopped: no step 3
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["status"] == "failed" and run["steps_completed"] == 1
    assert len(pd.read_csv(tmp_path / "curve.csv")) == 1  # the completed step survives


def _usl(n, sigma=0.05, kappa=0.001, lam=1000.0):
    return lam * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))


def test_adaptive_choice_locates_a_known_usl_peak_with_fewer_steps():
    """Feed choose_next exact USL throughputs: it must stop near the true peak sqrt((1-sigma)/kappa) = 30.8."""
    true_peak = np.sqrt(0.95 / 0.001)
    steps, history, visited = [], [], []
    while True:
        choice, reason, peak = choose_next(steps, 1, 128, 0.1, history)
        if choice is None:
            break
        visited.append(choice)
        steps.append({"status": "ok", "concurrency": choice, "throughput": float(_usl(choice))})
        assert len(visited) < 20
    assert visited[:4] == [1, 5, 25, 128]  # the geometric start between the ends of the range
    assert peak == pytest.approx(true_peak, rel=0.1)
    assert any(abs(c - true_peak) <= 0.1 * true_peak for c in visited)
    assert len(visited) < len(range(1, 129, 4))  # far fewer steps than a grid fine enough to see the peak
    assert "peak located" in reason


def test_adaptive_stops_when_throughput_still_rises():
    steps, history = [], []
    for _ in range(10):
        choice, reason, _ = choose_next(steps, 1, 16, 0.1, history)
        if choice is None:
            break
        steps.append({"status": "ok", "concurrency": choice, "throughput": 100.0 * choice})  # linear scaling
    assert choice is None and "still rising" in reason
    assert sorted(s["concurrency"] for s in steps) == [1, 3, 6, 16]


def test_adaptive_sweep_on_the_server(mongod, tmp_path):
    cfg = BenchConfig(workload="ycsb-c", concurrency=[1, 16], adaptive=True, max_steps=6,
                      database="capmodel_test_sweep", **FAST)
    result = run_sweep(mongod.uri, cfg, tmp_path, progress=False)
    info = result.run["adaptive"]
    measured = sorted({s["concurrency"] for s in result.steps})
    assert measured[:1] == [1] and 16 in measured and len(measured) <= 6
    assert info["steps"] == len(result.steps)
    assert info["stopped_because"] and info["grid_steps"] == 2
    assert len(result.curve) == len(result.steps)


def test_curve_table_skips_failed_steps():
    ok = {"status": "ok", "concurrency": 2, "throughput": 10.0, "error_count": 0, "workload": "w", "repeat": 1,
          "ops_per_s": 10.0, "latency": {"all": {f"{k}_ms": 1.0 for k in ("mean", "p50", "p95", "p99", "p999")}}}
    table = curve_table([ok, {**ok, "status": "failed", "concurrency": 4}])
    assert table["concurrency"].tolist() == [2]


def _always_failing(tmp_path):
    path = tmp_path / "dup.yaml"  # every insert after the first hits a duplicate key: a step of (almost) only errors
    path.write_text("name: dup\ncollection: dup\ndocument: {_id: 1}\noperations: [{op: insert}]\n")
    return str(path)


def test_failed_steps_continue_when_told(mongod, tmp_path):
    cfg = BenchConfig(workload=_always_failing(tmp_path), concurrency=[1, 2], duration=0.3, warmup=0.1,
                      calibrate=False, database="capmodel_test_sweep", on_error="continue", collection="dup_c")
    result = run_sweep(mongod.uri, cfg, tmp_path / "out", progress=False)
    steps = read_steps(tmp_path / "out" / "steps.jsonl")
    assert [s["concurrency"] for s in steps] == [1, 2]
    assert all(s["status"] == "failed" and "DuplicateKeyError" in s["failure"] for s in steps)
    assert result.run["status"] == "complete" and result.curve.empty


def test_failed_steps_are_retried_then_stop_the_sweep(mongod, tmp_path):
    cfg = BenchConfig(workload=_always_failing(tmp_path), concurrency=[1, 2], duration=0.3, warmup=0.1,
                      calibrate=False, database="capmodel_test_sweep", on_error="retry", retries=2,
                      collection="dup_r")
    with pytest.raises(BenchError, match="concurrency=1 repeat=1 failed"):
        run_sweep(mongod.uri, cfg, tmp_path / "out", progress=False)
    steps = read_steps(tmp_path / "out" / "steps.jsonl")
    assert [(s["concurrency"], s["attempt"], s["status"]) for s in steps] == [(1, 1, "failed"), (1, 2, "failed"),
                                                                             (1, 3, "failed")]


def test_adaptive_on_a_grid_measures_only_grid_points_and_fewer_of_them():
    grid = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128]
    steps, history, visited = [], [], []
    while True:
        choice, reason, peak = choose_next(steps, 1, 128, 0.1, history, candidates=grid)
        if choice is None:
            break
        visited.append(choice)
        steps.append({"status": "ok", "concurrency": choice, "throughput": float(_usl(choice))})
    assert set(visited) <= set(grid) and len(visited) == len(set(visited))
    assert 32 in visited  # the grid point nearest the true peak 30.8
    assert len(visited) <= len(grid) // 2


def test_adaptive_finds_the_knee_of_a_plateau():
    """Amdahl data (kappa = 0) has no peak; the search stops at the knee where X reaches 90% of lambda/sigma."""
    sigma = 0.2
    knee = 0.9 * (1 - sigma) / (0.1 * sigma)  # X(N) = 0.9 * lambda / sigma  =>  N = 36
    steps, history = [], []
    while True:
        choice, reason, peak = choose_next(steps, 1, 256, 0.1, history)
        if choice is None:
            break
        steps.append({"status": "ok", "concurrency": choice, "throughput": float(_usl(choice, sigma, 0.0))})
        assert len(steps) < 20
    assert "knee of the plateau at 5,000/s" in reason  # lambda / sigma = 1000 / 0.2
    assert peak == pytest.approx(knee, rel=1e-3)
    assert any(abs(s["concurrency"] - knee) <= 0.1 * knee for s in steps)


def test_a_frozen_server_fails_its_step_and_the_in_flight_operations_are_counted(tmp_path):
    """mongod SIGSTOPped in the middle of a step: the operations in flight when the window ends are counted, the
    silence is measured, and the step is not ok (not a normal curve point with 0 errors)."""
    import os
    import signal
    import time

    from capmodel.bench.server import embedded_server

    with embedded_server() as server:
        cfg = BenchConfig(workload="ycsb-c", concurrency=[2, 4], duration=3.0, warmup=0.2, records=200,
                          calibrate=False, timeout_ms=3000, server_selection_timeout_ms=1000, on_error="continue")
        thread = threading.Thread(target=lambda: run_sweep(server.uri, cfg, tmp_path, progress=False), daemon=True)
        thread.start()
        steps_path = tmp_path / "steps.jsonl"
        deadline = time.monotonic() + 60
        while not (steps_path.exists() and steps_path.read_text().count("\n") >= 1) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # about 0.3 s into the second step's 3 s window (0.2 s warm-up): silent for its last 2.5 s
        for pid in server.pids:
            os.kill(pid, signal.SIGSTOP)
        time.sleep(3.5)  # past the window's end and the operations' 3 s timeout
        for pid in server.pids:
            os.kill(pid, signal.SIGCONT)
        thread.join(120)
        assert not thread.is_alive()
    first, frozen = read_steps(steps_path)
    assert first["status"] == "ok"
    assert frozen["status"] == "failed" and "no operation completed for" in frozen["failure"]
    assert frozen["longest_silence_s"] >= 2.0  # froze about 0.3 s into a 3 s window
    # every client was inside an operation when the window closed: counted, and their fate recorded (a timeout
    # after 3 s, or a latency of seconds once the server woke up)
    assert frozen["in_flight_at_end"] == 4
    assert frozen["error_count"] > 0 or frozen["late_max_ms"] > 2000
    assert len(pd.read_csv(tmp_path / "curve.csv")) == 1  # the frozen step is no curve point
