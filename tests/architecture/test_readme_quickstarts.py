"""The README's quickstarts run as written, on the bundled data (issue 29, point 6): every fenced block of a
"Quickstart" section, in a fresh folder that holds the checkout's ``data/`` and ``tests/fixtures/`` (what a user who
cloned the repository has) and nothing else. Python blocks are executed one after the other in one namespace; every
``capmodel`` command of a shell block runs through a ``capmodel`` on the PATH, in order (``/tmp/`` becomes the test's
folder; ``source`` and ``jupyter lab`` lines, which need a terminal or a person, are the only ones left out) and must
exit 0. The shell blocks start an embedded mongod and render reports, so they carry the ``mongod`` and ``notebooks``
marks."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LEFT_OUT = ("source ", "jupyter lab")      # a shell's activation, an interactive server


def quickstart_blocks() -> list[tuple[str, str, str]]:
    """(section, language, code) of every fenced block under a heading that starts with "Quickstart"."""
    text = (ROOT / "README.md").read_text()
    blocks = []
    for section in re.split(r"^## ", text, flags=re.M)[1:]:
        title = section.splitlines()[0].strip()
        if title.startswith("Quickstart"):
            blocks += [(title, lang, code) for lang, code in re.findall(r"^```(\w+)\n(.*?)^```", section,
                                                                        flags=re.M | re.S)]
    return blocks


def commands(code: str, folder: Path) -> list[str]:
    """The shell block's capmodel command lines, comments dropped and ``/tmp/`` moved into ``folder``."""
    out = []
    for line in code.splitlines():
        command = line.split("  #")[0].split(" # ")[0].strip()
        if not command or command.startswith(LEFT_OUT):
            continue
        assert all(part.strip().startswith("capmodel ") for part in command.split("&&")), command
        out.append(command.replace("/tmp/", f"{folder}/"))
    return out


@pytest.fixture
def checkout_copy(tmp_path, monkeypatch):
    """A folder holding the bundled data as a clone has it; the working directory while the blocks run."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "data").symlink_to(ROOT / "data")
    (tmp_path / "tests" / "fixtures").symlink_to(ROOT / "tests" / "fixtures")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_readme_has_python_and_shell_quickstarts():
    languages = {(section, lang) for section, lang, _ in quickstart_blocks()}
    assert {("Quickstart: Python", "python"), ("Quickstart: command line", "bash"),
            ("Quickstart: notebooks", "bash")} <= languages


def test_the_python_quickstart_runs(checkout_copy, capsys):
    namespace: dict = {}
    for _, lang, code in quickstart_blocks():
        if lang == "python":
            exec(compile(code, "README.md", "exec"), namespace)   # one namespace: later blocks use earlier names
    printed = capsys.readouterr().out
    fit, comparison = namespace["fit"], namespace["comparison"]
    assert round(fit.peak_throughput) == 13564                  # the figure the README's comment states
    # print(comparison) prints the ranking table, not <ModelComparison ...>
    assert str(comparison) == comparison.summary() and comparison.summary() in printed
    header = next(line for line in printed.splitlines() if line.split()[:1] == ["model"])
    assert "<ModelComparison" not in printed and header.split()[:5] == ["model", "n_params", "aic", "aicc", "bic"]
    # the plan on a curve without cpu_util says what its 80% is of
    assert "Planned with throughput at most 80% of the fitted peak" in printed
    assert len(namespace["mine"]) == 3                           # the YCSB folder: one run per thread count


@pytest.mark.mongod
@pytest.mark.notebooks
def test_the_shell_quickstarts_run(checkout_copy):
    shim = checkout_copy / "bin"
    shim.mkdir()
    (shim / "capmodel").write_text(f"#!/bin/sh\nexec {sys.executable} -m capmodel.cli \"$@\"\n")
    (shim / "capmodel").chmod(0o755)
    env = {**os.environ, "PATH": f"{shim}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(ROOT),
           "CAPMODEL_STATE_DIR": str(checkout_copy / "state")}
    ran = []
    try:
        for _, lang, code in quickstart_blocks():
            if lang != "bash":
                continue
            for command in commands(code, checkout_copy):
                done = subprocess.run(["bash", "-c", command], cwd=checkout_copy, env=env, capture_output=True,
                                      text=True, timeout=600)
                assert done.returncode == 0, (command, done.stderr[-2000:])
                ran.append(command)
    finally:
        subprocess.run(["bash", "-c", "capmodel server stop"], cwd=checkout_copy, env=env, capture_output=True,
                       timeout=120)
    assert any(c.startswith("capmodel bench ") for c in ran) and any(c.startswith("capmodel report 03") for c in ran)
    assert (checkout_copy / "obs" / "curve.csv").is_file() and (checkout_copy / "run" / "curve.csv").is_file()
    assert (checkout_copy / "reports" / "02_fit_curve.html").is_file()
    assert (checkout_copy / "reports" / "03_vm_capacity_plan.html").is_file()
