"""``capmodel fleet`` and ``observe --ftdc`` members over servers that were read but say little, and folders whose
names hold control characters: a server whose FTDC was read whole but held one interval is readable with an unusable
verdict (in the fleet as in ``observe``), not counted "unreadable" as a damaged file is (the rows on one line
whatever the folder is called: test_fleet_words.py).
"""
from __future__ import annotations

import datetime as dt
import json

import pytest

from capmodel.cli import main
from capmodel.observe import synthetic

START = dt.datetime(2026, 11, 2, tzinfo=dt.timezone.utc)


def write_odd_fleet(parent):
    """A busy server, one whose FTDC holds one interval, and a damaged folder whose name holds a newline."""
    def server(name, **kw):
        kw = {"hours": 0.25, "start": START, "filler_metrics": 3, "chunks_per_file": 2, **kw}
        synthetic.write_server(synthetic.SyntheticServer(**kw), parent / name / "diagnostic.data")

    server("busy", host="busy:27017", replica_set="rs", seed=1, mean_rate=1500.0)
    server("brief", host="brief:27017", replica_set="rs", seed=2, hours=1 / 3600)     # two samples: one interval
    broken = parent / "bad\nname" / "diagnostic.data"
    broken.mkdir(parents=True)
    (broken / "metrics.2026-11-02T00-00-00Z-00000").write_bytes(b"not FTDC at all" * 8)
    return parent


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    return write_odd_fleet(tmp_path_factory.mktemp("h8fleet"))


def test_a_server_with_one_interval_is_read_and_not_ranked_not_unreadable(fleet, capsys):
    assert main(["fleet", str(fleet), "--workers", "1", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    rows = {r["member"]: r for r in result["rows"] if r["member"]}
    brief = rows["brief:27017"]
    assert brief["error"] is None and brief["verdict"] == "unusable"
    assert brief["reasons"] == ["no_capacity"] and brief["window_start"] == brief["window_end"]   # its one interval
    assert "only 1 busy interval" in brief["evidence"]["reasons"][0]["message"]
    assert result["failed"] == 1                                     # the newline-named folder's garbage only
    assert [r["member"] for r in result["rows"] if r["error"] is None and r["verdict"] == "unusable"] == \
        ["brief:27017"]                                              # read, and not ranked


def test_a_server_four_levels_down_is_found_and_a_symlink_loop_is_searched_once(fleet, tmp_path, capsys):
    import shutil

    parent = tmp_path / "estate"
    shutil.copytree(fleet / "busy", parent / "near")
    shutil.copytree(fleet / "busy", parent / "dc1" / "rack2" / "host3" / "far")     # diagnostic.data 5 levels down
    (parent / "dc1" / "loop").symlink_to(parent / "dc1")
    assert main(["observe", "--ftdc", str(parent), "--out", str(tmp_path / "o"), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    # the far folder is a copy of the near one: found (before: passed by, the parent read as one server), then
    # counted once as a copy
    assert [m["host"] for m in result["members"]] == ["busy:27017"]
    assert any("holds a copy of" in note and "host3/far/diagnostic.data" in note for note in result["notes"])


def test_a_server_with_one_sample_is_not_ranked_not_unreadable(fleet, tmp_path, capsys):
    import shutil

    parent = tmp_path / "two"
    shutil.copytree(fleet / "busy", parent / "busy")
    synthetic.write_server(synthetic.SyntheticServer(host="single:27017", hours=0, start=START, filler_metrics=3,
                                                     seed=9), parent / "single" / "diagnostic.data")
    assert main(["fleet", str(parent), "--workers", "1", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    single = next(r for r in result["rows"] if r["member"] == "single:27017")
    assert single["error"] is None and single["verdict"] == "unusable" and result["failed"] == 0
    assert "1 serverStatus sample in the FTDC data; an interval needs two" in \
        single["evidence"]["reasons"][0]["message"]


def test_an_unreadable_file_fails_its_row_in_the_systems_words(fleet, tmp_path):
    # before: "<folder>: PermissionError: [Errno 13] Permission denied: '<file>'" (Python's repr of the exception).
    # As root, chmod stops nothing: the row is made in a child that drops to user nobody once capmodel is imported
    import os
    import pwd
    import shutil
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    base = Path(tempfile.mkdtemp(prefix="h8locked-"))
    try:
        base.chmod(0o777)
        folder = base / "busy" / "diagnostic.data"
        shutil.copytree(fleet / "busy" / "diagnostic.data", folder)
        for path in [base, *base.rglob("*")]:
            path.chmod(0o777 if path.is_dir() else 0o644)
        locked = sorted(folder.iterdir())[1]                      # an archive after the first (metadata is read)
        locked.chmod(0)
        drop = ""
        if os.geteuid() == 0:
            nobody = pwd.getpwnam("nobody")
            drop = f"os.setgid({nobody.pw_gid}); os.setuid({nobody.pw_uid})"
        warm = fleet / "busy" / "diagnostic.data"
        code = (f"import os, json\nfrom capmodel.observe.fleet import analyse_server\n"
                f"analyse_server({str(warm)!r})\n{drop}\n"
                f"print(json.dumps(analyse_server({str(folder)!r})['error']))")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout.strip().splitlines()[-1]) == f"{locked}: Permission denied"
    finally:
        shutil.rmtree(base, ignore_errors=True)
