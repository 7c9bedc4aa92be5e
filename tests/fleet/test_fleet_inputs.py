"""``capmodel fleet`` given what a careless user gives it: a folder copied twice, a fleet whose every server is
unreadable (as text and as one JSON document carrying the error), odd ``--growth`` values, and ``--scheduler``
pointed at a peer that never answers, one that answers garbage, and a real ``dask scheduler`` with no workers.

Real processes throughout: the fleet runs on a real Dask LocalCluster, the peers are real sockets on 127.0.0.1 and
the worker-less scheduler is a real ``dask scheduler`` process. Elapsed times are checked loosely (far above the
probe's 10 s bound) only to tell "bounded" from "hangs"."""
from __future__ import annotations

import datetime as dt
import json
import shutil
import struct
import time

import pandas as pd
import pytest

from capmodel.cli import main
from capmodel.observe import synthetic
from capmodel.observe.fleet import FLEET_COLUMNS, Fleet, mark_copies
from tests.support.fake_peers import Peer, dask_scheduler

START = dt.datetime(2026, 11, 2, tzinfo=dt.timezone.utc)


def _server(host, seed):
    return synthetic.SyntheticServer(host=host, replica_set="rsH", cores=4, cpu_ms_per_op=0.3, mean_rate=3000.0,
                                     hours=2.0, start=START, seed=seed, filler_metrics=10, pid=500 + seed)


@pytest.fixture(scope="module")
def one_server(tmp_path_factory):
    parent = tmp_path_factory.mktemp("h3fleet")
    folder = synthetic.write_server(_server("h3-a:27017", 1), parent / "a" / "diagnostic.data")
    return parent, folder


def _run(capsys, *argv):
    status = main(["fleet", *map(str, argv)])
    out, err = capsys.readouterr()
    return status, out, err


def test_a_servers_ftdc_copied_into_two_folders_is_counted_once(one_server, tmp_path, capsys):
    parent, folder = one_server
    fleet = tmp_path / "fleet"
    shutil.copytree(folder, fleet / "first" / "diagnostic.data")
    shutil.copytree(folder, fleet / "second" / "diagnostic.data")
    status, out, err = _run(capsys, fleet, "--json", "--workers", "1")
    assert status == 0, err
    result = json.loads(out)
    assert result["servers"] == 1 and result["copies"] == 1 and result["failed"] == 0
    ranked = [r for r in result["rows"] if r["error"] is None]
    copies = [r for r in result["rows"] if r["duplicate_of"] is not None]
    assert len(ranked) == 1 and len(copies) == 1
    assert copies[0]["duplicate_of"] == ranked[0]["folder"]


def test_two_servers_with_one_host_name_but_different_windows_are_both_kept():
    # not a copy: the same name over two different windows (e.g. last month's archive and this month's)
    row = {c: None for c in FLEET_COLUMNS}
    a = {**row, "cluster": "rs", "member": "h:1", "window_start": "2026-01-01", "window_end": "2026-01-02",
         "folder": "/a"}
    b = {**a, "window_start": "2026-02-01", "window_end": "2026-02-02", "folder": "/b"}
    c = {**a, "folder": "/c"}
    marked = mark_copies(pd.DataFrame([a, b, c], columns=FLEET_COLUMNS))
    assert marked["duplicate_of"].tolist()[:2] == [None, None] and marked["duplicate_of"].iloc[2] == "/a"
    fleet = Fleet(marked.assign(error=[None, None, marked["error"].iloc[2]], verdict="weak"), "test", None)
    assert fleet.copies == 1 and fleet.failed == 0


