"""Client load from several processes on a local Dask cluster, and Poisson arrivals of the open loop (a real embedded
mongod and real Dask worker processes, no mocks)."""
from __future__ import annotations

import json
import os
import threading
import time

import numpy as np
import psutil
import pytest
from scipy import stats

from capmodel.bench.client.arrivals import arrival_schedule
from capmodel.bench.client.measurements import decode_histogram, new_histogram
from capmodel.bench.client.operations import KeySpace, create_indexes, load_records
from capmodel.bench.client.runner import Runner
from capmodel.bench.cluster.executor import START_LEAD_ENV, DaskExecutor
from capmodel.bench.cluster.split_merge import merge, portion, split
from capmodel.bench.sweep.config import BenchConfig
from capmodel.bench.sweep.files import read_steps
from capmodel.bench.workload.definition import load_workload
from capmodel.cli import main
from capmodel.errors import BenchError

DB = "capmodel_test_processes"


@pytest.fixture(autouse=True)
def short_start_lead(monkeypatch):
    """Steps start 0.3 s after their tasks are sent, not 1 s (capmodel.bench.cluster.executor): the workers are on
    this machine; the Ctrl-C tests' bench processes inherit it."""
    monkeypatch.setenv(START_LEAD_ENV, "0.3")


@pytest.fixture(scope="module")
def client(mongod):
    c = mongod.client(maxPoolSize=200, timeoutMS=20_000)
    yield c
    c.drop_database(DB)
    c.close()


@pytest.fixture(scope="module")
def pool(mongod):
    """A local Dask cluster of two single-threaded worker processes (what --processes 2 starts)."""
    p = DaskExecutor(mongod.uri, BenchConfig(timeout_ms=5_000, processes=2).check()).start()
    yield p
    p.close()


def worker_pids(executor) -> dict:
    return executor.client.run(os.getpid)


def loaded(client, name, collection, records):
    w = load_workload(name, records=records, collection=collection)
    coll = client[DB][w.collection]
    coll.drop()
    create_indexes(coll, w)
    load_records(coll, w, 0, w.records)
    return coll, w


# --- pure parts ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("total, parts, expected", [
    (5, 2, [3, 2]), (4, 2, [2, 2]), (1, 4, [1]), (3, 4, [1, 1, 1]), (1024, 3, [342, 341, 341]),
])
def test_workers_split_evenly_over_processes(total, parts, expected):
    assert split(total, parts) == expected


def test_operation_count_split_in_proportion_and_exactly():
    shares = split(7, 3)  # [3, 2, 2]
    parts = [portion(100, shares, j) for j in range(len(shares))]
    assert sum(parts) == 100 and parts == [42, 29, 29]  # floor(100*3/7)=42, floor(100*5/7)=71 -> 29, 100-71 = 29


def test_strided_key_spaces_never_collide():
    w = load_workload("ycsb-d", records=100)
    spaces = [KeySpace(w, 100, offset=j, stride=3) for j in range(3)]
    taken = [[ks.next_insert() for _ in range(50)] for ks in spaces]
    flat = sorted(n for t in taken for n in t)
    assert flat == list(range(100, 250))  # together: exactly the next 150 numbers, each once
    assert taken[1][:3] == [101, 104, 107]
    with pytest.raises(ValueError):
        KeySpace(w, 100, offset=3, stride=3)


