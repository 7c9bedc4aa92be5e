"""The shared fitting engine and the model declarations: each model's formula as written in the literature, the
bounds it declares, and the solver's fallback path reaching the same optimum as its fast path."""
import math

import numpy as np
import pandas as pd
import pytest

import capmodel.models.usl.engine as engine
from capmodel import datasets
from capmodel.errors import InputError
from capmodel.models.usl.family import MODELS
from capmodel.models.usl.fit import fit_usl

N = np.array([1, 2, 4, 8, 16, 32.0])
P = {"sigma": 0.04, "kappa": 2e-3, "lambda": 50.0}


@pytest.mark.parametrize("name, formula", [
    ("linear", lambda n: 50 * n),
    ("amdahl", lambda n: 50 * n / (1 + 0.04 * (n - 1))),                                   # Amdahl 1967
    ("usl", lambda n: 50 * n / (1 + 0.04 * (n - 1) + 2e-3 * n * (n - 1))),                # Gunther 2007, eq. 4.31
    ("log_coherency", lambda n: 50 * n / (1 + 0.04 * (n - 1) + 2e-3 * n * np.log(n))),
])
def test_each_declared_model_evaluates_its_formula(name, formula):
    model = MODELS[name]
    p = np.array([P[k] for k in model.names])
    assert model.evaluate(N, p) == pytest.approx(formula(N), rel=1e-12)
    # the analytic Jacobian against central differences
    step = 1e-6 * np.maximum(np.abs(p), 1e-9)
    numeric = np.column_stack([(model.evaluate(N, p + e) - model.evaluate(N, p - e)) / (2 * e.max())
                               for e in np.diag(step)])
    assert model.jacobian(N, p) == pytest.approx(numeric, rel=1e-6, abs=1e-9)


def test_declared_bounds_and_overrides_leave_the_model_unchanged():
    usl = MODELS["usl"]
    lower, upper = usl.parameter_bounds()
    assert list(lower) == [0, 0, 0] and list(upper) == [1, 1, math.inf]
    lower, upper = usl.parameter_bounds(allow_superlinear=True, overrides={"kappa": (0, 0.01)})
    assert list(lower) == [-1, 0, 0] and list(upper) == [1, 0.01, math.inf]
    assert usl.bounds["kappa"] == (0.0, 1.0) and usl.bounds["sigma"] == (0.0, 1.0)
    with pytest.raises(InputError, match="unknown parameter"):
        usl.parameter_bounds(overrides={"gamma": (0, 1)})


def test_fallback_solver_reaches_the_same_optimum(monkeypatch):
    # R usl on specsdm91 (tests/usl-nlxb.Rout.save): alpha 0.0277285, gamma 89.9952330
    curve = datasets.load_curve("usl_specsdm91")
    fast = fit_usl(curve)
    used = []
    original = engine._scipy_fit
    monkeypatch.setattr(engine, "SOLVER_MAX_ITERATIONS", 1)           # the fast path cannot converge in one step
    monkeypatch.setattr(engine, "_scipy_fit", lambda *a: used.append(1) or original(*a))
    slow = fit_usl(curve)
    assert used == [1]
    assert slow.sigma == pytest.approx(0.0277285, rel=1e-5) and slow.lambda_ == pytest.approx(89.9952330, rel=1e-7)
    assert slow.estimates == pytest.approx(fast.estimates, rel=1e-6)


def test_results_hold_data_and_derive_the_rest():
    curve = pd.DataFrame({"concurrency": N, "throughput": 50 * N / (1 + 0.04 * (N - 1))})
    fit = MODELS["amdahl"].fit(curve)
    assert list(fit.concurrency) == list(N) and fit.estimates.shape == (2,) and fit.covariance.shape == (2, 2)
    assert fit.rss == pytest.approx(float(np.sum(fit.residuals ** 2)))
    assert "rss" in vars(fit)                          # computed once, then cached on the object
    assert fit.peak_concurrency == math.inf and fit.ceiling == pytest.approx(50 / 0.04, rel=1e-9)
