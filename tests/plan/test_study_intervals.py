"""Each figure of the plan table and its interval come from one set of evaluations (the plan at the value and at the
ends of every stated range): the estimate lies inside its interval, and an estimate on an end of its interval (a
one-sided stated range, as the benchANT study's "2.5-2.6x" used as 2.6x) is found where the stated ranges are
one-sided and nowhere else. How the table marks and explains it: test_plan_words.py.
"""
import pandas as pd
import pytest

from capmodel.plan.planner import INTERVAL_COLUMNS
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


def shifted_plan(shift):
    """The bundled study's plan; with ``shift`` "symmetric", every stated range centred on its value (nothing
    one-sided)."""
    measurements = None
    if shift == "symmetric":
        measurements = pd.read_csv(THROUGHPUT)
        half = (measurements["relative_throughput_high"] - measurements["relative_throughput_low"]) / 2
        half = half.where(half > 0, 0.05)
        measurements["relative_throughput_low"] = measurements["relative_throughput"] - half
        measurements["relative_throughput_high"] = measurements["relative_throughput"] + half
        measurements.loc[measurements["vm"] == "m3-xlarge-8-SAS", ["relative_throughput_low",
                                                                   "relative_throughput_high"]] = 1.0
    return _study_plan(_plan(measurements))


@pytest.mark.parametrize("shift", [None, "symmetric"])
def test_estimates_lie_inside_their_intervals_and_one_sided_ones_are_found(shift):
    plan = shifted_plan(shift)
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
    assert one_sided == (shift is None)
