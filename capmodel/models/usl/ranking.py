"""The ranking rule of ``compare_models`` (capmodel.models.usl.selection) on fits already made: information criteria,
the fewest parameters among equivalent models, a model that cannot fall passed over when the data fall (the rule is
in selection's docstring). It imports no model declaration, so a results object reaches it through its own
declaration's rivals (``rivals_ranking``) without an import cycle.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from capmodel.errors import CapmodelError, InputError
from capmodel.formatting import aside, number, plural
from capmodel.models.usl.labels import model_label
from capmodel.models.usl.measured_fall import can_fall, measured_fall

SMALL_SAMPLE_RATIO = 40
EQUIVALENT_DELTA = 2.0


CRITERION_LABELS = {"aicc": "AICc", "aic": "AIC", "bic": "BIC"}


def criterion_label(criterion: str) -> str:
    """How a criterion is written for readers: AICc, AIC, BIC."""
    return CRITERION_LABELS.get(criterion, criterion.upper())


class ModelComparison:
    """The result of ``compare_models``: the models ranked and the one recommended.

    ``table`` has one row per model, best first; ``best_fit`` is the recommended model's fit; ``region(level)`` the
    answer's likelihood region over the compared families; ``describe()``, ``summary()`` and ``to_json()`` show it.

    Parameters
    ----------
    table : pandas.DataFrame
        One row per model: ``n_params``, ``aic``, ``aicc``, ``bic``, ``rmse``, ``r2`` and ``extrapolation_mape``.
    recommended : str
        The model recommended.
    reason : str
        Why, in one sentence.
    criterion : str
        The criterion ranked on (``aicc`` or ``aic``).
    fits : dict
        ``{model: fit}``.
    extrapolation : bool
        Whether each model's extrapolation to the higher levels was scored.
    """

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

    def fit_for(self, model: str):
        """The fit a caller's choice names: ``auto`` the recommended one, else the named model's; ``InputError``
        when the comparison holds no fit of that model (unknown, or too few points for it)."""
        if model == "auto":
            return self.best_fit
        if model not in self.fits:
            raise InputError(f"model: {model!r} is not one of auto, {', '.join(self.fits)}")
        return self.fits[model]

    def region(self, level: float = 0.95):
        """The likelihood region over every compared model's family at ``level`` (capmodel.models.usl.region): what a
        figure of the recommended model ranges over when the comparison's choice is part of the answer. Derived
        once per level."""
        regions = self.__dict__.setdefault("_regions", {})
        if level not in regions:
            from capmodel.models.usl.region import likelihood_region

            families: dict = {}
            for fit in self.fits.values():
                family = fit.spec.search_family(fit)
                if family.name in families:      # one search per family, every fit's estimate on its grid
                    known = families[family.name]
                    family = type(known)(known.name, known.coherency, known.peak, known.sigma_bounds,
                                         known.kappa_bounds, known.estimates + family.estimates)
                families[family.name] = family
            fit = self.best_fit
            regions[level] = likelihood_region(fit.concurrency, fit.throughput, families.values(), fit.weights,
                                               level)
        return regions[level]

    def describe(self) -> str:
        """The recommendation in one sentence, with its reason."""
        return f"{model_label(self.recommended)} is recommended: {self.reason}."

    def summary(self) -> str:
        """The ranking table and the recommendation, in plain text."""
        cols = ["model", "n_params", "aic", "aicc", "bic", "rmse", "r2"]
        if "extrapolation_mape" in self.table:
            cols.append("extrapolation_mape")
        text = self.table[cols].to_string(index=False, float_format=lambda v: f"{number(v, 4)}")
        return f"{text}\n\nrecommended: {self.recommended} {aside(self.reason)}"

    def to_json(self) -> dict:
        """The ranking as JSON: criterion, recommended model, reason, and the table's rows (without ``params``)."""
        from capmodel.jsonable import to_jsonable

        return {"criterion": self.criterion, "recommended": self.recommended, "reason": self.reason,
                "table": to_jsonable(self._table.drop(columns=["params"]))}

    def __str__(self) -> str:
        """``print(comparison)`` shows the ranking table and the recommendation (``summary()``)."""
        return self.summary()

    def __repr__(self):
        return f"<ModelComparison recommended={self.recommended!r} by {self.criterion}>"


