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
    """Amdahl's law, the USL with kappa held at 0: ``peak_concurrency`` is inf, ``ceiling`` lambda/sigma."""
    return MODELS["amdahl"].fit(curve, weights=weights)


def fit_linear(curve, weights=None) -> USLFit:
    """Linear scaling X = lambda*N."""
    return MODELS["linear"].fit(curve, weights=weights)


def fit_log_coherency(curve, weights=None) -> ScalabilityFit:
    """The log-coherency model; ``peak_concurrency`` = (1 - sigma)/kappa (inf when kappa = 0)."""
    return MODELS["log_coherency"].fit(curve, weights=weights)
