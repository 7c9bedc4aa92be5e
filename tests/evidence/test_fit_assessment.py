"""assess_fit (capmodel.models.usl.verdict.assessment): each reason on real bundled data and on curves built here,
whose verdict is derived in the test from the rules' definitions: the figure's interval over the likelihood region
(unbounded, wider than a sound answer holds, beyond the data, the peak below the data, the model outside the region),
and what the curve and the fit say against any answer."""
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from capmodel import datasets, read_curve
from capmodel.models.usl.describe import describe_fit
from capmodel.models.usl.fit import fit_usl
from capmodel.models.usl.rivals import fit_amdahl, fit_linear
from capmodel.models.usl.selection import compare_models
from capmodel.models.usl.verdict import assessment as A
from capmodel.models.usl.verdict import curve_rules as R

SWEEP = "tests/fixtures/client_bound_sweep/curve.csv"
FTDC = "data/ftdc_sample/diagnostic.data"


def usl_curve(n, sigma, kappa, lam):
    n = np.asarray(n, dtype=float)
    return pd.DataFrame({"concurrency": n, "throughput": lam * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))})


def test_a_curve_measured_past_its_peak_with_little_scatter_is_sound():
    """A sweep that passes its peak (N* = 44 of up to 128 clients) with 2% scatter: the peak's 95% interval within
    the sound width, every figure inside the data."""
    rng = np.random.default_rng(3)
    n = np.array([1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128.0])
    curve = usl_curve(n, 0.02, 0.0005, 100)
    curve["throughput"] *= np.exp(rng.normal(0, 0.02, len(n)))
    fit = fit_usl(curve)
    peak = fit.figure_intervals()["peak_throughput"]
    assert peak.high / peak.low <= A.SOUND_SPAN and fit.evidence.grade == "sound" and fit.evidence.reasons == ()


def test_specsdm91_stops_short_of_a_sound_peak_and_says_what_to_measure():
    """SPEC SDM91 (7 points, R's usl reference): the peak's interval is wider than the sound width; the next step
    measures past the largest level."""
    fit = fit_usl(datasets.load_curve("usl_specsdm91"))
    peak = fit.figure_intervals()["peak_throughput"]
    reason = next(r for r in fit.evidence.reasons if r.code == "wide_interval")
    assert reason.value == pytest.approx(peak.high / peak.low) and reason.value > A.SOUND_SPAN
    assert fit.evidence.grade == "weak"
    step = fit.evidence.next_step       # the data pass the peak (96.5 of 216): repeat the steps from its half on
    assert set(step.levels) == {72.0, 108.0, 144.0, 216.0} and step.repeats >= 1


def test_every_step_client_bound_is_unusable_and_the_answer_gives_a_lower_bound():
    curve = read_curve(SWEEP)
    fit = fit_usl(curve)
    evidence = A.assess_fit(fit)
    assert evidence.grade == "unusable" and "client_bound" in evidence.codes()
    # the answer states no peak or ceiling (the fit's verdict is unusable) but a lower bound: the best measured rate
    assert fit.evidence.grade == "unusable" and not fit.evidence.usable
    best = pd.read_csv(SWEEP)["throughput"].max()
    assert A.best_measured(fit)[0] == pytest.approx(best)


def test_some_steps_client_bound_is_weak_and_names_them():
    curve = read_curve(SWEEP)
    curve["client_bound"] = curve["concurrency"] >= 32      # the two last steps: 32 and 64 clients
    reason = R.check_client_bound(curve)
    assert reason.grade == "weak" and reason.value == 2 and reason.next_step.levels == (32.0, 64.0)


@pytest.mark.parametrize("largest", [8, 16, 32])
def test_a_peak_beyond_the_data_is_not_sound(largest):
    """True peak N* = sqrt(0.98 / 0.0005) = 44.3, the data stopping at 8, 16 or 32 clients (exact curves): the peak's
    interval reaches past what the data show (``beyond_data``) or has no upper end (``unbounded``)."""
    n = [m for m in (1, 2, 4, 6, 8, 12, 16, 24, 32) if m <= largest]
    curve = usl_curve(n, 0.02, 0.0005, 100)
    curve["throughput"] *= 1 + 0.01 * np.sin(np.arange(len(n)))       # a scatter to measure
    fit = fit_usl(curve)
    assert fit.evidence.grade != "sound" and {"beyond_data", "unbounded", "wide_interval"} & set(fit.evidence.codes())
    assert min(fit.evidence.next_step.levels) > largest


def test_extrapolation_of_an_answer_at_a_given_concurrency():
    for factor, grade in ((1.5, None), (3, "weak"), (5, "unusable")):
        reason = A.check_extrapolation(216 * factor, 216, "the node count", "nodes")
        assert (reason and reason.grade) == grade


