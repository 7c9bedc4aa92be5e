"""Does the model miss the shape of the curve, or is the scatter just noise? The lack-of-fit F test against
replicate measurements (rows measured more than once at the same concurrency).

The residual sum of squares of the fit splits into pure error (replicates scattered about their level's mean: what
no model of N can explain) and lack of fit (the level means' distance from the model):
F = [(SSE - SSPE) / (c - p)] / [SSPE / (n - c)] with n rows, c concurrency levels and p parameters, compared with
F(c - p, n - c) (Draper & Smith, *Applied Regression Analysis*, 3rd ed. 1998, sec. 2.1, "Lack of fit and pure
error"). The pure error is the residual of the saturated model, one mean per level, fitted
with statsmodels' (weighted) least squares, so a weighted fit is tested with its own weights.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from capmodel.errors import InputError
from capmodel.formatting import number


@dataclass(frozen=True)
class LackOfFit:
    """The lack-of-fit F test against replicate measurements, as ``ScalabilityFit.lack_of_fit()`` returns it.

    ``conclusion(alpha)`` says in a sentence whether the model's shape is rejected.

    Attributes
    ----------
    model : str
        The model tested.
    f_statistic, p_value : float
        F and its p-value against F(df_lack_of_fit, df_pure_error).
    ss_lack_of_fit, df_lack_of_fit : float, int
        The level means' distance from the model and its degrees of freedom.
    ss_pure_error, df_pure_error : float, int
        The replicates' scatter about their level's mean and its degrees of freedom.
    """

    model: str
    f_statistic: float
    p_value: float
    ss_lack_of_fit: float
    df_lack_of_fit: int
    ss_pure_error: float
    df_pure_error: int

    def conclusion(self, alpha: float = 0.05) -> str:
        """One sentence: whether the model's shape is rejected at level ``alpha``."""
        verdict = (f"the {self.model} curve misses the replicates' level means by more than their scatter explains"
                   if self.p_value < alpha else
                   f"the {self.model} curve is consistent with the replicate scatter")
        return (f"lack-of-fit F = {number(self.f_statistic)} on ({self.df_lack_of_fit}, {self.df_pure_error}) "
                f"degrees of "
                f"freedom, p = {number(self.p_value)}: {verdict} (at {number(alpha, 6)})")


def pure_error(concurrency: np.ndarray, throughput: np.ndarray, weights=None) -> tuple[float, int]:
    """(SSPE, n - c): the residual of the saturated model, one mean per concurrency level (statsmodels WLS)."""
    from statsmodels.regression.linear_model import WLS

    levels, inverse = np.unique(concurrency, return_inverse=True)
    dummies = (inverse[:, None] == np.arange(len(levels))[None, :]).astype(float)
    w = np.ones_like(throughput) if weights is None else weights
    saturated = WLS(throughput, dummies, weights=w).fit()
    return float(saturated.ssr), int(round(saturated.df_resid))


def lack_of_fit_test(fit) -> LackOfFit:
    """The lack-of-fit F test of a fitted model (any of capmodel.models.usl.family) against its replicates."""
    from scipy.special import fdtrc

    n_levels = len(np.unique(fit.concurrency))
    df_lack = n_levels - fit.n_params
    df_pure = fit.n_points - n_levels
    if df_pure < 1:
        raise InputError("lack-of-fit test: no concurrency level was measured more than once; repeat some levels")
    if df_lack < 1:
        raise InputError(f"lack-of-fit test: {n_levels} concurrency levels for {fit.n_params} parameters leave no "
                         "room to test the shape; measure more levels")
    ss_pure, _ = pure_error(fit.concurrency, fit.throughput, fit.weights)
    ss_lack = max(fit.rss - ss_pure, 0.0)
    if ss_pure <= 0:
        raise InputError("lack-of-fit test: the replicates are identical (no pure error to compare with)")
    f_stat = (ss_lack / df_lack) / (ss_pure / df_pure)
    return LackOfFit(fit.model, float(f_stat), float(fdtrc(df_lack, df_pure, f_stat)), ss_lack, df_lack, ss_pure,
                     df_pure)
