"""Report names cannot reach outside the notebooks folder, nothing is written outside --out, and numeric parameters
are finite and in range before any kernel starts (``report ../somewhere/victim`` is refused, ``report
01_methodology -p upto 100000000`` is refused before a kernel runs)."""
from __future__ import annotations

import nbformat
import pytest

from capmodel.output_folder import LOCK_FILE

from capmodel.cli import main


def _tiny_notebook(path):
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell("answer = 6")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [nbformat.v4.new_markdown_cell("# What is seven times the answer?"), params,
                nbformat.v4.new_code_cell("print(7 * answer)")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


@pytest.fixture
def layout(tmp_path, monkeypatch):
    """notebooks/ (the bundled folder, pointed to by CAPMODEL_NOTEBOOKS_DIR), somewhere/victim.{ipynb,html}, out/."""
    (tmp_path / "notebooks").mkdir()
    _tiny_notebook(tmp_path / "notebooks" / "07_tiny.ipynb")
    (tmp_path / "somewhere").mkdir()
    _tiny_notebook(tmp_path / "somewhere" / "victim.ipynb")
    (tmp_path / "somewhere" / "victim.html").write_text("the user's own page")
    monkeypatch.setenv("CAPMODEL_NOTEBOOKS_DIR", str(tmp_path / "notebooks"))
    return tmp_path


def _files(folder):
    return {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file() and p.name != LOCK_FILE}


@pytest.mark.parametrize("name", ["../somewhere/victim", "..", "../somewhere/../somewhere/victim", "/etc/passwd",
                                  "sub/07_tiny", "07_tiny/..", ""])
def test_a_name_with_a_path_is_refused_and_nothing_is_written(layout, capsys, name):
    before = _files(layout)
    code = main(["report", name, "--out", str(layout / "out")])
    err = capsys.readouterr().err
    assert code == 2 and "is not a report name" in err and len(err.strip().splitlines()) == 1
    assert _files(layout) == before and not (layout / "out").exists()


def test_an_explicit_notebook_path_is_rendered_into_out_and_only_there(layout, capsys):
    before = _files(layout / "somewhere")
    code = main(["report", str(layout / "somewhere" / "victim.ipynb"), "-p", "answer", "6", "--out",
                 str(layout / "out")])
    assert code == 0, capsys.readouterr().err
    assert _files(layout / "somewhere") == before  # the user's files untouched, no stray copy beside them
    assert {p.name for p in (layout / "out").iterdir()} == {"victim.ipynb", "victim.html", "index.html", LOCK_FILE}
    executed = nbformat.read(layout / "out" / "victim.ipynb", as_version=4)
    assert executed.cells[-1].outputs[0]["text"].strip() == "42"
    assert [p.name for p in (layout / "notebooks").iterdir()] == ["07_tiny.ipynb"]


# The report parameters' vocabulary (capmodel.report.params.REPORT_PARAMETER_CONSTRAINTS on capmodel.constraints): the
# kind follows the notebook's default, the range the name; each refusal names the parameter, the range and the value.
@pytest.mark.parametrize("argv, message", [
    (["01_methodology", "-p", "upto", "100000000"],
     "parameter upto must be an integer from 0 to 100,000, got 100000000"),
    (["04_node_multiplier", "-p", "sigma", "nan"], "parameter sigma must be a number from 0 to 1, got nan"),
    (["07_production_capacity", "-p", "bootstrap", "1e9"],
     "parameter bootstrap must be an integer from 0 to 100,000, got 1000000000"),
    (["05_shard_scale_out", "-p", "target_rate", "inf"],
     "parameter target_rate must be a number > 0 and <= a trillion, got inf"),
    (["06_live_benchmark", "-p", "concurrency", "1,100000000"],
     "parameter concurrency: every value must be an integer from 1 to 10,000, got 100000000"),
    (["01_methodology", "-p", "upto", "-1"], "parameter upto must be an integer from 0 to 100,000, got -1"),
    (["01_methodology", "-p", "upto", "100001"], "parameter upto must be an integer from 0 to 100,000, got 100001"),
    (["01_methodology", "-p", "upto", "2.5"], "parameter upto must be an integer from 0 to 100,000, got 2.5"),
    (["01_methodology", "-p", "upto", "many"], "parameter upto must be an integer from 0 to 100,000, got 'many'"),
    (["01_methodology", "-p", "upto", "true"], "parameter upto must be an integer from 0 to 100,000, got 'true'"),
    (["02_fit_curve", "-p", "level", "0.4"], "parameter level must be a number from 0.5 to 0.9999, got 0.4"),
    (["02_fit_curve", "-p", "level", "1"], "parameter level must be a number from 0.5 to 0.9999, got 1"),
    (["02_fit_curve", "-p", "level", "inf"], "parameter level must be a number from 0.5 to 0.9999, got inf"),
    (["04_node_multiplier", "-p", "sensitivity", "0,nan"],
     "parameter sensitivity: every value must be a number from 0 to 1, got nan"),
    (["03_vm_capacity_plan", "-p", "targets", "[50000, true]"],
     "parameter targets: every value must be a number from 1 to a trillion, got True"),
    (["07_production_capacity", "-p", "bins", "1e16"],
     "parameter bins must be an integer from 0 to 10,000, got 10000000000000000"),
    (["01_methodology", "--jobs", "0"], "--jobs must be an integer from 1 to 64, got 0"),
])
def test_report_parameters_out_of_range_exit_2_before_any_kernel(tmp_path, capsys, argv, message):
    code = main(["report", *argv, "--out", str(tmp_path / "out")])
    assert (code, capsys.readouterr().err) == (2, f"capmodel: error: {message}\n")
    assert not (tmp_path / "out").exists()


def test_a_full_disk_while_writing_a_report_is_one_error_naming_the_file():
    """/dev/full answers every write with ENOSPC, as a full disk does."""
    from pathlib import Path

    from capmodel.errors import ReportError
    from capmodel.report.writing import write_text

    with pytest.raises(ReportError, match=r"^cannot write /dev/full: No space left on device$"):
        write_text(Path("/dev/full"), "<html></html>")


def test_a_second_render_into_a_held_folder_is_refused_naming_the_holder(tmp_path, capsys):
    """A render holds its --out like a bench run does; a second one is refused, one line
    naming the first's PID, before any kernel starts, and nothing is written."""
    import os

    from capmodel.cli import main
    from capmodel.output_folder import FolderLock

    out = tmp_path / "reports"
    out.mkdir()
    with FolderLock(out):
        assert main(["report", "04_node_multiplier", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"is in use by another capmodel run (PID {os.getpid()})" in err and len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in out.iterdir()) == [".capmodel.lock"]


def test_numbers_typed_as_text_take_the_kind_of_the_default_and_checking_returns_a_copy():
    from capmodel.errors import InputError
    from capmodel.report.params import checked_parameter, coerce

    assert coerce("upto", "1e3", 128) == 1000 and type(coerce("upto", "1e3", 128)) is int
    assert coerce("level", "0.9", 0.95) == 0.9
    assert coerce("concurrency", "1, 2,4", [1, 2]) == [1, 2, 4]
    assert coerce("concurrency", "threads", "") == "threads"      # notebook 02: a column name, not a number
    assert checked_parameter("upto", 8.0, 128) == 8 and type(checked_parameter("upto", 8.0, 128)) is int
    given = (50_000, 90_000.5)
    assert checked_parameter("targets", given, [50_000]) == [50_000, 90_000.5] and given == (50_000, 90_000.5)
    assert checked_parameter("uri", "mongodb://x", "") == "mongodb://x" and checked_parameter("sliders", True, True)
    for name, value, like, message in (
            ("upto", True, 128, "parameter upto must be an integer from 0 to 100,000, got True"),
            ("upto", "8", 128, "parameter upto must be an integer from 0 to 100,000, got '8'"),
            ("sigma", float("nan"), 0.05, "parameter sigma must be a number from 0 to 1, got nan"),
            ("targets", [1, "2"], [50_000],
             "parameter targets: every value must be a number from 1 to a trillion, got '2'")):
        with pytest.raises(InputError) as caught:
            checked_parameter(name, value, like)
        assert str(caught.value) == message