def test_merged_histograms_give_the_percentiles_of_all_operations():
    rng = np.random.default_rng(3)
    fast, slow = rng.integers(100, 200, 900), rng.integers(5_000, 9_000, 100)  # microseconds

    def record(values, concurrency):
        h = new_histogram()
        for v in values.tolist():
            h.record_value(v)
        return {"concurrency": concurrency, "mode": "closed", "seconds": 2.0, "operations": len(values),
                "documents": len(values), "throughput": len(values) / 2.0, "ops_per_s": len(values) / 2.0,
                "errors": {"NetworkTimeout": 1}, "latency": {}, "histograms": {"read": h.encode().decode()},
                "started_at": "2026-11-21T10:00:00+00:00", "wall_seconds": 3.1, "target_rate": None,
                "error_samples": {"NetworkTimeout": "timed out"}, "runner_failures": 0, "stuck_workers": 0}

    merged = merge([record(fast, 3), record(slow, 2)], ["read"], "operations")
    both = np.concatenate([fast, slow])
    assert merged.concurrency == 5 and merged.operations == 1000 and merged.ops_per_s == pytest.approx(500.0)
    assert merged.errors == {"NetworkTimeout": 2}
    # p95 of the union lies among the slow ones; averaging each process's p95 would give about (190 + 8800) / 2
    assert merged.latency["all"]["p95_ms"] == pytest.approx(np.percentile(both, 95) / 1000, rel=0.01)
    assert merged.latency["read"]["mean_ms"] == pytest.approx(both.mean() / 1000, rel=0.001)
    assert decode_histogram(merged.histograms["read"]).get_total_count() == 1000


def test_uniform_schedule_is_evenly_spaced():
    times = arrival_schedule(40.0, 2.0, "uniform")
    assert len(times) == 80 and times[1] - times[0] == pytest.approx(0.025) and times[-1] < 2.0


def test_poisson_schedule_has_exponential_gaps_of_the_rate():
    rate, seconds = 500.0, 60.0
    times = arrival_schedule(rate, seconds, "poisson", seed=11)
    gaps = np.diff(times)
    # the count of a Poisson process over 60 s: mean 30,000, sd sqrt(30,000) = 173; 5 sd is far beyond chance
    assert abs(len(times) - rate * seconds) < 5 * np.sqrt(rate * seconds)
    assert gaps.mean() == pytest.approx(1 / rate, rel=0.03)
    assert stats.kstest(gaps, "expon", args=(0, 1 / rate)).pvalue > 0.01
    assert np.array_equal(times, arrival_schedule(rate, seconds, "poisson", seed=11))  # reproducible
    with pytest.raises(BenchError, match="arrivals"):
        arrival_schedule(rate, seconds, "bursty")


# --- against the server --------------------------------------------------------------------------------------------

def test_open_loop_poisson_serves_every_arrival_due_in_the_window(client):
    coll, w = loaded(client, "ycsb-c", "poisson_c", records=100)
    keys = KeySpace(w, w.records)
    result = Runner(coll, w, keys, seed=5).run(4, duration=1.0, warmup=0.2, rate=200, arrivals="poisson")
    expected = arrival_schedule(200, 1.2, "poisson", seed=5 * 1_000_003 % 2**32)
    due = int(np.count_nonzero((expected >= 0.2) & (expected < 1.2)))
    assert result.operations + result.error_count == due and result.errors == {}
    assert due != 200  # a Poisson count, not the evenly spaced 200


def test_two_processes_run_one_step_and_merge_it(client, pool):
    coll, w = loaded(client, "ycsb-c", "pooled_c", records=300)
    result = pool.runner(DB, w.collection, w, w.records).run(5, duration=1.0, warmup=0.3)
    assert result.concurrency == 5 and result.errors == {} and result.runner_failures == 0
    assert result.operations > 0 and result.ops_per_s == pytest.approx(result.operations / result.seconds, rel=0.05)
    # the merged histogram holds every operation of both workers, and each worker's count is its own
    assert decode_histogram(result.histograms["read"]).get_total_count() == result.operations
    assert sum(w["operations"] for w in result.workers) == result.operations
    assert sorted(w["clients"] for w in result.workers) == [2, 3]
    pids = worker_pids(pool)
    assert len(pids) == 2 and os.getpid() not in pids.values()
    assert {w["pid"] for w in result.workers} == set(pids.values())
    server_side = {c.get("appName") for c in client.admin.aggregate([{"$currentOp": {"idleConnections": True}}])}
    assert "capmodel-bench" in server_side  # the workers' own clients, connected with the bench's app name


