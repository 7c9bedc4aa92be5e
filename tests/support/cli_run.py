"""``capmodel ARGV`` run in this process: ``capmodel.cli.main`` with its own stdout and stderr, its warning filters and
working folder put back afterwards. For tests about what a command prints and returns, not about the process (exit
codes through a pipe, stdin, signals: those keep a real ``subprocess``). A new interpreter costs about a second of
imports per call; this costs none after the first."""
from __future__ import annotations

import contextlib
import io
import os
import subprocess
import warnings


def run(*argv, cwd=None) -> subprocess.CompletedProcess:
    """Like ``subprocess.run([capmodel, *argv], capture_output=True, text=True, cwd=cwd)``: returncode, stdout and
    stderr of ``main([*argv])``."""
    from capmodel.cli import main

    argv = [str(a) for a in argv]
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        with warnings.catch_warnings(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:   # argparse's --help and --version
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        os.chdir(here)
    return subprocess.CompletedProcess(["capmodel", *argv], code, out.getvalue(), err.getvalue())
