"""The USL's latency form and fits from observed (throughput, latency) points.

Reference parameters: Schwartz, *Practical Scalability Analysis with the Universal Scalability Law* (VividCortex,
2015), fits the Isilon benchmark to sigma = 0.00487, kappa = 1.33e-6, lambda = 1768 ops/s per node; those values
generate the points here. Every expected number is computed in this file from the USL's own definition
X(N) = lambda N / (1 + sigma (N - 1) + kappa N (N - 1)) and Little's law R = N / X, not from capmodel.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import capmodel
from capmodel.errors import InputError
from capmodel.models.usl.latency_form import throughput_at_latency, usl_latency

SIGMA, KAPPA, LAMBDA = 0.00487, 1.33e-6, 1768.0


def usl(n):
    n = np.asarray(n, dtype=float)
    return LAMBDA * n / (1 + SIGMA * (n - 1) + KAPPA * n * (n - 1))


N_PEAK = math.sqrt((1 - SIGMA) / KAPPA)          # Gunther's peak of the USL


def test_both_branches_of_the_nose_give_back_littles_law_latency():
    below = np.array([1, 10, 100, 500, 800])
    above = np.array([1000, 2000, 5000])
    assert N_PEAK > below.max() and N_PEAK < above.min()
    assert usl_latency(usl(below), SIGMA, KAPPA, LAMBDA, "normal") == pytest.approx(below / usl(below), rel=1e-9)
    assert usl_latency(usl(above), SIGMA, KAPPA, LAMBDA, "retrograde") == pytest.approx(above / usl(above), rel=1e-9)
    # past the nose there is no latency at all
    assert np.isnan(usl_latency(1.01 * usl(N_PEAK), SIGMA, KAPPA, LAMBDA))


def test_throughput_at_a_latency_target_is_where_littles_law_latency_reaches_it():
    target = 0.002                                   # 2 ms
    # independent: bisection on R(N) = N / X(N) over the normal branch
    lo, hi = 1.0, N_PEAK
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if mid / usl(mid) < target else (lo, mid)
    assert throughput_at_latency(target, SIGMA, KAPPA, LAMBDA) == pytest.approx(float(usl(lo)), rel=1e-9)
    assert math.isnan(throughput_at_latency(0.5 / LAMBDA, SIGMA, KAPPA, LAMBDA))   # one client is already slower


def _points(n, noise=0.0, seed=3):
    """Observed intervals: throughput is a count (exact), the mean latency carries relative noise."""
    rng = np.random.default_rng(seed)
    x = usl(n)
    r = np.asarray(n) / usl(n) * (1 + noise * rng.standard_normal(len(n)))
    return pd.DataFrame({"concurrency": x * r, "throughput": x, "latency_mean_ms": r * 1000})


def test_fit_usl_latency_recovers_the_isilon_parameters_from_exact_points():
    fit = capmodel.fit_usl_latency(_points(np.array([1, 2, 4, 8, 16, 32, 64, 128, 256, 400, 600])))
    assert (fit.sigma, fit.kappa, fit.lambda_) == pytest.approx((SIGMA, KAPPA, LAMBDA), rel=1e-5)
    assert fit.peak_concurrency == pytest.approx(N_PEAK, rel=1e-5)
    assert fit.peak_throughput == pytest.approx(float(usl(N_PEAK)), rel=1e-6)
    observed = np.quantile(usl([1, 2, 4, 8, 16, 32, 64, 128, 256, 400, 600]), 0.95)   # numpy default: linear
    assert fit.spare_fraction == pytest.approx(1 - observed / float(usl(N_PEAK)), rel=1e-4)
    assert f"{fit.spare_fraction:.1%} of the fitted peak spare" in fit.summary()
    assert fit.latency_ms(usl(300)) == pytest.approx(300 / usl(300) * 1000, rel=1e-5)


def test_noisy_observations_give_intervals_that_cover_the_truth():
    rng = np.random.default_rng(7)
    n = rng.uniform(1, 700, 150)                     # many points at uneven N, as production gives them
    fit = capmodel.fit_usl_latency(_points(n, noise=0.03))
    table = fit.conf_int(0.95, n_samples=100, planned_throughput=150_000, latency_target_ms=2.0)
    truth = {"sigma": SIGMA, "kappa": KAPPA, "lambda": LAMBDA, "peak_throughput": float(usl(N_PEAK))}
    for name, value in truth.items():
        assert table.loc[name, "low"] <= value <= table.loc[name, "high"], (name, table.loc[name].tolist())
    assert table.loc["latency_at_planned_ms", "estimate"] == pytest.approx(
        float(fit.latency_ms(150_000)), rel=1e-12)
    assert list(table.columns) == ["estimate", "low", "high"]


def test_binned_observations_fit_with_replicate_counts_as_weights():
    rng = np.random.default_rng(11)
    points = _points(rng.uniform(1, 700, 300), noise=0.03)
    binned = capmodel.bin_by_concurrency(points, bins=10)
    assert binned["points"].sum() == len(points)
    # independent check of one bin: the rows with the smallest concurrencies
    edges = np.geomspace(points["concurrency"].min(), points["concurrency"].max(), 11)
    first = points[points["concurrency"] < edges[1]]
    assert binned.loc[0, "throughput"] == pytest.approx(first["throughput"].mean())
    fit = capmodel.fit_usl(binned, weights=binned["points"])
    assert fit.sigma == pytest.approx(SIGMA, rel=0.3) and fit.kappa == pytest.approx(KAPPA, rel=0.3)
    assert fit.peak_throughput == pytest.approx(float(usl(N_PEAK)), rel=0.05)


def test_bad_observed_curves_are_refused_with_the_row_or_column():
    with pytest.raises(InputError, match="latency_mean_ms"):
        capmodel.fit_usl_latency(pd.DataFrame({"throughput": [1.0, 2.0, 3.0, 4.0]}))
    bad = _points(np.array([1, 2, 4, 8, 16]))
    bad.loc[3, "latency_mean_ms"] = 0.0
    with pytest.raises(InputError, match="row 3"):
        capmodel.fit_usl_latency(bad)


def test_throughput_method_fits_the_usl_on_littles_law_concurrency():
    fit = capmodel.fit_usl_latency(_points(np.array([1, 2, 4, 8, 16, 32, 64, 128, 256, 400, 600])),
                                   method="throughput")
    assert (fit.sigma, fit.kappa, fit.lambda_) == pytest.approx((SIGMA, KAPPA, LAMBDA), rel=1e-4)
    with pytest.raises(InputError, match="method"):
        capmodel.fit_usl_latency(_points(np.array([1, 2, 4, 8])), method="nose")
