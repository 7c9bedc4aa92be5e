"""Which scalability model does a curve support? Information criteria plus an extrapolation check.

``compare_models(curve)`` fits every rival (capmodel.models.rivals) and returns a ``ModelComparison``: ``table``
(one row per model, best first), ``recommended`` (a model name), ``reason`` (one sentence), ``fits`` (name -> fitted
object) and ``extrapolation`` (fit on the lowest concurrency levels, score the prediction of the higher ones).

The rule: rank by AICc when the sample is small (n / k < 40, Burnham & Anderson, *Model Selection and Multimodel
Inference*, 2nd ed. 2002, sec. 2.4), by AIC otherwise; among the models within 2 units of the best, recommend the
one with the fewest parameters (same source, sec. 2.6: differences below 2 are not support for the bigger model).
When the measured throughput falls after its peak by more than noise (capmodel.models.measured_fall says how noise is
judged), a model whose curve cannot fall (no finite peak: Amdahl, linear, a USL with κ at 0) is not recommended: the
same rule picks among the models that can, and the reason says why the first-ranked one was passed over.
Only models with residual degrees of freedom left and an R² of at least 0 are ranked: an exactly determined fit
passes through every point, and a model worse than the mean throughput is no answer. Where AICc is undefined for a
ranked model (n - k - 1 <= 0, k counting the variance), the ranking falls back to AIC and the reason says so, naming
BIC's choice when it differs.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from capmodel.errors import CapmodelError, InputError
from capmodel.models.engine import curve_arrays
from capmodel.models.family import MODELS, get_model
from capmodel.models.labels import model_label
from capmodel.models.measured_fall import can_fall, measured_fall

SMALL_SAMPLE_RATIO = 40
EQUIVALENT_DELTA = 2.0


CRITERION_LABELS = {"aicc": "AICc", "aic": "AIC", "bic": "BIC"}


def criterion_label(criterion: str) -> str:
    """How a criterion is written for readers: AICc, AIC, BIC."""
    return CRITERION_LABELS.get(criterion, criterion.upper())


class ModelComparison:
    """Result of ``compare_models``: ``table``, ``recommended``, ``reason``, ``criterion``, ``fits``, ``extrapolation``."""

    def __init__(self, table, recommended, reason, criterion, fits, extrapolation):
        self._table = table
        self.recommended = recommended
        self.reason = reason
        self.criterion = criterion
        self.fits = fits
        self.extrapolation = extrapolation

    @property
    def criterion_label(self) -> str:
        """The ranking criterion as readers write it (AICc, AIC)."""
        return criterion_label(self.criterion)

    @property
    def table(self) -> pd.DataFrame:
        """One row per model, best first: parameters, AIC, AICc, BIC, RMSE, R², delta (NaN: not ranked), params."""
        return self._table

    @property
    def best_fit(self):
        return self.fits[self.recommended]

    def describe(self) -> str:
        """The recommendation in one sentence, with its reason."""
        return f"{model_label(self.recommended)} is recommended: {self.reason}."

    def summary(self) -> str:
        """The ranking table and the recommendation, in plain text."""
        cols = ["model", "n_params", "aic", "aicc", "bic", "rmse", "r2"]
        if "extrapolation_mape" in self.table:
            cols.append("extrapolation_mape")
        text = self.table[cols].to_string(index=False, float_format=lambda v: f"{v:.4g}")
        return f"{text}\n\nrecommended: {self.recommended} ({self.reason})"

    def to_json(self) -> dict:
        """The ranking as JSON: criterion, recommended model, reason, and the table's rows (without ``params``)."""
        from capmodel.jsonable import to_jsonable

        return {"criterion": self.criterion, "recommended": self.recommended, "reason": self.reason,
                "table": to_jsonable(self._table.drop(columns=["params"]))}

    def __repr__(self):
        return f"<ModelComparison recommended={self.recommended!r} by {self.criterion}>"


def _pick(table: pd.DataFrame, criterion: str) -> pd.Series:
    """Among the ranked rows within EQUIVALENT_DELTA of the best, the one with the fewest parameters."""
    close = table[table["delta"] <= EQUIVALENT_DELTA]
    return close.sort_values(["n_params", criterion], kind="stable").iloc[0]


def _falls(n, x, fits):
    """The measured fall after the peak when it is beyond noise (capmodel.models.measured_fall), else None; the
    noise is the USL fit's residual standard error (the model that can rise and fall)."""
    usl = fits.get("usl")
    rse = usl.rse if usl is not None and usl.df_resid >= 1 else np.nan
    fall = measured_fall(n, x, rse=rse)
    return fall if fall is not None and fall.beyond_noise else None


