"""assess_fit (capmodel.models.assessment): each reason on real bundled data and on curves built here, whose verdict
is derived in the test from the thresholds' definitions."""
import math
from pathlib import Path
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from capmodel import datasets, read_curve
from capmodel.models import assessment as A
from capmodel.models.describe import describe_fit
from capmodel.models.rivals import fit_amdahl, fit_linear
from capmodel.models.selection import compare_models
from capmodel.models.usl import fit_usl

SWEEP = "tests/fixtures/client_bound_sweep/curve.csv"
FTDC = "data/ftdc_sample/diagnostic.data"


def usl_curve(n, sigma, kappa, lam):
    n = np.asarray(n, dtype=float)
    return pd.DataFrame({"concurrency": n, "throughput": lam * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))})


def test_specsdm91_usl_is_sound():
    # R's usl: R² 0.9896 (above 0.9), peak at N = 96.5 inside the measured 1..216, kappa's interval above 0
    fit = fit_usl(datasets.load_curve("usl_specsdm91"))
    assert fit.r2 > A.R2_WEAK and fit.peak_concurrency < fit.concurrency.max()
    assert fit.evidence.grade == "sound" and fit.evidence.reasons == ()


def test_every_step_client_bound_is_unusable_and_the_answer_gives_a_lower_bound():
    curve = read_curve(SWEEP)
    fit = fit_usl(curve)
    evidence = A.assess_fit(fit)
    assert evidence.grade == "unusable" and "client_bound" in evidence.codes()
    best = pd.read_csv(SWEEP)["throughput"].max()
    text = describe_fit(fit)
    assert "peaks at" not in text and "never passes the ceiling" not in text
    assert f"the server's ceiling is at least the best measured {best:,.0f} ops/s" in text
    assert "Evidence: **unusable**" in text


def test_some_steps_client_bound_is_weak_and_names_them():
    curve = read_curve(SWEEP)
    curve["client_bound"] = curve["concurrency"] >= 32      # the two last steps: 32 and 64 clients
    reason = A.check_client_bound(curve)
    assert reason.grade == "weak" and reason.value == 2 and "at 32, 64 clients" in reason.message


@pytest.mark.parametrize("largest, grade", [(8, "unusable"), (16, "weak"), (32, None)])
def test_extrapolation_of_the_peak(largest, grade):
    # true peak N* = sqrt((1 - 0.02) / 0.0005) = 44.27: 5.5x the largest of 8, 2.8x of 16, 1.4x of 32
    n = [m for m in (1, 2, 4, 6, 8, 12, 16, 24, 32) if m <= largest]
    fit = fit_usl(usl_curve(n, 0.02, 0.0005, 100))
    assert fit.peak_concurrency == pytest.approx(math.sqrt(0.98 / 0.0005), rel=1e-4)
    reason = A.check_extrapolation(fit.peak_concurrency, largest, "the peak")
    if grade is None:
        assert reason is None and "extrapolation" not in fit.evidence.codes()
    else:
        assert reason.grade == grade and reason.value == pytest.approx(44.27 / largest, rel=1e-3)
        assert fit.evidence.grade == grade


def test_a_capacity_far_beyond_the_measured_range_is_unusable():
    fit = fit_usl(datasets.load_curve("usl_specsdm91"))
    evidence = A.assess_fit(fit, answer_concurrency=216 * 5)      # 5x the largest measured N
    assert evidence.grade == "unusable" and evidence.reasons[0].value == pytest.approx(5.0)


def test_negative_r2_is_unusable_and_low_r2_weak():
    # a line through the origin on falling data: λ = Σ x n / Σ n² = 700 / 55; the mean does better (R² < 0)
    n = np.arange(1, 6, dtype=float)
    x = np.array([100, 80, 60, 40, 20.0])
    fit = fit_linear(pd.DataFrame({"concurrency": n, "throughput": x}))
    lam = (x * n).sum() / (n * n).sum()
    r2 = 1 - ((x - lam * n) ** 2).sum() / ((x - x.mean()) ** 2).sum()
    assert fit.r2 == pytest.approx(r2, rel=1e-6) and r2 < 0
    assert A.check_r2(fit).grade == "unusable" and fit.evidence.grade == "unusable"
    assert "peaks at" not in fit.describe()
    # the bundled client curve of the FTDC sample: R² 0.45 by the fit, weak
    client = fit_usl(read_curve("data/ftdc_sample/client_curve.csv"))
    assert 0 <= client.r2 < A.R2_WEAK and A.check_r2(client).grade == "weak"


