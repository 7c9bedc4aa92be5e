"""``capmodel observe --ftdc`` with members a careless user gives: one member's folder damaged, empty, without read
permission or that cannot be listed among good ones fails its own row while the others are answered; every member
unreadable prints the rows then exits 2; ``--ftdc DIR/metrics.*`` as a shell expands it reads that member (the help
promises "FTDC metrics.* files"), and part of a folder's files is refused naming it. ``capmodel fleet`` given an FTDC
file instead of a folder calls it a file. The good member is written by the synthetic generator, whose true CPU per
operation is known.
"""
from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import pytest

import capmodel
from capmodel.cli import main
from capmodel.observe import synthetic

START = dt.datetime(2026, 11, 2, tzinfo=dt.timezone.utc)
DEMAND_MS = 0.3


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    parent = tmp_path_factory.mktemp("h5mem")
    good = synthetic.write_server(synthetic.SyntheticServer(
        host="good:27017", replica_set="rsM", cores=4, cpu_ms_per_op=DEMAND_MS, mean_rate=1500.0, hours=0.5,
        start=START, seed=5, filler_metrics=5, chunks_per_file=2), parent / "good" / "diagnostic.data")
    broken = {}
    for kind, data in {"garbage": bytes(range(256)) * 8, "empty": b""}.items():
        folder = parent / kind / "diagnostic.data"
        folder.mkdir(parents=True)
        (folder / "metrics.2026-11-02T00-00-00Z-00000").write_bytes(data)
        broken[kind] = folder
    return good, broken


def _observe(capsys, *argv):
    status = main(["observe", *map(str, argv)])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("kind, said", [("garbage", "not an FTDC file"), ("empty", "empty file (0 bytes)")])
def test_a_damaged_member_fails_its_own_row_and_the_others_are_answered(folders, tmp_path, capsys, kind, said):
    good, broken = folders
    status, out, err = _observe(capsys, "--ftdc", good, broken[kind], "--out", tmp_path / "o", "--json")
    assert status == 0, err
    result = json.loads(out)
    rows = {m["host"]: m for m in result["members"]}
    assert set(rows) == {"good:27017", kind}            # the damaged one named by its folder
    assert said in rows[kind]["error"] and rows[kind]["intervals"] == 0
    assert rows["good:27017"]["error"] is None
    status, out, err = _observe(capsys, "--ftdc", good, "--out", tmp_path / "alone", "--json")
    alone = json.loads(out)["capacity"]
    assert rows["good:27017"]["cpu_ms_per_op"] == alone["service_demand_ms"]["estimate"]   # its own figures
    # the generator's demand plus its background CPU spread over the operations (a lower bound on capacity)
    assert DEMAND_MS <= rows["good:27017"]["cpu_ms_per_op"] <= DEMAND_MS * 1.2
    assert (tmp_path / "o" / "members.csv").is_file()


def test_every_member_unreadable_prints_the_rows_then_exits_2(folders, tmp_path, capsys):
    _, broken = folders
    status, out, err = _observe(capsys, "--ftdc", broken["garbage"], broken["empty"], "--out", tmp_path / "o",
                                "--json")
    assert status == 2
    rows = {m["host"]: m for m in json.loads(out)["members"]}
    assert {host: row["intervals"] for host, row in rows.items()} == {"garbage": 0, "empty": 0}
    assert all(row["error"] and row["capacity"] is None for row in rows.values())     # no capacity, and why
    status, out, err = _observe(capsys, "--ftdc", broken["garbage"], broken["empty"], "--out", tmp_path / "o")
    assert status == 2
    for host, row in rows.items():          # the printed rows say what the JSON rows say
        assert f"  {host}: 0 intervals; no capacity: {row['error']}" in out.splitlines()
    assert err == ("capmodel: error: none of the 2 members' FTDC could be read (each member's row says why); "
                   "nothing was written\n")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a chmod 000 file: no permission error to meet")
def test_an_unreadable_member_fails_its_own_row(folders, tmp_path, capsys):
    good, _ = folders
    locked = tmp_path / "locked" / "diagnostic.data"
    locked.mkdir(parents=True)
    (locked / "metrics.2026-11-02T00-00-00Z-00000").write_bytes(b"x")
    (locked / "metrics.2026-11-02T00-00-00Z-00000").chmod(0)
    status, out, err = _observe(capsys, "--ftdc", good, locked, "--out", tmp_path / "o", "--json")
    assert status == 0, err
    assert "Permission denied" in {m["host"]: m for m in json.loads(out)["members"]}["locked"]["error"]


def test_a_folders_files_as_the_shell_expands_them_read_as_that_folder(folders, tmp_path, capsys):
    good, _ = folders
    files = sorted(good.iterdir())
    assert len(files) > 1
    status, out, err = _observe(capsys, "--ftdc", *files, "--out", tmp_path / "files", "--json")
    assert status == 0, err
    by_files = json.loads(out)
    status, out, err = _observe(capsys, "--ftdc", good, "--out", tmp_path / "folder", "--json")
    assert status == 0, err
    by_folder = json.loads(out)
    assert by_files["intervals"] == by_folder["intervals"] and by_files["capacity"] == by_folder["capacity"]


