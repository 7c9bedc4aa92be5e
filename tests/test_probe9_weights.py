"""probe9: a weight of 0 takes a point out of the fit and of its verdict (capmodel.fit_usl(curve, weights=...))."""
import numpy as np
import pandas as pd
import pytest

import capmodel
from capmodel.errors import InputError

NS = np.array([1, 2, 4, 8, 16, 32, 64, 128], dtype=float)
X = 1000 * NS / (1 + 0.05 * (NS - 1) + 0.0005 * NS * (NS - 1))


def curve(outlier=True):
    x = X.copy()
    if outlier:
        x[4] *= 10   # N = 16 measured 10x
    return pd.DataFrame({"concurrency": NS, "throughput": x})


def test_a_zero_weighted_outlier_is_out_of_the_verdict():
    """Weighting the 10x point 0 gave the other seven points' peak (10,742 ops/s) and the verdict 'unusable: the
    server measured 85,562 ops/s, above the model's peak' (past_peak), from the very point the user left out; the
    fit also counted 5 residual degrees of freedom for 7 points that carried weight."""
    weights = np.ones(8)
    weights[4] = 0
    fit = capmodel.fit_usl(curve(), weights=weights)
    plain = capmodel.fit_usl(curve().drop(index=4))
    assert fit.peak_throughput == pytest.approx(plain.peak_throughput, rel=1e-6)
    assert fit.n_points == 7 and fit.df_resid == 4
    assert fit.evidence.grade == plain.evidence.grade == "sound"


def test_too_few_weighted_points_are_named_as_weights():
    with pytest.raises(InputError, match="weights: 2 points have a weight above 0, the rest are left out"):
        capmodel.fit_usl(curve(), weights=[1, 1, 0, 0, 0, 0, 0, 0])


def test_nonzero_weights_keep_every_point():
    fit = capmodel.fit_usl(curve(outlier=False), weights=np.linspace(1, 2, 8))
    assert fit.n_points == 8 and fit.df_resid == 5


@pytest.mark.parametrize("target", ["0.005", True, None])
def test_latency_targets_that_are_not_numbers_are_named(target):
    """fit.latency_limit('0.005') raised "TypeError: '>' not supported between str and int"; True ran as 1 s."""
    from capmodel.errors import PlanError

    fit = capmodel.fit_usl(curve(outlier=False))
    with pytest.raises(PlanError, match="latency target \\(seconds\\) must be a number"):
        fit.latency_limit(target)
    with pytest.raises(PlanError, match="must be a number"):
        fit.largest_concurrency_within(target)
    assert fit.latency_limit(np.float64(0.005)).reachable
