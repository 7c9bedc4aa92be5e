"""A write the system refuses for space (a full disk, a quota, a file size limit) names the file and its folder."""
from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys

import pytest

from capmodel.output_folder import append_line, write_atomic, write_in_place

FIXTURE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "ftdc_idle")


def _limited(limit: int):
    def apply():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # a write past the limit then fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def test_observe_out_past_a_size_limit_names_the_file_and_folder(tmp_path):
    out = tmp_path / "observed"
    result = subprocess.run([sys.executable, "-m", "capmodel.cli", "observe", "--ftdc", FIXTURE, "--out", str(out)],
                            capture_output=True, text=True, preexec_fn=_limited(200), timeout=300)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert "File too large while writing '" in result.stderr and f"{out}{os.sep}" in result.stderr
    assert f"choose another folder than, {out})" in result.stderr


@pytest.mark.parametrize("writer", ["write_atomic", "append_line", "write_in_place"])
def test_every_writer_names_the_file_it_was_asked_for(tmp_path, writer):
    target = tmp_path / "curve.csv"
    code = (f"from pathlib import Path; from capmodel.output_folder import {writer}\n"
            f"try:\n    {writer}(Path({str(target)!r}), 'x' * 5000)\n"
            f"except OSError as exc:\n    print(exc.errno, exc.filename)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, preexec_fn=_limited(100),
                            timeout=60)
    import errno
    assert result.stdout.split() == [str(errno.EFBIG), str(target)], result.stderr
    assert [p.name for p in tmp_path.iterdir()] in ([], ["curve.csv"])   # no temporary file is left behind
