"""The Universal Scalability Law: X(N) = lambda*N / (1 + sigma*(N-1) + kappa*N*(N-1)).

Gunther, *Guerrilla Capacity Planning* (Springer 2007), ch. 4-5. ``sigma`` is contention (serialisation, queueing),
``kappa`` coherency (pairwise data exchange; it makes throughput go retrograde), ``lambda`` the throughput of one
client with no interference. Fitted by bounded nonlinear least squares with an analytic Jacobian; the numbers match
the R package ``usl`` (Moeding) on its reference datasets (see tests/usl/test_fit.py).

The model is declared in capmodel.models.usl.family, fitted by capmodel.models.usl.engine, its results derived in
capmodel.models.usl.results and its closed forms solved in capmodel.models.usl.closed_form; this module is the entry
point.
"""
from __future__ import annotations

from capmodel.models.usl.engine import fit_model
from capmodel.models.usl.family import MODELS
from capmodel.models.usl.usl_fit import USLFit


def fit_usl(curve, allow_superlinear: bool = False, weights=None, bounds: dict | None = None) -> USLFit:
    """Fit the Universal Scalability Law X(N) = λN / (1 + σ(N−1) + κN(N−1)) to a curve table.

    Bounded least squares with an analytic Jacobian. No N = 1 point is needed; rows at the same concurrency are
    replicates and are all fitted. A curve with exactly three points fits exactly determined (no intervals, graded
    unusable); fewer points are an error.

    Parameters
    ----------
    curve : pandas.DataFrame
        A curve table with the columns ``concurrency`` and ``throughput`` (``read_curve`` or
        ``capmodel.datasets.load_curve`` give one).
    allow_superlinear : bool, default False
        Let σ go down to −1 (superlinear scaling, e.g. a cache that grows with the clients); the verdict flags it.
    weights : None, array_like or "replicates", optional
        None for ordinary least squares, one weight per row, or ``"replicates"``: each level's replicates weighted by
        the inverse of their variance (``capmodel.models.usl.engine.replicate_weights``).
    bounds : dict, optional
        Overrides any of the bounds 0 ≤ σ ≤ 1, 0 ≤ κ ≤ 1, λ ≥ 0, e.g. ``{"kappa": (0, 0.01)}``.

    Returns
    -------
    USLFit
        The fitted parameters (``sigma``, ``kappa``, ``lambda_``) and everything derived from them: the peak and the
        ceiling with their intervals, predictions, fit statistics, the verdict (``evidence``), ``summary()`` and
        ``describe()``.

    Raises
    ------
    InputError
        The curve lacks a column, holds a value out of range, has fewer than three points, or mixes several curves.
    FitError
        The solver did not reach finite parameters.

    See Also
    --------
    compare_models : fit every rival model and recommend one.

    fit_usl_latency : the USL's latency form, for observed (throughput, latency) pairs.

    Notes
    -----
    Gunther, *Guerrilla Capacity Planning* (Springer, 2007), ch. 4–5. On the reference datasets of the R package
    ``usl`` (bundled as ``usl_specsdm91`` and ``usl_raytracer``) the estimates agree with that package's to four
    significant digits or more.

    Examples
    --------
    >>> import capmodel
    >>> fit = capmodel.fit_usl(capmodel.datasets.load_curve("usl_specsdm91"))
    >>> round(fit.sigma, 5), round(fit.kappa, 7), round(fit.lambda_, 2)
    (0.02773, 0.0001044, 90.0)
    >>> round(fit.peak_concurrency, 2), fit.recommended_concurrency
    (96.52, 97)
    >>> fit.evidence.grade
    'weak'
    """
    return fit_model(MODELS["usl"], curve, allow_superlinear=allow_superlinear, weights=weights, bounds=bounds)
