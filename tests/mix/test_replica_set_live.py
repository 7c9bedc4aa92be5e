"""The mix what-if on the embedded replica set under capmodel's own load: every member observed at once, each from its
own telemetry, and the member that saturates first when writes double or reads grow tenfold. Unpinned: the figures
asserted are counts and which member limits, not times, so the test may share the machine with one other module of
the serial part."""
import subprocess
import sys
import threading

import pytest

from capmodel.models.mix.production import mix_what_if
from capmodel.observe.observation import observe_uri

pytestmark = pytest.mark.mongod


def test_every_member_of_the_replica_set_and_the_one_that_saturates_first(replica_set, tmp_path):
    """The three members of the embedded replica set observed at once (direct connections) under capmodel's load,
    reads sent to the secondaries, and each member's figures come from its own telemetry. Which member saturates
    first when writes double is not a fact the test can know: every member applies every write (the secondaries
    replicate them) and the secondaries serve the reads too; one run in three named a secondary, its room 7.36x
    against the primary's 7.55x. When reads grow tenfold, a secondary limits: the primary serves none of the clients'
    reads. Its "reads" (opLatencies) are the secondaries' oplog getMores (a clean-clone CI run: 1,014 a second
    beside 427 writes), which follow the writes: before they were taken out of the reads, two runs of three named the
    primary (138 % of its cores against the secondaries' 122 %). The getMores the primary served are checked against
    an independent count: the oplog collection's own read figures (``$collStats`` latencyStats, MongoDB's Top)."""
    def oplog_reads(port):
        from pymongo import MongoClient

        with MongoClient(f"mongodb://127.0.0.1:{port}/?directConnection=true", serverSelectionTimeoutMS=10_000) as c:
            stats = next(c.local["oplog.rs"].aggregate([{"$collStats": {"latencyStats": {}}}]))
        return {port: stats["latencyStats"]["reads"]}

    stop, samples = threading.Event(), {}

    def watch(port):
        uri = f"mongodb://127.0.0.1:{port}/?directConnection=true"
        samples[f"127.0.0.1:{port}"] = observe_uri(uri, 1.0, 120, should_stop=stop.is_set).samples

    before = {k: v for port in replica_set.ports for k, v in oplog_reads(port).items()}
    watchers = [threading.Thread(target=watch, args=(port,)) for port in replica_set.ports]
    for w in watchers:
        w.start()
    try:   # one bench: it loads the records (writes on the primary), then runs YCSB A, reads on the secondaries
        subprocess.run([sys.executable, "-m", "capmodel.cli", "bench", "--uri", replica_set.uri, "--concurrency", "8",
                        "--quiet", "--warmup", "0.5", "--collection", "mixrs", "--records", "2000",
                        "--read-preference", "secondary", "--workload", "ycsb-a", "--duration", "6", "--rate", "600",
                        "--out", str(tmp_path / "a")], check=True, capture_output=True, timeout=300)
    finally:
        stop.set()
        for w in watchers:
            w.join()
    after = {k: v for port in replica_set.ports for k, v in oplog_reads(port).items()}
    with replica_set.client() as client:
        primary = client.admin.command("hello")["primary"]
    # the assertions read the point predictions (who saturates first), not the intervals: no bootstrap
    result = mix_what_if(samples, cores=2, scale={"reads": 1.3, "writes": 2}, n_bootstrap=0)
    print("\n" + result.describe())
    assert set(result.predicted.index) == set(samples)
    assert result.limiting_member in samples
    assert "writes" in [m for m in result.members if m.member == primary][0].classes
    reads = mix_what_if(samples, cores=2, scale={"reads": 10}, n_bootstrap=0)
    print("\n" + reads.describe())
    served = {m.member: m.classes for m in reads.members}
    assert reads.limiting_member != primary and "reads" in served[reads.limiting_member]
    fits = {m.member: m for m in reads.members}
    for member, table in samples.items():     # the oplog getMores each member served, against the oplog's own count
        port = int(member.rsplit(":", 1)[1])
        top = after[port]["ops"] - before[port]["ops"]
        counted = float((table["oplog_getmores_per_s"] * table["interval_s"]).sum())
        top_latency = (after[port]["latency"] - before[port]["latency"]) / max(top, 1) / 1e6
        print(f"{member}: oplog getMores served {counted:,.0f} (Top's oplog reads {top:,}), their latency "
              f"{fits[member].served_latency.get('reads')} s (Top's {top_latency:.3g} s); served per s "
              f"{fits[member].served}; replication {fits[member].replication_baseline:.1f}/s at "
              f"{fits[member].replication_cpu_per_op * 1e6:.1f} us")
        assert counted == pytest.approx(top, rel=0.05, abs=20)
    # the primary's reads were replication's (the clients read from the secondaries); its commands are the bench's
    # own pings and the members' position reports, which follow the writes
    assert fits[primary].served["reads"] > 10 * fits[primary].baseline.get("reads", 0.0)
    assert fits[primary].served["commands"] > 0

