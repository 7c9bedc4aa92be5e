"""The runner and binding against the real embedded mongod (session fixture ``mongod``; never a mock)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from capmodel.bench.client import telemetry
from capmodel.bench.client.measurements import decode_histogram
from capmodel.bench.client.operations import KeySpace, create_indexes, load_records
from capmodel.bench.client.runner import Runner
from capmodel.bench.workload.definition import load_workload, parse_workload

DB = "capmodel_test_runner"
_names = itertools.count()


@pytest.fixture(scope="module")
def client(mongod):
    c = mongod.client(maxPoolSize=1100, timeoutMS=20_000)
    yield c
    c.drop_database(DB)
    c.close()


def loaded(client, name, records=None, **overrides):
    """A fresh collection holding the workload's records; returns (collection, workload, keyspace)."""
    w = load_workload(name, records=records, collection=f"{name.replace('-', '_')}_{next(_names)}", **overrides)
    coll = client[DB][w.collection]
    create_indexes(coll, w)
    load_records(coll, w, 0, w.records)
    return coll, w, (KeySpace(w, w.records) if w.has_keys else None)


def test_closed_loop_measures_each_operation_type(client):
    coll, w, keys = loaded(client, "ycsb-a", records=500)
    before = telemetry.server_snapshot(client)
    result = Runner(coll, w, keys, seed=1).run(4, duration=1.0, warmup=0.3)
    after = telemetry.server_snapshot(client)
    reads, updates = result.latency["read"]["count"], result.latency["update"]["count"]
    assert result.operations == reads + updates > 100 and result.errors == {}
    # the 50/50 mix of YCSB A: a binomial test on the measured operation counts
    assert stats.binomtest(reads, reads + updates, 0.5).pvalue > 1e-3
    # the server saw at least the operations the runner claims (it also saw the warm-up)
    assert after["opcounters.query"] - before["opcounters.query"] >= reads
    assert after["opcounters.update"] - before["opcounters.update"] >= updates
    for op in ("read", "update", "all"):
        s = result.latency[op]
        assert 0 < s["p50_ms"] <= s["p95_ms"] <= s["p99_ms"] <= s["p999_ms"] <= s["max_ms"]
    # the encoded HdrHistogram round-trips with the same count
    assert decode_histogram(result.histograms["read"]).get_total_count() == reads
    assert result.throughput == pytest.approx(result.operations / result.seconds)
    # the operations still in flight when the window closed (at most one per worker) are counted apart
    assert 0 <= result.late_operations <= result.in_flight_at_end <= 4


def test_operation_count_mode_measures_exactly_that_many(client):
    coll, w, keys = loaded(client, "ycsb-c", records=200)
    result = Runner(coll, w, keys, seed=2).run(8, duration=None, warmup=0.2, operations=700)
    assert result.operations + result.error_count == 700


def test_inserts_use_ycsb_hashed_keys_and_grow_the_key_space(client):
    coll, w, keys = loaded(client, "ycsb-d", records=300)
    result = Runner(coll, w, keys, seed=3).run(2, duration=1.0, warmup=0.2)
    inserted = coll.count_documents({}) - 300
    assert inserted >= result.latency["insert"]["count"] > 0
    assert keys.count == 300 + inserted
    # record number 300 (the first insert) is stored under the key YCSB 0.17.0 gives it (CoreWorkload.buildKeyName)
    assert coll.find_one({"_id": "user9221199768492291250"}) is not None
    assert result.errors == {}


def test_scans_and_read_modify_writes_run_without_errors(client):
    for name in ("ycsb-e", "ycsb-f"):
        coll, w, keys = loaded(client, name, records=300)
        result = Runner(coll, w, keys, seed=4).run(2, duration=0.6, warmup=0.1)
        assert result.errors == {} and all(result.latency[o.name]["count"] > 0 for o in w.operations)


def test_custom_workload_runs_every_operation_kind(client):
    coll, w, keys = loaded(client, "orders-mix", records=1000)
    result = Runner(coll, w, keys, seed=5).run(4, duration=1.5, warmup=0.2)
    assert result.errors == {}
    assert {op.name for op in w.operations} == set(result.latency) - {"all"}
    assert all(result.latency[op.name]["count"] > 0 for op in w.operations)
    assert "idx_customerId_createdAt" in coll.index_information()