def test_lack_of_fit_with_replicates():
    # replicates scattered by ±1 about level means the USL cannot follow (200 at 2, then 180 at 4)
    means = {1: 100, 2: 200, 4: 180, 8: 400, 16: 420}
    rows = [(n, m + d) for n, m in means.items() for d in (-1, 1)]
    curve = pd.DataFrame(rows, columns=["concurrency", "throughput"]).astype(float)
    fit = fit_usl(curve)
    # F by hand: pure error from the level means, lack of fit the rest of the RSS, on (5 - 3, 10 - 5) dof
    ss_pure = 10 * 1.0
    f_stat = ((fit.rss - ss_pure) / 2) / (ss_pure / 5)
    p = stats.f.sf(f_stat, 2, 5)
    reason = A.check_lack_of_fit(fit)
    assert p < A.LACK_OF_FIT_ALPHA and reason.grade == "weak" and reason.value == pytest.approx(p, rel=1e-6)
    # no replicates: no test, no reason
    assert A.check_lack_of_fit(fit_usl(datasets.load_curve("usl_specsdm91"))) is None


def test_observed_curve_of_the_bundled_ftdc():
    # the verdict derived from the bundled sample's own figures: share of intervals below one operation in flight,
    # and whether the best interval ran faster than the fitted peak beyond the scatter
    from capmodel.observe import observe_ftdc

    curve = observe_ftdc(FTDC).curve
    fit = fit_usl(curve)
    share = float((curve["concurrency"] < 1).mean())
    below = A.check_below_one(curve["concurrency"])
    if share:
        assert below.value == pytest.approx(share) and below.grade == ("unusable" if share >= 0.5 else "weak")
    best = curve["throughput"].max()
    kind, limit = A.model_limit(fit)
    past = best > limit * (1 + A.PAST_PEAK_TOLERANCE) and best > limit + A.PAST_PEAK_RSE * fit.rse
    assert ("past_peak" in fit.evidence.codes()) == past
    if not fit.evidence.usable:
        assert "peaks at" not in describe_fit(fit)


def test_an_idle_server_window_is_unusable_and_says_what_it_supports():
    # Little's law on an idle server: N = X R with R = 0.5 ms and X from 200 to 1,400 ops/s: N from 0.1 to 0.7
    x = np.linspace(200, 1400, 13)
    curve = pd.DataFrame({"concurrency": x * 0.0005, "throughput": x})
    fit = fit_usl(curve)
    reason = A.check_below_one(curve["concurrency"])
    assert reason.grade == "unusable" and reason.value == 1.0
    text = describe_fit(fit)
    assert "peaks at" not in text and "never ran more than 0.7 operations at once" in text
    assert "at least 1,400 ops/s" in text


def test_a_three_point_exact_fit_is_weak():
    fit = fit_usl(usl_curve([1, 2, 4], 0.05, 0.002, 10))
    assert fit.df_resid == 0
    assert A.check_exact(fit).grade == "weak" and "exactly_determined" in fit.evidence.codes()


def test_interval_width_of_lambda():
    # Amdahl on SPEC SDM91: λ's 95% interval by hand from scipy's covariance and Student t on n - 2 dof
    from scipy.optimize import curve_fit

    curve = datasets.load_curve("usl_specsdm91")
    n, x = curve["concurrency"].to_numpy(float), curve["throughput"].to_numpy(float)
    (sigma, lam), cov = curve_fit(lambda n, s, l: l * n / (1 + s * (n - 1)), n, x, p0=[0.05, 90])
    half = stats.t.ppf(0.975, len(n) - 2) * math.sqrt(cov[1, 1]) / lam
    reason = A.check_interval_width(fit_amdahl(curve))
    assert half > A.INTERVAL_WIDTH_WEAK and reason.grade == "weak"
    assert reason.value == pytest.approx(half, rel=2e-2)
    assert A.check_interval_width(fit_usl(curve)) is None     # the USL pins λ to within ±50%


