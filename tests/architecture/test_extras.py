"""The optional extras: a core install fits curves, solves queueing models and plans without importing any extra's
module, and a command or function that needs a missing extra ends with one line naming it (exit 2, no traceback).

A missing package is simulated in a subprocess by a finder first on ``sys.meta_path`` (``BLOCK``) that refuses its
modules, so ``import name`` and ``importlib.util.find_spec`` fail as they do where the package is not installed, and
``name`` stays out of ``sys.modules`` (libraries such as scikit-learn look there for an imported pyarrow)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from capmodel.extras import EXTRAS, MissingExtraError, extra_of, require

ROOT = Path(__file__).resolve().parents[2]
# every module of every extra, and what comes with them (IPython with ipykernel, gridfs with pymongo, dask with
# distributed, the mongod wheel's package, uvloop)
EVERY_EXTRA = sorted({m for modules in EXTRAS.values() for m in modules}
                     | {"IPython", "gridfs", "dask", "fiftyone", "uvloop", "jupyterlab"})

# Put first in a subprocess: the packages named in BLOCKED cannot be imported, as if they were not installed.
BLOCK = """
import sys


class _NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None


BLOCKED = set({blocked!r})
sys.meta_path.insert(0, _NotInstalled())
"""

# Run in a subprocess: block MODULES, run each command line with capmodel.cli.main, print their outcomes as JSON.
RUN_BLOCKED = BLOCK + """
import io, json
from contextlib import redirect_stderr, redirect_stdout
from capmodel.cli import main
out = []
for argv in {commands!r}:
    err = io.StringIO()
    with redirect_stdout(io.StringIO()), redirect_stderr(err):
        status = main(argv)
    out.append([status, err.getvalue()])
print(json.dumps(out))
"""


def run_blocked(blocked, commands, setup=""):
    code = RUN_BLOCKED.format(blocked=list(blocked), commands=[list(c) for c in commands]).replace(
        "from capmodel.cli import main", setup + "from capmodel.cli import main")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def message(what: str, extra: str) -> str:
    return f"capmodel: error: {what} needs the '{extra}' extra: pip install 'capmodel[{extra}]'\n"


@pytest.fixture(scope="module")
def ftdc_folder():
    return str(ROOT / "data" / "ftdc_sample")


def test_each_command_that_needs_an_extra_names_it_in_one_line(tmp_path, ftdc_folder):
    parquet = tmp_path / "curve.parquet"
    parquet.write_bytes(b"PAR1")   # refused for the missing extra before a byte is read
    cases = [  # (command line, what the message names, the extra)
        (["bench", "--out", str(tmp_path / "run")], "capmodel bench", "bench"),
        (["bench", "--uri", "mongodb://127.0.0.1:1", "--out", str(tmp_path / "run")], "capmodel bench", "bench"),
        (["server", "start"], "capmodel server", "bench"),
        (["server", "stop"], "capmodel server", "bench"),
        (["server", "status"], "capmodel server", "bench"),
        (["observe", "--ftdc", ftdc_folder, "--out", str(tmp_path / "obs")], "capmodel observe", "observe"),
        (["observe", "--uri", "mongodb://127.0.0.1:1", "--out", str(tmp_path / "obs")], "capmodel observe",
         "observe"),
        (["fleet", ftdc_folder], "capmodel fleet", "observe"),
        (["report", "02_fit_curve", "--out", str(tmp_path / "reports")], "capmodel report", "notebooks"),
        (["report", "--all", "--out", str(tmp_path / "reports")], "capmodel report", "notebooks"),
        (["fit", str(parquet)], f"{parquet}: reading Parquet", "parquet"),
    ]
    outcomes = run_blocked(EVERY_EXTRA, [argv for argv, _, _ in cases])
    for (argv, what, extra), (status, stderr) in zip(cases, outcomes):
        assert (status, stderr) == (2, message(what, extra)), argv
    assert not list(tmp_path.glob("run*")) and not (tmp_path / "reports").exists()   # refused before any work


def test_the_live_report_names_the_bench_extra_when_the_notebooks_are_there(tmp_path):
    bench_only = sorted(set(EXTRAS["bench"]) - set(EXTRAS["notebooks"])) + ["fiftyone"]
    (status, stderr), = run_blocked(bench_only, [["report", "06_live_benchmark", "--out", str(tmp_path)]])
    assert (status, stderr) == (2, message("capmodel report 06_live_benchmark", "bench"))


def test_a_missing_module_no_require_guards_is_still_named_by_its_extra(ftdc_folder, tmp_path):
    """The command line's last net: a ``ModuleNotFoundError`` for an extra's module becomes the same one line."""
    setup = "import capmodel.extras\ncapmodel.extras.require = lambda extra, what: None\n"
    (status, stderr), = run_blocked(["bson", "pymongo"], [["observe", "--ftdc", ftdc_folder, "--out",
                                                           str(tmp_path)]], setup=setup)
    assert (status, stderr) == (2, message("capmodel observe", "observe"))


def test_the_python_functions_that_need_an_extra_name_it():
    code = BLOCK.format(blocked=EVERY_EXTRA) + """
