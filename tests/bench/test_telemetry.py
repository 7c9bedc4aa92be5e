"""serverStatus snapshots and CPU meters, checked against work done on a real embedded mongod."""
import math
import time

import psutil
import pytest

from capmodel.bench.client.telemetry import TELEMETRY_COUNTERS, CpuMeter, client_cpu, delta, flatten_server_status, server_snapshot


def test_opcounter_deltas_match_the_operations_performed(mongo_client):
    coll = mongo_client.capmodel_test.telemetry_ops
    coll.drop()
    before = server_snapshot(mongo_client)

    coll.insert_many([{"_id": i, "v": i} for i in range(9)])     # 9 inserts (opcounters count documents)
    coll.insert_one({"_id": 100})                                 # 1 insert
    for i in range(4):                                            # 4 queries
        assert coll.find_one({"_id": i})["v"] == i
    assert len(list(coll.find({"_id": {"$lt": 9}}).batch_size(2))) == 9  # 1 query + getMores for the other 7 docs
    coll.update_many({"v": {"$gte": 5}}, {"$inc": {"v": 1}})      # 1 update statement
    coll.update_one({"_id": 0}, {"$set": {"v": -1}})              # 1 update
    coll.delete_one({"_id": 100})                                 # 1 delete
    coll.delete_many({"v": {"$gt": 7}})                           # 1 delete statement

    after = server_snapshot(mongo_client)
    d = delta(before, after, seconds=2.0)
    getmores = math.ceil((9 - 2) / 2)  # first batch holds 2 docs, each getMore 2 more, the last one fewer
    assert d["opcounters.insert"] == 10
    assert d["opcounters.query"] == 5
    assert d["opcounters.getmore"] == getmores == 4
    assert d["opcounters.update"] == 2
    assert d["opcounters.delete"] == 2
    assert d["opcounters.insert_per_s"] == 10 / 2.0
    # opLatencies counts commands: 4 find_one + 1 find + 4 getMore reads; 6 write commands (insert_many is one)
    assert d["op_latency.reads.ops"] == 4 + 1 + getmores
    assert d["op_latency.writes.ops"] == 6
    assert d["op_latency.writes.mean_ms"] == d["op_latency.writes.latency_us"] / 6 / 1000 > 0
    assert d["opcounters.command"] >= 1  # at least the second serverStatus itself
    assert d["network.bytes_in"] > 0 and d["network.bytes_out"] > 0
    assert d["seconds"] == 2.0
    coll.drop()


def test_snapshot_fields_of_a_6_0_server(mongod, mongo_client):
    snap = server_snapshot(mongo_client)
    assert snap["version"] == mongod.version
    assert snap["cache.max_bytes"] == int(0.25 * 1024**3)  # the --wiredTigerCacheSizeGB 0.25 we started with
    assert 0 <= snap["cache.dirty_bytes"] <= snap["cache.bytes"] <= snap["cache.max_bytes"]
    # 6.0 reports tickets under wiredTiger.concurrentTransactions: 128 read and 128 write by default
    assert snap["tickets.read.total"] == 128 and snap["tickets.write.total"] == 128
    assert snap["tickets.read.out"] + snap["tickets.read.available"] == 128
    assert snap["connections.current"] >= 1 and snap["connections.available"] > 0
    assert snap["uptime_s"] > 0
    assert all(isinstance(snap[name], (int, float)) for name in TELEMETRY_COUNTERS if not name.startswith("opcounters_repl"))


def test_connections_gauge_follows_open_clients(mongod, mongo_client):
    before = server_snapshot(mongo_client)["connections.current"]
    extra = [mongod.client() for _ in range(3)]
    try:
        for c in extra:
            c.admin.command("ping")  # each client opens a monitor connection and a pooled one
        during = server_snapshot(mongo_client)["connections.current"]
    finally:
        for c in extra:
            c.close()
    assert during >= before + 3


