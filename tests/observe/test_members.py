"""Every member of a replica set, live and from FTDC, on the embedded 3-member replica set under a real load whose reads
go to the secondaries, one secondary much busier than the other.

The checks are independent of the sampler: the reads each member served are read from its own ``serverStatus``
(a separate direct connection, before and after), and the reads the load sent to each secondary are counted by the
load's own threads. The busiest secondary must be named as limiting the set.
"""
from __future__ import annotations

import json
import threading
import time

import pytest

from capmodel.cli import main
from capmodel.observe.members import observe_ftdc_members
from capmodel.observe.member_folders import folder_name

DOCS = 500


def _direct(host: str):
    from pymongo import MongoClient

    name, port = host.rsplit(":", 1)
    return MongoClient(name, int(port), directConnection=True, readPreference="secondaryPreferred",
                       serverSelectionTimeoutMS=5000)


def _reads(host: str) -> int:
    client = _direct(host)
    try:
        return int(client.admin.command("serverStatus")["opLatencies"]["reads"]["ops"])
    finally:
        client.close()


def _prepare(server) -> tuple[str, str, str]:
    """Documents on every member; (primary, busy secondary, quiet secondary)."""
    client = server.client()
    try:
        hello = client.admin.command("hello")
        collection = client.get_database("capmodel_members").get_collection(
            "docs", write_concern=__import__("pymongo").WriteConcern(w=3, wtimeout=30_000))
        collection.drop()
        collection.insert_many([{"_id": i, "v": "x" * 100} for i in range(DOCS)])
    finally:
        client.close()
    secondaries = sorted(h for h in hello["hosts"] if h != hello["primary"])
    return hello["primary"], secondaries[0], secondaries[1]


def _load(host: str, threads: int, start: float, stop: float, pause: float, counts: dict) -> list[threading.Thread]:
    """Point reads by _id on one secondary from ``threads`` threads between two monotonic instants; counted."""
    def work():
        client = _direct(host)
        done = 0
        collection = client.get_database("capmodel_members").get_collection("docs")
        try:
            while time.monotonic() < start:
                time.sleep(0.01)
            while time.monotonic() < stop:
                collection.find_one({"_id": done % DOCS})
                done += 1
                if pause:
                    time.sleep(pause)
        finally:
            client.close()
            with lock:
                counts[host] = counts.get(host, 0) + done

    lock = threading.Lock()
    workers = [threading.Thread(target=work) for _ in range(threads)]
    for worker in workers:
        worker.start()
    return workers


def _loaded(hosts: list[str], busy: str, quiet: str, start: float, stop: float, counts: dict):
    return (_load(busy, 3, start, (start + stop) / 2, 0.0, counts) + _load(busy, 1, (start + stop) / 2, stop, 0.0,
            counts) + _load(quiet, 1, start, stop, 0.02, counts))


