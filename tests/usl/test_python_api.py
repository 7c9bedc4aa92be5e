"""The Python API as a notebook user calls it, with what a notebook holds: ``fit_usl`` on a numpy array, a table
with a repeated column, a column of durations or of complex numbers is refused naming the input; ``predict`` of a
negative, non-numeric or overflowing concurrency, ``conf_int('x')``, ``bootstrap(1.5)`` and ``bootstrap(10**9)`` are
refused before any work (no IndexError, TypeError, MemoryError or numpy warning). Reference values: the fit's own
closed form, X(N) = λN / (1 + σ(N−1) + κN(N−1)).
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import capmodel
from capmodel.errors import CapmodelError

BASE = pd.DataFrame({"concurrency": [1, 2, 4, 8, 16, 32], "throughput": [100, 190, 350, 600, 800, 900]})


@pytest.fixture(autouse=True)
def no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


@pytest.mark.parametrize("curve, words", [
    (BASE.to_numpy(), "expected a table (pandas DataFrame), got ndarray"),
    (pd.concat([BASE, BASE[["throughput"]]], axis=1), "'throughput' appear more than once"),
    (BASE.assign(throughput=pd.to_timedelta(BASE.throughput, unit="s")), "'throughput' holds durations"),
    (BASE.assign(throughput=BASE.throughput.astype(complex)), "'throughput' holds complex numbers"),
    (BASE.assign(concurrency=pd.to_datetime(BASE.concurrency)), "'concurrency' holds dates"),
])
def test_a_table_that_is_not_a_curve_of_real_numbers_is_one_capmodel_error(curve, words):
    for fit in (capmodel.fit_usl, capmodel.compare_models):
        with pytest.raises(CapmodelError) as info:
            fit(curve)
        assert words in str(info.value)


@pytest.mark.parametrize("table", [BASE.astype(object), BASE.astype(str), BASE.astype("Int64")])
def test_numbers_held_as_objects_text_or_nullable_integers_fit_as_floats_do(table):
    expected = capmodel.fit_usl(BASE)
    got = capmodel.fit_usl(table)
    assert (got.sigma, got.kappa, got.lambda_) == (expected.sigma, expected.kappa, expected.lambda_)


@pytest.mark.parametrize("n", [-1, float("nan"), float("inf"), 1e308, "x", [1, -2], None])
def test_predict_refuses_what_is_no_concurrency(n):
    fit = capmodel.fit_usl(BASE)
    with pytest.raises(CapmodelError, match="^n: "):
        fit.predict(n)
    with pytest.raises(CapmodelError, match="^n: "):
        fit.predict(n, level=0.95)


def test_predict_still_evaluates_the_closed_form():
    fit = capmodel.fit_usl(BASE)
    n = np.array([0.0, 1.0, 8.0, 1e12])
    expected = fit.lambda_ * n / (1 + fit.sigma * (n - 1) + fit.kappa * n * (n - 1))
    np.testing.assert_allclose(fit.predict(n), expected, rtol=1e-12)
    assert float(fit.predict(8)) == pytest.approx(expected[2], rel=1e-12)
    assert list(fit.predict([])) == []


@pytest.mark.parametrize("level", ["x", True, None, float("nan"), 0, 1, [0.9]])
def test_a_level_that_is_not_a_fraction_is_refused(level):
    fit = capmodel.fit_usl(BASE)
    with pytest.raises(CapmodelError, match="^level: expected a confidence level between 0 and 1"):
        fit.conf_int(level)


@pytest.mark.parametrize("n_samples, words", [
    (1.5, "expected a whole number at least 1, got 1.5"), ("10", "expected a whole number"),
    (0, "got 0"), (True, "got True"),
    (10**9, "1,000,000,000 resamples of 6 points hold 6,000,000,000 values at once, more than 10,000,000; "
            "ask for at most 1,666,666"),
])
def test_bootstrap_sizes_are_whole_and_bounded_before_any_allocation(n_samples, words):
    fit = capmodel.fit_usl(BASE)
    with pytest.raises(CapmodelError, match="^n_samples: "):
        fit.bootstrap(n_samples)
    with pytest.raises(CapmodelError) as info:
        fit.conf_int(0.9, method="bootstrap", n_samples=n_samples)
    assert words in str(info.value)


def test_a_numpy_integer_sample_count_still_bootstraps():
    assert capmodel.fit_usl(BASE).bootstrap(np.int64(7)).samples.shape[0] == 7