def compare_models(curve, models=None, weights=None, extrapolation: bool = True) -> ModelComparison:
    """Fit every rival model to a curve table and rank them; see the module docstring for the rule.

    ``models``: names to compare (default all of capmodel.models.rivals.MODELS). A model that cannot be fitted
    (too few points for its parameters) is left out of the table; if none can, ``InputError``.
    """
    curve, n, x = curve_arrays(curve)
    names = list(models or MODELS)
    fits, skipped = {}, {}
    for name in names:
        try:
            fits[name] = get_model(name).fit(curve, weights=weights)
        except CapmodelError as exc:
            skipped[name] = str(exc)
    if not fits:
        raise InputError("no model could be fitted: " + "; ".join(f"{k}: {v}" for k, v in skipped.items()))
    n_points = len(n)
    k_max = max(f.n_params + 1 for f in fits.values())
    criterion = "aicc" if n_points / k_max < SMALL_SAMPLE_RATIO else "aic"
    table = pd.DataFrame([{
        "model": name, "n_params": f.n_params, "aic": f.aic, "aicc": f.aicc, "bic": f.bic,
        "rmse": f.rmse, "r2": f.r2, "params": f.params,
    } for name, f in fits.items()])
    exact = [name for name, f in fits.items() if f.df_resid < 1]
    negative = [name for name, f in fits.items() if f.df_resid >= 1 and not f.r2 >= 0]
    rankable = ~table["model"].isin(exact + negative)
    if not rankable.any():
        why = ([f"exactly determined: {', '.join(exact)}"] if exact else []) + (
            [f"R² below 0: {', '.join(negative)}"] if negative else [])
        raise InputError(f"no model could be ranked with {n_points} points ({'; '.join(why)}); measure more points")
    fallback = ""
    if criterion == "aicc" and not np.isfinite(table.loc[rankable, "aicc"]).all():
        undefined = ", ".join(table.loc[rankable & ~np.isfinite(table["aicc"]), "model"])
        criterion = "aic"
        fallback = f"AICc is undefined for {undefined} with {n_points} points, so ranked by AIC"
    table["delta"] = np.where(rankable, table[criterion] - table.loc[rankable, criterion].min(), np.nan)
    # ties (two models that reduce to the same curve, e.g. kappa at 0) keep the declaration order: criteria equal to
    # 1e-6 sort as equal, whatever the solvers' last digits
    table["_unranked"], table["_score"] = ~rankable, table[criterion].round(6)
    table = table.sort_values(["_unranked", "_score", "n_params"], kind="stable").drop(columns=["_unranked", "_score"])
    table = table.reset_index(drop=True)
    extrap = pd.DataFrame(columns=["model", "splits", "rmse", "mape"])
    if extrapolation:
        from capmodel.models.extrapolation import extrapolation_check

        extrap = extrapolation_check(curve, list(fits))
        if len(extrap):
            table = table.merge(extrap[["model", "mape"]].rename(columns={"mape": "extrapolation_mape"}),
                                on="model", how="left")
    pick = _pick(table, criterion)
    best = table.iloc[0]
    fall, able = _falls(n, x, fits), None
    if fall is not None and not can_fall(fits[pick["model"]]):
        able = table[table["model"].map(lambda m: can_fall(fits[m])) & table["delta"].notna()]
        if len(able):
            pick = _pick(able.assign(delta=able[criterion] - able[criterion].min()), criterion)
    if able is not None and len(able):
        behind = float(table.loc[table["model"] == pick["model"], "delta"].iloc[0])
        reason = (f"{model_label(best['model'])} ranks first by {criterion_label(criterion)} but cannot describe a "
                  f"fall, and {fall.sentence()}; of the models whose curve can fall, {model_label(pick['model'])} "
                  f"ranks first ({behind:.1f} behind)")
    elif pick["model"] == best["model"]:
        ranked = table[table["delta"].notna()]
        runner = ranked.iloc[1] if len(ranked) > 1 else None
        reason = f"lowest {criterion_label(criterion)}" + (
            f", {runner['delta']:.1f} below {model_label(runner['model'])}" if runner is not None else "")
    else:
        reason = (f"{criterion_label(criterion)} within {pick['delta']:.1f} of {model_label(best['model'])} with fewer "
                  "parameters "
                  f"({pick['n_params']} vs {best['n_params']}); the extra terms are not supported")
    if fallback:
        ranked = table[table["delta"].notna()]
        by_bic = _pick(ranked.assign(delta=ranked["bic"] - ranked["bic"].min()), "bic")["model"]
        reason += f"; {fallback}" + (f", BIC picks {model_label(by_bic)}" if by_bic != pick["model"]
                                     else ", BIC agrees")
    if "extrapolation_mape" in table and table["extrapolation_mape"].notna().any():
        good = table.loc[table["extrapolation_mape"].idxmin()]
        mine = table.loc[table["model"] == pick["model"], "extrapolation_mape"].iloc[0]
        reason += f"; extrapolation error {mine:.1%}" if np.isfinite(mine) else ""
        if good["model"] != pick["model"]:
            reason += f" (best extrapolation: {model_label(good['model'])}, {good['extrapolation_mape']:.1%})"
    if exact:
        reason += "; not ranked (exactly determined, no residual left): " + ", ".join(map(model_label, exact))
    if negative:
        reason += "; not ranked (R² below 0, worse than the mean): " + ", ".join(map(model_label, negative))
    if skipped:
        reason += "; not fitted: " + ", ".join(map(model_label, skipped))
    return ModelComparison(table, str(pick["model"]), reason, criterion, fits, extrap)
