"""What a fit of the family X(N) = lambda*N / (1 + sum_j theta_j g_j(N)) knows: built from (curve, estimates,
covariance) by the engine (capmodel.models.usl.engine), it only derives. Every derived figure is a cached property.

``ScalabilityFit`` serves every declared model; ``USLFit`` (capmodel.models.usl.usl_fit) adds what the USL's closed
forms answer. Its members follow the results convention every results class shares (README, "Results objects"):
``summary()`` the full plain text, ``describe()`` the answer in words, ``evidence`` the verdict.
"""
from __future__ import annotations

import math
import numbers
from functools import cached_property

import numpy as np
import pandas as pd

from capmodel.errors import InputError, shown
from capmodel.formatting import number, plural


def t_quantile(level: float, dof: int) -> float:
    """Two-sided Student t quantile for a confidence ``level`` with ``dof`` degrees of freedom (scipy.special)."""
    from scipy.special import stdtrit

    return float(stdtrit(max(dof, 1), 0.5 + level / 2))


def check_level(level) -> None:
    if isinstance(level, bool) or not isinstance(level, numbers.Real) or not (0 < float(level) < 1):
        raise InputError(f"level: expected a confidence level between 0 and 1, got {shown(level)}")


#: the largest concurrency ``predict`` evaluates (past it N(N-1) loses every digit that matters)
MAX_PREDICT_CONCURRENCY = 1e15


def concurrencies(n) -> np.ndarray:
    """``n`` as an array of concurrencies to evaluate, each a finite number from 0 to MAX_PREDICT_CONCURRENCY."""
    try:
        values = np.asarray(n, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"n: expected concurrencies (numbers >= 0), got {shown(n)}") from None
    bad = ~((values >= 0) & (values <= MAX_PREDICT_CONCURRENCY))
    if bad.any():
        raise InputError(f"n: a concurrency is a number from 0 to {number(MAX_PREDICT_CONCURRENCY, 6)}, got "
                         f"{shown(values[bad].ravel()[0])}")
    return values