def test_processes_insert_disjoint_keys(client, pool):
    coll, w = loaded(client, "ycsb-d", "pooled_d", records=200)  # 5% inserts of YCSB keys
    runner = pool.runner(DB, w.collection, w, w.records)
    first = runner.run(6, duration=1.0, warmup=0.0)
    second = runner.run(6, duration=1.0, warmup=0.0)  # the next step continues after the keys inserted so far
    assert first.errors == {} and second.errors == {}  # a duplicate _id would be a DuplicateKeyError
    inserted = first.latency["insert"]["count"] + second.latency["insert"]["count"]
    assert inserted > 0 and coll.count_documents({}) >= 200 + inserted


def test_a_killed_worker_fails_the_step_not_the_sweep(client, pool):
    coll, w = loaded(client, "ycsb-c", "pooled_kill", records=100)
    runner = pool.runner(DB, w.collection, w, w.records)
    address, victim = sorted(worker_pids(pool).items())[1]
    threading.Timer(1.3, lambda: os.kill(victim, 9)).start()  # inside the window (0.3 s lead, 0.2 s warm-up: 0.5-2 s)
    t0 = time.monotonic()
    result = runner.run(4, duration=1.5, warmup=0.2)
    assert time.monotonic() - t0 < 20  # no hang waiting for the dead worker
    assert result.runner_failures == 1 and "RunnerFailure" in result.errors
    assert address in result.error_samples["RunnerFailure"]  # the failure names the worker
    assert result.operations > 0  # the surviving worker's operations are kept
    again = runner.run(4, duration=0.5, warmup=0.1)  # the nanny restarted the killed worker
    assert again.runner_failures == 0 and victim not in worker_pids(pool).values() and len(again.workers) == 2


def test_closing_the_cluster_leaves_no_worker_process(mongod):
    p = DaskExecutor(mongod.uri, BenchConfig(processes=3).check()).start()
    pids = list(worker_pids(p).values())
    assert len(pids) == 3
    p.close()
    psutil.wait_procs([psutil.Process(pid) for pid in pids if psutil.pid_exists(pid)], timeout=10)
    gone = [not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE for pid in pids]
    assert all(gone)


def test_bench_cli_with_processes_and_poisson_arrivals(mongod, tmp_path, capsys):
    out = tmp_path / "run"
    code = main(["bench", "--uri", mongod.uri, "--workload", "ycsb-c", "--records", "200", "--concurrency", "2,4",
                 "--processes", "2", "--rate", "300", "--arrivals", "poisson", "--duration", "0.8", "--warmup",
                 "0.2", "--out", str(out), "--database", DB, "--json"])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["status"] == "complete" and [r["concurrency"] for r in summary["curve"]] == [2, 4]
    run = json.loads((out / "run.json").read_text())
    assert run["config"]["processes"] == 2 and run["config"]["arrivals"] == "poisson"
    steps = read_steps(out / "steps.jsonl")
    for s in steps:
        assert s["mode"] == "open" and s["target_rate"] == pytest.approx(300)
        # the two processes' Poisson streams of 150/s each add up to about 300/s over 0.8 s (sd ~ 15 operations)
        assert abs(s["operations"] + s["error_count"] - 240) < 5 * np.sqrt(240)


@pytest.mark.parametrize("argv, message", [
    (["--processes", "0"], "--processes must be an integer >= 1"),
    (["--rate", "0"], "--rate must be a number from 0.001 to 10,000,000, got 0"),
    (["--arrivals", "poisson"], "--arrivals sets the open loop's arrival process: give --rate or --rate-shape too"),
    (["--operations", "1", "--processes", "2", "--concurrency", "2"], "--operations 1 is fewer than"),
])
def test_bench_cli_refuses_bad_process_options(tmp_path, capsys, argv, message):
    code = main(["bench", "--uri", "mongodb://127.0.0.1:1", "--out", str(tmp_path / "x"), *argv])
    assert code == 2 and message in capsys.readouterr().err



def test_processes_auto_is_one_per_core():
    # one per core, but never more processes than the largest concurrency has clients
    assert BenchConfig(processes="auto").check().processes == min(os.cpu_count(), 64)
    assert BenchConfig(processes="auto", concurrency=[1]).check().processes == 1
    with pytest.raises(BenchError, match="'auto', got 'many'"):
        BenchConfig(processes="many").check()
