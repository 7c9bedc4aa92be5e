"""The USL fit against the R package ``usl`` (Stefan Moeding, github.com/smoeding/usl) and against hand calculations.

Published values come from the package's own saved test outputs (R 3.6.2, usl 2.x), file named at each test:
tests/summary.Rout.save, tests/usl-nlxb.Rout.save, tests/confint.Rout.save, tests/coef.Rout.save,
tests/usl-unordered.Rout.save, tests/efficiency.Rout.save, tests/predict.Rout.save, tests/peak-scalability.Rout.save,
tests/limit-scalability.Rout.save, tests/optimal-scalability.Rout.save, tests/scalability.Rout.save,
tests/sigma.Rout.save. R names the coefficients alpha (our sigma), beta (kappa), gamma (lambda).
"""
import math

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats

from capmodel import datasets
from capmodel.errors import FitError, InputError
from capmodel.models.usl.closed_form import usl_throughput
from capmodel.models.usl.engine import replicate_weights
from capmodel.models.usl.fit import fit_usl


def sig(published, digits=4):
    """Equal to ``published`` to the number of significant digits R printed."""
    return pytest.approx(published, rel=0.5 * 10 ** (1 - digits) * 1.0001)


@pytest.fixture(scope="module")
def specsdm91():
    return fit_usl(datasets.load_curve("usl_specsdm91"))


@pytest.fixture(scope="module")
def raytracer():
    return fit_usl(datasets.load_curve("usl_raytracer"))


def curve(n, x):
    return pd.DataFrame({"concurrency": np.asarray(n, float), "throughput": np.asarray(x, float)})


# --- the R package usl ----------------------------------------------------------------------------------------------

def test_specsdm91_coefficients_match_r_summary(specsdm91):
    # tests/summary.Rout.save: alpha 2.773e-02 (9.122e-03), beta 1.044e-04 (1.988e-05), gamma 9.000e+01 (1.421e+01),
    # "Residual standard error: 82.85 on 4 degrees of freedom", "Multiple R-squared: 0.9896"
    f = specsdm91
    assert f.sigma == sig(2.773e-02) and f.se["sigma"] == sig(9.122e-03)
    assert f.kappa == sig(1.044e-04) and f.se["kappa"] == sig(1.988e-05)
    assert f.lambda_ == sig(9.000e01) and f.se["lambda"] == sig(1.421e01)
    assert f.rse == sig(82.85) and f.df_resid == 4
    assert f.r2 == sig(0.9896)


def test_specsdm91_more_digits_match_r_nlxb(specsdm91):
    # tests/usl-nlxb.Rout.save prints more digits: alpha 0.0277285 (0.0091217), gamma 89.9952330 (14.2134894)
    f = specsdm91
    assert f.sigma == sig(0.0277285, 6) and f.se["sigma"] == sig(0.0091217, 5)
    assert f.lambda_ == sig(89.9952330, 8) and f.se["lambda"] == sig(14.2134894, 8)
    # tests/optimal-scalability.Rout.save: optimal.scalability = 1/alpha = 36.06401 (all.equal tolerance 1e-4)
    assert 1 / f.sigma == pytest.approx(36.06401, rel=1e-4)


def test_specsdm91_derived_values_match_r(specsdm91):
    f = specsdm91
    # tests/efficiency.Rout.save: X_measured / (gamma N)
    assert f.efficiency() == pytest.approx([0.7211, 0.6148, 0.5100, 0.2860, 0.1882, 0.1370, 0.0876], abs=5e-5)
    # tests/predict.Rout.save (printed to integers)
    assert f.predict(f.curve["concurrency"]) == pytest.approx([90, 1078, 1541, 1850, 1879, 1822, 1646], abs=0.5)
    # tests/peak-scalability.Rout.save: signif(peak.scalability(u), 2) = 97
    assert float(f"{f.peak_concurrency:.2g}") == 97
    # tests/limit-scalability.Rout.save: limit.scalability(u) = 3245.589 (gamma/alpha, the Amdahl ceiling)
    assert f.ceiling == pytest.approx(3245.589, rel=1e-4)
    # tests/scalability.Rout.save: signif(scalability(u)(20), 2) = 1100
    assert float(f"{float(f.predict(20)):.2g}") == 1100
    # tests/sigma.Rout.save: signif(sigma(u), 3) = 82.8
    assert float(f"{f.rse:.3g}") == 82.8


