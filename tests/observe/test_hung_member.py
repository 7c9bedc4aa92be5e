"""``capmodel observe --uri`` on a real replica set whose secondary is SIGSTOPped mid-run (a hung host, a partition)
and resumed after it: the healthy members keep their interval (1 s, not stretched by waiting for the hung one), the
run lasts about its duration, and the member that stopped answering is named. Also an unreachable URI with --json:
one JSON error, without the password."""
from __future__ import annotations

import json
import os
import signal
import threading
import time

from capmodel.cli import main


def test_a_member_that_hangs_mid_run_leaves_the_others_on_their_interval(replica_set, tmp_path, capsys):
    from pymongo import MongoClient

    client = replica_set.client()
    try:
        hello = client.admin.command("hello")
    finally:
        client.close()
    stopped = sorted(h for h in hello["hosts"] if h != hello["primary"])[0]      # a secondary: no election
    pid = replica_set.pids[[f"127.0.0.1:{p}" for p in replica_set.ports].index(stopped)]
    out = tmp_path / "rs"
    samples = out / "members" / stopped.replace(":", "_") / "samples.csv"

    def stop_after_three_intervals():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if samples.is_file() and len(samples.read_text().splitlines()) >= 4:     # a header and 3 intervals
                os.kill(pid, signal.SIGSTOP)
                return
            time.sleep(0.05)

    watcher = threading.Thread(target=stop_after_three_intervals)
    watcher.start()
    try:
        code = main(["observe", "--uri", replica_set.uri, "--interval", "1", "--duration", "8", "--out", str(out),
                     "--json"])
    finally:
        watcher.join()
        os.kill(pid, signal.SIGCONT)
        MongoClient(stopped, directConnection=True, serverSelectionTimeoutMS=30_000).close()
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    members = {m["host"]: m for m in result["members"]}
    assert 3 <= members[stopped]["intervals"] < 8            # its intervals up to the stop are kept
    assert any(note.startswith(f"member {stopped} stopped answering after ") for note in result["notes"])
    import pandas as pd

    for host in members:
        if host != stopped:
            table = pd.read_csv(out / "members" / host.replace(":", "_") / "samples.csv")
            assert len(table) == 8
            assert table["interval_s"].max() < 2.5, (host, table["interval_s"].tolist())   # before: 5 to 10 s


def test_an_unreachable_uri_with_json_is_a_json_error_without_the_password(tmp_path, capsys):
    # before: --ftdc --json gave {"error": ...} on stdout, --uri --json a stderr line and an empty stdout
    uri = "mongodb://alice:s3cretPW@127.0.0.1:1/?directConnection=true"      # port 1: refused at once
    code = main(["observe", "--uri", uri, "--duration", "2", "--out", str(tmp_path / "o"), "--json"])
    out, err = capsys.readouterr()
    assert code == 2
    error = json.loads(out)["error"]
    assert error.startswith("cannot reach mongodb://alice:***@127.0.0.1:1/") and "Connection refused" in error
    assert "s3cretPW" not in out + err
