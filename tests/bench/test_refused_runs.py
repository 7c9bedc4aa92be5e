"""A bench refused before its first step leaves --out as it found it: an unknown workload creates no folder (nor its
parents), an unreachable server leaves no new folder, an existing folder keeps its own files and gets no lock file,
a lock file already there stays; a failed step once recorded is kept."""
from __future__ import annotations

import os

from capmodel.cli import main

#: nothing listens on port 1; the short timeout keeps the refusal under a second
DEAD = "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=200&connectTimeoutMS=200"


def _bench(out, *more) -> int:
    return main(["bench", "--uri", DEAD, "--out", str(out), "--concurrency", "1", "--duration", "1", *more])


def test_an_unknown_workload_creates_no_folder_nor_its_parents(tmp_path, capsys):
    out = tmp_path / "new" / "deeper" / "run"
    assert _bench(out, "--workload", "nope") == 2
    err = capsys.readouterr().err
    assert "unknown workload 'nope'" in err and len(err.strip().splitlines()) == 1
    assert os.listdir(tmp_path) == []          # neither run/ nor deeper/ nor new/ stays behind


def test_an_unreachable_server_leaves_no_new_folder(tmp_path, capsys):
    out = tmp_path / "run"
    assert _bench(out) == 2
    assert "cannot reach" in capsys.readouterr().err
    assert not out.exists()


def test_an_existing_folder_keeps_its_own_files_and_gets_no_lock(tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    assert _bench(out, "--workload", "nope") == 2
    capsys.readouterr()
    assert sorted(os.listdir(out)) == ["notes.txt"] and (out / "notes.txt").read_text() == "mine"


def test_a_lock_file_already_there_stays(tmp_path, capsys):
    # a previous run's lock file (empty once released) was the folder's before this run: it is not removed
    out = tmp_path / "run"
    out.mkdir()
    (out / ".capmodel.lock").write_text("")
    assert _bench(out) == 2
    capsys.readouterr()
    assert sorted(os.listdir(out)) == [".capmodel.lock"]


def test_a_recorded_failed_step_is_kept(tmp_path):
    # the removal is only for a run that recorded nothing: a failed step's record is evidence and stays
    from capmodel.output_folder import LOCK_FILE, FolderBefore

    out = tmp_path / "a" / "run"
    before = FolderBefore(out)
    out.mkdir(parents=True)
    (out / LOCK_FILE).write_text("")
    (out / "steps.jsonl").write_text('{"status": "failed"}\n')
    before.undo([LOCK_FILE])            # steps.jsonl is not among the names: it stays, and so do the folders
    assert os.listdir(out) == ["steps.jsonl"]
    before.undo(["steps.jsonl"])
    assert os.listdir(tmp_path) == []