def test_raytracer_matches_r_confint(raytracer):
    # tests/confint.Rout.save: coef alpha 0.0578, beta 0.0000, gamma 21.8488;
    # confint alpha 0.033677..0.081864, beta -0.000214..0.000214, gamma 17.868380..25.829306.
    f = raytracer
    assert f.sigma == sig(0.0578, 3) and f.lambda_ == sig(21.8488, 6)
    assert f.kappa == 0.0
    # R's confint.R computes estimate +- qt(level, df = n - 1) * se: with level 0.95 that is a two-sided 90% interval
    # on n - 1 degrees of freedom. Reproducing R's numbers from our standard errors checks the errors themselves:
    q = stats.t.ppf(0.95, f.n_points - 1)
    assert f.sigma - q * f.se["sigma"] == sig(0.033677, 5) and f.sigma + q * f.se["sigma"] == sig(0.081864, 5)
    assert f.lambda_ - q * f.se["lambda"] == sig(17.868380, 7)
    assert f.lambda_ + q * f.se["lambda"] == sig(25.829306, 7)
    assert q * f.se["kappa"] == sig(0.000214, 3)
    # Ours, on purpose different: the two-sided interval (t at 0.975) on n - p = 8 degrees of freedom, and kappa's
    # interval stops at 0 (R lets it go negative; a negative coherency has no meaning).
    ci = f.conf_int(0.95)
    q95 = stats.t.ppf(0.975, 8)
    assert ci.loc["sigma", "low"] == pytest.approx(f.sigma - q95 * f.se["sigma"])
    assert ci.loc["lambda", "high"] == pytest.approx(f.lambda_ + q95 * f.se["lambda"])
    assert ci.loc["kappa", "low"] == 0.0 and ci.loc["kappa", "high"] == pytest.approx(q95 * f.se["kappa"])
    assert ci.loc["sigma", "low"] < 0.033677 and ci.loc["sigma", "high"] > 0.081864


def test_coef_dataset_matches_r_in_any_row_order():
    # tests/coef.Rout.save and tests/usl-unordered.Rout.save: alpha 0.02, beta 0.02, gamma 1.00 (3 digits)
    n, x = [1, 2, 4, 6, 8, 10], [1, 1.8868, 3.0769, 3.5294, 3.5398, 3.3557]
    for order in (slice(None), slice(None, None, -1)):
        f = fit_usl(curve(np.array(n)[order], np.array(x)[order]))
        assert f.sigma == sig(0.02, 3) and f.kappa == sig(0.02, 3) and f.lambda_ == sig(1.00, 3)


# --- the model function ---------------------------------------------------------------------------------------------

def test_usl_throughput_by_hand():
    # X(8) with sigma = kappa = 0.02, lambda = 1: 8 / (1 + 0.02*7 + 0.02*56) = 8 / 2.26
    assert usl_throughput(8, 0.02, 0.02, 1.0) == pytest.approx(8 / 2.26)
    assert usl_throughput([1, 4], 0.0, 0.0, 5.0) == pytest.approx([5, 20])


def test_no_single_client_point_needed():
    n = np.array([4, 8, 16, 24, 32, 48, 64.0])
    f = fit_usl(curve(n, usl_throughput(n, 0.04, 2e-4, 250.0)))
    assert (f.sigma, f.kappa, f.lambda_) == pytest.approx((0.04, 2e-4, 250.0), rel=1e-6)


# --- warnings -------------------------------------------------------------------------------------------------------

def test_no_warnings_on_a_clean_fit(specsdm91):
    assert specsdm91.warnings == []


def test_warning_kappa_at_bound(raytracer):
    assert len(raytracer.warnings) == 1 and "kappa is at its lower bound 0" in raytracer.warnings[0]


def test_few_points_widen_the_peaks_interval():
    """Fewer points leave fewer degrees of freedom to the scatter: the peak's interval (over the likelihood region)
    widens, the grade with it, rather than a warning saying so."""
    rng = np.random.default_rng(2)
    many = np.array([1, 2, 4, 6, 8, 10, 12, 14, 16, 20.0])
    x = usl_throughput(many, 0.02, 0.02, 1.0) * np.exp(rng.normal(0, 0.02, len(many)))
    few = fit_usl(curve(many[[0, 2, 4, 6, 9]], x[[0, 2, 4, 6, 9]])).figure_intervals()["peak_throughput"]
    all_ = fit_usl(curve(many, x)).figure_intervals()["peak_throughput"]
    assert few.high / few.low > all_.high / all_.low > 1