def test_some_of_a_folders_files_or_a_file_among_folders_is_refused_naming_it(folders, tmp_path, capsys):
    good, broken = folders
    files = sorted(good.iterdir())
    status, out, err = _observe(capsys, "--ftdc", *files[:2], "--out", tmp_path / "o")
    assert status == 2 and out == "" and err.count("\n") == 1
    assert f"--ftdc {files[0]} ...: 2 FTDC files that are not one folder's whole set" in err
    status, out, err = _observe(capsys, "--ftdc", files[0], broken["empty"], "--out", tmp_path / "o")
    assert status == 2 and out == "" and f"--ftdc {files[0]}: a file among folders" in err


def test_the_fleet_calls_a_file_a_file(folders, capsys):
    good, _ = folders
    file = sorted(good.iterdir())[0]
    assert main(["fleet", str(file)]) == 2
    err = capsys.readouterr().err
    assert err == f"capmodel: error: {file}: a file, not a folder (give the server's diagnostic.data, {good})\n"


def test_a_newest_file_cut_mid_document_is_not_said_to_be_a_stopped_mongod_only(folders, tmp_path, capsys):
    # the newest file of a running server's diagnostic.data ends mid-chunk while mongod appends to it: before, the
    # note said "(mongod stopped while writing it)" of a server that was running
    good, _ = folders
    live = tmp_path / "live" / "diagnostic.data"
    live.mkdir(parents=True)
    files = sorted(good.iterdir())
    for file in files[:-1]:
        (live / file.name).write_bytes(file.read_bytes())
    newest = files[-1].read_bytes()
    (live / files[-1].name).write_bytes(newest[: len(newest) * 2 // 3])
    status, out, err = _observe(capsys, "--ftdc", live, "--out", tmp_path / "o", "--json")
    assert status == 0, err
    (note,) = json.loads(out)["notes"]
    assert "ends inside the document at byte offset" in note and "or is writing it still" in note


def test_a_member_folder_that_cannot_be_listed_fails_its_row_instead_of_going_missing(folders, tmp_path):
    # A parent of two members, one of them unlistable: the other is observed and the unlistable one is a row saying
    # why (not passed by in silence, which would read the parent as the one readable server). As root, chmod stops
    # nothing: the check runs in a child that drops to user nobody once capmodel is imported (a warm-up run imports
    # what it uses). The child imports capmodel from a copy in the test's own world-readable folder: the checkout may
    # sit in a folder only its owner can read (a home folder), where nobody could not list capmodel.commands, and
    # the command line finds its commands by listing that package.
    import pwd
    import shutil
    import subprocess
    import sys
    import tempfile

    good, _ = folders
    base = Path(tempfile.mkdtemp(prefix="h5locked-"))
    try:
        base.chmod(0o777)
        parent = base / "parent"
        for name in ("a", "b"):
            shutil.copytree(good, parent / name / "diagnostic.data")
        package = Path(capmodel.__file__).resolve().parent
        shutil.copytree(package, base / "src" / "capmodel", ignore=shutil.ignore_patterns("__pycache__"))
        for path in [base, *base.rglob("*")]:
            path.chmod(0o777 if path.is_dir() else 0o644)
        (parent / "b").chmod(0)
        drop = ""
        if os.geteuid() == 0:
            nobody = pwd.getpwnam("nobody")
            drop = f"os.setgid({nobody.pw_gid}); os.setuid({nobody.pw_uid})"
        code = (f"import os, sys\nsys.path.insert(0, {str(base / 'src')!r})\nimport capmodel\n"
                f"assert capmodel.__file__.startswith({str(base / 'src')!r}), capmodel.__file__\n"
                f"from capmodel.cli import main\n"
                f"main(['observe', '--ftdc', {str(good)!r}, {str(parent / 'a' / 'diagnostic.data')!r}, '--out', "
                f"{str(base / 'warm')!r}])\n"     # two folders (one a copy): the members' code imported
                f"main(['observe', '--ftdc', {str(good)!r}, '--out', {str(base / 'warm1')!r}])\n"
                f"sys.stdout.flush(); print('=' * 8, flush=True)\n{drop}\n"
                f"sys.exit(main(['observe', '--ftdc', {str(parent)!r}, '--out', {str(base / 'o')!r}, '--json']))")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=base,
                              env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout.split("=" * 8 + "\n", 1)[1])
        rows = {m["host"]: m for m in result["members"]}
        assert set(rows) == {"good:27017", "b"}
        assert "Permission denied" in rows["b"]["error"] and rows["b"]["intervals"] == 0
    finally:
        (base / "parent" / "b").chmod(0o755)
        shutil.rmtree(base, ignore_errors=True)