def test_a_model_against_the_comparison_is_weak_and_names_the_recommended():
    curve = datasets.load_curve("usl_raytracer")
    comparison = compare_models(curve)
    assert comparison.recommended == "amdahl"
    evidence = A.assess_fit(fit_usl(curve), comparison)
    reason = next(r for r in evidence.reasons if r.code == "model_choice")
    assert reason.grade == "weak" and "prefers Amdahl" in reason.message
    assert "model_choice" not in A.assess_fit(comparison.best_fit, comparison).codes()


def test_data_past_the_model_ceiling_is_unusable():
    # a flat cloud about 1,000 ops/s with one interval at 1,500: Amdahl's ceiling sits near the cloud
    n = np.arange(1, 13, dtype=float)
    x = np.array([1000, 1040, 960, 1010, 990, 1500, 1020, 980, 1000, 1030, 970, 1000.0])
    fit = fit_amdahl(pd.DataFrame({"concurrency": n, "throughput": x}))
    kind, limit = A.model_limit(fit)
    assert kind == "ceiling"
    expected = 1500 > limit * 1.05 and 1500 > limit + 2 * fit.rse
    assert expected and A.check_past_peak(fit).grade == "unusable"
    assert "ceiling" not in describe_fit(fit).split("Evidence")[0].replace("a peak or ceiling", "")


def test_a_ceiling_far_above_the_data_is_weak():
    # Amdahl with σ = 0.01 measured to 16 clients: best = 16λ / 1.15 = 13.9λ, 14% of the ceiling 100λ
    fit = fit_amdahl(usl_curve([1, 2, 4, 8, 16], 0.01, 0.0, 50))
    reason = A.check_ceiling_reach(fit)
    assert reason.grade == "weak" and reason.value == pytest.approx(16 / 1.15 / 100, rel=1e-4)


def test_kappa_interval_reaching_zero_is_weak():
    fit = fit_usl(datasets.load_curve("plgm_workload2"))
    assert fit.conf_int().loc["kappa", "low"] <= 0 < fit.kappa
    assert A.check_kappa_interval(fit).grade == "weak"


def test_lack_of_fit_needs_more_levels_than_parameters():
    # the replicates fixture has 3 concurrency levels for the USL's 3 parameters: no room to test the shape, no reason
    from capmodel.errors import InputError

    fit = fit_usl(read_curve("tests/fixtures/curve_replicates.csv"))
    assert len(np.unique(fit.concurrency)) == fit.n_params == 3
    with pytest.raises(InputError, match="no room to test the shape"):
        fit.lack_of_fit()
    assert A.check_lack_of_fit(fit) is None


# --- too few points, and every warning a reason (issue 16: "evidence: sound" printed above "only 3 points") --------

@pytest.mark.parametrize("fitter, n_params", [(fit_linear, 1), (fit_amdahl, 2), (fit_usl, 3)])
def test_few_degrees_of_freedom_are_a_weak_reason_for_every_model(fitter, n_params):
    # the class of input: each model with exactly its parameter count of points and one, two, three more; the
    # noise keeps the curve from being fitted exactly (so df_resid > 0 measures something)
    rng = np.random.default_rng(7)
    levels = np.array([1, 2, 4, 8, 12, 16, 24.0])
    for extra in range(0, A.FEW_DF + 1):
        n = levels[:n_params + extra]
        x = usl_curve(n, 0.03, 0.0005, 1000.0)["throughput"].to_numpy() * (1 + rng.normal(0, 0.01, len(n)))
        fit = fitter(pd.DataFrame({"concurrency": n, "throughput": x}))
        evidence = A.assess_fit(fit)
        df = len(n) - n_params
        assert fit.df_resid == df
        expected = "exactly_determined" if df == 0 else ("few_points" if df < A.FEW_DF else None)
        found = {"exactly_determined", "few_points"} & set(evidence.codes())
        assert found == ({expected} if expected else set()), (fitter.__name__, len(n), evidence.codes())
        if expected:
            assert evidence.grade != "sound"