def test_insert_benchmark_counts_documents(client):
    coll, w, keys = loaded(client, "docdb-insert")
    w.operations[0].params["batch"] = 50  # a small batch keeps the test light; the file's batch is 1000
    result = Runner(coll, w, keys, seed=6).run(2, duration=0.8, warmup=0.2)
    assert result.documents == 50 * result.operations > 0
    assert result.throughput == pytest.approx(result.documents / result.seconds)
    assert coll.count_documents({}) >= result.documents
    names = set(coll.index_information())
    assert {"idx_customerId_orderDate", "idx_customerId_productId", "idx_productId_orderDate"} <= names
    doc = coll.find_one()
    assert len(doc["textField"]) == 1024 and 0 <= doc["customerId"] <= 10000


def _sleepy(collection):
    """One document that takes 20 ms to match ($where with sleep): a server of known, slow service time (server-side
    JavaScript, so allowed explicitly)."""
    return parse_workload({"name": "slow", "collection": collection, "operations": [
        {"op": "find", "filter": {"$where": "sleep(20) || true"}, "limit": 1}]}, "test", allow_server_js=True)


def test_open_loop_measures_from_the_intended_start(client):
    coll, _, _ = loaded(client, "ycsb-c", records=10)
    slow = _sleepy(coll.name)
    closed = Runner(coll, slow, None, seed=7).run(1, duration=0.6, warmup=0.1)
    # offered 100/s to one worker that can serve ~1/0.02 = 50/s at best: the queue grows and the latency measured
    # from the intended start grows with it; a closed loop (or coordinated omission) would report ~20 ms
    opened = Runner(coll, slow, None, seed=7, join_timeout=30).run(1, duration=0.6, warmup=0.0, rate=100)
    assert closed.latency["all"]["p50_ms"] >= 20
    assert opened.operations + opened.error_count == 60  # every operation due in the 0.6 s window: 100/s * 0.6 s
    assert opened.latency["all"]["p99_ms"] > 5 * closed.latency["all"]["p50_ms"]


def test_open_loop_at_a_sustainable_rate_serves_the_schedule(client):
    coll, w, keys = loaded(client, "ycsb-c", records=100)
    result = Runner(coll, w, keys, seed=8).run(4, duration=1.0, warmup=0.2, rate=150)
    assert result.operations == 150 and result.errors == {}


def test_1024_concurrent_clients(client):
    coll, w, keys = loaded(client, "ycsb-c", records=200)
    result = Runner(coll, w, keys, seed=9).run(1024, duration=1.5, warmup=1.5)
    assert result.runner_failures == 0 and result.stuck_workers == 0
    assert result.operations > 0 and result.errors == {}
    assert result.concurrency == 1024


def test_pool_smaller_than_concurrency_is_refused(mongod):
    from capmodel.errors import BenchError

    small = mongod.client(maxPoolSize=4)
    try:
        w = load_workload("ycsb-c")
        with pytest.raises(BenchError, match="maxPoolSize 4 is below the concurrency 8"):
            Runner(small[DB]["x"], w, KeySpace(w, 10)).run(8, duration=0.1)
    finally:
        small.close()


def test_the_fast_mean_equals_hdrhistograms_own():
    # summarize's mean walks only the recorded buckets; HdrHistogram's get_mean_value walks them all (slowly): the two
    # must agree to the last bit, also on a histogram decoded from a client process's record
    from capmodel.bench.client.measurements import _record_all, decode_histogram, mean_value, new_histogram

    rng = np.random.default_rng(5)
    for _ in range(10):
        histogram = new_histogram()
        _record_all(histogram, rng.lognormal(rng.uniform(2, 9), rng.uniform(0.1, 3), rng.integers(1, 20_000)))
        assert mean_value(histogram) == histogram.get_mean_value()
        assert mean_value(decode_histogram(histogram.encode().decode())) == histogram.get_mean_value()
