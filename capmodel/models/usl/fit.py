"""The Universal Scalability Law: X(N) = lambda*N / (1 + sigma*(N-1) + kappa*N*(N-1)).

Gunther, *Guerrilla Capacity Planning* (Springer 2007), ch. 4-5. ``sigma`` is contention (serialisation, queueing),
``kappa`` coherency (pairwise data exchange; it makes throughput go retrograde), ``lambda`` the throughput of one
client with no interference. Fitted by bounded nonlinear least squares with an analytic Jacobian; the numbers match
the R package ``usl`` (Moeding) on its reference datasets (see tests/test_usl.py).

The model is declared in capmodel.models.usl.family, fitted by capmodel.models.usl.engine, its results derived in
capmodel.models.usl.results and its closed forms solved in capmodel.models.usl.closed_form; this module is the entry
point.
"""
from __future__ import annotations

from capmodel.models.usl.engine import fit_model
from capmodel.models.usl.family import MODELS
from capmodel.models.usl.usl_fit import USLFit


def fit_usl(curve, allow_superlinear: bool = False, weights=None, bounds: dict | None = None) -> USLFit:
    """Fit the Universal Scalability Law to a curve table (columns ``concurrency``, ``throughput``).

    Bounded least squares: 0 <= sigma <= 1 (sigma >= -1 with ``allow_superlinear``), 0 <= kappa <= 1, lambda >= 0;
    ``bounds`` overrides any of them, e.g. ``{"kappa": (0, 0.01)}``. No N = 1 point is needed. Rows with the same
    concurrency are replicates and are all fitted. ``weights``: None, an array (one per row), or ``"replicates"``
    (inverse variance of each level's replicates; see ``replicate_weights``). Three points fit exactly (no intervals,
    a warning); fewer are an error.
    """
    return fit_model(MODELS["usl"], curve, allow_superlinear=allow_superlinear, weights=weights, bounds=bounds)
