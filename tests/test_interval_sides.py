"""An interval is said as it is: each end against its estimate ('29% below to 316% above'), never as one ± figure
that fits only a symmetric interval (report 02 said '(1,016 to 5,917) is ±172%' around 1,424)."""
import re

import pandas as pd
import pytest

from capmodel import datasets
from capmodel.models import assessment as A
from capmodel.models.rivals import fit_amdahl
from capmodel.models.usl import fit_usl


def sides(message: str) -> list[tuple[int, str]]:
    return [(int(p), w) for p, w in re.findall(r"(\d+)% (below|above)", message)]


@pytest.mark.parametrize("low, high", [(0.713, 4.155), (0.2, 1.8), (0.1, 1.3), (1.1, 3.0), (1.05, 2.5)])
def test_the_interval_width_reason_gives_both_ends_against_the_estimate(low, high):
    fit = fit_amdahl(datasets.load_curve("plgm_workload1"))
    lam = fit.lambda_
    frame = pd.DataFrame({"low": [lam * low], "high": [lam * high]}, index=["lambda"])
    reason = A.check_interval_width(fit, 0.95, frame)
    assert reason is not None and "±" not in reason.message
    expected = [(round(abs(end - 1) * 100), "below" if end < 1 else "above") for end in (low, high)]
    assert sides(reason.message) == expected
    shown = [A._n(lam * end) for end in (low, high)]
    assert f"({shown[0]} to {shown[1]})" in reason.message and f"estimate of {lam:,.0f}" in reason.message


@pytest.mark.parametrize("name", ["usl_specsdm91", "usl_raytracer", "plgm_workload1", "plgm_workload2",
                                  "plgm_workload3"])
@pytest.mark.parametrize("fitter", [fit_usl, fit_amdahl])
@pytest.mark.parametrize("level", [0.8, 0.95, 0.99])
def test_no_verdict_says_an_interval_as_plus_minus(name, fitter, level):
    fit = fitter(datasets.load_curve(name))
    for reason in A.assess_fit(fit, level=level).reasons:
        assert "±" not in reason.message, reason.message
