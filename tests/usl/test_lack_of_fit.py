"""The lack-of-fit F test, against the textbook arithmetic done here by hand and against statsmodels' nested-model
ANOVA (for the linear model, whose fit is an ordinary least-squares regression through the origin)."""
import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.anova import anova_lm

from capmodel.errors import InputError
from capmodel.models.usl.rivals import fit_linear
from capmodel.models.usl.closed_form import usl_throughput
from capmodel.models.usl.fit import fit_usl

LEVELS = np.array([1, 2, 4, 8, 16, 32, 64.0])


def replicated(truth, noise=0.02, repeats=3, seed=5):
    rng = np.random.default_rng(seed)
    n = np.repeat(LEVELS, repeats)
    return pd.DataFrame({"concurrency": n, "throughput": truth(n) * (1 + noise * rng.standard_normal(len(n)))})


def by_hand(curve, rss, n_params):
    """Draper & Smith sec. 2.1: SSPE from the level means, F = [(SSE - SSPE)/(c - p)] / [SSPE/(n - c)]."""
    groups = curve.groupby("concurrency")["throughput"]
    sspe = float(((curve["throughput"] - groups.transform("mean")) ** 2).sum())
    c, n = groups.ngroups, len(curve)
    f = ((rss - sspe) / (c - n_params)) / (sspe / (n - c))
    return f, stats.f.sf(f, c - n_params, n - c), sspe


def test_usl_curve_passes_and_matches_the_hand_computation():
    curve = replicated(lambda n: usl_throughput(n, 0.03, 5e-4, 100.0))
    fit = fit_usl(curve)
    test = fit.lack_of_fit()
    f, p, sspe = by_hand(curve, fit.rss, 3)
    assert test.f_statistic == pytest.approx(f, rel=1e-9) and test.p_value == pytest.approx(p, rel=1e-9)
    assert test.ss_pure_error == pytest.approx(sspe, rel=1e-12)
    assert (test.df_lack_of_fit, test.df_pure_error) == (7 - 3, 21 - 7)
    assert test.p_value > 0.05 and "consistent with the replicate scatter" in test.conclusion()


def test_a_curve_of_another_shape_is_rejected():
    # a hard knee (linear to N = 8, flat after it) has no USL shape; with 1% noise the test must see it
    curve = replicated(lambda n: 100.0 * np.minimum(n, 8.0), noise=0.01)
    test = fit_usl(curve).lack_of_fit()
    assert test.p_value < 1e-6 and "misses the replicates' level means" in test.conclusion()


def test_linear_model_agrees_with_statsmodels_nested_anova():
    curve = replicated(lambda n: usl_throughput(n, 0.01, 0.0, 100.0))
    test = fit_linear(curve).lack_of_fit()
    reduced = sm.OLS.from_formula("throughput ~ 0 + concurrency", curve).fit()
    full = sm.OLS.from_formula("throughput ~ 0 + C(concurrency)", curve).fit()
    table = anova_lm(reduced, full)
    assert test.f_statistic == pytest.approx(table["F"].iloc[1], rel=1e-8)
    assert test.p_value == pytest.approx(table["Pr(>F)"].iloc[1], rel=1e-6)


def test_needs_replicates_and_spare_levels():
    single = pd.DataFrame({"concurrency": LEVELS, "throughput": usl_throughput(LEVELS, 0.03, 5e-4, 100.0)})
    with pytest.raises(InputError, match="no concurrency level was measured more than once"):
        fit_usl(single).lack_of_fit()
    three = replicated(lambda n: 10 * n).query("concurrency in (1, 2, 4)")
    with pytest.raises(InputError, match="3 concurrency levels for 3 parameters"):
        fit_usl(three).lack_of_fit()
