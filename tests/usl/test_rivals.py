"""Rival models: linear, Amdahl, log-coherency; their shared interface and information criteria."""
import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import optimize

from capmodel import datasets
from capmodel.errors import InputError
from capmodel.models.usl.family import MODELS, get_model
from capmodel.models.usl.rivals import fit_amdahl, fit_linear, fit_log_coherency
from capmodel.models.usl.closed_form import usl_throughput
from capmodel.models.usl.fit import fit_usl

N = np.array([1, 2, 4, 8, 12, 16, 24, 32, 48, 64.0])


def curve(n, x):
    return pd.DataFrame({"concurrency": np.asarray(n, float), "throughput": np.asarray(x, float)})


def log_coherency(n, sigma, kappa, lam):
    return lam * n / (1 + sigma * (n - 1) + kappa * n * np.log(n))


def test_common_interface():
    assert [MODELS[k].n_params for k in ("linear", "amdahl", "usl", "log_coherency")] == [1, 2, 3, 3]
    c = curve(N, usl_throughput(N, 0.03, 3e-4, 100.0))
    for name, model in MODELS.items():
        f = model.fit(c)
        assert f.model == name and f.n_params == model.n_params and set(f.params) >= {"lambda"}
        assert f.predict(N).shape == N.shape
        for attr in ("aic", "aicc", "bic", "rmse", "r2"):
            assert math.isfinite(getattr(f, attr))
    with pytest.raises(InputError, match="unknown model"):
        get_model("quadratic")


def test_linear_is_least_squares_through_origin_and_loglik_matches_statsmodels():
    rng = np.random.default_rng(1)
    x = 50 * N * (1 + 0.02 * rng.standard_normal(len(N)))
    f = fit_linear(curve(N, x))
    assert f.lambda_ == pytest.approx(np.dot(N, x) / np.dot(N, N), rel=1e-9)
    ols = sm.OLS(x, N.reshape(-1, 1)).fit()
    assert f.loglik == pytest.approx(ols.llf, rel=1e-9)
    # AIC counts the variance as a parameter, as R's AIC for nls: -2 llf + 2 (1 + 1); statsmodels counts 1
    assert f.aic == pytest.approx(-2 * ols.llf + 4, rel=1e-9)
    assert f.bic == pytest.approx(-2 * ols.llf + 2 * math.log(len(N)), rel=1e-9)
    # AICc = AIC + 2k(k+1)/(n-k-1), k = 2, n = 10
    assert f.aicc == pytest.approx(f.aic + 2 * 2 * 3 / 7)
    assert math.isinf(f.peak_concurrency) and math.isinf(f.ceiling)


def test_amdahl_on_raytracer_equals_usl_with_kappa_at_zero():
    # The R usl fit of raytracer has beta = 0 (tests/confint.Rout.save of smoeding/usl), so Amdahl must give the
    # same sigma and lambda: alpha 0.0578, gamma 21.8488.
    c = datasets.load_curve("usl_raytracer")
    a, u = fit_amdahl(c), fit_usl(c)
    assert a.sigma == pytest.approx(u.sigma, rel=1e-6) and a.lambda_ == pytest.approx(21.8488, rel=1e-5)
    assert a.kappa == 0 and a.n_params == 2 and "kappa" not in a.params
    assert math.isinf(a.peak_concurrency) and a.ceiling == pytest.approx(a.lambda_ / a.sigma)
    assert a.df_resid == 9 and a.rss == pytest.approx(u.rss, rel=1e-6)


def test_amdahl_recovers_parameters_and_uses_its_own_errors():
    x = usl_throughput(N, 0.08, 0.0, 40.0)
    a = fit_amdahl(curve(N, x))
    assert (a.sigma, a.lambda_) == pytest.approx((0.08, 40.0), rel=1e-7)
    assert a.warnings == []


def test_log_coherency_recovers_parameters_and_peak():
    x = log_coherency(N, 0.02, 0.01, 100.0)
    f = fit_log_coherency(curve(N, x))
    assert (f.sigma, f.kappa, f.lambda_) == pytest.approx((0.02, 0.01, 100.0), rel=1e-6)
    # dX/dN = 0 at N* = (1 - sigma)/kappa = 98; check against a numerical maximisation
    numeric = optimize.minimize_scalar(lambda n: -log_coherency(n, 0.02, 0.01, 100.0), bounds=(1, 1000),
                                       method="bounded", options={"xatol": 1e-8}).x
    assert f.peak_concurrency == pytest.approx(98.0) == pytest.approx(numeric, rel=1e-5)
    assert f.peak_throughput == pytest.approx(log_coherency(98.0, 0.02, 0.01, 100.0))
    assert f.warnings == []                           # 98 is within 2x the largest measured N = 64
    near = N[N <= 32]
    far = fit_log_coherency(curve(near, log_coherency(near, 0.02, 0.01, 100.0)))
    assert any(w.startswith("the peak (") and "past 2x it rests on the formula" in w for w in far.warnings)


def test_models_share_the_bootstrap_and_intervals():
    rng = np.random.default_rng(5)
    x = usl_throughput(N, 0.08, 0.0, 40.0) * (1 + 0.02 * rng.standard_normal(len(N)))
    a = fit_amdahl(curve(N, x))
    boot = a.bootstrap(200, seed=1)
    assert list(boot.samples.columns) == ["sigma", "lambda"] and boot.n_failed == 0
    ci = a.conf_int(0.95)
    assert list(ci.index) == ["sigma", "lambda"] and ci.loc["sigma", "low"] < a.sigma < ci.loc["sigma", "high"]
