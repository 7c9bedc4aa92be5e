"""Huber's robust fit: equal to statsmodels' RLM where both apply (the linear model), and it resists an outlier."""
import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from capmodel.models.usl.robust import fit_robust
from capmodel.models.usl.closed_form import usl_throughput
from capmodel.models.usl.fit import fit_usl

N = np.array([1, 2, 4, 8, 12, 16, 24, 32, 48, 64.0])


def test_linear_model_equals_statsmodels_rlm_with_huber_and_mad():
    rng = np.random.default_rng(3)
    x = 50 * N * (1 + 0.02 * rng.standard_normal(len(N)))
    x[6] *= 0.6                                              # one step hit by something else
    ours = fit_robust(pd.DataFrame({"concurrency": N, "throughput": x}), model="linear")
    rlm = sm.RLM(x, N[:, None], M=sm.robust.norms.HuberT(t=1.345)).fit(tol=1e-14, conv="coefs", maxiter=200)
    assert ours.fit.lambda_ == pytest.approx(rlm.params[0], rel=1e-9)
    assert ours.scale == pytest.approx(rlm.scale, rel=1e-7)
    assert ours.weights == pytest.approx(rlm.weights, abs=1e-7)
    assert ours.downweighted.index[0] == 6                  # the outlier gets the lowest weight


def test_usl_outlier_pulls_least_squares_but_not_the_robust_fit():
    x = usl_throughput(N, 0.03, 5e-4, 100.0) * (1 + 0.01 * np.random.default_rng(8).standard_normal(len(N)))
    x[7] *= 0.5                                              # N = 32 measured during a backup
    curve = pd.DataFrame({"concurrency": N, "throughput": x})
    plain, robust = fit_usl(curve), fit_robust(curve)
    true_peak = np.sqrt(0.97 / 5e-4)                        # 44.0
    assert abs(robust.fit.peak_concurrency - true_peak) < 0.1 * true_peak
    assert abs(plain.peak_concurrency - true_peak) > 2 * abs(robust.fit.peak_concurrency - true_peak)
    assert robust.weights[7] < 0.2 and robust.weights[[0, 1, 2]].min() == 1.0