@pytest.mark.parametrize("name", ["usl_specsdm91", "usl_raytracer", "plgm_workload1"])
def test_every_warning_the_fit_prints_is_a_reason_in_its_verdict(name):
    curve = datasets.load_curve(name)
    for fitter in (fit_usl, fit_amdahl):
        for k in (3, 4, 5, None):            # the bundled curve and its first few points
            fit = fitter(curve if k is None else curve.head(k))
            messages = {r.message for r in fit.evidence.reasons}
            assert set(fit.warnings) <= messages, (name, k, fit.warnings, messages)
            assert bool(fit.warnings) <= (fit.evidence.grade != "sound")


def test_three_points_cli_text_and_json_agree_with_the_warning():
    import json
    import subprocess
    import sys

    run = [sys.executable, "-m", "capmodel.cli", "fit", "tests/fixtures/user_study/three_points.csv",
           "--model", "amdahl"]
    text = subprocess.run(run, capture_output=True, text=True, check=True).stdout
    data = json.loads(subprocess.run(run + ["--json"], capture_output=True, text=True, check=True).stdout)
    assert "evidence: sound" not in text and "evidence: weak" in text
    assert data["evidence"]["grade"] == "weak"
    assert [r["message"] for r in data["evidence"]["reasons"] if r["code"] == "few_points"] == data["warnings"]
    assert "only 3 points for 2 parameters (1 degree of freedom left" in text


# --- the interval the verdict judges is the widest the page shows (report 02: bootstrap λ 1,016-5,917, "sound") ---

def test_interval_width_judges_the_wider_of_asymptotic_and_bootstrap():
    fit = fit_amdahl(datasets.load_curve("plgm_workload1"))
    asym = fit.conf_int(0.95).loc["lambda"]
    asym_half = (asym["high"] - asym["low"]) / 2 / fit.lambda_
    assert asym_half <= A.INTERVAL_WIDTH_WEAK             # 794-2,053 around 1,424: ±44%, sound on its own
    assert A.check_interval_width(fit) is None
    boot = fit.bootstrap(n_samples=200, seed=0)
    ci = boot.conf_int(0.95).loc["lambda"]
    boot_half = (ci["high"] - ci["low"]) / 2 / fit.lambda_
    reason = A.check_interval_width(fit, 0.95, boot)
    assert (reason is not None) == (max(asym_half, boot_half) > A.INTERVAL_WIDTH_WEAK)
    assert reason.value == pytest.approx(boot_half) and "bootstrap" in reason.message
    assert "interval_width" in A.assess_fit(fit, bootstrap=boot).codes()
    # neighbours: a bootstrap frame narrower, equal to, or wider than the asymptotic interval
    lam = fit.lambda_
    for half in (0.1, asym_half, 0.49, 0.51, 2.0):
        frame = pd.DataFrame({"low": [lam * (1 - half)], "high": [lam * (1 + half)]}, index=["lambda"])
        got = A.check_interval_width(fit, 0.95, frame)
        widest = max(half, asym_half)
        assert (got is not None) == (widest > A.INTERVAL_WIDTH_WEAK), half
        if got is not None:
            assert got.value == pytest.approx(widest)


def test_report_02_verdict_agrees_with_its_bootstrap_table():
    from capmodel.report.fit_report import fit_report

    report = fit_report(bootstrap=200)
    ci = report.resampled.conf_int(report.level).loc["lambda"]
    half = (ci["high"] - ci["low"]) / 2 / report.fit.lambda_
    assert half > A.INTERVAL_WIDTH_WEAK
    assert report.evidence.grade == "weak" and "interval_width" in report.evidence.codes()
    assert f"{ci['low']:,.0f} to {ci['high']:,.0f}" in report.evidence.describe()


def test_the_summary_says_each_warning_once():
    # every warning is a reason of the fit's verdict (warning_reasons): the summary printed it in the verdict and
    # again as "warning: ..." below it
    from capmodel.models.rivals import fit_amdahl

    curve = pd.read_csv(Path(__file__).parent / "fixtures" / "user_study" / "three_points.csv")
    fit = fit_amdahl(curve)
    assert fit.warnings, "the 3-point fit warns (too few points)"
    text = fit.summary()
    for warning in fit.warnings:
        assert text.count(warning) == 1