def test_warning_peak_extrapolated():
    n = np.array([1, 2, 4, 8, 12, 16, 20.0])
    far = fit_usl(curve(n, usl_throughput(n, 0.01, 1e-4, 100.0)))      # peak sqrt(0.99/1e-4) = 99.5 > 2 * 20
    assert far.peak_concurrency == pytest.approx(math.sqrt(0.99 / 1e-4), rel=1e-6)
    assert any(w.startswith("the peak (") and "past 2x it rests on the formula" in w for w in far.warnings)
    near = fit_usl(curve(n, usl_throughput(n, 0.01, 4e-3, 100.0)))     # peak sqrt(0.99/4e-3) = 15.7, measured
    assert not any("extrapolated" in w for w in near.warnings)


def test_superlinear_only_when_allowed():
    n = np.array([1, 2, 4, 8, 16, 24, 32, 48.0])
    x = usl_throughput(n, -0.02, 5e-4, 100.0)
    bounded = fit_usl(curve(n, x))
    assert bounded.sigma == 0.0 and any("sigma is at its lower bound 0" in w for w in bounded.warnings)
    free = fit_usl(curve(n, x), allow_superlinear=True)
    assert free.sigma == pytest.approx(-0.02, rel=1e-6)
    assert any("superlinear" in w for w in free.warnings)
    assert not any("superlinear" in w for w in fit_usl(curve(n, usl_throughput(n, 0.02, 5e-4, 100.0)),
                                                         allow_superlinear=True).warnings)


def test_user_bounds():
    n = np.array([1, 2, 4, 8, 16, 24, 32, 48.0])
    f = fit_usl(curve(n, usl_throughput(n, 0.02, 5e-4, 100.0)), bounds={"kappa": (0.0, 1e-4)})
    assert f.kappa == 1e-4 and any("kappa is at its upper bound" in w for w in f.warnings)
    with pytest.raises(InputError, match="unknown parameter"):
        fit_usl(curve(n, n), bounds={"alpha": (0, 1)})


# --- prediction, intervals ------------------------------------------------------------------------------------------

def test_predict_band_contains_fit_and_widens_away_from_data(specsdm91):
    f = specsdm91
    band = f.predict([36, 108, 216, 400, 800], level=0.95)
    assert list(band.columns) == ["concurrency", "throughput", "low", "high"]
    assert np.all(band["low"] < band["throughput"]) and np.all(band["throughput"] < band["high"])
    assert band["throughput"].to_numpy() == pytest.approx(f.predict([36, 108, 216, 400, 800]))
    width = (band["high"] - band["low"]).to_numpy()
    assert width[2] < width[3] < width[4]          # beyond the largest measured N = 216 the band opens up
    assert isinstance(f.predict([1, 2]), np.ndarray)


def test_predict_band_is_the_range_over_the_likelihood_region(specsdm91):
    """The band at N is X(N)'s range over the parameter sets the data do not reject. Independent reference: a dense
    grid of (σ, κ) (400 x 400, log-spaced, with 0), λ profiled exactly on both residual scales (absolute and log),
    the threshold RSS_min (1 + F(1, n - 3) / (n - 3)) at the region's nominal level; and Amdahl's law (κ = 0) with
    its own threshold on n - 2 degrees of freedom where the family's F test at 99% does not reject it."""
    from scipy.special import fdtri

    from capmodel.models.usl.region import EDGE_PLAUSIBLE, nominal_level

    f = specsdm91
    n, x = f.curve["concurrency"].to_numpy(float), f.curve["throughput"].to_numpy(float)
    N, level, dof = 300.0, nominal_level(0.90), len(n) - 3
    s, k = (np.concatenate([[0.0], np.geomspace(lo, hi, 400)]) for lo, hi in ((1e-6, 0.99), (1e-10, 1e-2)))
    S, K = (a.ravel()[:, None] for a in np.meshgrid(s, k, indexing="ij"))
    lows, highs = [], []
    for log in (False, True):
        def profile(S, K):
            shape = n / (1 + S * (n - 1) + K * n * (n - 1))
            if log:
                r = np.log(x) - np.log(shape)
                c = r.mean(axis=1)
                return ((r - c[:, None]) ** 2).sum(axis=1), c, np.full(len(c), float(len(n)))
            sff = (shape * shape).sum(axis=1)
            c = shape @ x / sff
            return x @ x - c * (shape @ x), c, sff

        def band(S, K, rss, c, curve, limit):
            keep = rss <= limit
            half = np.sqrt(np.maximum(limit - rss, 0) / curve)
            lam = (np.exp(c - half), np.exp(c + half)) if log else (c - half, c + half)
            at = (N / (1 + S * (N - 1) + K * N * (N - 1))).ravel()
            lows.append((lam[0] * at)[keep].min())
            highs.append((lam[1] * at)[keep].max())

        rss, c, curve = profile(S, K)
        band(S, K, rss, c, curve, rss.min() * (1 + fdtri(1, dof, level) / dof))
        amdahl = K.ravel() == 0
        edge = profile(S[amdahl], K[amdahl])
        if edge[0].min() <= rss.min() * (1 + fdtri(1, dof, EDGE_PLAUSIBLE) / dof):
            band(S[amdahl], K[amdahl], *edge, edge[0].min() * (1 + fdtri(1, dof + 1, level) / (dof + 1)))
    got = f.predict([N], level=0.90)
    assert got["low"].iloc[0] == pytest.approx(min(lows), rel=0.02)
    assert got["high"].iloc[0] == pytest.approx(max(highs), rel=0.02)


