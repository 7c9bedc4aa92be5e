"""Model selection: the right model for data generated from it, the table, and the extrapolation check."""
import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import cross_val_score

from capmodel import datasets
from capmodel.errors import InputError
from capmodel.models.usl.closed_form import usl_throughput
from capmodel.models.usl.extrapolation import ForwardChainingSplit, ScalabilityRegressor, extrapolation_check
from capmodel.models.usl.selection import compare_models

N = np.array([1, 2, 4, 8, 12, 16, 24, 32, 48, 64.0])


def noisy(sigma, kappa, lam=100.0, noise=0.02, seed=11):
    rng = np.random.default_rng(seed)
    x = usl_throughput(N, sigma, kappa, lam) * (1 + noise * rng.standard_normal(len(N)))
    return pd.DataFrame({"concurrency": N, "throughput": x})


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_picks_the_generating_model(seed):
    assert compare_models(noisy(0.0, 0.0, seed=seed)).recommended == "linear"
    assert compare_models(noisy(0.06, 0.0, seed=seed)).recommended == "amdahl"
    assert compare_models(noisy(0.03, 8e-4, seed=seed)).recommended == "usl"   # peak at 34.8, retrograde by 64


def test_table_is_sorted_and_complete():
    result = compare_models(noisy(0.03, 8e-4))
    t = result.table
    assert list(t["model"])[0] == "usl" and set(t["model"]) == {"linear", "amdahl", "usl", "log_coherency"}
    assert {"n_params", "aic", "aicc", "bic", "rmse", "r2", "params", "delta", "extrapolation_mape"} <= set(t)
    assert result.criterion == "aicc"           # n = 10 points, k = 4: n / k < 40
    assert list(t["aicc"]) == sorted(t["aicc"]) and t["delta"].iloc[0] == 0
    assert t.loc[t["model"] == "usl", "params"].iloc[0]["kappa"] == pytest.approx(8e-4, rel=0.2)
    assert result.recommended == "usl" and result.best_fit.model == "usl"


def test_same_residuals_cost_exactly_the_penalty():
    # raytracer (R usl reference data): the USL fit has kappa at 0, i.e. it IS the Amdahl fit with one more parameter.
    # Same RSS, so AICc(usl) - AICc(amdahl) = 2 + [2*4*5/(11-5) - 2*3*4/(11-4)] (k counts the variance too).
    result = compare_models(datasets.load_curve("usl_raytracer"))
    t = result.table.set_index("model")
    assert t.loc["usl", "params"]["kappa"] == 0
    assert t.loc["usl", "rmse"] == pytest.approx(t.loc["amdahl", "rmse"], rel=1e-6)
    assert t.loc["usl", "aicc"] - t.loc["amdahl", "aicc"] == pytest.approx(2 + 40 / 6 - 24 / 7, rel=1e-6)
    assert result.recommended == "amdahl"


def test_exactly_determined_models_are_fitted_but_not_ranked():
    few = pd.DataFrame({"concurrency": [1, 2, 4.0], "throughput": [10, 19, 33.0]})
    result = compare_models(few)
    assert set(result.table["model"]) == {"linear", "amdahl", "usl", "log_coherency"}
    # exactly determined (as many parameters as points, 3): fitted, not ranked
    unranked = result.table[result.table["delta"].isna()]
    assert set(unranked["model"]) == {"usl", "log_coherency"} and (unranked["n_params"] == len(few)).all()
    assert result.recommended == "amdahl"
    with pytest.raises(InputError, match="no model could be fitted"):
        compare_models(few.iloc[:2], models=["usl"])
    with pytest.raises(InputError, match="no model could be ranked with 1 point "):
        compare_models(few.iloc[:1])


def test_four_points_fall_back_to_aic_and_never_pick_a_negative_r2():
    # AICc needs n - k - 1 > 0 (k counts the variance): with 4 points it is undefined for amdahl (k = 3), usl and
    # log_coherency (k = 4), finite only for linear, which the old rule therefore picked although it explains the
    # retrograde curve worse than its mean.
    n = np.array([1, 2, 4, 8.0])
    x = usl_throughput(n, 0.1, 0.02, 100.0) * np.array([1, 1.01, 0.99, 1.0])
    result = compare_models(pd.DataFrame({"concurrency": n, "throughput": x}))
    lam = np.dot(n, x) / np.dot(n, n)                      # least squares through the origin, by hand
    r2_linear = 1 - np.sum((x - lam * n) ** 2) / np.sum((x - x.mean()) ** 2)
    t = result.table.set_index("model")
    assert r2_linear < 0 and t.loc["linear", "r2"] == pytest.approx(r2_linear, rel=1e-9)
    assert result.criterion == "aic" and result.recommended == "usl"
    assert np.isnan(t.loc["linear", "delta"]) and t.loc["usl", "delta"] == 0


def test_forward_chaining_split_keeps_levels_together():
    n = np.array([1, 1, 2, 4, 4, 8, 16, 32.0]).reshape(-1, 1)
    splits = list(ForwardChainingSplit(min_train_levels=4).split(n))
    # levels 1, 2, 4, 8, 16, 32: train on the lowest 4 then 5 levels, test on all higher ones
    assert [(list(tr), list(te)) for tr, te in splits] == [([0, 1, 2, 3, 4, 5], [6, 7]), ([0, 1, 2, 3, 4, 5, 6], [7])]
    assert ForwardChainingSplit(min_train_levels=4).get_n_splits(n) == 2


def test_sklearn_cross_val_score_drives_the_models():
    exact = usl_throughput(N, 0.03, 8e-4, 100.0)
    X = N.reshape(-1, 1)
    usl = cross_val_score(ScalabilityRegressor("usl"), X, exact, cv=ForwardChainingSplit(5),
                          scoring="neg_mean_absolute_percentage_error")
    amdahl = cross_val_score(ScalabilityRegressor("amdahl"), X, exact, cv=ForwardChainingSplit(5),
                             scoring="neg_mean_absolute_percentage_error")
    assert len(usl) == 5 and np.all(-usl < 1e-6)      # exact USL data: the USL extrapolates perfectly
    assert np.all(-amdahl > 0.05)                     # Amdahl cannot turn down: it overshoots the retrograde part


def test_extrapolation_check_table():
    check = extrapolation_check(noisy(0.03, 8e-4), max_splits=3)
    assert list(check.columns) == ["model", "splits", "rmse", "mape"] and (check["splits"] == 3).all()
    by = check.set_index("model")["mape"]
    assert by["usl"] < by["amdahl"] < by["linear"]
    assert extrapolation_check(noisy(0.03, 8e-4).iloc[:4]).empty
