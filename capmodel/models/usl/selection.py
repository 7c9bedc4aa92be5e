"""Which scalability model does a curve support? Information criteria plus an extrapolation check.

``compare_models(curve)`` fits every rival (capmodel.models.usl.rivals) and returns a ``ModelComparison``: ``table``
(one row per model, best first), ``recommended`` (a model name), ``reason`` (one sentence), ``fits`` (name -> fitted
object) and ``extrapolation`` (fit on the lowest concurrency levels, score the prediction of the higher ones).

The rule: rank by AICc when the sample is small (n / k < 40, Burnham & Anderson, *Model Selection and Multimodel
Inference*, 2nd ed. 2002, sec. 2.4), by AIC otherwise; among the models within 2 units of the best, recommend the
one with the fewest parameters (same source, sec. 2.6: differences below 2 are not support for the bigger model).
When the measured throughput falls after its peak by more than noise (capmodel.models.usl.measured_fall says how noise
is judged), a model whose curve cannot fall (no finite peak: Amdahl, linear, a USL with κ at 0) is not recommended: the
same rule picks among the models that can, and the reason says why the first-ranked one was passed over.
Only models with residual degrees of freedom left and an R² of at least 0 are ranked: an exactly determined fit
passes through every point, and a model worse than the mean throughput is no answer. Where AICc is undefined for a
ranked model (n - k - 1 <= 0, k counting the variance), the ranking falls back to AIC and the reason says so, naming
BIC's choice when it differs.
"""
from __future__ import annotations

from capmodel.errors import CapmodelError, InputError
from capmodel.models.usl.engine import curve_arrays
from capmodel.models.usl.family import MODELS, get_model
from capmodel.models.usl.ranking import ModelComparison, rank_fits
from capmodel.models.usl.verdict.curve_rules import check_curve

#: the models a caller may ask for: ``auto`` (the one ``compare_models`` recommends) or a member of the family
MODEL_CHOICES = ("auto", *MODELS)


def compare_models(curve, models=None, weights=None, extrapolation: bool = True) -> ModelComparison:
    """Fit every rival model to a curve table, rank them and recommend one.

    The rule is in this module's docstring: AICc on small samples (AIC otherwise), the fewest parameters among the
    models within 2 units of the best, and a model that cannot fall passed over when the measured throughput falls.

    Parameters
    ----------
    curve : pandas.DataFrame
        A curve table with ``concurrency`` and ``throughput``.
    models : list of str, optional
        The model names to compare (default all of ``capmodel.models.usl.family.MODELS``: ``linear``, ``amdahl``,
        ``usl``, ``log_coherency``). A model with too few points for its parameters is left out of the table.
    weights : None, array_like or "replicates", optional
        As for ``fit_usl``.
    extrapolation : bool, default True
        Also fit each model on the lower concurrency levels and score its prediction of the higher ones
        (``extrapolation_mape`` in the table).

    Returns
    -------
    ModelComparison
        ``table`` (one row per model, best first), ``recommended`` (a model name), ``reason`` (one sentence), ``fits``
        (name to fitted object), ``best_fit``, ``summary()`` and ``describe()``.

    Raises
    ------
    InputError
        The curve is refused (see ``fit_usl``), or no model could be fitted.

    Examples
    --------
    >>> import capmodel
    >>> comparison = capmodel.compare_models(capmodel.datasets.load_curve("plgm_workload1"))
    >>> comparison.recommended
    'amdahl'
    >>> comparison.table["model"].tolist()
    ['log_coherency', 'amdahl', 'usl', 'linear']
    >>> print(comparison.summary())            # doctest: +ELLIPSIS
            model  n_params   aic  aicc   bic  rmse     r2  extrapolation_mape
    log_coherency         3 149.7 159.7 150.5 634.5 0.9691             0.03548
    ...
    recommended: amdahl (AICc within 1.0 of log-coherency with fewer parameters: 2 vs 3; ...
    """
    curve, n, x = curve_arrays(curve)
    check_curve(curve)           # refused once, not once per model
    names = list(models or MODELS)
    fits, skipped = {}, {}
    for name in names:
        try:
            fits[name] = get_model(name).fit(curve, weights=weights)
        except CapmodelError as exc:
            skipped[name] = str(exc)
    extrap = None
    if extrapolation and fits:
        from capmodel.models.usl.extrapolation import extrapolation_check

        extrap = extrapolation_check(curve, list(fits))
    return rank_fits(n, x, fits, skipped, extrap)


def check_choice(model: str, allow_superlinear: bool = False) -> None:
    """``InputError`` for a model that is not one of ``MODEL_CHOICES``, or ``allow_superlinear`` asked of a model
    other than ``usl`` (only the USL has a sigma to free). The message starts with the parameter's name (``model:``,
    ``allow_superlinear:``), which a command may rename to its option."""
    if model not in MODEL_CHOICES:
        raise InputError(f"model: expected one of {', '.join(MODEL_CHOICES)}, got {model!r}")
    if allow_superlinear and model != "usl":
        raise InputError(f"allow_superlinear: applies to the usl model only, not to {model}")


def fit_chosen(curve, model: str = "auto", *, weights=None, allow_superlinear: bool = False):
    """Fit the model a caller chose to a curve table.

    Parameters
    ----------
    curve : pandas.DataFrame
        A curve table (``concurrency``, ``throughput``, ...), as ``capmodel.read_curve`` returns it.
    model : str
        One of ``MODEL_CHOICES``: ``auto`` fits every rival and takes the recommended one, any other name fits that
        model alone.
    weights : str or None
        ``"replicates"`` weighs each point by the inverse variance of its concurrency level's replicates.
    allow_superlinear : bool
        Let sigma go below 0; only the ``usl`` model has a sigma to free.

    Returns
    -------
    tuple
        ``(fit, comparison)``: the fitted object, and the ``ModelComparison`` it was chosen from (None unless
        ``model`` is ``auto``).

    Raises
    ------
    InputError
        An unknown model, ``allow_superlinear`` with a model other than ``usl``, or a curve no model can be fitted to.
    """
    check_choice(model, allow_superlinear)
    if model == "auto":
        comparison = compare_models(curve, weights=weights)
        return comparison.fit_for("auto"), comparison
    if model == "usl":
        from capmodel.models.usl.fit import fit_usl

        return fit_usl(curve, allow_superlinear=allow_superlinear, weights=weights), None
    return get_model(model).fit(curve, weights=weights), None