def test_live_members_are_sampled_and_the_busiest_secondary_limits_the_set(replica_set, tmp_path, capsys):
    primary, busy, quiet = _prepare(replica_set)
    hosts = [primary, busy, quiet]
    before = {h: _reads(h) for h in hosts}
    counts: dict = {}
    now = time.monotonic()
    threads = _loaded(hosts, busy, quiet, now + 1.0, now + 5.0, counts)
    out = tmp_path / "rs"
    code = main(["observe", "--uri", replica_set.uri, "--interval", "0.5", "--duration", "6", "--out", str(out),
                 "--json"])
    for thread in threads:
        thread.join()
    after = {h: _reads(h) for h in hosts}
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    assert sorted(m["host"] for m in result["members"]) == sorted(hosts)
    assert result["replica_set"] == replica_set.replica_set
    import pandas as pd

    combined = pd.read_csv(out / "samples.csv")
    for host in hosts:
        samples = pd.read_csv(out / "members" / folder_name(host) / "samples.csv")
        assert len(samples) == 12                                             # 6 s / 0.5 s
        recorded = float((samples["reads_per_s"] * samples["interval_s"]).sum())
        own = after[host] - before[host]                                     # the member's own counters
        # outside the recorded window only background reads happen (no load there): a few oplog getMores
        assert own - 30 <= recorded <= own + 1, host
        assert (combined["member"] == host).sum() == len(samples)
    for host in (busy, quiet):
        served = float((pd.read_csv(out / "members" / folder_name(host) / "samples.csv").eval(
            "reads_per_s * interval_s")).sum())
        assert counts[host] <= served <= counts[host] + 30, host            # the load's own count
    assert counts[busy] > 3 * counts[quiet]
    assert result["limiting_member"] == busy
    ranked = {m["host"]: m for m in result["members"]}
    assert ranked[busy]["spare_fraction"] == min(m["spare_fraction"] for m in result["members"]
                                                  if m["verdict"] in ("sound", "weak"))
    assert result["answer"].startswith(f"{busy} limits the set")
    assert (out / "members.csv").exists() and len(pd.read_csv(out / "members.csv")) == 3
    state = json.loads((out / "observe.json").read_text())
    assert state["members"] == sorted(hosts) and state["replica_set"] == replica_set.replica_set
    # one member named with directConnection=true: that member only, as a standalone observation
    single = tmp_path / "one"
    assert main(["observe", "--uri", f"mongodb://{quiet}/?directConnection=true", "--interval", "0.25",
                 "--duration", "0.5", "--out", str(single), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["intervals"] == 2
    assert json.loads((single / "observe.json").read_text())["members"] == [quiet]
    assert not (single / "members").exists()


def test_ftdc_members_are_named_by_their_metadata_and_ranked():
    from capmodel.bench.server import embedded_server
    from capmodel.observe import ftdc

    with embedded_server(replica_set=3, diagnostic_data=True) as server:
        primary, busy, quiet = _prepare(server)
        counts: dict = {}
        now = time.monotonic()
        threads = _loaded([primary, busy, quiet], busy, quiet, now + 1.0, now + 9.0, counts)
        for thread in threads:
            thread.join()
        time.sleep(2.5)                                      # two more FTDC samples after the load
        reads_now = {h: _reads(h) for h in (primary, busy, quiet)}
        observed = observe_ftdc_members([server.dbpath])
        assert sorted(m.host for m in observed.members) == sorted([primary, busy, quiet])
        assert observed.replica_set == server.replica_set
        for member in observed.members:
            folder = server.member_dbpaths[server.ports.index(int(member.host.rsplit(":", 1)[1]))]
            raw = ftdc.read_metrics(folder / "diagnostic.data", {"reads": "serverStatus.opLatencies.reads.ops"},
                                    time_metric="serverStatus.localTime")
            samples = member.observation.samples
            recorded = float((samples["reads_per_s"] * samples["interval_s"]).sum())
            assert recorded == pytest.approx(raw["reads"].iloc[-1] - raw["reads"].iloc[0], abs=0.5)
            # the member's own counter, read live after the load: FTDC's last sample differs by background reads only
            assert 0 <= reads_now[member.host] - raw["reads"].iloc[-1] <= 30
        by_host = {m.host: m for m in observed.members}
        busy_reads = float((by_host[busy].observation.samples.eval("reads_per_s * interval_s")).sum())
        assert counts[busy] <= busy_reads <= counts[busy] + 200
        assert observed.limiting is not None and observed.limiting.host == busy
        assert observed.describe().startswith(f"{busy} limits the set")
        # FTDC carries the replication counters as serverStatus does: the getMores and position reports
        # the primary served, the entries the secondaries applied; the primary's capacity counts neither
        first = by_host[primary].observation.samples
        assert first.eval("oplog_getmores_per_s * interval_s").sum() > 0
        assert first.eval("repl_update_position_per_s * interval_s").sum() > 0
        for h in (busy, quiet):
            assert by_host[h].observation.samples.eval("repl_applied_per_s * interval_s").sum() > 0
        assert by_host[primary].capacity.replication_mean > 0


def _lines(path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_killed_observation_keeps_its_intervals_and_resume_adds_to_them(mongod, tmp_path):
    import os
    import signal
    import subprocess
    import sys

    out = tmp_path / "live"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen([sys.executable, "-m", "capmodel.cli", "observe", "--uri", mongod.uri, "--interval",
                             "0.3", "--duration", "120", "--out", str(out)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    try:
        while len(_lines(out / "samples.csv")) < 6 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    kept = _lines(out / "samples.csv")
    assert len(kept) >= 6 and kept[0].startswith("time,interval_s,")
    import pandas as pd

    before = pd.read_csv(out / "samples.csv")
    assert len(before) >= 5 and (before["interval_s"] > 0).all()
    times = pd.to_datetime(before["time"], utc=True, format="ISO8601")          # consecutive: no gap, no overlap
    gaps = (times.diff().dt.total_seconds().iloc[1:] - before["interval_s"].iloc[1:]).abs()
    assert (gaps < 0.01).all()
    assert not (out / "curve.csv").exists()                   # the end never came: only the appended intervals
    # resume: 1.2 s at 0.3 s after a fresh baseline is 4 more intervals, the earlier ones untouched
    assert main(["observe", "--uri", mongod.uri, "--interval", "0.3", "--duration", "1.2", "--out", str(out),
                 "--resume"]) == 0
    after = _lines(out / "samples.csv")
    complete = [line for line in kept if line.count(",") == kept[0].count(",")]
    assert after[:len(complete)] == complete and len(after) == len(complete) + 4
    times = pd.to_datetime(pd.read_csv(out / "samples.csv")["time"], utc=True, format="ISO8601")
    assert times.is_monotonic_increasing
    state = json.loads((out / "observe.json").read_text())
    assert len(state["sessions"]) == 2 and state["sessions"][0]["ended"] is None
    assert state["sessions"][1]["interrupted"] is False
    assert len(pd.read_csv(out / "curve.csv")) <= len(after) - 1


def test_resume_refuses_another_source_and_a_plain_run_refuses_an_observed_folder(mongod, tmp_path, capsys):
    out = tmp_path / "obs"
    assert main(["observe", "--uri", mongod.uri, "--interval", "0.2", "--duration", "0.4", "--out", str(out)]) == 0
    capsys.readouterr()
    other = mongod.uri.replace("127.0.0.1", "localhost")
    assert main(["observe", "--uri", other, "--interval", "0.2", "--duration", "0.4", "--out", str(out),
                 "--resume"]) == 2
    err = capsys.readouterr().err
    assert f"{out} was observed from {mongod.uri}" in err and "localhost" in err
    assert main(["observe", "--uri", mongod.uri, "--interval", "0.2", "--duration", "0.4", "--out", str(out)]) == 2
    assert "already holds observe.json; pass --resume" in capsys.readouterr().err
    assert main(["observe", "--uri", mongod.uri, "--duration", "0.4", "--interval", "0.2", "--out",
                 str(tmp_path / "none"), "--resume"]) == 2
    assert "holds no live observation to continue" in capsys.readouterr().err


def test_an_observe_folder_is_owned_one_run_no_symlink_no_foreign_file(mongod, tmp_path, capsys):
    """observe --uri owns its --out: a second run on a held folder is refused naming the holder's PID; a symlinked
    samples.csv is refused with its target untouched; a curve.csv capmodel did not write is never replaced."""
    import os

    from capmodel.output_folder import FolderLock

    def observe(out, *extra):
        return main(["observe", "--uri", mongod.uri, "--interval", "0.2", "--duration", "0.4", "--out", str(out),
                     *extra])

    held = tmp_path / "held"
    held.mkdir()
    with FolderLock(held):
        assert observe(held) == 2
    assert f"is in use by another capmodel run (PID {os.getpid()})" in capsys.readouterr().err
    assert not (held / "samples.csv").exists()

    linked = tmp_path / "linked"
    linked.mkdir()
    target = tmp_path / "precious.csv"
    target.write_text("someone else's data\n")
    (linked / "samples.csv").symlink_to(target)
    assert observe(linked) == 2
    assert "samples.csv" in capsys.readouterr().err and target.read_text() == "someone else's data\n"

    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "curve.csv").write_text("concurrency,throughput\n1,2\n")
    assert observe(foreign) == 2
    assert "already holds curve.csv" in capsys.readouterr().err
    assert (foreign / "curve.csv").read_text() == "concurrency,throughput\n1,2\n"

    fine = tmp_path / "fine"                      # and the ordinary run still writes its tables, lock released
    assert observe(fine) == 0 and (fine / "samples.csv").is_file() and (fine / "curve.csv").is_file()
    with FolderLock(fine):
        pass