def test_a_capacity_far_beyond_the_measured_range_is_unusable():
    fit = fit_usl(datasets.load_curve("usl_specsdm91"))
    evidence = A.assess_fit(fit, answer_concurrency=216 * 5)      # 5x the largest measured N
    assert evidence.grade == "unusable" and evidence.reasons[0].value == pytest.approx(5.0)


def test_negative_r2_is_unusable():
    # a line through the origin on falling data: λ = Σ x n / Σ n² = 700 / 55; the mean does better (R² < 0)
    n = np.arange(1, 6, dtype=float)
    x = np.array([100, 80, 60, 40, 20.0])
    fit = fit_linear(pd.DataFrame({"concurrency": n, "throughput": x}))
    lam = (x * n).sum() / (n * n).sum()
    r2 = 1 - ((x - lam * n) ** 2).sum() / ((x - x.mean()) ** 2).sum()
    assert fit.r2 == pytest.approx(r2, rel=1e-6) and r2 < 0
    assert A.check_r2(fit).grade == "unusable" and fit.evidence.grade == "unusable"
    assert "peaks at" not in fit.describe()
    # R² above 0, however low, grades nothing by itself: the interval carries the scatter
    client = fit_usl(read_curve("data/ftdc_sample/client_curve.csv"))
    assert 0 <= client.r2 < 0.9 and A.check_r2(client) is None


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
    below = R.check_below_one(curve["concurrency"])
    if share:
        assert below.value == pytest.approx(share) and below.grade == ("unusable" if share >= 0.5 else "weak")
    from capmodel.models.usl.verdict.limits import PAST_PEAK_RSE, PAST_PEAK_TOLERANCE

    levels = curve.groupby("concurrency")["throughput"].agg(["mean", "size"])
    best = levels["mean"].max()
    runs = levels.loc[levels["mean"].idxmax(), "size"]
    kind, limit = A.model_limit(fit)
    past = best > limit * (1 + PAST_PEAK_TOLERANCE) and best > limit + PAST_PEAK_RSE * fit.rse / math.sqrt(runs)
    assert ("past_peak" in fit.evidence.codes()) == past
    if not fit.evidence.usable:
        assert "peaks at" not in describe_fit(fit)


def test_an_idle_server_window_is_unusable_and_says_what_it_supports():
    # Little's law on an idle server: N = X R with R = 0.5 ms and X from 200 to 1,400 ops/s: N from 0.1 to 0.7
    x = np.linspace(200, 1400, 13)
    curve = pd.DataFrame({"concurrency": x * 0.0005, "throughput": x})
    fit = fit_usl(curve)
    reason = R.check_below_one(curve["concurrency"])
    assert reason.grade == "unusable" and reason.value == 1.0
    # the answer states no peak (the fit's verdict is unusable) but what the window supports: at most 0.7 operations
    # at once, at least 1,400 ops/s
    assert not fit.evidence.usable and "below_one" in fit.evidence.codes()
    assert max(fit.concurrency) == pytest.approx(0.7) and A.best_measured(fit)[0] == pytest.approx(1400)


def test_a_three_point_exact_fit_is_unusable_and_says_what_to_measure():
    fit = fit_usl(usl_curve([1, 2, 4], 0.05, 0.002, 10))
    assert fit.df_resid == 0 and fit.region().empty
    assert A.check_exact(fit).grade == "unusable" and fit.evidence.grade == "unusable"
    assert {"exactly_determined", "no_interval"} <= set(fit.evidence.codes())
    step = fit.evidence.next_step
    assert len(step.levels) >= 5 and not set(step.levels) & {1.0, 2.0, 4.0} and max(step.levels) == 8


def test_a_model_the_comparison_chose_reads_every_compared_family():
    """--model auto on the raytracer (Amdahl recommended): the answer's interval is read over the compared models'
    families together (the USL's, with Amdahl and linear at its edges, and log-coherency's), and holds the chosen
    model's own limit; a USL asked for by name reads its own family's region."""
    curve = datasets.load_curve("usl_raytracer")
    comparison = compare_models(curve)
    assert comparison.recommended == "amdahl"
    chosen = comparison.best_fit
    region = A.answer_region(chosen, comparison)
    assert region is comparison.region() and set(region.families) == {"usl", "log_coherency"}
    peak = chosen.figure_intervals(region=region)["peak_throughput"]
    assert peak.low <= chosen.peak_throughput <= peak.high
    usl = comparison.fits["usl"]
    assert A.answer_region(usl, comparison) is usl.region() and usl.region().families == ("usl",)


