"""The manual and the examples it shows: ``mkdocs build --strict`` passes (every page in the navigation, every link
found, every docstring of the API reference parsed); every function and class of the API reference has numpydoc
sections, a function's Parameters being exactly its signature's; the curve-table page is ``markdown_table()``; and the
``Examples`` of the public docstrings give what they show (the README's quickstarts: ``test_readme_quickstarts``).

The build needs mkdocs (the ``test`` and ``docs`` extras carry it; ``make test`` installs it); without it the build test
is skipped, saying so, except where ``CAPMODEL_DOCS_REQUIRED`` is set (``.ci/run`` sets it): there it fails.
"""
from __future__ import annotations

import doctest
import importlib
import inspect
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# The modules whose docstrings carry Examples sections (doctest-style); a module listed without one fails.
EXAMPLE_MODULES = [
    "capmodel.data.readers", "capmodel.data.datasets", "capmodel.data.curve_columns", "capmodel.data.column_names",
    "capmodel.data.number_cells",
    "capmodel.models.usl.fit", "capmodel.models.usl.selection", "capmodel.models.usl.usl_fit",
    "capmodel.models.usl.latency_form", "capmodel.models.usl.closed_form", "capmodel.models.usl.figures",
    "capmodel.models.usl.robust", "capmodel.models.evidence", "capmodel.models.estimate",
    "capmodel.models.queueing.laws", "capmodel.models.queueing.erlang", "capmodel.models.queueing.mva",
    "capmodel.models.queueing.multiclass", "capmodel.models.queueing.open_networks", "capmodel.models.queueing.bounds",
    "capmodel.plan.capacity", "capmodel.plan.calibration", "capmodel.plan.study", "capmodel.plan.nodes",
    "capmodel.plan.shards", "capmodel.plan.production", "capmodel.observe.observation", "capmodel.observe.capacity",
    "capmodel.bench.workload.definition",
]
# A numpydoc section header: its name, then a line of dashes as long, at the docstring's own indentation.
SECTION = re.compile(r"^([A-Z][A-Za-z ]+)\n-{3,}\n", flags=re.M)


def _reference() -> list[tuple[str, str]]:
    """(page, dotted name) of every object the API reference documents: each ``::: module.name`` directive, and each
    of a module directive's ``members: [...]``."""
    found = []
    for page in sorted((ROOT / "docs" / "api").glob("*.md")):
        for match in re.finditer(r"^::: (\S+)\n((?:    .*\n)*)", page.read_text(), flags=re.M):
            path, options = match.groups()
            members = re.search(r"members: \[(.*?)\]", options)
            names = [f"{path}.{m.strip()}" for m in members.group(1).split(",")] if members else [path]
            found += [(page.name, name) for name in names]
    return found


def _resolve(dotted: str):
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:]:
            obj = getattr(obj, part)
        return obj
    raise ImportError(dotted)


def _sections(doc: str) -> dict[str, str]:
    """numpydoc sections of a docstring (cleaned with inspect.cleandoc): name -> body."""
    text = inspect.cleandoc(doc) + "\n"
    heads = list(SECTION.finditer(text))
    return {h.group(1): text[h.end():(heads[i + 1].start() if i + 1 < len(heads) else len(text))]
            for i, h in enumerate(heads)}


def _documented(body: str) -> list[str]:
    """The parameter names a Parameters section lists: its unindented lines, "a, b : type" or "a"."""
    names = []
    for line in body.splitlines():
        if line and not line.startswith(" "):
            names += [n.strip().lstrip("*") for n in line.split(" : ")[0].split(",")]
    return names


def _parameters(obj) -> list[str]:
    target = obj.__init__ if inspect.isclass(obj) else obj
    signature = inspect.signature(target)
    return [n for n in signature.parameters if n not in ("self", "cls")]


REFERENCE = _reference()


def test_the_api_reference_names_enough_objects():
    assert len(REFERENCE) >= 150
    assert len(set(REFERENCE)) == len(REFERENCE), "an object is documented twice"


@pytest.mark.parametrize("page,name", REFERENCE, ids=[name for _, name in REFERENCE])
def test_every_documented_name_has_numpydoc_parameters(page, name):
    """Each function or class of the API reference has a numpydoc docstring: a function that takes arguments lists
    exactly its parameters under Parameters; a class has Parameters (then exactly its constructor's) or
    Attributes."""
    obj = inspect.unwrap(_resolve(name))
    doc = inspect.getdoc(obj) if not inspect.isclass(obj) else obj.__doc__
    assert doc, f"{name} ({page}) has no docstring"
    sections = _sections(doc)
    unknown = set(sections) - {"Parameters", "Returns", "Yields", "Raises", "See Also", "Notes", "Examples",
                               "Attributes", "Warns", "References", "Other Parameters"}
    assert not unknown, f"{name}: sections numpydoc does not know: {sorted(unknown)}"
    parameters = _parameters(obj)
    if inspect.isclass(obj):
        assert "Parameters" in sections or "Attributes" in sections, f"{name} ({page}) has no Parameters/Attributes"
    elif parameters:
        assert "Parameters" in sections, f"{name} ({page}) takes {parameters} but has no Parameters section"
    else:
        return
    if "Parameters" in sections:
        documented = _documented(sections["Parameters"])
        assert sorted(documented) == sorted(parameters), (
            f"{name}: the docstring's Parameters {documented} are not the signature's {parameters}")


def test_the_curve_table_page_is_markdown_table():
    from capmodel.data.curve_columns import markdown_table

    page = (ROOT / "docs" / "curve-table.md").read_text()
    table = "".join(line + "\n" for line in page.splitlines() if line.startswith("|"))
    assert table == markdown_table()


def test_the_manual_builds_strictly(tmp_path):
    if shutil.which("mkdocs", path=str(Path(sys.executable).parent)) is None and \
            importlib.util.find_spec("mkdocs") is None:
        if os.environ.get("CAPMODEL_DOCS_REQUIRED"):      # CI (.ci/run): a missing mkdocs is a failure
            pytest.fail("mkdocs is not installed, and CAPMODEL_DOCS_REQUIRED says the manual must be built")
        pytest.skip("mkdocs is not installed (pip install -e '.[test]' or '.[docs]')")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                         cwd=ROOT, capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    warnings = [line for line in run.stderr.splitlines() if line.startswith("WARNING")]
    assert warnings == []
    site = tmp_path / "site"
    for page in ("index.html", "curve-table.html", "grades.html", "datasets.html", "api/fitting.html"):
        assert (site / page).is_file(), page
    # the API reference holds the entry points' parameters, rendered from the numpydoc sections
    fitting = (site / "api" / "fitting.html").read_text()
    assert "capmodel.models.usl.fit.fit_usl" in fitting and "Parameters" in fitting


@pytest.mark.parametrize("name", EXAMPLE_MODULES)
def test_the_docstring_examples_give_what_they_show(name, monkeypatch):
    monkeypatch.chdir(ROOT)
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(module, name) if t.examples]
    assert tests, f"{name} has no Examples"
    for test in tests:
        runner.run(test)
    assert runner.failures == 0, f"{runner.failures} example(s) of {name} failed (run python -m doctest -v on it)"
