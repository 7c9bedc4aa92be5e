"""``capmodel observe --uri`` on a real replica set whose members are not all where ``hello`` says: a member down
when the observation begins is a row of ``members`` (so ``describe()`` names no limit past it) and ``--resume`` takes
it back once it is up; a URI naming a hidden member samples that member; a member the set knows by a name that does
not resolve here (split horizon) is reached at the address the URI gave; a member that joins mid-run is named as not
sampled.
"""
from __future__ import annotations

import json
import os
import signal
import time

from capmodel.cli import main
from capmodel.observe.members import reconcile_seeds


def _hello(replica_set) -> dict:
    client = replica_set.client()
    try:
        return client.admin.command("hello")
    finally:
        client.close()


def test_a_member_down_at_the_start_is_a_row_and_resume_takes_it_once_back(replica_set, tmp_path, capsys):
    from pymongo import MongoClient

    hello = _hello(replica_set)
    down = sorted(h for h in hello["hosts"] if h != hello["primary"])[0]        # a secondary: no election
    pid = replica_set.pids[[f"127.0.0.1:{p}" for p in replica_set.ports].index(down)]
    out = tmp_path / "rs"
    os.kill(pid, signal.SIGSTOP)
    try:
        code = main(["observe", "--uri", replica_set.uri, "--interval", "1", "--duration", "2", "--out", str(out),
                     "--json"])
    finally:
        os.kill(pid, signal.SIGCONT)
        MongoClient(down, directConnection=True, serverSelectionTimeoutMS=30_000).admin.command("ping")
    assert code == 0
    first = json.loads(capsys.readouterr().out)
    members = {m["host"]: m for m in first["members"]}
    assert set(members) == set(hello["hosts"])                   # before: the down member was missing
    assert members[down]["intervals"] == 0 and members[down]["error"].startswith("not sampled: cannot reach")
    assert all(members[h]["intervals"] == 2 for h in members if h != down)
    assert first["limiting_member"] is None or "may be a member that could not be ranked" in first["answer"]

    time.sleep(1)
    code = main(["observe", "--uri", replica_set.uri, "--interval", "1", "--duration", "2", "--out", str(out),
                 "--resume", "--json"])
    out_text, err = capsys.readouterr()
    assert code == 0, err                                        # before: refused, "the URI now has ..."
    again = {m["host"]: m for m in json.loads(out_text)["members"]}
    assert again[down]["intervals"] == 2 and not (again[down]["error"] or "").startswith("not sampled")
    assert all(again[h]["intervals"] == 4 for h in again if h != down)


def test_a_uri_naming_a_hidden_member_samples_that_member(replica_set, tmp_path, capsys):
    client = replica_set.client()
    try:
        hello = client.admin.command("hello")
        hidden = sorted(h for h in hello["hosts"] if h != hello["primary"])[0]
        config = client.admin.command("replSetGetConfig")["config"]
        before = json.loads(json.dumps(config, default=str))["members"]
        member = next(m for m in config["members"] if m["host"] == hidden)
        member.update(hidden=True, priority=0)
        config["version"] += 1
        client.admin.command("replSetReconfig", config)
        _wait(lambda: hidden not in client.admin.command("hello")["hosts"])
        try:
            code = main(["observe", "--uri", f"mongodb://{hidden}/", "--interval", "1", "--duration", "2",
                         "--out", str(tmp_path / "h"), "--json"])
        finally:
            config = client.admin.command("replSetGetConfig")["config"]
            restored = next(m for m in config["members"] if m["host"] == hidden)
            original = next(m for m in before if m["host"] == hidden)
            restored.update(hidden=original.get("hidden", False), priority=original.get("priority", 1))
            config["version"] += 1
            client.admin.command("replSetReconfig", config)
            _wait(lambda: hidden in client.admin.command("hello")["hosts"])
    finally:
        client.close()
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    members = {m["host"]: m for m in result["members"]}
    assert hidden in members and members[hidden]["intervals"] == 2      # before: the two others only
    assert len(members) == 3
    assert any(note.startswith(f"member {hidden} is hidden") for note in result["notes"])


def _wait(condition, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the replica set did not take its new configuration"
        time.sleep(0.2)


def test_split_horizon_a_seed_whose_me_is_a_member_reaches_that_member_at_the_seed():
    # hello replies as a set's members give them: the set lists internal names; the URI's seed is the public one
    hosts = ["db0.internal:27017", "db1.internal:27017"]
    replies = {"db1.example.com:27017": {"setName": "rs", "me": "db1.internal:27017", "hosts": hosts},
               "other.example.com:27017": {"setName": "another", "me": "x:1"},
               "lone.example.com:27017": {"ismaster": True}}
    reach, notes = reconcile_seeds("rs", hosts, replies)
    assert reach == {"db0.internal:27017": "db0.internal:27017", "db1.internal:27017": "db1.example.com:27017"}
    assert notes == ["member db1.internal:27017 reached at db1.example.com:27017, the address the URI gives it (the "
                     "set knows it by the other name)"]


def _set_hidden(client, host: str, hidden: bool, priority) -> None:
    config = client.admin.command("replSetGetConfig")["config"]
    member = next(m for m in config["members"] if m["host"] == host)
    member.update(hidden=hidden, priority=priority)
    config["version"] += 1
    client.admin.command("replSetReconfig", config)
    _wait(lambda: (host in client.admin.command("hello")["hosts"]) != hidden)


def test_a_member_that_joins_hellos_list_mid_run_is_named_as_not_sampled(replica_set, tmp_path, capsys):
    import threading

    client = replica_set.client()
    try:
        hello = client.admin.command("hello")
        joining = sorted(h for h in hello["hosts"] if h != hello["primary"])[0]
        priority = next(m for m in client.admin.command("replSetGetConfig")["config"]["members"]
                        if m["host"] == joining).get("priority", 1)
        _set_hidden(client, joining, True, 0)
        others = ",".join(h for h in hello["hosts"] if h != joining)
        samples = tmp_path / "j" / "samples.csv"
        joined = threading.Event()

        def join_after_the_first_interval():
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not (samples.is_file() and samples.read_text().count("\n") >= 2):
                time.sleep(0.05)
            _set_hidden(client, joining, False, priority)
            joined.set()

        watcher = threading.Thread(target=join_after_the_first_interval)
        watcher.start()
        try:
            code = main(["observe", "--uri", f"mongodb://{others}/?replicaSet={hello['setName']}", "--interval", "1",
                         "--duration", "4", "--out", str(tmp_path / "j"), "--json"])
        finally:
            watcher.join()
            if not joined.is_set():
                _set_hidden(client, joining, False, priority)
    finally:
        client.close()
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    assert joining not in {m["host"] for m in result["members"]}
    assert (f"member {joining} joined the set during the observation: not sampled (observe again to include it)"
            in result["notes"])                                   # before: nothing said
