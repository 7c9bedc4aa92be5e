"""An output folder is owned by one run, nothing is written through a symlink, a file capmodel did not write is
never replaced, and the records carry a format version that ``--resume`` checks: two benches writing to one
``--out`` cannot both run; a ``steps.jsonl`` or ``curve.csv`` that is a symlink is refused, its target untouched; a
foreign ``curve.csv`` or ``run.json`` is refused, not replaced. Real sweeps against the embedded mongod, real
``flock`` between real processes.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from capmodel.bench.sweep.config import BenchConfig
from capmodel.bench.sweep.files import RUN_FORMAT, RUN_FORMAT_VERSION, read_steps
from capmodel.bench.sweep.sweep import run_sweep
from capmodel.cli import main
from capmodel.output_folder import LOCK_FILE, FolderLock, OutputFolderError, check_format
from tests.support.bench_folders import copy_files

FAST = dict(duration=0.3, warmup=0.1, records=100, calibrate=False, database="capmodel_test_outfolder")
CFG = BenchConfig(workload="ycsb-c", concurrency=[1, 2], **FAST)
HOLD = "import sys, time; from capmodel.output_folder import FolderLock\n" \
       "with FolderLock(sys.argv[1]):\n    print('held', flush=True); time.sleep(600)\n"


@pytest.fixture(scope="module")
def finished(mongod, tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep")
    run_sweep(mongod.uri, CFG, out, progress=False)
    return out


def _holder(out):
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(out)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_records_carry_their_format_version(finished):
    run = json.loads((finished / "run.json").read_text())
    assert run["format"] == RUN_FORMAT and run["format_version"] == RUN_FORMAT_VERSION == 2
    lines = (finished / "steps.jsonl").read_text().splitlines()
    assert len(lines) == 2 and all(json.loads(line)["format_version"] == RUN_FORMAT_VERSION for line in lines)


def test_a_second_run_is_refused_naming_the_first_ones_pid(mongod, tmp_path, capsys):
    out = tmp_path / "busy"
    out.mkdir()
    holder = _holder(out)
    try:
        code = main(["bench", "--uri", mongod.uri, "--workload", "ycsb-c", "--records", "100", "--concurrency", "1",
                     "--duration", "0.3", "--warmup", "0.1", "--out", str(out), "--quiet"])
    finally:
        holder.kill()
        holder.wait()
    err = capsys.readouterr().err
    assert code == 2 and f"in use by another capmodel run (PID {holder.pid})" in err
    assert len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in out.iterdir()) == [LOCK_FILE]  # nothing else was written


def test_two_concurrent_sweeps_in_one_process_do_not_mix(mongod, tmp_path):
    out = tmp_path / "twice"
    first = {}
    slow = BenchConfig(workload="ycsb-c", concurrency=[1, 2], **{**FAST, "duration": 1.5})
    thread = threading.Thread(target=lambda: first.setdefault("result", run_sweep(mongod.uri, slow, out,
                                                                                   progress=False)))
    thread.start()
    try:
        deadline = time.monotonic() + 60
        while not (out / "run.json").exists():
            assert time.monotonic() < deadline
            time.sleep(0.05)
        with pytest.raises(OutputFolderError, match=f"PID {os.getpid()}"):
            run_sweep(mongod.uri, CFG, out, progress=False)
    finally:
        thread.join(120)
    assert [s["concurrency"] for s in read_steps(out / "steps.jsonl")] == [1, 2]
    assert first["result"].run["status"] == "complete"


def test_a_crashed_runs_lock_does_not_block_the_next(tmp_path):
    holder = _holder(tmp_path)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    assert (tmp_path / LOCK_FILE).read_text().strip() == str(holder.pid)  # the dead holder's file is still there
    with FolderLock(tmp_path):
        assert (tmp_path / LOCK_FILE).read_text().strip() == str(os.getpid())


@pytest.mark.parametrize("content, taken", [(b"", True), (b"4242\n", True), (b"0", False), (b"0\n", False),
                                              (b"4242", False), (b" 4242\n", False), (b"4242\n\n", False),
                                              (b"-1\n", False), (b"pid 4242\n", False)])
def test_a_lock_file_is_taken_only_when_it_holds_what_a_run_writes(tmp_path, content, taken):
    """A lock file left by a run holds that run's PID and a newline (or nothing, after a clean exit) and the next run
    takes it; any other bytes, even digits in another shape, are refused and left as they were."""
    (tmp_path / LOCK_FILE).write_bytes(content)
    if taken:
        with FolderLock(tmp_path):
            assert (tmp_path / LOCK_FILE).read_bytes() == f"{os.getpid()}\n".encode()
    else:
        with pytest.raises(OutputFolderError, match="not written by capmodel"):
            FolderLock(tmp_path).__enter__()
        assert (tmp_path / LOCK_FILE).read_bytes() == content


@pytest.mark.parametrize("name", ["steps.jsonl", "curve.csv", "run.json", LOCK_FILE])
def test_nothing_is_written_through_a_symlink(mongod, tmp_path, name):
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"precious\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / name).symlink_to(victim)
    with pytest.raises(OutputFolderError, match="symlink") as info:
        run_sweep(mongod.uri, CFG, out, progress=False)
    assert str(out / name) in str(info.value)
    assert victim.read_bytes() == b"precious\n" and (out / name).is_symlink()


@pytest.mark.parametrize("name, content", [
    ("curve.csv", b"month,revenue\n1,100\n"),
    ("run.json", b'{"my": "notes"}\n'),
    ("steps.jsonl", b"a diary, not steps\n"),
    ("steps.jsonl", b'{"step": 1}\n{"step": 2}\n'),
])
def test_a_file_capmodel_did_not_write_is_never_replaced(mongod, tmp_path, name, content):
    out = tmp_path / "out"
    out.mkdir()
    (out / name).write_bytes(content)
    with pytest.raises(OutputFolderError, match="not written by capmodel") as info:
        run_sweep(mongod.uri, CFG, out, progress=False)
    assert str(out / name) in str(info.value)
    # refused before a step: the folder as it was found (no lock file left beside the user's file)
    assert (out / name).read_bytes() == content and sorted(p.name for p in out.iterdir()) == [name]


def test_an_edited_curve_is_foreign_but_capmodels_own_folder_resumes(mongod, finished, tmp_path):
    out = copy_files(finished, tmp_path / "edited", "steps.jsonl", "run.json", "curve.csv")
    assert main(["bench", "--uri", mongod.uri, "--out", str(out), "--resume", "--quiet"]) == 0
    (out / "curve.csv").write_text((out / "curve.csv").read_text() + "999,1\n")
    with pytest.raises(OutputFolderError, match="curve.csv was not written by capmodel"):
        run_sweep(mongod.uri, CFG, out, resume=True, progress=False)


@pytest.mark.parametrize("where", ["run.json", "steps.jsonl"])
def test_a_newer_format_is_refused_with_one_line(finished, tmp_path, capsys, where):
    out = copy_files(finished, tmp_path / "newer", "steps.jsonl", "run.json", "curve.csv")
    path = out / where
    if where == "run.json":
        run = json.loads(path.read_text())
        run["format_version"] = RUN_FORMAT_VERSION + 1
        path.write_text(json.dumps(run))
    else:
        lines = path.read_text().splitlines()
        last = json.loads(lines[-1])
        last["format_version"] = RUN_FORMAT_VERSION + 1
        path.write_text("\n".join([*lines[:-1], json.dumps(last)]) + "\n")
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    code = main(["bench", "--uri", "mongodb://127.0.0.1:1", "--out", str(out), "--resume", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"written by a newer capmodel (format {RUN_FORMAT_VERSION + 1}; this one reads formats 1 to " \
           f"{RUN_FORMAT_VERSION})" in err and str(path) in err
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.name != LOCK_FILE} == before


def test_a_folder_written_before_versions_is_format_1_and_resumes(mongod, finished, tmp_path):
    """Today's main writes no version: strip it, and --resume reads the folder and adds the missing step."""
    out = copy_files(finished, tmp_path / "v1", "steps.jsonl", "run.json", "curve.csv")
    run = json.loads((out / "run.json").read_text())
    for key in ("format", "format_version", "curve_sha256"):
        run.pop(key)
    (out / "run.json").write_text(json.dumps(run))
    steps = [json.loads(line) for line in (out / "steps.jsonl").read_text().splitlines()][:1]
    (out / "steps.jsonl").write_text("".join(json.dumps({k: v for k, v in s.items() if k != "format_version"}) + "\n"
                                             for s in steps))
    assert check_format(run, "run.json", RUN_FORMAT_VERSION) == 1
    result = run_sweep(mongod.uri, CFG, out, resume=True, progress=False)
    assert [s["concurrency"] for s in result.steps] == [1, 2]
    assert json.loads((out / "run.json").read_text())["format_version"] == RUN_FORMAT_VERSION
    versions = [json.loads(line).get("format_version", 1) for line in (out / "steps.jsonl").read_text().splitlines()]
    assert versions == [1, RUN_FORMAT_VERSION]


@pytest.mark.parametrize("bad", ["2", 0, -1, True, 1.5, None])
def test_a_malformed_format_version_is_refused(bad):
    with pytest.raises(OutputFolderError, match="not a positive whole number"):
        check_format({"format_version": bad}, "x.json", RUN_FORMAT_VERSION)


def test_an_atomic_write_never_renames_over_something_that_is_not_a_regular_file(tmp_path):
    from capmodel.output_folder import write_atomic

    fifo = tmp_path / "curve.csv"
    os.mkfifo(fifo)
    with pytest.raises(OutputFolderError, match="not a regular file"):
        write_atomic(fifo, "concurrency,throughput\n")
    assert fifo.is_fifo() and sorted(p.name for p in tmp_path.iterdir()) == ["curve.csv"]


def test_a_report_file_that_is_a_symlink_is_refused_its_target_untouched(tmp_path):
    from capmodel.report.writing import write_text

    victim = tmp_path / "victim.html"
    victim.write_text("mine")
    (tmp_path / "index.html").symlink_to(victim)
    with pytest.raises(OutputFolderError, match="index.html is a symlink"):
        write_text(tmp_path / "index.html", "<html></html>")
    assert victim.read_text() == "mine"
