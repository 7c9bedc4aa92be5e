"""A step during which the replica set elected a new primary says so and is not ``ok``, even when the driver hid
the failover (an election handoff can leave no error and no long pause): a real 3-member embedded replica set of
this test's own (the session's ``replica_set`` is shared and must keep its primary) has its primary stepped down
with ``replSetStepDown`` in the middle of a step; that step fails naming the election, the operations that failed
and the longest pause, with no server counters (two servers' counters are never subtracted), and the next step is
``ok``. Also the election verdict from the replica state before and after a step.
"""
from __future__ import annotations

import threading
import time

import pytest
from pymongo import MongoClient

from capmodel.bench.sweep import verdict
from capmodel.bench.sweep.files import read_steps
from capmodel.bench.client.runner import StepResult
from capmodel.bench.sweep.config import BenchConfig
from capmodel.formatting import plural
from capmodel.bench.sweep.sweep import run_sweep

DB = "capmodel_test_election"


@pytest.fixture(scope="module")
def own_replica_set():
    from capmodel.bench.server import embedded_server

    with embedded_server(replica_set=3) as server:
        yield server


def _step_down_mid_step(uri: str, done: threading.Event, report: dict) -> None:
    """Wait until the step's updates flow, then step the primary down for 30 s (it cannot be re-elected at once)."""
    with MongoClient(uri, serverSelectionTimeoutMS=20_000) as client:
        start = client[DB].command("serverStatus")["opcounters"]["update"]
        deadline = time.monotonic() + 120
        while client[DB].command("serverStatus")["opcounters"]["update"] < start + 200:
            if done.is_set() or time.monotonic() > deadline:
                return
            time.sleep(0.05)
        time.sleep(1.0)
        report["primary"] = client.admin.command("hello")["primary"]
        try:
            client.admin.command("replSetStepDown", 30, secondaryCatchUpPeriodSecs=10)
        except Exception as exc:  # noqa: BLE001 - older servers close the connection as they step down
            report["closed"] = type(exc).__name__
        report["stepped_down_at"] = time.monotonic()


def test_a_step_across_an_election_says_so_and_is_not_ok(own_replica_set, tmp_path):
    cfg = BenchConfig(workload="ycsb-a", records=300, concurrency=[4, 5], duration=3.0, warmup=0.3, calibrate=False,
                      database=DB, on_error="continue", binding="pymongo", server_selection_timeout_ms=20_000,
                      timeout_ms=20_000)
    done, report = threading.Event(), {}
    thread = threading.Thread(target=_step_down_mid_step, args=(own_replica_set.uri, done, report))
    thread.start()
    try:
        result = run_sweep(own_replica_set.uri, cfg, tmp_path, progress=False)
    finally:
        done.set()
        thread.join(60)
    assert "stepped_down_at" in report, "the step-down never happened"
    steps = read_steps(tmp_path / "steps.jsonl")
    across = steps[0]
    election = across["election"]
    assert election["seen"] is True and election["primary_before"] == report["primary"]
    assert election["primary_after"] != report["primary"] or election["term_after"] != election["term_before"]
    assert election["term_after"] is None or election["term_after"] > election["term_before"]
    assert across["status"] == "failed" and "elected a new primary" in across["failure"]
    # a planned step-down hands the election off: the driver may hide it entirely (no failure, no long pause)
    assert plural(election["operations_failed"], "operation") + " failed" in across["failure"]
    assert f"paused up to {election['longest_pause_s']:.1f} s" in across["failure"]
    assert across["server"] is None  # counters of two servers are never subtracted
    after = steps[-1]
    assert after["concurrency"] == 5 and after["election"]["seen"] is False and after["status"] == "ok"
    assert result.curve["concurrency"].tolist() == [5]


def _result(errors=0, failed_attempts=0, silence=0.0) -> StepResult:
    return StepResult(concurrency=4, mode="closed", seconds=5.0, operations=1000, documents=1000, throughput=200.0,
                      ops_per_s=200.0, errors={"NotPrimaryError": errors} if errors else {}, latency={},
                      histograms={}, started_at="", wall_seconds=5.0, longest_silence_s=silence,
                      failed_attempts=failed_attempts)


A = {"set": "rs", "primary": "h:1", "term": 3, "taken_at": 0.0}
B = {"set": "rs", "primary": "h:2", "term": 4, "taken_at": 1.0}


@pytest.mark.parametrize("before, after, result, seen, fails", [
    (None, None, _result(errors=5), None, False),  # a standalone server: no election record
    (A, A, _result(errors=5), False, False),  # errors without an election are the error threshold's business
    (A, B, _result(), True, True),  # an election no operation noticed still mixes two primaries
    (A, B, _result(errors=2), True, True),
    (A, B, _result(failed_attempts=7), True, True),  # retried silently by the driver: 7 attempts, 0 errors
    (A, B, _result(silence=0.8), True, True),
    (A, {**A, "term": 4}, _result(failed_attempts=1), True, True),  # the same node re-elected: a new term
    (A, None, _result(silence=3.0), True, True),  # no primary at the step's end
])
def test_the_election_verdict(before, after, result, seen, fails):
    record = verdict.election(before, after, result)
    assert (record and record["seen"]) == seen if seen is not None else record is None
    failure = verdict.election_failure(record)
    assert (failure is not None) == fails
    if fails:
        assert "elected a new primary" in failure and plural(result.error_count, "operation") + " failed" in failure
        if result.failed_attempts:
            assert plural(max(result.failed_attempts - result.error_count, 0), "attempt") + " retried" in failure


def test_replica_state_of_a_standalone_is_none_and_of_a_set_names_its_primary(mongod, replica_set):
    from capmodel.bench.client.telemetry import replica_state

    with mongod.client() as client:
        assert replica_state(client) is None
    with MongoClient(replica_set.uri, serverSelectionTimeoutMS=20_000) as client:
        state = replica_state(client)
        status = client.admin.command("replSetGetStatus")  # the server's own account, read independently
    primary = next(m["name"] for m in status["members"] if m["stateStr"] == "PRIMARY")
    assert state["set"] == status["set"] and state["primary"] == primary and state["term"] == status["term"]
