"""Robust fits for noisy observed curves: Huber's M-estimator by iteratively reweighted least squares.

A production curve (capmodel observe) often has a few steps hit by a backup, a failover or a noisy neighbour; plain
least squares lets them pull the whole curve. Huber's loss is quadratic for residuals within t scale units and linear
beyond (Huber, *Robust Statistics*, 1981; t = 1.345 gives 95% efficiency when the noise is Gaussian). The fit
alternates, as statsmodels' RLM does for linear models: weights w_i = min(1, t / |r_i / s|) from statsmodels'
HuberT norm, the scale s re-estimated each round as the median absolute residual / 0.6745 (statsmodels' ``mad`` about
0), and a weighted refit with the shared engine, until the estimates stop moving.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from capmodel.errors import FitError
from capmodel.models.usl.engine import curve_arrays
from capmodel.models.usl.family import get_model

if TYPE_CHECKING:
    from capmodel.models.usl.results import ScalabilityFit

HUBER_T = 1.345
MAX_ROUNDS = 100
TOLERANCE = 1e-10


@dataclass
class RobustFit:
    """A Huber M-estimate, as ``fit_robust`` returns it: the final weighted fit and each row's weight.

    ``downweighted`` lists the rows the fit trusted less than fully.

    Attributes
    ----------
    fit : ScalabilityFit
        The final weighted fit.
    weights : numpy.ndarray
        Each row's Huber weight (1: taken at full weight).
    scale : float
        The residuals' scale (median absolute deviation).
    rounds : int
        The reweighting rounds used.
    tuning : float
        Huber's tuning constant.
    """

    fit: ScalabilityFit
    weights: np.ndarray
    scale: float
    rounds: int
    tuning: float

    @property
    def downweighted(self) -> pd.DataFrame:
        """The rows the robust fit trusted less than fully, with their weights (lowest first)."""
        table = self.fit.curve.assign(huber_weight=self.weights)
        return table[self.weights < 1.0].sort_values("huber_weight")


def fit_robust(curve, model: str = "usl", tuning: float = HUBER_T, allow_superlinear: bool = False) -> RobustFit:
    """Huber M-estimate of a model of the USL family: outliers are down-weighted instead of fitted.

    Iteratively reweighted least squares with Huber's weights on the residuals scaled by their median absolute
    deviation, until the estimates settle.

    Parameters
    ----------
    curve : pandas.DataFrame
        A curve table with ``concurrency`` and ``throughput``.
    model : {"usl", "amdahl", "linear", "log_coherency"}, default "usl"
        The model fitted.
    tuning : float, default 1.345
        Huber's tuning constant, in units of the scale (smaller down-weights more).
    allow_superlinear : bool, default False
        As for ``capmodel.fit_usl``.

    Returns
    -------
    RobustFit

    Raises
    ------
    InputError
        An unknown model, or the curve is refused.
    FitError
        The weights did not settle within 100 rounds.

    Examples
    --------
    >>> import capmodel
    >>> from capmodel.models.usl.robust import fit_robust
    >>> robust = fit_robust(capmodel.datasets.load_curve("usl_specsdm91"))
    >>> robust.downweighted["concurrency"].tolist(), round(robust.fit.lambda_, 2)
    ([36.0], 88.71)
    """
    from statsmodels.robust.norms import HuberT
    from statsmodels.robust.scale import mad

    spec = get_model(model)
    curve, n, x = curve_arrays(curve)
    norm = HuberT(t=tuning)
    fit = spec.fit(curve, allow_superlinear=allow_superlinear)
    weights = np.ones_like(x)
    scale = float(mad(x - fit.fitted, center=0))
    for rounds in range(1, MAX_ROUNDS + 1):
        if scale <= 0:       # the curve passes through (more than half of) the points: nothing to downweight
            break
        weights = norm.weights((x - fit.fitted) / scale)
        new = spec.fit(curve, weights=weights, allow_superlinear=allow_superlinear)
        moved = np.max(np.abs(new.estimates - fit.estimates) / np.maximum(np.abs(fit.estimates), 1e-12))
        fit = new
        scale = float(mad(x - fit.fitted, center=0))
        if moved <= TOLERANCE:
            break
    else:
        raise FitError(f"the robust {model} fit did not settle in {MAX_ROUNDS} rounds")
    return RobustFit(fit, np.asarray(weights, float), scale, rounds, tuning)