def test_a_chosen_model_outside_the_likelihood_region_is_weak_and_its_interval_reaches_it():
    """Six points where AICc's small-sample penalty picks Amdahl although the USL fits them 16x better: Amdahl's
    ceiling lies outside the region's interval; the interval is widened to it and the verdict says why."""
    n = np.array([8, 11, 16, 22, 31, 44.0])
    x = np.array([2562.2, 3527.2, 4962.1, 6391.7, 7838.9, 9030.1])
    comparison = compare_models(pd.DataFrame({"concurrency": n, "throughput": x}))
    assert comparison.recommended == "amdahl"
    fit = comparison.best_fit
    evidence = A.fit_verdict(fit, comparison)
    reason = next(r for r in evidence.reasons if r.code == "model_outside_region")
    peak = fit.figure_intervals(region=A.answer_region(fit, comparison))["peak_throughput"]
    assert reason.grade == "weak" and peak.low <= fit.peak_throughput <= peak.high


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


def test_a_ceiling_far_above_the_data_is_weak_with_an_interval_that_holds_it():
    """Amdahl with σ = 0.01 measured to 16 clients (the best a seventh of the ceiling 100λ = 5,000 ops/s): the
    ceiling's interval is several times wider than a sound answer holds, holds the truth, and the next step measures
    higher."""
    curve = usl_curve([1, 2, 4, 8, 16], 0.01, 0.0, 50)
    curve["throughput"] *= 1 + 0.01 * np.cos(np.arange(5))
    fit = fit_amdahl(curve)
    ceiling = fit.figure_intervals()["ceiling"]
    reason = next(r for r in fit.evidence.reasons if r.code == "wide_interval")
    assert reason.value == pytest.approx(ceiling.high / ceiling.low) and reason.value > 4
    assert ceiling.low < 5000 < ceiling.high and min(fit.evidence.next_step.levels) > 16


def test_data_that_start_past_the_peak_are_unusable_for_the_peak():
    """Measured from 140 to 320 clients, the true peak at 44: the peak's concurrency interval lies below the data."""
    curve = usl_curve([140, 160, 180, 200, 240, 280, 320], 0.02, 0.0005, 100)
    curve["throughput"] *= 1 + 0.02 * np.sin(np.arange(7))
    fit = fit_usl(curve)
    low, high = fit.region().peak_concurrency_interval()
    reason = next(r for r in fit.evidence.reasons if r.code == "peak_below_data")
    assert high < 140 and reason.grade == "unusable" and max(fit.evidence.next_step.levels) < 140


def test_lack_of_fit_needs_more_levels_than_parameters():
    # the replicates fixture has 3 concurrency levels for the USL's 3 parameters: no room to test the shape, no reason
    from capmodel.errors import InputError

    fit = fit_usl(read_curve("tests/fixtures/curve_replicates.csv"))
    assert len(np.unique(fit.concurrency)) == fit.n_params == 3
    with pytest.raises(InputError, match="no room to test the shape"):
        fit.lack_of_fit()
    assert A.check_lack_of_fit(fit) is None


# --- warnings: the cautions that grade are reasons too; the others inform ---------------------------------------

@pytest.mark.parametrize("name", ["usl_specsdm91", "usl_raytracer", "plgm_workload1"])
def test_every_grading_caution_is_a_reason_in_the_verdict(name):
    curve = datasets.load_curve(name)
    for fitter in (fit_usl, fit_amdahl):
        for k in (3, 4, 5, None):            # the bundled curve and its first few points
            fit = fitter(curve if k is None else curve.head(k))
            messages = {r.message for r in fit.evidence.reasons}
            assert {r.message for r in A.warning_reasons(fit)} <= messages <= messages | set(fit.warnings)
            assert {r.message for r in A.warning_reasons(fit)} <= set(fit.warnings)


def test_three_points_for_amdahl_python_and_json_agree():
    """Three points for Amdahl's two parameters leave one degree of freedom to the fit, none to the family the
    interval is read over: no interval, unusable, in the Python result and the command's JSON alike."""
    import json
    import subprocess
    import sys

    three = "tests/fixtures/user_study/three_points.csv"
    run = [sys.executable, "-m", "capmodel.cli", "fit", three, "--model", "amdahl", "--json"]
    data = json.loads(subprocess.run(run, capture_output=True, text=True, check=True).stdout)
    fit = fit_amdahl(read_curve(three))
    assert fit.evidence.grade == "unusable" and data["evidence"]["grade"] == "unusable"
    assert "no_interval" in fit.evidence.codes()
    assert "no_interval" in {r["code"] for r in data["evidence"]["reasons"]}
    assert data["ci"]["peak_throughput"] == [None, None]


def test_the_summary_says_each_warning_once():
    fit = fit_usl(datasets.load_curve("usl_raytracer"))
    assert fit.warnings, "κ at its bound: the raytracer's USL reduces to Amdahl's law"
    text = fit.summary()
    for warning in fit.warnings:
        assert text.count(warning) == 1