def _pick(table: pd.DataFrame, criterion: str) -> pd.Series:
    """Among the ranked rows within EQUIVALENT_DELTA of the best, the one with the fewest parameters."""
    close = table[table["delta"] <= EQUIVALENT_DELTA]
    return close.sort_values(["n_params", criterion], kind="stable").iloc[0]


def _falls(n, x, fits):
    """The measured fall after the peak when it is beyond noise (capmodel.models.usl.measured_fall), else None; the
    noise is the USL fit's residual standard error (the model that can rise and fall)."""
    usl = fits.get("usl")
    rse = usl.rse if usl is not None and usl.df_resid >= 1 else np.nan
    fall = measured_fall(n, x, rse=rse)
    return fall if fall is not None and fall.beyond_noise else None


def rank_fits(n, x, fits: dict, skipped: dict, extrap: pd.DataFrame | None = None) -> ModelComparison:
    """Rank ``fits`` (name -> fitted object) of one curve (concurrency ``n``, throughput ``x``); ``skipped``: models
    that could not be fitted (name -> why); ``extrap``: the extrapolation check's table, or None to leave it out."""
    extrapolation = extrap is not None
    if extrap is None:
        extrap = pd.DataFrame(columns=["model", "splits", "rmse", "mape"])
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
    negative = [name for name, f in fits.items() if f.df_resid >= 1 and f.r2 < 0]
    no_r2 = [name for name, f in fits.items() if f.df_resid >= 1 and not np.isfinite(f.r2)]
    rankable = ~table["model"].isin(exact + negative + no_r2)
    if not rankable.any():
        x = np.asarray(x, dtype=float)
        if len(x) > 1 and np.ptp(x) == 0:     # R² is undefined, not negative: there is no variation to explain
            raise InputError(f"no model could be ranked: the throughput is {number(x[0])} ops/s at all "
                             f"{plural(n_points, 'point')}, so R² is undefined (there is no variation to explain); "
                             "measure concurrencies where the throughput changes")
        why = ([f"exactly determined: {', '.join(exact)}"] if exact else []) + (
            [f"R² below 0: {', '.join(negative)}"] if negative else []) + (
            [f"R² undefined: {', '.join(no_r2)}"] if no_r2 else [])
        raise InputError(f"no model could be ranked with {plural(n_points, 'point')} ({'; '.join(why)}); "
                         "measure more points")
    fallback = ""
    if criterion == "aicc" and not np.isfinite(table.loc[rankable, "aicc"]).all():
        undefined = ", ".join(map(model_label, table.loc[rankable & ~np.isfinite(table["aicc"]), "model"]))
        criterion = "aic"
        fallback = f"AICc is undefined for {undefined} with {n_points} points, so ranked by AIC"
    table["delta"] = np.where(rankable, table[criterion] - table.loc[rankable, criterion].min(), np.nan)
    # ties (two models that reduce to the same curve, e.g. kappa at 0) keep the declaration order: criteria equal to
    # 1e-6 sort as equal, whatever the solvers' last digits
    table["_unranked"], table["_score"] = ~rankable, table[criterion].round(6)
    table = table.sort_values(["_unranked", "_score", "n_params"], kind="stable").drop(columns=["_unranked", "_score"])
    table = table.reset_index(drop=True)
    if extrapolation:
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
    if no_r2:
        reason += "; not ranked (R² undefined): " + ", ".join(map(model_label, no_r2))
    if skipped:
        reason += "; not fitted: " + ", ".join(map(model_label, skipped))
    return ModelComparison(table, str(pick["model"]), reason, criterion, fits, extrap)


def rivals_ranking(fit):
    """The rivals' ranking on the fit's own curve and weights (as ``compare_models`` without the extrapolation
    check), through the fit's declaration (``fit.spec.rivals()``); None when no model can be ranked."""
    fits, skipped = {}, {}
    for name, spec in fit.spec.rivals().items():
        try:
            fits[name] = spec.fit(fit.curve, weights=fit.weights)
        except CapmodelError as exc:
            skipped[name] = str(exc)
    try:
        return rank_fits(np.asarray(fit.concurrency, float), np.asarray(fit.throughput, float), fits, skipped)
    except CapmodelError:
        return None
