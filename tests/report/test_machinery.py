"""Report machinery: parameter typing, redaction, papermill execution with secrets scrubbed from every written file,
offline HTML, the index, and the ``capmodel report`` command."""
from __future__ import annotations

import html
import json
import re
from datetime import datetime, timezone
from pathlib import Path

import nbformat
import pytest

from capmodel.cli import main
from capmodel.errors import InputError
from capmodel.formatting import number
from capmodel.output_folder import LOCK_FILE
from capmodel.report import notebooks
from capmodel.report.params import coerce, redacted, scrub, secrets_in
from tests.support.rendered_reports import SMALL, render_small

PASSWORD = "Pw-7q_zZ-never-shown"   # '-' and '_' are not base64 characters: no accidental match in inlined assets


# ---------------------------------------------------------------- parameters
@pytest.mark.parametrize("text, default, expected", [
    ("8", 4, 8), ("1e3", 4, 1000), ("2.5", 0.5, 2.5), ("3", 0.5, 3.0), ("yes", False, True), ("off", True, False),
    ("1,2,4", [1, 2], [1, 2, 4]), ("[1, 2.5]", [1], [1, 2.5]), ("0.5, 1", [0.0], [0.5, 1.0]),
    ("ycsb-a", "ycsb-c", "ycsb-a"), ("42", "x", "42"), ('{"a": 1}', {}, {"a": 1}), ("7", None, 7),
])
def test_values_take_the_type_of_the_notebook_default(text, default, expected):
    value = coerce("p", text, default)
    assert value == expected and type(value) is type(expected)


@pytest.mark.parametrize("text, default", [("many", 4), ("2.5", 4), ("x", 1.0), ("maybe", True), ("{1", {})])
def test_values_that_do_not_read_as_the_default_type_name_the_parameter(text, default):
    with pytest.raises(InputError, match="parameter p"):
        coerce("p", text, default)


def test_redaction_masks_passwords_in_uris_and_secret_names_only():
    params = {"uri": f"mongodb://app:{PASSWORD}@db1:27017,db2/x?replicaSet=rs", "password": "hunter2",
              "duration": 2.0, "workload": "ycsb-a"}
    shown = redacted(params)
    assert shown == {"uri": "mongodb://app:***@db1:27017,db2/x?replicaSet=rs", "password": "***",
                     "duration": 2.0, "workload": "ycsb-a"}
    assert set(secrets_in(params)) == {PASSWORD, "hunter2"}
    encoded = {"uri": "mongodb://app:p%40ss%3Aword@h/"}   # '@' and ':' percent-encoded, as RFC 3986 wants
    assert set(secrets_in(encoded)) == {"p%40ss%3Aword", "p@ss:word"}
    assert scrub("x p@ss:word y p%40ss%3Aword", secrets_in(encoded)) == "x *** y ***"


# ---------------------------------------------------------------- execution with a tiny notebook
def _tiny_notebook(folder):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Does the report keep secrets?"),
        nbformat.v4.new_code_cell('uri = "mongodb://127.0.0.1:1/"\nsteps = [1, 2]\nfail = False',
                                  metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell("from capmodel.plots import setup_notebook\nimport plotly.graph_objects as go\n"
                                  "setup_notebook()\nprint('connecting to', uri)\n"
                                  "go.Figure(go.Scatter(x=steps, y=[s * s for s in steps]))"),
        nbformat.v4.new_code_cell("if fail:\n    raise RuntimeError(f'cannot reach {uri}')"),
    ]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, folder / "tiny.ipynb")


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    source = tmp_path / "notebooks"
    source.mkdir()
    _tiny_notebook(source)
    monkeypatch.setenv("CAPMODEL_NOTEBOOKS_DIR", str(source))
    return tmp_path / "out"


def _written(folder) -> dict:
    """The report files in ``folder`` (the run's lock file, empty once it is over, left out)."""
    return {p.name: p.read_text(errors="replace") for p in folder.iterdir() if p.is_file() and p.name != LOCK_FILE}


@pytest.mark.notebooks
@pytest.mark.parametrize("fail", [False, True])
def test_a_password_given_as_a_parameter_appears_in_no_written_file(tiny, capsys, fail):
    uri = f"mongodb://analyst:{PASSWORD}@127.0.0.1:1/"
    argv = ["report", "tiny", "-p", "uri", uri, "-p", "steps", "1,2,3", "--out", str(tiny)]
    status = main(argv + (["-p", "fail", "true"] if fail else []))
    out, err = capsys.readouterr()
    assert status == (2 if fail else 0)
    files = _written(tiny)
    assert set(files) == {"tiny.ipynb", "tiny.html", "index.html"} | ({"tiny.log"} if fail else set())
    for name, text in files.items():
        assert PASSWORD not in text, name
    assert PASSWORD not in out + err
    nb = nbformat.read(tiny / "tiny.ipynb", as_version=4)
    printed = "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))
    assert "connecting to mongodb://analyst:***@127.0.0.1:1/" in printed   # the kernel had the real one
    assert nb.metadata["papermill"]["parameters"]["uri"] == "mongodb://analyst:***@127.0.0.1:1/"
    if fail:
        assert "report tiny failed (given -p uri mongodb://analyst:***@127.0.0.1:1/, -p steps " in err   # masked
        assert len(err.strip().splitlines()) == 1 and "tiny.log" in err
        assert "Traceback" not in files["tiny.html"] and "Traceback" in files["tiny.log"]
        assert "This report failed" in files["tiny.html"]
        assert "cannot reach mongodb://analyst:***@127.0.0.1:1/" in nb.metadata["capmodel"]["report"]["error"]