def test_flatten_reads_tickets_from_7_0_queues_and_tolerates_missing_sections():
    # 7.0 moved the ticket counters to queues.execution (serverStatus reference, "queues" section)
    status_7 = {
        "version": "7.0.2", "uptimeMillis": 1500, "opcounters": {"insert": 3, "query": 1},
        "queues": {"execution": {"read": {"out": 2, "available": 6, "totalTickets": 8},
                                 "write": {"out": 1, "available": 7, "totalTickets": 8}}},
    }
    snap = flatten_server_status(status_7)
    assert (snap["tickets.read.out"], snap["tickets.read.available"], snap["tickets.read.total"]) == (2, 6, 8)
    assert (snap["tickets.write.out"], snap["tickets.write.available"]) == (1, 7)
    assert snap["uptime_s"] == 1.5 and snap["opcounters.insert"] == 3
    assert snap["cache.bytes"] is None and snap["connections.current"] is None  # missing: None, no error
    later = {**snap, "opcounters.insert": 9, "monotonic": snap["monotonic"] + 3}
    d = delta(snap, later)
    assert d["opcounters.insert"] == 6 and d["opcounters.insert_per_s"] == pytest.approx(2.0)
    assert d["opcounters.update"] is None  # absent on both sides


def test_a_counter_that_went_down_gives_no_rate():
    before = {"opcounters.insert": 100, "monotonic": 0.0}
    after = {"opcounters.insert": 5, "monotonic": 1.0}  # the server restarted in between
    assert delta(before, after)["opcounters.insert_per_s"] is None
    with pytest.raises(ValueError):
        delta(before, after, seconds=0)


def test_cpu_meter_matches_the_process_cpu_time():
    meter = CpuMeter().start()
    t0 = time.process_time()
    x = 0
    while time.process_time() - t0 < 0.3:  # burn about 0.3 s of CPU
        x += 1
    used = time.process_time() - t0
    result = meter.stop()
    assert result["process_seconds"] == pytest.approx(used, abs=0.05)
    assert result["process_cores"] == pytest.approx(result["process_seconds"] / result["seconds"])
    assert result["process"] == pytest.approx(result["process_cores"] / psutil.cpu_count())
    assert 0 < result["process"] <= 1 and 0 < result["system"] <= 1


def test_cpu_meter_on_the_mongod_process(mongod, mongo_client):
    meter = CpuMeter(pids=mongod.pids).start()
    coll = mongo_client.capmodel_test.telemetry_cpu
    coll.insert_many([{"i": i, "pad": "x" * 100} for i in range(20_000)])
    coll.drop()
    result = meter.stop()
    assert result["process_seconds"] > 0  # mongod did the inserting, not us
    assert 0 < result["process"] <= 1


def test_client_cpu_reports_fractions():
    result = client_cpu(interval=0.1)
    assert set(result) == {"seconds", "process_seconds", "process_cores", "process", "system"}
    assert 0 <= result["process"] <= 1 and 0 <= result["system"] <= 1
    assert result["seconds"] >= 0.1


def test_cpu_meter_system_fraction_survives_counters_stepping_back(monkeypatch):
    """An idle 0.1 s may give a busy delta of -4.8e-12 (kernel counters are float sums, and iowait may step
    backwards): the fraction is clamped to [0, 1]; guest time, already inside user, is not counted twice."""
    from collections import namedtuple

    Times = namedtuple("Times", "user nice system idle iowait irq softirq steal guest guest_nice")
    readings = iter(
        [
            Times(100.0, 0, 50.0, 1000.0, 10.0, 0, 0, 0, 5.0, 0),
            Times(100.0, 0, 50.0 - 5e-12, 1000.2, 9.9, 0, 0, 0, 5.0, 0),  # busy -5e-12, iowait back by 0.1
            Times(100.0, 0, 50.0, 1000.0, 10.0, 0, 0, 0, 5.0, 0),
            Times(101.0, 0, 50.0, 1001.0, 10.0, 0, 0, 0, 6.0, 0),  # 1 s busy (incl. 1 s guest), 1 s idle
        ]
    )
    meter = CpuMeter()
    monkeypatch.setattr(meter._psutil, "cpu_times", lambda: next(readings))
    assert meter.start().stop()["system"] == 0.0
    assert meter.start().stop()["system"] == pytest.approx(0.5)  # 1 busy / (1 busy + 1 idle), guest not doubled
