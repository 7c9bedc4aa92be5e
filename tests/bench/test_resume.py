"""``--resume`` checks what it resumes: a folder without ``run.json`` is refused and nothing is mixed into it,
another configuration is refused naming the fields that differ, a corrupt ``run.json`` or a full disk is one line
naming the file, and the same configuration still completes."""
from __future__ import annotations

import json

import pytest

from capmodel.bench.sweep.config import BenchConfig
from capmodel.bench.sweep.files import read_steps
from capmodel.bench.sweep.sweep import run_sweep
from capmodel.cli import main
from capmodel.errors import BenchError
from tests.support.bench_folders import copy_files

FAST = dict(duration=0.3, warmup=0.1, records=100, calibrate=False, database="capmodel_test_resume")


@pytest.fixture(scope="module")
def finished(mongod, tmp_path_factory):
    """A complete ycsb-c sweep (two steps) to resume from."""
    out = tmp_path_factory.mktemp("sweep")
    run_sweep(mongod.uri, BenchConfig(workload="ycsb-c", concurrency=[1, 2], **FAST), out, progress=False)
    return out


def test_resume_without_run_json_is_refused_and_mixes_nothing(mongod, finished, tmp_path):
    out = copy_files(finished, tmp_path / "no-run", "steps.jsonl")
    before = (out / "steps.jsonl").read_bytes()
    cfg = BenchConfig(workload="ycsb-a", concurrency=[1, 2, 4], **FAST)
    with pytest.raises(BenchError, match=r"run\.json does not exist"):
        run_sweep(mongod.uri, cfg, out, resume=True, progress=False)
    assert (out / "steps.jsonl").read_bytes() == before
    assert {s["workload"] for s in read_steps(out / "steps.jsonl")} == {"ycsb-c"}


@pytest.mark.parametrize("change, named", [
    ({"workload": "ycsb-a"}, "workload: 'ycsb-c' before, 'ycsb-a' now"),
    ({"records": 200}, "records: '100' before, '200' now"),
    ({"seed": 7, "warmup": 0.2}, "warmup: '0.1' before, '0.2' now, seed: '0' before, '7' now"),
    ({"rate": 50.0}, "rate: 'None' before, '50.0' now"),
    ({"collection": "other"}, "collection: 'None' before, 'other' now"),
])
def test_resume_with_another_configuration_names_the_fields(mongod, finished, tmp_path, change, named):
    out = copy_files(finished, tmp_path / "changed", "steps.jsonl", "run.json")
    cfg = BenchConfig(**{**BenchConfig(workload="ycsb-c", concurrency=[1, 2], **FAST).to_dict(), **change})
    with pytest.raises(BenchError, match="different configuration") as info:
        run_sweep(mongod.uri, cfg, out, resume=True, progress=False)
    assert named in str(info.value)


@pytest.mark.parametrize("content, message", [
    (b'{"config": {"workload": "ycsb-c"', "run.json is not valid JSON (line 1, column 33)"),
    (b"[1, 2, 3]", "run.json is not a sweep's record"),
    (b"\xff\xfe\x00garbage", "run.json is not text (byte offset 0)"),
    (b"[" * 100_000 + b"]" * 100_000, "run.json is"),
])
def test_a_corrupt_run_json_is_one_line_naming_the_file(finished, tmp_path, capsys, content, message):
    out = copy_files(finished, tmp_path / "corrupt", "steps.jsonl")
    (out / "run.json").write_bytes(content)
    code = main(["bench", "--uri", "mongodb://127.0.0.1:1", "--out", str(out), "--resume", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert str(out / "run.json") in err


def test_resume_of_the_same_configuration_still_completes(mongod, finished, tmp_path):
    out = copy_files(finished, tmp_path / "same", "steps.jsonl", "run.json")
    code = main(["bench", "--uri", mongod.uri, "--out", str(out), "--resume", "--quiet",
                 "--concurrency", "1,2,3"])  # a changed list is refused, the stored one is kept
    assert code == 2
    assert main(["bench", "--uri", mongod.uri, "--out", str(out), "--resume", "--quiet"]) == 0
    assert [s["concurrency"] for s in read_steps(out / "steps.jsonl")] == [1, 2]
    assert json.loads((out / "run.json").read_text())["status"] == "complete"


def test_a_full_disk_is_one_line_naming_the_file(tmp_path):
    """/dev/full answers every write with ENOSPC, as a full disk does."""
    from pathlib import Path

    from capmodel.bench.sweep.files import append_step

    with pytest.raises(BenchError, match=r"^cannot write /dev/full: No space left on device"):
        append_step(Path("/dev/full"), {"step": 1, "concurrency": 1})
