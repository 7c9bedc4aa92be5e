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
                                "vm_column": "vm", "ops_per_user": 0.5, "targets": [10000, 40000]},
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


def _fleet_rows(runways):
    import pandas as pd

    return pd.DataFrame([{"cluster": "rs0", "member": f"m{i}:27017", "folder": f"/f{i}", "error": None,
                          "verdict": "weak", "runway_months": r, "runway_low": r * 0.9, "runway_high": r * 1.1,
                          "spare_fraction": 0.2, "spare_low": 0.1, "spare_high": 0.3} for i, r in enumerate(runways)])


def test_report_08s_runway_axis_mentions_the_cap_only_where_a_bar_is_cut():
    # a fleet whose longest runway is 13.9 months read "months (bars end at 36)" under an axis ending at 14
    from capmodel.plots.fleet import RUNWAY_CAP_MONTHS, fleet_runway_figure

    short = fleet_runway_figure(_fleet_rows([0.0, 0.4, 9.3, 13.9]), 0.8)
    assert short.layout.xaxis.title.text == "runway (months)"
    long = fleet_runway_figure(_fleet_rows([2.0, RUNWAY_CAP_MONTHS + 2.5]), 0.8)
    assert f"end at {RUNWAY_CAP_MONTHS:g}" in long.layout.xaxis.title.text
    bars = [x for trace in long.data for x in trace.x]
    assert max(bars) == RUNWAY_CAP_MONTHS and "38.5 months" in [t for trace in long.data for t in trace.text]
    # the title names what the runway runs to, as the load figure's legend does ("planned at 80% CPU")
    assert short.layout.title.text == "Months until the busiest load reaches its planned throughput (80% CPU)"


def test_report_03s_intro_names_only_the_objectives_and_runway_the_plan_has():
    # a catalog of one's own with curves, no baseline and no users today: no latency objective is set and no runway
    # can be computed (the page says "No runway"), but the intro promised "a latency objective" and "the growth runway"
    from capmodel.plan import Objectives
    from capmodel.report.plan_report import plan_report

    def intro(**given):
        return plan_report(catalog=HERE + "catalog_chf.csv", curves=HERE + "curves_chf.csv", vm_column="vm",
                           ops_per_user=0.5, targets=[5000], **given).intro

    bare = intro(objectives=Objectives(utilization_target=0.8))
    assert "latency objective" not in bare and "runway" not in bare
    assert bare.startswith("A capacity plan of the VMs in catalog_chf.csv: the usable throughput of each under a "
                           "utilization target, users per VM,")
    full = intro(objectives=Objectives(utilization_target=0.8, latency_p95_ms=3.0), current_users=5000, growth=0.05)
    assert "under a utilization target and a latency objective" in full and "the growth runway, and the" in full


def test_report_06s_fit_section_mentions_a_plan_only_where_one_follows():
    # every step client-bound: the Fit section said "the plan below uses the USL" above "No plan is shown"
    import capmodel
    from capmodel.report.bench_report import bench_report

    usable = bench_report(capmodel.datasets.load_curve("plgm_workload1"), [], {}, "a server", "ycsb-c", 5.0, 0.8,
                          0.26, 0.95, {})
    assert usable.plan_table() is not None and "the plan below uses the USL" in usable.fit_note
    bound = bench_report(capmodel.read_curve("tests/fixtures/client_bound_sweep/curve.csv"), [], {}, "a server",
                         "ycsb-c", 5.0, 0.8, 0.26, 0.95, {})
    assert bound.plan_table() is None and "No plan is shown" in bound.no_plan
    assert "plan below" not in bound.fit_note and "no plan is drawn from them" in bound.fit_note
    cells = json.loads((NOTEBOOKS / "06_live_benchmark.ipynb").read_text())["cells"]
    assert not [c for c in cells if c["cell_type"] == "markdown" and "plan below" in "".join(c["source"])]


def test_report_02_says_the_band_describes_the_steps_when_the_verdict_is_unusable():
    # every step client-bound: the answer says no saturation can be located, yet "The chosen model, with its
    # confidence band" drew the Amdahl curve and band on to 48 clients with nothing saying what they stand for
    from capmodel.report.fit_report import fit_report

    bound = fit_report(file=HERE + "client_bound_sweep.csv")
    assert bound.evidence.grade == "unusable"
    assert bound.band_note.startswith("The verdict is unusable, so the curve and its band below describe the "
                                      "measured steps, not where the server saturates. Why: every one of the 5 steps")
    assert fit_report().band_note == ""        # plgm_workload1: a usable verdict needs no such note
    cells = json.loads((NOTEBOOKS / "02_fit_curve.ipynb").read_text())["cells"]
    assert any("result.band_caption" in "".join(c["source"]) for c in cells if c["cell_type"] == "code")
    assert bound.band_caption.startswith(bound.band_note + " The 95% band is the throughput's range over")


def test_report_03s_answer_says_where_the_growth_starts():
    # "For 50,000 users (reached in 14.2 months at 5% a month)" did not say from how many users: the baseline's
    # 25,000 (benchANT), or the current_users given. ln(50,000 / 25,000) / ln(1.05) = 14.2 months; from 30,000: 10.5
    import math

    from capmodel.report.plan_report import plan_report

    assert (f"(reached in {math.log(2) / math.log(1.05):.1f} months from today's 25,000 at 5% a month)"
            in plan_report(targets=[50_000]).answer)
    assert (f"(reached in {math.log(5 / 3) / math.log(1.05):.1f} months from today's 30,000 at 5% a month)"
            in plan_report(targets=[50_000], current_users=30_000).answer)