@pytest.mark.notebooks
def test_html_is_self_contained_with_code_hidden(tiny):
    assert main(["report", "tiny", "--out", str(tiny)]) == 0
    page = (tiny / "tiny.html").read_text()
    assert not re.search(r"<script[^>]+src=", page), "a script is loaded from elsewhere"
    assert not re.search(r"<link[^>]+href=\"http", page), "a stylesheet is loaded from elsewhere"
    from plotly.offline import get_plotlyjs

    assert page.count(get_plotlyjs()[:200]) == 1          # plotly.js inlined exactly once
    assert "Plotly.newPlot" in page
    assert "setup_notebook" not in page                     # code hidden by default
    assert main(["report", "tiny", "--out", str(tiny), "--show-code"]) == 0
    assert "setup_notebook" in (tiny / "tiny.html").read_text()


def test_report_command_errors_are_one_line(tiny, capsys):
    assert main(["report", "nosuch", "--out", str(tiny)]) == 2
    assert "unknown report 'nosuch' (known: tiny)" in capsys.readouterr().err
    assert main(["report", "tiny", "-p", "stepz", "3", "--out", str(tiny)]) == 2
    assert "no selected report has a parameter 'stepz' (known: fail, steps, uri)" in capsys.readouterr().err
    assert main(["report", "tiny", "-p", "fail", "perhaps", "--out", str(tiny)]) == 2
    assert "parameter fail: expected true or false" in capsys.readouterr().err
    assert main(["report", "--out", str(tiny)]) == 2
    assert not tiny.exists()


def test_list_shows_reports_and_their_defaults(capsys):
    assert main(["report", "--list"]) == 0
    out = capsys.readouterr().out
    for name in notebooks.names():
        assert name in out
    assert "06_live_benchmark (live)" in out and "01_methodology (live)" not in out
    assert "    targets = [50000, 90000]" in out


# ---------------------------------------------------------------- the index of the rendered suite
@pytest.mark.notebooks
def test_index_lists_every_report_with_its_parameters_and_date(tmp_path_factory, mongod):
    out, _ = render_small(tmp_path_factory, mongod.uri)
    page = html.unescape((out / "index.html").read_text())
    rows = page.split("<tr>")[2:]
    assert len(rows) == len(notebooks.names())
    today = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    for name, row in zip(notebooks.names(), rows):
        assert f'href="{name}.html"' in row and f'href="{name}.ipynb"' in row
        for key, value in SMALL[name].items():
            # as the report's own headline shows it: "hours = 1", "sensitivity = 0, 0.01, 0.03" (it read 1.0 and
            # [0.0, 0.01, 0.03], Python's spellings)
            shown = ", ".join(map(number, value)) if isinstance(value, list) else \
                str(value) if isinstance(value, str) else number(value)
            assert f"{key} = {shown}</code>" in row, (name, key, row)
        values = [v for v in re.findall(r"<code>[^=<]+ = ([^<]*)</code>", row) if "://" not in v]
        assert not [v for v in values if re.search(r"\[|\d\.0\b", v)], (name, values)
        assert re.search(rf"{today} \d\d:\d\d:\d\d UTC", row), row
        assert "ok (" in row
        assert notebooks.question(nbformat.read(notebooks.path(name), as_version=4)) in row   # the report's question


@pytest.mark.notebooks
def test_all_reports_render_side_by_side_into_a_relative_folder(tiny, monkeypatch, capsys):
    source = tiny.parent / "notebooks"
    (source / "tiny.ipynb").rename(source / "a_first.ipynb")
    _tiny_notebook(source)
    monkeypatch.chdir(tiny.parent)
    assert main(["report", "--all", "--out", "rel", "--jobs", "2", "-p", "steps", "4", "--json"]) == 0
    assert sorted(p.name for p in (tiny.parent / "rel").iterdir() if p.name != LOCK_FILE) == [
        "a_first.html", "a_first.ipynb", "index.html", "tiny.html", "tiny.ipynb"]
    record = json.loads(capsys.readouterr().out)
    assert Path(record["index"]).resolve() == (tiny.parent / "rel" / "index.html").resolve()


def test_a_report_whose_kernel_cannot_start_fails_alone(tiny):
    from capmodel.report.render import render

    runs, index = render(["tiny"], tiny, {"tiny": {"uri": f"mongodb://a:{PASSWORD}@h/"}}, kernel_name="no-such-kernel")
    (run,) = runs
    assert "did not run" in run.error and "no-such-kernel" in run.error and PASSWORD not in run.error
    assert run.html is None and run.parameters == {"uri": "mongodb://a:***@h/"}
    text = index.read_text()   # no row for it; the sentence on what the folder holds names it as not rendered
    assert index.is_file() and "<td>tiny" not in text and "tiny.html" not in text and "Not rendered: tiny (" in text


def test_report_03_takes_the_cli_name_latency_p95_ms(capsys):
    """`capmodel plan --latency-p95-ms` and report 03's parameter share one name; 01 and 06 keep latency_target_ms,
    and a name no selected report has is refused naming the known ones."""
    import argparse

    from capmodel.commands.report import _parameters
    from capmodel.errors import InputError
    from capmodel.report import notebooks
    from capmodel.report.params import notebook_parameters

    defaults = notebook_parameters(notebooks.path("03_vm_capacity_plan"))
    assert "latency_p95_ms" in defaults and "latency_target_ms" not in defaults
    new = _parameters(argparse.Namespace(parameter=[("latency_p95_ms", "3")]), ["03_vm_capacity_plan"], notebooks)
    assert new == {"03_vm_capacity_plan": {"latency_p95_ms": 3.0}} and capsys.readouterr().err == ""
    with pytest.raises(InputError, match="no selected report has a parameter 'latency_target_ms'"):
        _parameters(argparse.Namespace(parameter=[("latency_target_ms", "3")]), ["03_vm_capacity_plan"], notebooks)


