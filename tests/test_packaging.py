"""pyproject.toml and environment.yml must list the same dependencies with the same version constraints."""
import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
# conda-forge names that differ from the PyPI names
CONDA_TO_PYPI = {}


def _split(req: str) -> tuple[str, str]:
    m = re.match(r"^\s*([A-Za-z0-9_.\-]+)\s*(.*)$", req)
    return m.group(1).lower().replace("_", "-"), m.group(2).replace(" ", "")


def _pyproject() -> dict[str, str]:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(meta["dependencies"]) + list(meta["optional-dependencies"]["test"])
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
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert python == requires == ">=3.11"
    assert env == _pyproject()


def test_layout_from_the_design_card():
    for name in ["capmodel", "notebooks", "data", "tests", "reports", "benchmarks", ".ci/run", "README.md",
                 "environment.yml", "pyproject.toml", "Makefile"]:
        assert (ROOT / name).exists(), name


def test_ci_calls_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    assert "make test" in readme and "make report" in readme
    ci = (ROOT / ".ci/run").read_text().splitlines()
    assert "make test" in [line.strip() for line in ci]