def test_bootstrap_refits_agree_with_one_by_one_fits(specsdm91):
    f = specsdm91
    boot = f.bootstrap(n_samples=30, seed=3, method="case")
    rng = np.random.default_rng(3)
    idx = rng.integers(0, 7, size=(30, 7))        # the same draws the bootstrap made
    n, x = f.curve["concurrency"].to_numpy(), f.curve["throughput"].to_numpy()
    one_by_one = []
    for row in idx:
        if len(np.unique(n[row])) >= 3:
            g = fit_usl(curve(n[row], x[row]))
            one_by_one.append([g.sigma, g.kappa, g.lambda_])
    assert boot.n_failed == 30 - len(one_by_one)
    assert boot.samples.to_numpy() == pytest.approx(np.array(one_by_one), rel=1e-5, abs=1e-10)


def test_bootstrap_is_seeded_and_has_all_parameters(specsdm91):
    a = specsdm91.bootstrap(200, seed=7, method="residual")
    b = specsdm91.bootstrap(200, seed=7, method="residual")
    assert list(a.samples.columns) == ["sigma", "kappa", "lambda"] and len(a.samples) == 200 and a.n_failed == 0
    pd.testing.assert_frame_equal(a.samples, b.samples)
    ci = specsdm91.conf_int(0.9, method="bootstrap", n_samples=200, seed=7, resampling="residual")
    assert np.all(ci["low"] < ci["high"])
    assert ci.loc["kappa", "low"] <= specsdm91.kappa <= ci.loc["kappa", "high"]


def test_bootstrap_interval_covers_true_parameters_in_simulation():
    # 40 simulated sweeps from a known USL with 3% proportional noise; the 90% case-bootstrap interval of each
    # parameter should cover the truth in about 90% of them (allow sampling slack: at least 80%).
    true = {"sigma": 0.03, "kappa": 3e-4, "lambda": 100.0}
    n = np.array([1, 2, 4, 8, 12, 16, 24, 32, 48, 64.0])
    rng = np.random.default_rng(2024)
    hits = {k: 0 for k in true}
    runs = 40
    for i in range(runs):
        x = usl_throughput(n, *true.values()) * (1 + 0.03 * rng.standard_normal(len(n)))
        ci = fit_usl(curve(n, x)).conf_int(0.90, method="bootstrap", n_samples=300, seed=i)
        for k, v in true.items():
            hits[k] += ci.loc[k, "low"] <= v <= ci.loc[k, "high"]
    for k in true:
        assert hits[k] / runs >= 0.80, (k, hits)


# --- planning helpers -----------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def exact():
    n = np.array([1, 2, 4, 8, 16, 32, 48, 64.0])
    return fit_usl(curve(n, usl_throughput(n, 0.05, 0.001, 100.0)))