def test_a_fleet_whose_every_server_is_unreadable_exits_2_after_the_table(one_server, tmp_path, capsys):
    parent, folder = one_server
    broken = tmp_path / "broken" / "diagnostic.data"
    broken.mkdir(parents=True)
    files = sorted(p for p in folder.iterdir() if p.name != "metrics.interim")
    for file in files:  # every archive cut mid-chunk and kept OLDER than a complete copy of the newest: a cut in
        data = file.read_bytes()  # the newest file alone is read up to the cut (tests/observe/test_ftdc_cut_tail.py)
        (broken / file.name).write_bytes(data[: len(data) // 2])
    (broken / "metrics.interim").write_bytes(files[-1].read_bytes())
    status, out, err = _run(capsys, broken.parent, "--workers", "1")
    assert status == 2
    assert "failed:" in out                                       # the table, its row failed, comes first
    assert err.count("\n") == 1 and "none of the 1 server could be read" in err
    # why the row failed: its FTDC is truncated
    status, out, err = _run(capsys, broken.parent, "--workers", "1", "--json")
    assert status == 2
    result = json.loads(out)
    assert (result["servers"], result["failed"]) == (1, 1)
    (row,) = result["rows"]
    assert "truncated" in row["error"]


@pytest.mark.parametrize("growth", ["inf", "-inf", "nan", "-1", "-7"])
def test_growth_that_is_not_a_finite_fraction_above_minus_one_is_refused_before_any_task(one_server, capsys, growth):
    parent, _ = one_server
    started = time.monotonic()
    status, out, err = _run(capsys, parent, f"--growth={growth}")
    assert status == 2 and out == ""
    assert err.startswith("capmodel: error: --growth must be a finite monthly fraction from -0.99 to 10")
    assert time.monotonic() - started < 10  # refused before a Dask cluster starts




@pytest.mark.parametrize("kind, fragment", [
    ("silent", "sent no handshake within 5 s"),
    ("garbage", "is not a Dask scheduler"),
    ("scheme", "is not one capmodel speaks"),
    ("empty", "expected tcp://HOST:PORT"),
])
def test_a_scheduler_that_is_not_one_ends_the_fleet_with_one_line_within_the_bound(one_server, capsys, kind,
                                                                                  fragment):
    parent, _ = one_server
    peer = None
    if kind == "silent":
        peer = Peer(lambda conn: None)
    elif kind == "garbage":
        peer = Peer(lambda conn: conn.sendall(struct.pack("<Q", 3 * 2**60) + b"HTTP/1.1 400 Bad Request\r\n\r\n"))
    address = {"scheme": "http://127.0.0.1:8786", "empty": ""}[kind] if peer is None else peer.address
    started = time.monotonic()
    try:
        status, out, err = _run(capsys, parent, f"--scheduler={address}")
    finally:
        if peer:
            peer.close()
    assert time.monotonic() - started < 30  # before: over 120 s (silent), or 30 s and a traceback (garbage)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and fragment in err and "Traceback" not in err


def test_a_real_scheduler_without_workers_is_named_instead_of_waited_on(one_server, tmp_path, capsys):
    parent, _ = one_server
    with dask_scheduler(tmp_path) as (address, _):
        time.sleep(1.0)
        started = time.monotonic()
        status, out, err = _run(capsys, parent, "--scheduler", address)
        assert time.monotonic() - started < 60  # before: waited without end for a worker
    assert status == 2 and out == ""
    assert f"the Dask scheduler at {address} has no workers" in err and err.count("\n") == 1


def test_one_json_object_with_the_rows_and_the_error(tmp_path, capsys):
    for name, data in (("a", b"junk, not BSON"), ("b", b"")):
        folder = tmp_path / "fleet" / name / "diagnostic.data"
        folder.mkdir(parents=True)
        (folder / "metrics.2026-11-02T00-00-00Z-00000").write_bytes(data)
    assert main(["fleet", str(tmp_path / "fleet"), "--workers", "1", "--json"]) == 2
    out, err = capsys.readouterr()
    result = json.loads(out)                       # the whole of stdout is one document
    assert result["error"] == "none of the 2 servers could be read (each server's row says why)"
    assert result["servers"] == 2 and result["failed"] == 2
    assert err == f"capmodel: error: {result['error']}\n"
