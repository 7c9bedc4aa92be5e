"""How well a model predicts the concurrencies above those it was fitted on: forward-chaining cross-validation by
concurrency level with scikit-learn's tools (``compare_models`` adds its result to the ranking's table). Kept apart
from capmodel.models.usl.selection so that ranking by information criteria does not import scikit-learn.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.model_selection import cross_validate

from capmodel.models.usl.engine import curve_arrays
from capmodel.models.usl.family import MODELS, get_model


class ScalabilityRegressor(RegressorMixin, BaseEstimator):
    """A rival model as a scikit-learn regressor: X is the concurrency column (n x 1), y the throughput.

    Lets scikit-learn's model-selection tools (``cross_validate``, ``cross_val_score``) drive the fits.
    """

    def __init__(self, model: str = "usl"):
        self.model = model

    def fit(self, X, y):
        n = np.asarray(X, dtype=float).reshape(len(y), -1)[:, 0]
        self.fit_ = get_model(self.model).fit(pd.DataFrame({"concurrency": n, "throughput": np.asarray(y, float)}))
        return self

    def predict(self, X):
        return self.fit_.predict(np.asarray(X, dtype=float).reshape(len(X), -1)[:, 0])


class ForwardChainingSplit:
    """Cross-validation by concurrency level: train on the lowest k levels, test on every higher level.

    One split per k from ``min_train_levels`` to (levels - 1). Replicates of a level stay together. Works with
    scikit-learn's ``cross_validate`` like ``TimeSeriesSplit``, but ordered by concurrency instead of row order.
    """

    def __init__(self, min_train_levels: int = 4, max_splits: int | None = None):
        self.min_train_levels = min_train_levels
        self.max_splits = max_splits

    def _ks(self, n_levels):
        ks = list(range(self.min_train_levels, n_levels))
        if self.max_splits:
            ks = ks[-self.max_splits:]
        return ks

    def get_n_splits(self, X=None, y=None, groups=None):
        return len(self._ks(len(np.unique(np.asarray(X, float)[:, 0])))) if X is not None else 0

    def split(self, X, y=None, groups=None):
        n = np.asarray(X, dtype=float).reshape(len(X), -1)[:, 0]
        levels = np.unique(n)
        for k in self._ks(len(levels)):
            yield np.flatnonzero(n <= levels[k - 1]), np.flatnonzero(n > levels[k - 1])


def extrapolation_check(curve, models=None, min_train_levels: int = 4, max_splits: int | None = 3) -> pd.DataFrame:
    """For each model: fit on the lower part of the sweep, score the prediction of the upper part.

    Returns one row per model with ``splits``, ``rmse`` (mean over splits) and ``mape`` (mean absolute percentage
    error, as a fraction). Empty when the curve has too few concurrency levels (fewer than min_train_levels + 1).
    The fits here are unweighted.
    """
    curve, n, x = curve_arrays(curve)
    models = list(models or MODELS)
    splitter = ForwardChainingSplit(min_train_levels=min_train_levels, max_splits=max_splits)
    X = n.reshape(-1, 1)
    n_splits = splitter.get_n_splits(X)
    rows = []
    if n_splits == 0:
        return pd.DataFrame(columns=["model", "splits", "rmse", "mape"])
    for name in models:
        scores = cross_validate(ScalabilityRegressor(name), X, x, cv=splitter, error_score=np.nan,
                                scoring=("neg_root_mean_squared_error", "neg_mean_absolute_percentage_error"))
        rmse = -scores["test_neg_root_mean_squared_error"]
        mape = -scores["test_neg_mean_absolute_percentage_error"]
        rows.append({"model": name, "splits": int(np.sum(np.isfinite(rmse))),
                     "rmse": float(np.nanmean(rmse)) if np.isfinite(rmse).any() else math.nan,
                     "mape": float(np.nanmean(mape)) if np.isfinite(mape).any() else math.nan})
    return pd.DataFrame(rows)