from capmodel.extras import MissingExtraError
from capmodel.observe import observe_ftdc, observe_uri
from capmodel.observe.fleet import fleet_table
from capmodel.bench.server import start_server
from capmodel.bench.sweep.config import BenchConfig
from capmodel.bench.sweep.sweep import Sweep
from capmodel.report.render import render, render_one
for call in (lambda: observe_ftdc("data/ftdc_sample"), lambda: observe_uri("mongodb://127.0.0.1:1"),
             lambda: fleet_table(["data/ftdc_sample"]), start_server,
             lambda: Sweep("mongodb://127.0.0.1:1", BenchConfig(), "unused"),
             lambda: render(["02_fit_curve"], "unused"), lambda: render_one("02_fit_curve", "unused")):
    try:
        call()
    except MissingExtraError as exc:
        assert isinstance(exc, ImportError)
        print(exc)
"""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == [
        "observe_ftdc needs the 'observe' extra: pip install 'capmodel[observe]'",
        "observe_uri needs the 'observe' extra: pip install 'capmodel[observe]'",
        "fleet_table needs the 'observe' extra: pip install 'capmodel[observe]'",
        "start_server needs the 'bench' extra: pip install 'capmodel[bench]'",
        "a benchmark sweep needs the 'bench' extra: pip install 'capmodel[bench]'",
        "rendering a report needs the 'notebooks' extra: pip install 'capmodel[notebooks]'",
        "rendering a report needs the 'notebooks' extra: pip install 'capmodel[notebooks]'",
    ]
    assert not (ROOT / "unused").exists()


# Run in a subprocess with every extra's module blocked: the core API and the core commands, start to end.
CORE_ONLY = BLOCK + """
import json
import os
import capmodel
from capmodel import compare_models, datasets, fit_usl, fit_usl_latency, read_curve
curve = datasets.load("plgm_workload1")
fit = fit_usl(curve)
ranked = compare_models(curve)
latency = fit_usl_latency(curve)
read = read_curve("data/usl_specsdm91.csv")
from capmodel.cli import main
statuses = [main(argv) for argv in {commands!r}]
print(json.dumps({{"statuses": statuses, "peak": fit.peak_throughput,
                   "loaded": sorted(m for m in BLOCKED if m in sys.modules)}}))
"""
CORE_COMMANDS = [["fit", "data/plgm_workload1.csv", "--json"], ["fit", "data/usl_specsdm91.csv", "--model", "auto"],
                 ["plan", "--json"], ["nodes", "--json"], ["shards", "--json"], ["mva", "MODEL", "--json"],
                 ["report", "--list"]]


def test_a_core_install_fits_solves_and_plans_without_any_extra(tmp_path):
    model = tmp_path / "model.yaml"
    model.write_text("classes:\n  web: {population: 10, think_time: 1.0}\n"
                     "stations:\n  cpu: {demands: {web: 0.05}}\n  disk: {demands: {web: 0.03}}\n")
    commands = [[str(model) if a == "MODEL" else a for a in argv] for argv in CORE_COMMANDS]
    code = CORE_ONLY.format(blocked=EVERY_EXTRA, commands=commands)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.splitlines()[-1])
    assert found["statuses"] == [0] * len(CORE_COMMANDS), done.stderr[-3000:]
    assert found["peak"] > 0 and found["loaded"] == []


def test_require_names_the_extra_and_extra_of_finds_a_module(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(MissingExtraError) as caught:
        require("parquet", "reading x.parquet")
    assert str(caught.value) == "reading x.parquet needs the 'parquet' extra: pip install 'capmodel[parquet]'"
    assert (caught.value.extra, caught.value.missing) == ("parquet", "pyarrow")
    with pytest.raises(KeyError):
        require("no-such-extra", "anything")
    assert extra_of("bson.decimal128") == "observe" and extra_of("hdrh.histogram") == "bench"
    assert extra_of("numpy") is None and extra_of(None) is None


def test_the_command_itself_exits_2_with_one_line_and_no_traceback(tmp_path, ftdc_folder):
    """The installed ``capmodel`` script in a fresh process where no extra is installed (a ``sitecustomize`` on
    PYTHONPATH blocks their packages before anything is imported): one line on stderr, exit 2, nothing on stdout."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(BLOCK.format(blocked=EVERY_EXTRA))
    script = Path(sys.executable).with_name("capmodel")
    command = [str(script)] if script.exists() else [
        sys.executable, "-c", "import sys; from capmodel.cli import main; sys.exit(main())"]
    env = {**os.environ, "PYTHONPATH": str(site)}
    env.pop("CAPMODEL_DEBUG", None)
    cases = [(["bench", "--out", str(tmp_path / "run")], "capmodel bench", "bench"),
             (["observe", "--ftdc", ftdc_folder, "--out", str(tmp_path / "obs")], "capmodel observe", "observe"),
             (["report", "02_fit_curve", "--out", str(tmp_path / "reports")], "capmodel report", "notebooks")]
    for argv, what, extra in cases:
        done = subprocess.run(command + argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert (done.returncode, done.stdout, done.stderr) == (2, "", message(what, extra)), argv
    done = subprocess.run(command + ["fit", str(ROOT / "data" / "plgm_workload1.csv"), "--json"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and json.loads(done.stdout)["peak_throughput"] > 0, done.stderr[-3000:]
