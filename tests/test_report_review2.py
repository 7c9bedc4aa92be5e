"""A second review of the rendered pages as an analyst reads them (1280 px screenshots, every sentence against its
figure and table): what a page said that its own numbers or parameters contradicted, and a page that did not render
on a user's own inputs."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
HERE = "tests/fixtures/user_study/"


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """03 on a catalog and curves of one's own with its What-if sliders on (as `capmodel report` renders it by
    default), and 07 on the bundled FTDC sample with 5 concurrency bins."""
    from capmodel.report.render import render

    out = tmp_path_factory.mktemp("review2_pages")
    parameters = {
        "03_vm_capacity_plan": {"catalog": HERE + "catalog_chf.csv", "curves": HERE + "curves_chf.csv",
                                "vm_column": "vm", "ops_per_user": 0.5, "targets": [10000, 40000], "bootstrap": 0},
        "07_production_capacity": {"bins": 5, "bootstrap": 0}}
    runs, _ = render(list(parameters), out, parameters, jobs=2)
    return out, {r.name: r for r in runs}


def test_report_03_renders_on_a_users_catalog_with_its_sliders_on(pages):
    # a catalog with no baseline and no users today has no runway: the page said so, but the What-if cell drew the
    # runway figure anyway and the render failed (KeyError: 'runway_months')
    out, runs = pages
    assert runs["03_vm_capacity_plan"].error is None, runs["03_vm_capacity_plan"].error
    page = (out / "03_vm_capacity_plan.html").read_text()
    assert page.count("No runway: give today") == 1


def test_report_07_says_how_many_bins_the_usl_was_fitted_to(pages):
    # the page read "grouped into bins concurrency bins": the parameter's name where its value belongs
    out, runs = pages
    assert runs["07_production_capacity"].error is None, runs["07_production_capacity"].error
    page = (out / "07_production_capacity.html").read_text()
    assert "grouped into 5 concurrency bins, each weighted by its count of intervals" in page
    assert "<code>bins</code> concurrency bins" not in page and "bins concurrency bins" not in page


def test_report_01s_knee_section_does_not_contradict_its_answer():
    # on plgm_workload1 at 5 ms the answer says "the peak decides" (the target binds at 67.8 clients, past the peak
    # at 66.5), while section 5 said "The latency target, not the peak, decides how many clients a machine should
    # carry"
    from capmodel.report.methodology_report import methodology_report

    assert "so the peak decides" in methodology_report(latency_target_ms=5.0).answer
    cells = json.loads((NOTEBOOKS / "01_methodology.ipynb").read_text())["cells"]
    knee = ["".join(c["source"]) for c in cells if "".join(c["source"]).startswith("## 5. Why the knee matters")]
    assert len(knee) == 1
    assert "not the peak" not in knee[0] and "or the peak" in knee[0]
