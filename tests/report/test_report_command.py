"""`capmodel report` interrupted by Ctrl-C (hostile round six).

Before: "capmodel: interrupted" alone, exit 130; the finished pages stayed in --out but no index.html listed them
and nothing said which were finished. The pages are built here as a render leaves them (an executed notebook with
its capmodel report record, and its HTML beside it; the page under way has neither record nor HTML).
"""
from __future__ import annotations

import nbformat

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
