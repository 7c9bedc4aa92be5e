"""Report 03 on a user's own catalog and curves speaks of the user's data (issue 29, points 3 and 4): a semicolon
catalog with dollar costs and curves whose columns are named by the report's column parameters, as ``capmodel plan``
takes them; parameter notes that do not fall back on the bundled study; the 80% graded (on the report's result) and
said (on its page) as a share of the fitted peak when no CPU utilization was measured."""
import html
import re
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parents[1] / "fixtures" / "user_study"
USER = {"catalog": str(HERE / "catalog_usd.csv"), "curves": str(HERE / "curves_renamed.csv"),
        "concurrency": "load", "throughput": "rate", "ops_per_user": 0.5, "targets": [10000, 40000]}


def test_plan_report_takes_the_column_mappings_plan_takes():
    """The curves' columns ``system``, ``load``, ``rate`` read with ``concurrency``/``throughput`` named and the VM
    column left at its default ``vm``; the catalog's ``VM;Monthly cost`` with ``$`` read as USD."""
    from capmodel.report.plan_report import plan_report

    result = plan_report(**{k: v for k, v in USER.items()})
    vms = result.vms.set_index("vm")
    assert list(vms.index) == ["zurich-small", "zurich-medium", "zurich-large"]
    assert vms["monthly_cost"].tolist() == [410.5, 780.0, 1490.0] and result.currency == "USD"
    assert (vms["binding_limit"] == "utilization").all()
    assert "Objectives: throughput at most 80% of the fitted peak" in result.assumptions
    assert result.cost_unit == "USD/month"
    # no CPU utilization measured: the 80% taken of the fitted peak is an assumption, and the answer is weak for it
    assert result.evidence.grade == "weak" and set(result.evidence.codes()) == {"utilization_assumed"}


def test_the_parameter_notes_follow_the_inputs():
    from capmodel.report.plan_report import plan_report

    mine = plan_report(**USER)
    assert mine.parameter_meanings["baseline_vm"] == '"" means none: the load per user is ops_per_user'
    assert mine.parameter_meanings["baseline_users"] == "0 means none: the load per user is ops_per_user"
    assert not any("study" in words or "25,000" in words for words in mine.parameter_meanings.values())
    assert set(mine.unused_parameters) == {"latency_increase", "growth"}
    bundled = plan_report(targets=[50000])
    assert bundled.parameter_meanings == {} and bundled.unused_parameters == ()   # the notebook's words hold


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    from capmodel.report.render import render

    out = tmp_path_factory.mktemp("page_03_user")
    runs, _ = render(["03_vm_capacity_plan"], out, {"03_vm_capacity_plan": {**USER, "sliders": False}}, jobs=1)
    assert runs[0].error is None, runs[0].error
    text = (out / "03_vm_capacity_plan.html").read_text()
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", text)))


def test_the_rendered_page_speaks_of_the_users_data(page):
    assert "baseline_vm = (none) (default; \"\" means none: the load per user is ops_per_user)" in page
    assert "the study's" not in page and "m3-xlarge" not in page and "25,000" not in page
    assert "latency_increase = 0.05 (default, not used)" in page


def test_the_rendered_page_says_the_80_percent_is_taken_of_the_fitted_peak(page):
    assert "utilization at most 80%" not in page
    assert "throughput at most 80% of the fitted peak (the utilization target, with no CPU utilization measured)" \
        in page
    assert "no CPU utilization (cpu_util) was measured: the 80% utilization target is taken as 80% of the fitted " \
           "peak" in page
