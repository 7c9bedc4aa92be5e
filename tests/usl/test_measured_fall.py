"""A measured fall after the peak (capmodel.models.usl.measured_fall): the model choice does not recommend a model whose
curve cannot fall, and the verdict on such a model is unusable; curves that merely level off keep Amdahl. The
curves are built here from the USL and Amdahl formulas with a fixed multiplicative scatter, and the expected fall is
computed from the built points."""
import numpy as np
import pandas as pd
import pytest

from capmodel import datasets
from capmodel.models.usl import measured_fall as M
from capmodel.models.usl.fit import fit_usl
from capmodel.models.usl.rivals import fit_amdahl
from capmodel.models.usl.selection import compare_models

N = np.array([1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128], dtype=float)
# a fixed scatter of about ±1% (deterministic, so the test does not depend on a random stream)
SCATTER = 1 + 0.01 * np.array([0.3, -0.8, 0.5, -0.2, 0.9, -0.6, 0.1, -0.9, 0.6, -0.3, 0.4])


def usl(sigma, kappa, lam=100.0):
    return pd.DataFrame({"concurrency": N, "throughput": lam * N / (1 + sigma * (N - 1) + kappa * N * (N - 1))
                         * SCATTER})


def amdahl(sigma, lam=100.0):
    return usl(sigma, 0.0, lam)


def fall_of(curve):
    x = curve["throughput"].to_numpy()
    top = int(np.argmax(x))
    return (x[top] - x[-1]) / x[top]


# κ chosen so that the built curves fall past their peak by about 10%, 24%, 47% and 69% by N = 128
@pytest.mark.parametrize("kappa", [2e-4, 4e-4, 1e-3, 3e-3])
def test_a_curve_that_falls_past_its_peak_gets_a_model_that_can_fall(kappa):
    curve = usl(0.02, kappa)
    assert fall_of(curve) > M.FALL_TOLERANCE
    # the USL's own scatter is the noise: about the ±1% built in, far below a fall of 10% or more
    rse = fit_usl(curve).rse
    assert rse < 0.02 * curve["throughput"].max()
    fall = M.measured_fall(curve["concurrency"], curve["throughput"], rse=rse)
    assert fall.beyond_noise and fall.fraction == pytest.approx(fall_of(curve))
    comparison = compare_models(curve)
    assert M.can_fall(comparison.best_fit), comparison.reason
    # Amdahl asked for on the same data: the verdict's main reason is the measured fall (its size, from the built
    # points), and the evidence is not usable, so no ceiling is given
    forced = fit_amdahl(curve)
    assert forced.evidence.grade == "unusable" and "measured_fall" in forced.evidence.codes()
    assert forced.evidence.main_reason.code == "measured_fall"
    assert forced.evidence.main_reason.value == pytest.approx(fall_of(curve)) and not forced.evidence.usable


@pytest.mark.parametrize("sigma", [0.005, 0.02, 0.05, 0.1])
def test_a_curve_that_levels_off_is_not_a_fall(sigma):
    curve = amdahl(sigma)
    fall = M.measured_fall(curve["concurrency"], curve["throughput"], rse=fit_usl(curve).rse)
    assert fall is None or not fall.beyond_noise
    assert compare_models(curve).recommended == "amdahl" or "cannot describe a fall" not in compare_models(curve).reason
    assert "measured_fall" not in fit_amdahl(curve).evidence.codes()


def test_a_small_fall_within_the_tolerance_is_noise():
    # κ so small that the curve loses about 1% past its peak (at 96 clients): within FALL_TOLERANCE, not a fall
    curve = usl(0.02, 1e-4)
    assert 0 < fall_of(curve) < M.FALL_TOLERANCE
    assert not M.measured_fall(curve["concurrency"], curve["throughput"], rse=fit_usl(curve).rse).beyond_noise
    assert "measured_fall" not in fit_amdahl(curve).evidence.codes()


def test_a_tail_that_wobbles_without_a_trend_is_noise():
    # 20% below the best at the last step, but the steps after the best go down and up: the slope's interval
    # reaches above 0 (computed here with the same t quantile)
    curve = pd.DataFrame({"concurrency": [1, 2, 4, 8, 16, 32], "throughput": [100, 190, 350, 1000, 600, 800.0]})
    fall = M.measured_fall(curve["concurrency"], curve["throughput"])
    from scipy import stats

    n, x = np.array([8, 16, 32.0]), np.array([1000, 600, 800.0])
    res = stats.linregress(n, x)
    assert res.slope + stats.t.ppf(0.975, 1) * res.stderr > 0
    assert fall.fraction == pytest.approx(0.2) and not fall.beyond_noise


def test_a_single_step_after_the_best_is_judged_against_the_fits_scatter():
    n, x = [1, 2, 4, 8, 16], [100, 195, 380, 700, 500.0]
    assert M.measured_fall(n, x, rse=10).beyond_noise            # 200 > 2·√2·10
    assert not M.measured_fall(n, x, rse=100).beyond_noise       # 200 < 2·√2·100 = 283
    assert not M.measured_fall(n, x).beyond_noise                # one step after the best, no scatter given


def test_specsdm91_auto_recommends_the_usl_and_says_why():
    # 1,853 ops/s at 72 clients, then 1,829, 1,775, 1,702 at 216: 8% lower along a falling line
    curve = datasets.load_curve("usl_specsdm91")
    comparison = compare_models(curve)
    assert comparison.table.iloc[0]["model"] == "amdahl" and comparison.recommended == "usl"
    fall = M.measured_fall(curve["concurrency"], curve["throughput"])
    assert (fall.best, fall.best_n, fall.last, fall.last_n) == pytest.approx((1853, 72, 1702, 216), abs=0.5)
    # the USL can fall: the measured fall is no reason against it; its interval alone grades it (over 7 points the
    # peak's 95% interval is wider than a sound answer holds); Amdahl cannot fall, and the fall makes it unusable
    usl = fit_usl(curve)
    peak = usl.figure_intervals(0.95)["peak_throughput"]
    assert usl.evidence.codes() == ["wide_interval"] and usl.evidence.grade == "weak"
    assert usl.evidence.main_reason.value == pytest.approx(peak.high / peak.low) and peak.high / peak.low > 1.25
    amdahl = comparison.fits["amdahl"]
    assert "measured_fall" in amdahl.evidence.codes() and amdahl.evidence.grade == "unusable"


def test_a_fall_at_thousands_of_clients_is_found_at_its_client_counts():
    n = N * 100                                   # 100 to 12,800 clients
    x = 100.0 * N / (1 + 0.02 * (N - 1) + 1e-3 * N * (N - 1)) * SCATTER
    fall = M.measured_fall(n, x)
    top = int(np.argmax(x))
    assert fall is not None and fall.best_n == n[top] and fall.last_n == 12_800
    assert fall.best == x[top] and fall.last == x[-1]
