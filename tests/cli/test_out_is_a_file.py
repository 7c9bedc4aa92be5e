"""``--out`` naming a file (or a path under a file) is refused with the path and the words "a file, not a folder", by
every command that writes a folder; the file is left as it was."""
from __future__ import annotations

from pathlib import Path

import pytest

from capmodel.bench.sweep.config import BenchConfig
from capmodel.bench.sweep.sweep import run_sweep
from capmodel.errors import BenchError
from tests.support.cli_run import run

FTDC = Path(__file__).resolve().parents[1] / "fixtures" / "ftdc_idle"


def _places(tmp_path):
    blocker = tmp_path / "notes.txt"
    blocker.write_text("mine\n")
    return blocker, [(blocker, blocker), (blocker / "sub" / "out", blocker)]


@pytest.mark.parametrize("under", [False, True], ids=["the-file", "under-the-file"])
@pytest.mark.parametrize("argv", [["observe", "--ftdc", str(FTDC)], ["report", "01_methodology"]],
                         ids=["observe", "report"])
def test_observe_and_report_name_the_file(tmp_path, argv, under):
    blocker, places = _places(tmp_path)
    out, named = places[under]
    done = run(*argv, "--out", out)
    assert done.returncode == 2, done.stderr
    line = done.stderr.strip()
    assert "a file, not a folder" in line and str(named) in line and str(out) in line, line
    assert "Traceback" not in done.stderr and blocker.read_text() == "mine\n"


@pytest.mark.parametrize("under", [False, True], ids=["the-file", "under-the-file"])
def test_bench_names_the_file(mongod, tmp_path, under):
    blocker, places = _places(tmp_path)
    out, named = places[under]
    cfg = BenchConfig(workload="ycsb-c", concurrency=[1], duration=0.2, warmup=0.1, records=50, calibrate=False,
                      database="capmodel_test_outfile")
    with pytest.raises(BenchError, match="a file, not a folder") as info:
        run_sweep(mongod.uri, cfg, out, progress=False)
    assert str(named) in str(info.value)
    assert blocker.read_text() == "mine\n"
