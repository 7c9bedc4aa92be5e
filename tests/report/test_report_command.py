"""``capmodel report`` when it does not finish: interrupted by Ctrl-C, it keeps the finished pages in --out, lists them
in an index.html and says which were finished (the pages are built here as a render leaves them: an executed
notebook with its capmodel report record and its HTML beside it; the page under way has neither); a report that
fails gives, with --json, one JSON document carrying the error (one render of a flat curve, which the notebook's model
comparison refuses)."""
from __future__ import annotations

import json

import nbformat

from capmodel.cli import main
from capmodel.commands.report import _kept


def _page(out, name: str, finished: bool) -> None:
    nb = nbformat.v4.new_notebook()
    if finished:
        nb.metadata["capmodel"] = {"report": {"name": name, "parameters": {}, "rendered_at": "2026-11-24T10:00:00"},
                                   "question": f"question of {name}"}
        (out / f"{name}.html").write_text("<html></html>")
    nbformat.write(nb, out / f"{name}.ipynb")


def test_an_interrupted_render_lists_what_it_finished_and_writes_their_index(tmp_path):
    out = tmp_path / "reports"
    out.mkdir()
    names = ["01_methodology", "02_fit_curve", "03_vm_capacity_plan"]
    assert _kept(out, names) == f"interrupted; no report was finished, nothing was kept in {out}"
    _page(out, "01_methodology", True)
    _page(out, "02_fit_curve", False)          # under way when Ctrl-C came: partial, no record, no HTML
    message = _kept(out, names)
    assert message == (f"interrupted; kept 1 finished report (01_methodology) in {out}, listed in "
                       f"{out / 'index.html'}; not rendered: 02_fit_curve, 03_vm_capacity_plan (render them again)")
    index = (out / "index.html").read_text()
    assert 'href="01_methodology.html"' in index and "02_fit_curve.html" not in index


def test_a_failed_report_is_one_json_object_with_its_error(tmp_path, capsys):
    flat = tmp_path / "flat.csv"
    flat.write_text("concurrency,throughput\n1,100\n2,100\n4,100\n8,100\n")
    out_dir = tmp_path / "rep"
    assert main(["report", "02_fit_curve", "-p", "file", str(flat), "--out", str(out_dir), "--json"]) == 2
    out, err = capsys.readouterr()
    result = json.loads(out)                      # the whole of stdout is one document
    # the error inside the kernel names no file: the line names the parameters the report was given
    assert result["error"].startswith(f"report 02_fit_curve failed (given -p file {flat}): cell ")
    assert "R² is undefined" in result["error"]
    assert result["error"].endswith(f"(the traceback is in {out_dir / '02_fit_curve.log'})")
    assert [r["name"] for r in result["reports"]] == ["02_fit_curve"]
    assert err == f"capmodel: error: {result['error']}\n"
