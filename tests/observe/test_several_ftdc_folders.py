"""``capmodel observe --ftdc`` with several member folders: ``--ftdc A --ftdc B`` reads both, folders of two replica
sets are not said to limit one set, a member whose folder holds only ``metrics.interim`` is read as a member, and a
full disk ends the run with one line and no half-written table. The FTDC is written by the project's synthetic
generator, whose true CPU per operation is known; each member's row must be that member's."""
from __future__ import annotations

import datetime as dt
import json
import shutil

import pytest

from capmodel.cli import main
from capmodel.observe import synthetic

START = dt.datetime(2026, 11, 2, tzinfo=dt.timezone.utc)


def _server(host, replica_set, demand, seed):
    return synthetic.SyntheticServer(host=host, replica_set=replica_set, cores=4, cpu_ms_per_op=demand,
                                     mean_rate=2000.0, hours=1.0, start=START, seed=seed, filler_metrics=10,
                                     pid=700 + seed)


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    parent = tmp_path_factory.mktemp("h3obs")
    servers = {"a": _server("a1:27017", "rsA", 0.2, 1), "b": _server("a2:27017", "rsA", 0.5, 2),
               "c": _server("c1:27017", "rsC", 0.3, 3)}
    return {key: synthetic.write_server(s, parent / key / "diagnostic.data") for key, s in servers.items()}


def _observe(capsys, *argv):
    status = main(["observe", *map(str, argv)])
    out, err = capsys.readouterr()
    return status, out, err


def _demands(out) -> dict:
    return {m["host"]: m for m in json.loads(out)["members"]}


def test_ftdc_given_twice_reads_both_members_not_only_the_last(folders, tmp_path, capsys):
    # before: argparse kept the last --ftdc only: one member observed, the other silently dropped
    status, out, err = _observe(capsys, "--ftdc", folders["a"], "--ftdc", folders["b"], "--out", tmp_path / "o1",
                                "--json")
    assert status == 0, err
    repeated = json.loads(out)
    status, out, err = _observe(capsys, "--ftdc", folders["a"], folders["b"], "--out", tmp_path / "o2", "--json")
    assert status == 0, err
    listed = json.loads(out)
    hosts = sorted(m["host"] for m in repeated["members"])
    assert hosts == ["a1:27017", "a2:27017"] == sorted(m["host"] for m in listed["members"])
    assert repeated["answer"] == listed["answer"]


def test_members_of_two_replica_sets_are_not_said_to_limit_one_set(folders, tmp_path, capsys):
    status, out, err = _observe(capsys, "--ftdc", folders["a"], folders["c"], "--out", tmp_path / "o", "--json")
    assert status == 0, err
    result = json.loads(out)
    assert result["replica_set"] is None and result["notes"] == ["the folders belong to 2 replica sets (rsA, rsC)"]
    # c1 runs the same load at 0.3 ms of CPU per operation against a1's 0.2: the closer to its capacity
    assert result["limiting_member"] == "c1:27017"


def test_one_set_still_names_the_member_that_limits_it(folders, tmp_path, capsys):
    status, out, err = _observe(capsys, "--ftdc", folders["a"], folders["b"], "--out", tmp_path / "o", "--json")
    assert status == 0, err
    result = json.loads(out)
    assert result["replica_set"] == "rsA" and result["notes"] == []
    # a2 runs the same load at 0.5 ms of CPU per operation against a1's 0.2: it limits the set
    assert result["limiting_member"] == "a2:27017"


def test_a_member_with_only_metrics_interim_is_read_as_a_member(folders, tmp_path, capsys):
    interim = tmp_path / "interim" / "diagnostic.data"
    interim.mkdir(parents=True)
    first = sorted(folders["b"].iterdir())[0]
    shutil.copy(first, interim / "metrics.interim")
    status, out, err = _observe(capsys, "--ftdc", folders["a"], interim, "--out", tmp_path / "o", "--json")
    assert status == 0, err
    assert sorted(m["host"] for m in json.loads(out)["members"]) == ["a1:27017", "a2:27017"]


@pytest.fixture
def full_disk(tmp_path):
    """A 64 KiB tmpfs (root only; skipped where it cannot be mounted), unmounted after."""
    import subprocess

    mount = tmp_path / "small"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True)
    if made.returncode:
        pytest.skip("cannot mount a small tmpfs here (not root)")
    yield mount
    subprocess.run(["umount", str(mount)], check=True)


def test_a_full_disk_ends_observe_with_one_line_and_leaves_no_half_written_table(folders, full_disk, capsys):
    status, out, err = _observe(capsys, "--ftdc", folders["a"], "--out", full_disk / "o")
    assert status == 2
    assert err.count("\n") == 1 and "No space left on device" in err and "Traceback" not in err
    # before: a 60 KB .samples.csv.<pid>.partial stayed, filling what little was left
    assert sorted(p.name for p in (full_disk / "o").iterdir()) == [".capmodel.lock"]