def test_largest_concurrency_within_a_response_time_hand_solved(exact):
    # sigma 0.05, kappa 0.001, lambda 100/s. R(N) = N/X(N) - Z = D(N)/lambda - Z <= T
    #   <=> 0.001 N^2 + 0.049 N + 0.95 <= 100 (T + Z).
    # T = 0.1 s, Z = 0: 0.001 N^2 + 0.049 N - 9.05 = 0 -> N = (-0.049 + sqrt(0.049^2 + 0.0362)) / 0.002 = 73.7357
    # T = 0.1 s, Z = 0.5 s: 0.001 N^2 + 0.049 N - 59.05 = 0 -> N = (-0.049 + sqrt(0.238601)) / 0.002 = 219.734
    limit = exact.largest_concurrency_within(0.1)
    assert limit.concurrency == pytest.approx(73.7357, rel=1e-5)
    assert limit.throughput == pytest.approx(usl_throughput(73.7357, 0.05, 0.001, 100.0), rel=1e-5)
    assert exact.latency(limit.concurrency) == pytest.approx(0.1)
    assert exact.largest_concurrency_within(0.1, think_time_s=0.5).concurrency == pytest.approx(219.734, rel=1e-5)
    unreachable = exact.largest_concurrency_within(0.005)     # one client alone takes 1/lambda = 0.01 s
    assert not unreachable.reachable and unreachable.reason == "below_zero_load"


def test_no_latency_limit_without_growth():
    n = np.array([1, 2, 4, 8, 16, 32.0])
    amdahl_like = fit_usl(curve(n, usl_throughput(n, 0.05, 0.0, 100.0)))
    # kappa = 0: D(N) = 1 + 0.05 (N - 1) <= 100 * 0.1 = 10  ->  N = 181 exactly
    assert amdahl_like.largest_concurrency_within(0.1).concurrency == pytest.approx(181.0)
    linear = fit_usl(curve(n, 100.0 * n)).largest_concurrency_within(0.1)
    assert (linear.reason, linear.concurrency) == ("unbounded", math.inf)


def test_latency_is_littles_law(exact):
    n = np.array([1, 10, 50.0])
    assert exact.latency(n, think_time_s=0.2) == pytest.approx(n / usl_throughput(n, 0.05, 0.001, 100.0) - 0.2)


def test_capacity_loss_adds_up(exact):
    loss = exact.capacity_loss([1, 10, 100])
    total = loss["throughput"] + loss["contention_loss"] + loss["coherency_loss"]
    assert total.to_numpy() == pytest.approx(loss["ideal"].to_numpy())
    # N = 10: D = 1 + 0.45 + 0.09 = 1.54, X = 1000/1.54; contention 0.45 X, coherency 0.09 X
    row = loss.iloc[1]
    assert row["contention_loss"] == pytest.approx(0.45 * 1000 / 1.54) and row["coherency_loss"] == pytest.approx(
        0.09 * 1000 / 1.54)
    assert exact.efficiency([10]) == pytest.approx([1 / 1.54])


def test_peak_and_recommended_concurrency(specsdm91, exact):
    # exact: peak sqrt(0.95 / 0.001) = 30.82; X(30) vs X(31) decides the whole number
    assert exact.peak_concurrency == pytest.approx(math.sqrt(0.95 / 0.001))
    x30, x31 = usl_throughput([30, 31], 0.05, 0.001, 100.0)
    assert exact.recommended_concurrency == (30 if x30 >= x31 else 31)
    assert exact.peak_throughput == pytest.approx(usl_throughput(math.sqrt(950), 0.05, 0.001, 100.0))
    # specsdm91: the real-valued peak at 96.52 clients; the whole number recommended is the floor or the ceiling,
    # whichever gives the higher throughput (R usl, tests/peak-scalability.Rout.save: 97)
    assert specsdm91.peak_concurrency == pytest.approx(96.52, abs=0.005)
    x96, x97 = usl_throughput([96, 97], specsdm91.sigma, specsdm91.kappa, specsdm91.lambda_)
    assert x97 >= x96 and specsdm91.recommended_concurrency == 97


# --- replicates and weights -----------------------------------------------------------------------------------------

def test_replicates_are_all_fitted_and_weighted_by_level_variance():
    n = np.array([1, 1, 1, 2, 2, 4, 4, 4, 8, 16.0])
    x = np.array([100, 104, 96, 190, 198, 350, 362, 356, 600, 820.0])
    c = curve(n, x)
    assert fit_usl(c).n_points == 10
    w = replicate_weights(n, x)
    # by hand: level variances 16 (N=1), 32 (N=2), 36 (N=4); N=8 and N=16 measured once get the pooled
    # within-level variance (16*2 + 32*1 + 36*2) / 5 = 27.2; weights 1/var scaled to mean 1
    var = np.array([16, 16, 16, 32, 32, 36, 36, 36, 27.2, 27.2])
    assert w == pytest.approx((1 / var) / np.mean(1 / var))
    assert fit_usl(c, weights="replicates").params == pytest.approx(fit_usl(c, weights=1 / var).params)
    with pytest.raises(InputError, match="more than once"):
        replicate_weights(np.array([1, 2, 4.0]), np.array([1, 2, 3.0]))


