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

from capmodel.errors import CapmodelError
from capmodel.models.usl.engine import curve_arrays
from capmodel.models.usl.family import MODELS, get_model
from capmodel.models.usl.ranking import ModelComparison, rank_fits
from capmodel.models.usl.verdict.curve_rules import check_curve


def compare_models(curve, models=None, weights=None, extrapolation: bool = True) -> ModelComparison:
    """Fit every rival model to a curve table and rank them; see the module docstring for the rule.

    ``models``: names to compare (default all of capmodel.models.usl.rivals.MODELS). A model that cannot be fitted
    (too few points for its parameters) is left out of the table; if none can, ``InputError``.
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
