"""An interval is said as it is: both ends, and its width as the ratio of its ends ('1,635 to 2,452 ops/s spans
1.5x'), never as one ± figure that fits only a symmetric interval (report 02 said '(1,016 to 5,917) is ±172%' around
1,424)."""
import math

import pytest

from capmodel import datasets
from capmodel.formatting import number
from capmodel.models.usl.verdict import assessment as A
from capmodel.models.evidence import SOUND_SPAN
from capmodel.models.usl.rivals import fit_amdahl
from capmodel.models.usl.fit import fit_usl


@pytest.mark.parametrize("low, high", [(0.713, 4.155), (0.2, 1.8), (0.1, 1.3), (1.1, 3.0), (1.05, 2.5),
                                       (0.9, 1.1)])
def test_the_interval_reason_gives_both_ends_and_their_ratio(low, high):
    fit = fit_amdahl(datasets.load_curve("plgm_workload1"))
    ceiling = fit.ceiling
    reason = A.check_interval(ceiling * low, ceiling * high, "the ceiling", 0.95)
    if high / low <= SOUND_SPAN:         # 1.1 / 0.9 = 1.22: narrow enough to be sound
        assert reason is None
        return
    assert reason.code == "wide_interval" and reason.grade == "weak" and "±" not in reason.message
    assert reason.value == pytest.approx(high / low)
    assert f"of the ceiling ({number(ceiling * low)} to {number(ceiling * high)} ops/s)" in reason.message
    assert f"spans {number(high / low, 3)}x" in reason.message


def test_an_interval_without_an_upper_end_or_any_end_says_so():
    unbounded = A.check_interval(1200.0, math.inf, "the peak throughput", 0.95)
    assert (unbounded.code, unbounded.grade, unbounded.value) == ("unbounded", "unusable", 1200.0)
    assert "has no upper end; they support at least 1,200 ops/s" in unbounded.message
    missing = A.check_interval(math.nan, math.nan, "the peak throughput", 0.95)
    assert (missing.code, missing.grade) == ("no_interval", "unusable")


def test_an_interval_from_zero_states_no_infinite_ratio():
    reason = A.check_interval(0.0, 9063.0, "the planned capacity", 0.95)
    assert reason.grade in ("weak", "unusable") and "(0 to 9,063 ops/s)" in reason.message
    assert "unreachable" not in reason.message and "infx" not in reason.message


@pytest.mark.parametrize("name", ["usl_specsdm91", "usl_raytracer", "plgm_workload1", "plgm_workload2",
                                  "plgm_workload3"])
@pytest.mark.parametrize("fitter", [fit_usl, fit_amdahl])
@pytest.mark.parametrize("level", [0.8, 0.95, 0.99])
def test_no_verdict_says_an_interval_as_plus_minus(name, fitter, level):
    fit = fitter(datasets.load_curve(name))
    for reason in A.assess_fit(fit, level=level).reasons:
        assert "±" not in reason.message, reason.message
