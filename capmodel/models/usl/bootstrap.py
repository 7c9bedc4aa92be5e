"""Bootstrap uncertainty for the USL family: many refits at once.

All resampled data sets are refitted together by the engine's vectorised, bound-respecting Levenberg-Marquardt
iteration (capmodel.models.usl.engine.batch_fit: numpy batched 3x3 solves), started from the original estimate; 1,000
refits of a 10-point curve take milliseconds instead of the second a loop of ``scipy.optimize.least_squares`` calls
would.
"""
from __future__ import annotations

import numbers

import numpy as np
import pandas as pd

from capmodel.constraints import SEED
from capmodel.errors import InputError, shown
from capmodel.models.usl.engine import batch_fit


class BootstrapResult:
    """Resampled parameter estimates, as ``ScalabilityFit.bootstrap()`` returns them.

    Parameters
    ----------
    samples : pandas.DataFrame
        One row per resample that fitted, one column per parameter.
    n_failed : int
        Resamples whose fit failed.
    method : str
        ``case`` (rows resampled) or ``residual``.
    estimate : dict
        The original fit's parameters.
    """

    def __init__(self, samples: pd.DataFrame, n_failed: int, method: str, estimate: dict):
        self.samples = samples
        self.n_failed = n_failed
        self.method = method
        self.estimate = estimate

    def conf_int(self, level: float = 0.95) -> pd.DataFrame:
        """Percentile intervals, one row per parameter (``low``, ``high``)."""
        if not (0 < level < 1):
            raise InputError(f"level: expected a confidence level between 0 and 1, got {level!r}")
        q = self.samples.quantile([0.5 - level / 2, 0.5 + level / 2])
        return pd.DataFrame({"low": q.iloc[0].to_numpy(), "high": q.iloc[1].to_numpy()}, index=self.samples.columns)

    def __repr__(self):
        return f"<BootstrapResult {self.method}: {len(self.samples)} samples, {self.n_failed} failed>"


#: resamples x points a bootstrap may hold at once (a few 8-byte arrays of that size: some 400 MB at the bound)
MAX_BOOTSTRAP_CELLS = 10_000_000


def bootstrap_fit(fit, n_samples: int = 1000, seed: int | None = 0, method: str = "case") -> BootstrapResult:
    """Case (rows) or residual bootstrap of a fitted USL-family model (``ScalabilityFit``); see
    ``ScalabilityFit.bootstrap``."""
    if isinstance(n_samples, bool) or not isinstance(n_samples, numbers.Integral) or n_samples < 1:
        raise InputError(f"n_samples: expected a whole number at least 1, got {shown(n_samples)}")
    if seed is not None:
        seed = SEED.check(seed, InputError)
    n, x = fit.concurrency, fit.throughput
    m = len(n)
    if n_samples * m > MAX_BOOTSTRAP_CELLS:   # the resampled indices and data are held at once
        raise InputError(f"n_samples: {n_samples:,} resamples of {m:,} points hold {n_samples * m:,} values at once, "
                         f"more than {MAX_BOOTSTRAP_CELLS:,}; ask for at most {max(MAX_BOOTSTRAP_CELLS // m, 1):,}")
    rng = np.random.default_rng(seed)
    w = np.ones(m) if fit.weights is None else fit.weights
    sw = np.sqrt(w)
    if method == "residual":
        e = sw * (x - fit.fitted)
        e = (e - e.mean()) * np.sqrt(m / max(m - fit.n_params, 1))
        idx = rng.integers(0, m, size=(n_samples, m))
        y = fit.fitted + e[idx] / np.where(sw > 0, sw, np.inf)
        nn, sww = n, sw
        usable = np.ones(n_samples, dtype=bool)
    elif method == "case":
        idx = rng.integers(0, m, size=(n_samples, m))
        nn, y, sww = n[idx], x[idx], sw[idx]
        srt = np.sort(nn, axis=1)
        levels = 1 + np.sum(srt[:, 1:] != srt[:, :-1], axis=1)
        usable = levels >= fit.n_params             # too few distinct concurrencies cannot identify the model
    else:
        raise InputError(f"method: expected 'case' or 'residual', got {method!r}")
    params, ok = batch_fit(nn, y, sww, fit.terms, fit.estimates, fit.lower, fit.upper)
    ok &= usable
    samples = pd.DataFrame(params[ok], columns=list(fit.names))
    return BootstrapResult(samples, int(n_samples - ok.sum()), method, dict(fit.params))