# --- robustness ----------------------------------------------------------------------------------------------------

def _multistart_cost(n, x):
    # Independent reference: scipy's bounded trust-region solver from a grid of starting points, best cost kept.
    best = math.inf
    for s0 in (0.001, 0.05, 0.5):
        for k0 in (1e-6, 1e-4, 1e-2):
            r = optimize.least_squares(lambda p: usl_throughput(n, *p) - x, [s0, k0, np.max(x / n)],
                                       bounds=([0, 0, 0], [1, 1, np.inf]), x_scale="jac", ftol=1e-15, xtol=1e-15)
            best = min(best, r.cost)
    return best


def test_fit_reaches_the_global_least_squares_optimum_on_random_sweeps():
    rng = np.random.default_rng(99)
    for _ in range(8):
        n = np.sort(rng.choice([1, 2, 4, 8, 16, 32, 64, 128], size=7)).astype(float)
        true = (rng.uniform(0, 0.2), 10 ** rng.uniform(-6, -2), 100.0)
        x = usl_throughput(n, *true) * np.clip(1 + 0.1 * rng.standard_normal(7), 0.01, None)
        if len(np.unique(n)) < 3:
            continue
        f = fit_usl(curve(n, x))
        ours = 0.5 * np.sum((usl_throughput(n, f.sigma, f.kappa, f.lambda_) - x) ** 2)
        assert ours <= _multistart_cost(n, x) * (1 + 1e-7)


def test_throughput_falling_from_the_start():
    f = fit_usl(curve([1, 2, 4, 8, 16], [100, 90, 80, 70, 60]))
    assert f.sigma == 1.0 and f.peak_concurrency == 1.0 and f.recommended_concurrency == 1
    assert any("sigma is at its upper bound 1" in w for w in f.warnings)
    assert any("peak is at N = 1" in w for w in f.warnings)


def test_three_points_determine_the_usl_exactly():
    # Three points from a known USL: lambda*N = X (1 + sigma (N-1) + kappa N (N-1)) is linear in (lambda, sigma, kappa),
    # so the exact solution is a 3x3 linear solve, independent of the least-squares engine.
    n = np.array([1, 2, 4.0])
    x = usl_throughput(n, 0.05, 0.002, 10.0)
    a = np.column_stack([n, -x * (n - 1), -x * n * (n - 1)])
    lam, sigma, kappa = np.linalg.solve(a, x)
    f = fit_usl(curve(n, x))
    assert (f.sigma, f.kappa, f.lambda_) == pytest.approx((sigma, kappa, lam), rel=1e-7)
    assert f.df_resid == 0 and math.isnan(f.rse) and all(math.isnan(v) for v in f.se.values())
    assert f.conf_int().isna().all().all()
    assert any(w.startswith("exactly determined: 3 points for 3 parameters") for w in f.warnings)


# --- failures -------------------------------------------------------------------------------------------------------

def test_input_errors():
    with pytest.raises(InputError, match="2 points cannot fit usl with 3 parameters"):
        fit_usl(curve([1, 2], [1, 2]))
    with pytest.raises(InputError, match="2 distinct concurrency levels"):
        fit_usl(curve([1, 1, 2, 2], [1, 1.1, 2, 2.1]))
    with pytest.raises(FitError, match="every throughput is 0"):
        fit_usl(curve([1, 2, 4, 8], [0, 0, 0, 0]))
    with pytest.raises(InputError, match="column 'throughput', row 2"):
        fit_usl(pd.DataFrame({"concurrency": [1, 2, 4, 8], "throughput": [1, "x", 3, 4]}))
    with pytest.raises(InputError, match="weights"):
        fit_usl(curve([1, 2, 4, 8], [1, 2, 3, 4]), weights=[1, 2])
    with pytest.raises(InputError, match="level"):
        fit_usl(curve([1, 2, 4, 8], [1, 2, 3, 4])).conf_int(1.5)