class ScalabilityFit:
    """A fitted model of the USL family, X(N) = λN / (1 + Σ θ_j g_j(N)): estimates, errors, bands, resampling.

    ``fit_usl``, ``compare_models`` and the rivals' fit functions return it (``USLFit`` for the USL, Amdahl and linear).
    The data are the attributes below; everything else is derived from them: ``params``, ``se``, ``cov``, ``n_params``,
    ``n_points``, ``rss``, ``rse``, ``r2``, ``aic``, ``aicc``, ``bic``, ``rmse``, the peak, ``warnings``, the verdict
    (``evidence``), ``predict(n, level)``, ``conf_int()``, ``bootstrap()``, ``lack_of_fit()``, ``summary()`` and
    ``describe()``. With weights, ``rss``, ``rse``, ``r2`` and the likelihood are the weighted ones; ``rmse`` is always
    unweighted.

    Parameters
    ----------
    spec : ScalabilityModel
        The declared model (``capmodel.models.usl.family``).
    curve : pandas.DataFrame
        The curve table fitted.
    estimates : array_like
        The θs, then λ.
    covariance : array_like
        Their covariance matrix.
    weights : array_like, optional
        The fit's weights, scaled to mean 1 (None: unweighted).
    at_bound : array_like of bool, optional
        Which estimates sit at a bound.
    lower, upper : array_like, optional
        The bounds the fit was held to.
    allow_superlinear : bool, default False
        Whether σ could go below 0.
    concurrency, throughput : array_like, optional
        The fitted points (default the curve's columns).
    """

    def __init__(self, spec, curve: pd.DataFrame, estimates, covariance, weights=None, at_bound=None, lower=None,
                 upper=None, allow_superlinear: bool = False, concurrency=None, throughput=None):
        self.spec = spec
        self.model = spec.name
        self.curve = curve
        # the curve's two columns as arrays (the engine passes the ones it already has)
        self.concurrency = curve["concurrency"].to_numpy(dtype=float) if concurrency is None else concurrency
        self.throughput = curve["throughput"].to_numpy(dtype=float) if throughput is None else throughput
        self.weights = weights
        self.estimates = np.asarray(estimates, dtype=float)
        self.covariance = np.asarray(covariance, dtype=float)
        k = len(self.estimates)
        self.at_bound = np.zeros(k, bool) if at_bound is None else np.asarray(at_bound, bool)
        self.lower = np.full(k, -np.inf) if lower is None else np.asarray(lower, float)
        self.upper = np.full(k, np.inf) if upper is None else np.asarray(upper, float)
        self.allow_superlinear = allow_superlinear

    # -- parameters ------------------------------------------------------------------------------------------------
    @cached_property
    def names(self) -> tuple:
        """Parameter names in estimate order (thetas, then lambda)."""
        return self.spec.names

    @cached_property
    def terms(self) -> dict:
        """The model's denominator terms, name -> g(N)."""
        return dict(self.spec.terms)

    @cached_property
    def formula(self) -> str:
        """The model's formula in words."""
        return self.spec.formula

    @cached_property
    def params(self) -> dict:
        """Estimates by name."""
        return {name: float(v) for name, v in zip(self.names, self.estimates)}

    @cached_property
    def se(self) -> dict:
        """Asymptotic standard errors by name (NaN when the curve is exactly determined)."""
        return {name: float(math.sqrt(v)) if v >= 0 else math.nan
                for name, v in zip(self.names, np.diag(self.covariance))}

    @cached_property
    def cov(self) -> pd.DataFrame:
        """Asymptotic covariance of the estimates, s^2 (J'WJ)^-1."""
        return pd.DataFrame(self.covariance, index=list(self.names), columns=list(self.names))

    @cached_property
    def lambda_(self) -> float:
        """Throughput of one client without interference."""
        return self.params["lambda"]

    @cached_property
    def sigma(self) -> float:
        """Contention (0 where the model has no such term)."""
        return self.params.get("sigma", 0.0)

    @cached_property
    def kappa(self) -> float:
        """Coherency (0 where the model has no such term)."""
        return self.params.get("kappa", 0.0)

    # -- fit quality -----------------------------------------------------------------------------------------------
    @cached_property
    def n_points(self) -> int:
        """Number of measured rows."""
        return len(self.concurrency)

    @cached_property
    def n_params(self) -> int:
        """Number of fitted parameters."""
        return len(self.estimates)

    @cached_property
    def df_resid(self) -> int:
        """Residual degrees of freedom, points - parameters."""
        return self.n_points - self.n_params

    @cached_property
    def fitted(self) -> np.ndarray:
        """Model throughput at each measured concurrency."""
        return self.spec.evaluate(self.concurrency, self.estimates)

    @cached_property
    def residuals(self) -> np.ndarray:
        """Measured minus fitted throughput."""
        return self.throughput - self.fitted

    @cached_property
    def _wt(self) -> np.ndarray:
        """The weights, ones when unweighted."""
        return np.ones_like(self.throughput) if self.weights is None else self.weights

    @cached_property
    def rss(self) -> float:
        """(Weighted) residual sum of squares."""
        return float(np.sum(self._wt * self.residuals**2))

    @cached_property
    def rmse(self) -> float:
        """Unweighted root mean squared residual."""
        return float(np.sqrt(np.mean(self.residuals**2)))

    @cached_property
    def rse(self) -> float:
        """Residual standard error sqrt(rss / (n - p)); NaN when exactly determined."""
        return float(np.sqrt(self.rss / self.df_resid)) if self.df_resid > 0 else math.nan

    @cached_property
    def r2(self) -> float:
        """(Weighted) coefficient of determination against the mean throughput."""
        mean = np.sum(self._wt * self.throughput) / np.sum(self._wt)
        tss = float(np.sum(self._wt * (self.throughput - mean) ** 2))
        return 1.0 - self.rss / tss if tss > 0 else math.nan

    @cached_property
    def loglik(self) -> float:
        """Gaussian log-likelihood with the variance estimated too, as R's logLik for nls."""
        n_obs, wt = self.n_points, self._wt
        rss = max(self.rss, 1e-300)
        return -0.5 * n_obs * (math.log(2 * math.pi) + 1 + math.log(rss / n_obs)) + 0.5 * float(
            np.sum(np.log(wt[wt > 0])))

    @cached_property
    def _k(self) -> int:
        """Parameters counted by the information criteria: the fitted ones plus the variance."""
        return self.n_params + 1

    @cached_property
    def aic(self) -> float:
        """Akaike's information criterion, 2k - 2 loglik."""
        return 2 * self._k - 2 * self.loglik

    @cached_property
    def aicc(self) -> float:
        """AIC with the small-sample correction 2k(k+1)/(n-k-1); inf where n - k - 1 <= 0 (undefined)."""
        slack = self.n_points - self._k - 1
        return self.aic + 2 * self._k * (self._k + 1) / slack if slack > 0 else math.inf

    @cached_property
    def bic(self) -> float:
        """Schwarz's Bayesian information criterion, k ln n - 2 loglik."""
        return self._k * math.log(self.n_points) - 2 * self.loglik

    # -- the peak --------------------------------------------------------------------------------------------------
    @cached_property
    def peak(self) -> tuple:
        """(N*, X(N*)) from the model's declared closed form."""
        return self.spec.peak(self.sigma, self.kappa, self.lambda_)

    @cached_property
    def peak_concurrency(self) -> float:
        """Real-valued concurrency of the highest throughput (inf when the curve never turns)."""
        return self.peak[0]

    @cached_property
    def peak_throughput(self) -> float:
        """The highest throughput the model reaches (its limit when it never turns)."""
        return self.peak[1]

    # -- warnings --------------------------------------------------------------------------------------------------
    @cached_property
    def warnings(self) -> list:
        """What to be careful about, one sentence each (``capmodel.models.usl.verdict.assessment.fit_warnings``): the
        cautions that grade the answer (also reasons in ``evidence``) and remarks that inform without grading."""
        from capmodel.models.usl.verdict.assessment import fit_warnings

        return fit_warnings(self)

    def _model_warnings(self) -> list:
        return []

    def region(self, level: float = 0.95):
        """The likelihood region of the fit's family at ``level`` (capmodel.models.usl.region): the parameter sets the
        data do not reject, over which every figure's interval is read. Derived once per level."""
        check_level(level)
        regions = self.__dict__.setdefault("_regions", {})
        if level not in regions:
            from capmodel.models.usl.region import likelihood_region

            regions[level] = likelihood_region(self.concurrency, self.throughput, [self.spec.search_family(self)],
                                               self.weights, level)
        return regions[level]

    def figure_intervals(self, level: float = 0.95, region=None) -> dict:
        """The fit's figures with their intervals over ``region`` (default ``self.region(level)``), name ->
        ``Estimate``: ``peak_throughput``, ``peak_concurrency``, ``ceiling`` (capmodel.models.usl.figures)."""
        from capmodel.models.usl.figures import figure_intervals

        return figure_intervals(self, level, region)

    @cached_property
    def evidence(self):
        """How far the data support this fit's answer (its peak or ceiling), an ``Evidence``: ``fit_verdict(self)``,
        the verdict ``capmodel fit`` prints for the same data (the rivals' ranking included)."""
        from capmodel.models.usl.verdict.assessment import fit_verdict

        return fit_verdict(self)

    # -- prediction and uncertainty --------------------------------------------------------------------------------
    def predict(self, n, level: float | None = None):
        """Throughput at concurrency ``n``; with ``level``, a DataFrame with a confidence band.

        The band (columns ``low``, ``high``) is a pointwise confidence band for the MEAN curve: the throughput's
        range at each concurrency over the likelihood region (``region``), the same region every figure's interval
        is read over; it is not a prediction interval for a new measurement, which would also carry the residual
        scatter. It widens away from the measured concurrencies (and has no upper end where a curve that keeps
        rising fits the data). NaN without a region (too few points).
        """
        values = concurrencies(n)
        if level is None:
            return self.spec.evaluate(n, self.estimates)
        check_level(level)
        flat = np.atleast_1d(values).ravel()
        fit = self.spec.evaluate(flat, self.estimates)
        low, high = self.region(level).band(flat)
        finite = np.isfinite(low)
        low = np.where(finite, np.minimum(low, fit), low)
        high = np.where(finite, np.maximum(high, fit), high)
        return pd.DataFrame({"concurrency": flat, "throughput": fit, "low": low, "high": high})

    def conf_int(self, level: float = 0.95, method: str = "asymptotic", n_samples: int = 1000, seed: int | None = 0,
                 resampling: str = "case") -> pd.DataFrame:
        """Confidence intervals, one row per parameter (``low``, ``high``); NaN when exactly determined.

        ``asymptotic``: estimate +- t(level, n - p) * standard error, two-sided, then cut to the parameter's allowed
        range. R's ``usl`` differs on purpose: its ``confint`` uses qt(level, n - 1) (a two-sided 90% interval when
        asked for 95%) and lets kappa go below 0. ``profile``: the parameter's range over the likelihood region
        (``region``), the intervals the pages and ``capmodel fit --json`` state beside the figures' own: they follow
        the model's curvature and the family's edges, as the figures' intervals do. ``bootstrap``: percentile
        interval of ``bootstrap(n_samples, seed, resampling)``.
        """
        check_level(level)
        if method == "bootstrap":
            return self.bootstrap(n_samples=n_samples, seed=seed, method=resampling).conf_int(level)
        if method == "profile":
            from capmodel.models.usl.figures import profile_intervals

            return profile_intervals(self, level)
        if method != "asymptotic":
            raise InputError(f"method: expected 'asymptotic', 'profile' or 'bootstrap', got {method!r}")
        se = np.sqrt(np.maximum(np.diag(self.covariance), 0))
        half = t_quantile(level, self.df_resid) * se
        low = np.maximum(self.estimates - half, self.lower)
        high = np.minimum(self.estimates + half, self.upper)
        return pd.DataFrame({"low": low, "high": high}, index=list(self.names))

    def bootstrap(self, n_samples: int = 1000, seed: int | None = 0, method: str = "case"):
        """Refit on ``n_samples`` resampled data sets, all at once (vectorised); returns a ``BootstrapResult``.

        ``case`` (default) resamples whole rows; ``residual`` keeps the measured concurrencies and adds resampled
        residuals to the fitted curve. In a seeded simulation (10-point sweeps, 3% proportional noise, 200 runs)
        the 90% percentile intervals from case resampling covered the true parameters 92-95% of the time, residual
        resampling only 70-86% (it assumes equal noise at every concurrency). A resample with fewer distinct
        concurrencies than parameters cannot be fitted and counts in ``n_failed``.
        """
        from capmodel.models.usl.bootstrap import bootstrap_fit

        return bootstrap_fit(self, n_samples=n_samples, seed=seed, method=method)

    def lack_of_fit(self):
        """Lack-of-fit F test of the model against the replicate measurements (capmodel.models.usl.lack_of_fit)."""
        from capmodel.models.usl.lack_of_fit import lack_of_fit_test

        return lack_of_fit_test(self)

    # -- derived quantities ----------------------------------------------------------------------------------------
    def efficiency(self, n=None):
        """X/(lambda*N): the model's at ``n``; with no ``n``, the measured throughputs' (as R's ``efficiency``)."""
        if n is None:
            return self.throughput / (self.lambda_ * self.concurrency)
        n = np.asarray(n, dtype=float)
        return self.predict(n) / (self.lambda_ * n)

    def latency(self, n, think_time_s: float = 0.0):
        """Little's law response time R = N/X(N) - Z, in seconds (X per second, Z ``think_time_s``)."""
        n = np.asarray(n, dtype=float)
        return n / self.predict(n) - think_time_s

    def parameter_table(self, level: float = 0.95, method: str = "asymptotic") -> pd.DataFrame:
        """Estimate, standard error and interval (``conf_int``'s ``method``), one row per parameter."""
        ci = self.conf_int(level, method=method)
        return pd.DataFrame({"estimate": self.estimates, "se": [self.se[k] for k in self.names],
                             "low": ci["low"].to_numpy(), "high": ci["high"].to_numpy()}, index=list(self.names))

    # -- words -----------------------------------------------------------------------------------------------------
    def _summary_extra(self, level: float = 0.95) -> list:
        from capmodel.models.usl.figures import figure_lines

        return figure_lines(self, level)

    def summary(self, level: float = 0.95, evidence=None) -> str:
        """Plain-text report: coefficients with errors and their profile intervals, the peak or ceiling with its
        interval only when the verdict allows it, fit quality, the verdict (``evidence``, default
        ``self.evidence``), and warnings."""
        table = self.parameter_table(level, method="profile")
        lines = [f"{self.model} fit: {self.formula}",
                 f"points: {self.n_points}, concurrency "
                 f"{number(np.min(self.concurrency), 6)}..{number(np.max(self.concurrency), 6)}"
                 + (", weighted" if self.weights is not None else ""),
                 "",
                 f"{'':8}{'estimate':>13}{'std.err':>13}{f'{level:.0%} low':>13}{f'{level:.0%} high':>13}"]
        for name, row in table.iterrows():
            lines.append(f"{name:8}{number(row.estimate, 5):>13}{number(row.se, 4):>13}"
                         f"{number(row.low, 5):>13}{number(row.high, 5):>13}")
        lines.append("")
        evidence = self.evidence if evidence is None else evidence
        if evidence.usable:
            lines.extend(self._summary_extra(level))
        else:
            from capmodel.models.usl.verdict.assessment import supported_instead

            lines.append(f"peak / ceiling: not supported by these data; {supported_instead(self, evidence)}")
        dof = plural(self.df_resid, "degree of freedom", "degrees of freedom")
        lines.append(f"residual standard error: {number(self.rse, 4)} on {dof}")
        lines.append(f"R-squared: {self.r2:.4f}   AIC: {self.aic:.2f}   BIC: {self.bic:.2f}")
        lines.extend(evidence.lines())
        said = {r.message for r in evidence.reasons}      # a warning is a reason of the fit's verdict: said once
        lines.extend(f"warning: {w}" for w in self.warnings if w not in said)
        return "\n".join(lines)

    def describe(self, level: float = 0.95, source: str | None = None, comparison=None) -> str:
        """The plain-English answer for this fit (markdown), as the reports print it; see
        capmodel.models.usl.describe."""
        from capmodel.models.usl.describe import describe_fit

        return describe_fit(self, comparison=comparison, level=level, source=source or "The curve")

    def __repr__(self):
        values = ", ".join(f"{k}={number(v, 4)}" for k, v in self.params.items())
        return f"<{type(self).__name__} {self.model}: {values}; n={self.n_points}, R2={self.r2:.4f}>"
