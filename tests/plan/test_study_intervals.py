"""Each figure of the plan table and its interval come from one set of evaluations (the plan at the value and at the
ends of every stated range): the estimate lies inside its interval, and an estimate on an end of its interval (a
one-sided stated range, as the benchANT study's "2.5-2.6x" used as 2.6x) is marked and explained, not printed as if
the interval had collapsed ("65,000 (62,500 to 65,000)" users).
"""
import pandas as pd
import pytest

from capmodel.plan.planner import INTERVAL_COLUMNS, ONE_SIDED, ONE_SIDED_NOTE
from capmodel.plan.study import plan_study

THROUGHPUT = "data/benchant_throughput.csv"


def _plan(measurements=None):
    if measurements is None:
        return plan_study()
    return plan_study(catalog=pd.read_csv("data/benchant_vms.csv"), measurements=measurements,
                      baseline_vm="m3-xlarge-8-SAS", baseline_users=25_000, baseline_range=(6_000, 7_000),
                      baseline_throughput=6_500)


def _study_plan(result):
    return getattr(result, "plan", result)


@pytest.mark.parametrize("shift", [None, "symmetric"])
def test_estimates_lie_inside_their_intervals_and_one_sided_ones_are_marked(shift):
    measurements = None
    if shift == "symmetric":      # the same study with every stated range centred on its value: nothing one-sided
        measurements = pd.read_csv(THROUGHPUT)
        half = (measurements["relative_throughput_high"] - measurements["relative_throughput_low"]) / 2
        half = half.where(half > 0, 0.05)
        measurements["relative_throughput_low"] = measurements["relative_throughput"] - half
        measurements["relative_throughput_high"] = measurements["relative_throughput"] + half
        measurements.loc[measurements["vm"] == "m3-xlarge-8-SAS", ["relative_throughput_low",
                                                                   "relative_throughput_high"]] = 1.0
    plan = _study_plan(_plan(measurements))
    vms = plan.vms
    one_sided = False
    for col in INTERVAL_COLUMNS:
        if f"{col}_low" not in vms.columns:
            continue
        for _, r in vms.iterrows():
            value, low, high = r[col], r[f"{col}_low"], r[f"{col}_high"]
            if pd.isna(value) or pd.isna(low):
                continue
            assert low - 1e-9 * abs(value) <= value <= high + 1e-9 * abs(value), (r["vm"], col)
            if col == "users" and high > low and (abs(value - low) < 0.5 or abs(value - high) < 0.5):
                one_sided = True
    text = plan.vm_table().text()
    assert one_sided == (shift is None)
    assert (ONE_SIDED_NOTE in text) == one_sided
    for line in text.splitlines():
        if line.startswith("s3-2xlarge-8-SAS"):
            assert ("65,000 (62,500 to 65,000)" + ONE_SIDED in line) == (shift is None)


@pytest.mark.parametrize("value, low, high, expected", [
    (65_000, 62_500, 65_000, ", at least 62,500"),       # a one-sided range: the estimate is its top
    (62_500, 62_500, 65_000, ", at most 65,000"),        # ... or its bottom
    (63_000, 62_500, 65_000, ", between 62,500 and 65,000"),
    (65_000, 65_000, 65_000, ""), (65_000, float("nan"), 65_000, "")])
def test_interval_words(value, low, high, expected):
    from capmodel.formatting import interval_words

    assert interval_words(value, low, high) == expected


def test_report_03_answer_says_the_one_sided_interval():
    from capmodel.report.plan_report import plan_report

    answer = plan_report(targets=[50_000], growth=0.05).answer
    assert "carries 65,000 users, at least 62,500." in answer
