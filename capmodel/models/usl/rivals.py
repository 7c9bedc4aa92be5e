"""Rivals of the USL, all of the form X(N) = lambda*N / (1 + sum_j theta_j g_j(N)), fitted the same way.

The models themselves (linear, amdahl, usl, log_coherency) are declared once in capmodel.models.usl.family; every model
has ``name``, ``n_params`` and ``fit(curve, weights=None)``; every fitted object has ``params``, ``n_params``,
``predict(n)``, ``aic``, ``aicc``, ``bic``, ``rmse``, ``r2`` (plus everything of ``ScalabilityFit``).
"""
from __future__ import annotations

from capmodel.models.usl.family import MODELS
from capmodel.models.usl.results import ScalabilityFit
from capmodel.models.usl.usl_fit import USLFit


def fit_amdahl(curve, weights=None) -> USLFit:
    """Fit Amdahl's law, the USL with κ held at 0.

    Parameters
    ----------
    curve : pandas.DataFrame
        A curve table with ``concurrency`` and ``throughput``.
    weights : None, array_like or "replicates", optional
        As for ``capmodel.fit_usl``.

    Returns
    -------
    USLFit
        With ``kappa`` 0: ``peak_concurrency`` is infinite and ``ceiling`` is λ/σ.
    """
    return MODELS["amdahl"].fit(curve, weights=weights)


def fit_linear(curve, weights=None) -> USLFit:
    """Fit linear scaling X = λN, the USL with σ and κ held at 0.

    Parameters
    ----------
    curve : pandas.DataFrame
        A curve table with ``concurrency`` and ``throughput``.
    weights : None, array_like or "replicates", optional
        As for ``capmodel.fit_usl``.

    Returns
    -------
    USLFit
        With ``sigma`` and ``kappa`` 0: no peak and no ceiling.
    """
    return MODELS["linear"].fit(curve, weights=weights)


def fit_log_coherency(curve, weights=None) -> ScalabilityFit:
    """Fit the log-coherency model, X(N) = λN / (1 + σ(N−1) + κN·ln N).

    Parameters
    ----------
    curve : pandas.DataFrame
        A curve table with ``concurrency`` and ``throughput``.
    weights : None, array_like or "replicates", optional
        As for ``capmodel.fit_usl``.

    Returns
    -------
    ScalabilityFit
        Its ``peak_concurrency`` is (1 − σ)/κ, infinite when κ = 0.
    """
    return MODELS["log_coherency"].fit(curve, weights=weights)
