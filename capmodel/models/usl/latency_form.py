"""The USL in its latency form, R(X), fitted to observed (throughput, latency) pairs.

A closed system at concurrency N has X(N) = lambda N / D(N), D(N) = 1 + sigma (N - 1) + kappa N (N - 1), and by
Little's law R = N / X = D(N) / lambda. Eliminating N gives latency as a function of throughput (Schwartz,
*Practical Scalability Analysis with the Universal Scalability Law*, VividCortex 2015, section "Latency as a function
of throughput"):

    R(X) = (lambda + X (kappa - sigma) -+ sqrt(disc)) / (2 kappa X^2),
    disc = X^2 (kappa^2 + 2 kappa (sigma - 2) + sigma^2) + 2 lambda X (kappa - sigma) + lambda^2

Two branches meet at the "nose": the normal one (-) is the operating region, the retrograde one (+) the region past
the peak, and they join at the peak throughput (disc = 0), where N is the USL peak
sqrt((1 - sigma) / kappa). ``fit_usl_latency`` either fits sigma, kappa, lambda to (X, R) by least squares, each
point on the branch its observed concurrency N = X R puts it on (past the fitted peak: the retrograde one), started from
``capmodel.fit_usl`` on the same points' (N, X); or takes them from ``fit_usl`` on (N, X) itself, binned or not. The
result derives the nose, the throughput where a latency target is crossed, the latency at a planned throughput and
the share of the peak still spare at the busiest moment (``spare_fraction``), with bootstrap intervals.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import optimize

from capmodel.errors import FitError, InputError
from capmodel.formatting import number
from capmodel.models.usl.closed_form import BRANCHES, LatencyLimit, latency_limit, usl_peak
from capmodel.models.usl.fit import fit_usl

MIN_POINTS = 4
OBSERVED_PEAK_QUANTILE = 0.95


def usl_latency(throughput, sigma: float, kappa: float, lambda_: float, branch: str = "normal"):
    """The USL's response time R(X) at a throughput, on one arm of the nose.

    Parameters
    ----------
    throughput : float or array_like
        X, in operations per second.
    sigma, kappa, lambda_ : float
        The USL's parameters.
    branch : {"normal", "retrograde"}, default "normal"
        The rising side of the curve, or past the peak.

    Returns
    -------
    numpy.ndarray
        R in seconds; NaN beyond the nose (X above the peak throughput), and on the retrograde arm without coherency.

    Raises
    ------
    InputError
        An unknown ``branch``.

    Examples
    --------
    >>> from capmodel.models.usl.latency_form import usl_latency
    >>> usl_latency([500, 800], sigma=0.05, kappa=0.001, lambda_=100).round(5).tolist()
    [0.01316, 0.01972]
    """
    x = np.asarray(throughput, dtype=float)
    if branch not in BRANCHES:
        raise InputError(f"branch: expected one of {', '.join(BRANCHES)}, got {branch!r}")
    with np.errstate(divide="ignore", invalid="ignore"):
        if kappa <= 0:   # no coherency: D(N) linear in N, one branch, R = (1 - sigma) / (lambda - sigma X)
            r = np.where(sigma * x < lambda_, (1.0 - sigma) / (lambda_ - sigma * x), np.nan)
            return r if branch == "normal" else np.full_like(x, np.nan)
        disc = x * x * (kappa ** 2 + 2 * kappa * (sigma - 2) + sigma ** 2) + 2 * lambda_ * x * (kappa - sigma) \
            + lambda_ ** 2
        root = np.sqrt(np.where(disc >= 0, disc, np.nan))
        sign = -1.0 if branch == "normal" else 1.0
        return (lambda_ + x * (kappa - sigma) + sign * root) / (2 * kappa * x * x)


def latency_limit_from_zero(target_s: float, sigma: float, kappa: float, lambda_: float) -> LatencyLimit:
    """``closed_form.latency_limit`` on the normal branch, capped at the peak, with N from 0.

    An observed N = X R is a time average, below 1 at light load, and the branch starts at R(0) = (1 − σ)/λ.

    Parameters
    ----------
    target_s : float
        The mean-latency target, in seconds (> 0).
    sigma, kappa, lambda_ : float
        The USL's parameters.

    Returns
    -------
    LatencyLimit

    Raises
    ------
    InputError
        ``target_s`` is not a number of seconds > 0.
    """
    return latency_limit(target_s, sigma, kappa, lambda_, branch="normal", cap_at_peak=True, min_concurrency=0.0)


def throughput_at_latency(target_s: float, sigma: float, kappa: float, lambda_: float) -> float:
    """The throughput at which the normal branch reaches a latency target (the peak when it is still met there).

    A number for tables and bootstrap draws: ``latency_limit_from_zero`` says why when there is none.

    Parameters
    ----------
    target_s : float
        The mean-latency target, in seconds (> 0).
    sigma, kappa, lambda_ : float
        The USL's parameters.

    Returns
    -------
    float
        Ops/s; NaN when the target is below the zero-load latency (1 − σ)/λ, inf when nothing bounds it (κ = σ = 0).

    Raises
    ------
    InputError
        ``target_s`` is not a number of seconds > 0.

    Examples
    --------
    >>> from capmodel.models.usl.latency_form import throughput_at_latency
    >>> round(throughput_at_latency(0.03, sigma=0.05, kappa=0.001, lambda_=100), 1)
    899.4
    """
    limit = latency_limit_from_zero(target_s, sigma, kappa, lambda_)
    return limit.throughput if limit.reachable else math.nan


def _arrays(curve: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    for column in ("throughput", "latency_mean_ms"):
        if column not in curve:
            raise InputError(f"fit_usl_latency needs a '{column}' column (the curve has {list(curve.columns)})")
    x = pd.to_numeric(curve["throughput"], errors="coerce").to_numpy(dtype=float)
    r = pd.to_numeric(curve["latency_mean_ms"], errors="coerce").to_numpy(dtype=float) / 1000.0
    bad = np.flatnonzero(~(np.isfinite(x) & np.isfinite(r) & (x > 0) & (r > 0)))
    if bad.size:
        raise InputError(f"fit_usl_latency: row {int(bad[0])} has throughput {x[bad[0]]!r} and latency_mean_ms "
                         f"{r[bad[0]] * 1000!r}; both must be finite and > 0")
    if len(x) < MIN_POINTS:
        raise InputError(f"fit_usl_latency needs at least {MIN_POINTS} points, got {len(x)}")
    return x, r


def _model(p, x, n=None):
    """Fitted latency at each observed throughput: on the normal branch, or on the retrograde one for points
    whose observed concurrency ``n`` lies past the fitted peak; past the nose (no latency there), the nose latency
    growing with (X / X_peak)^2, which keeps the least squares moving towards a nose that holds every point."""
    sigma, kappa, lambda_ = p
    n_peak, x_peak = usl_peak(sigma, kappa, lambda_)
    r = usl_latency(x, sigma, kappa, lambda_)
    if n is not None and math.isfinite(n_peak):
        r = np.where(n > n_peak, usl_latency(x, sigma, kappa, lambda_, "retrograde"), r)
    beyond = ~np.isfinite(r)
    if beyond.any():
        r_peak = n_peak / x_peak if math.isfinite(x_peak) and x_peak > 0 else 1.0 / lambda_
        r = np.where(beyond, r_peak * (x / x_peak) ** 2 if math.isfinite(x_peak) else r_peak, r)
    return r


def _solve(x, r, start) -> np.ndarray:
    """Least squares on the relative latency error, in (sigma, kappa, log lambda)."""
    def resid(q):
        return _model((q[0], q[1], math.exp(q[2])), x, x * r) / r - 1.0

    best = None
    for s0, k0, l0 in start:
        q0 = [min(max(s0, 0.0), 1.0), min(max(k0, 0.0), 1.0), math.log(max(l0, 1e-12))]
        sol = optimize.least_squares(resid, q0, bounds=([0.0, 0.0, -np.inf], [1.0, 1.0, np.inf]), x_scale="jac",
                                     xtol=1e-12, ftol=1e-12, gtol=1e-12, max_nfev=2000)
        if best is None or sol.cost < best.cost:
            best = sol
    assert best is not None, "at least one starting point"
    q = best.x
    return np.array([q[0], q[1], math.exp(q[2])])


def _starts(x, r) -> list:
    """Starting points: fit_usl on (N = X R, X), and the linear least-squares fit of R = (D(N)) / lambda."""
    n = x * r
    starts = []
    try:
        fit = fit_usl(pd.DataFrame({"concurrency": np.maximum(n, 1e-9), "throughput": x}))
        starts.append((fit.sigma, fit.kappa, fit.lambda_))
    except Exception:  # noqa: BLE001 - a start that cannot be had is just not used
        pass
    design = np.column_stack([np.ones_like(n), n - 1.0, n * (n - 1.0)])
    coef, _ = optimize.nnls(design, r)
    if coef[0] > 0:
        starts.append((coef[1] / coef[0], coef[2] / coef[0], 1.0 / coef[0]))
    starts.append((0.05, 1e-4, float(np.max(x / np.maximum(n, 1e-9)))))
    return starts


def _fit_throughput(x, r, bins: int | None) -> np.ndarray:
    """sigma, kappa, lambda from ``fit_usl`` on (N = X R, X), binned by N with point counts as weights if asked."""
    points = pd.DataFrame({"concurrency": x * r, "throughput": x, "latency_mean_ms": r * 1000.0})
    if bins:
        points = bin_by_concurrency(points, bins)
        if len(points) < MIN_POINTS:
            raise InputError(f"{len(points)} concurrency bins hold points; the USL needs at least {MIN_POINTS}")
        fit = fit_usl(points, weights=points["points"].to_numpy(dtype=float))
    else:
        fit = fit_usl(points)
    return np.array([fit.sigma, fit.kappa, fit.lambda_])


def _fit(x, r, method: str, bins: int | None, start=None) -> np.ndarray:
    if method == "latency":
        return _solve(x, r, start or _starts(x, r))
    return _fit_throughput(x, r, bins)


class LatencyFit:
    """The USL's latency form fitted to observed (throughput, mean latency) points, as ``fit_usl_latency`` returns it.

    σ, κ and λ are fitted; every other figure derives from them: the nose (``peak_concurrency``, ``peak_throughput``,
    ``peak_latency_ms``), ``observed_peak_throughput`` (95th percentile of the intervals), ``spare_fraction``,
    ``latency_ms(throughput)``, ``latency_limit(target_ms)``, ``throughput_at_latency(target_ms)``, ``conf_int()`` (a
    case bootstrap that refits with the same method) and ``summary()``.

    Parameters
    ----------
    curve : pandas.DataFrame
        The observed curve.
    x, r : numpy.ndarray
        The throughputs (ops/s) and mean latencies (s) fitted.
    params : array_like
        σ, κ, λ.
    seed : int, optional
        The bootstrap's seed.
    method : {"latency", "throughput"}, default "latency"
        How it was fitted (see ``fit_usl_latency``).
    bins : int, optional
        The concurrency bins of the ``throughput`` method.
    """

    def __init__(self, curve: pd.DataFrame, x: np.ndarray, r: np.ndarray, params: np.ndarray, seed: int | None = 0,
                 method: str = "latency", bins: int | None = None):
        self.curve = curve
        self.x, self.r = x, r
        self.sigma, self.kappa, self.lambda_ = (float(v) for v in params)
        self.seed = seed
        self.method, self.bins = method, bins
        self._bootstrap: dict = {}

    @property
    def n_points(self) -> int:
        """Points fitted."""
        return len(self.x)

    @property
    def peak_concurrency(self) -> float:
        """N at the nose: the USL peak sqrt((1 - sigma) / kappa) (inf without coherency)."""
        return usl_peak(self.sigma, self.kappa, self.lambda_)[0]

    @property
    def peak_throughput(self) -> float:
        """The nose: the largest throughput the fitted server delivers."""
        return usl_peak(self.sigma, self.kappa, self.lambda_)[1]

    @property
    def peak_latency_ms(self) -> float:
        """Mean latency at the nose, where the two branches meet."""
        return self.peak_concurrency / self.peak_throughput * 1000.0 if math.isfinite(self.peak_throughput) \
            else math.inf

    @property
    def observed_peak_throughput(self) -> float:
        """The observed peak load: the 95th percentile of the intervals' throughput (a single one-second interval
        is too noisy to stand for the busiest moment)."""
        return float(np.quantile(self.x, OBSERVED_PEAK_QUANTILE))

    @property
    def spare_fraction(self) -> float:
        """1 - observed peak / fitted peak: the share of the fitted peak still unused at the busiest moment (below 0:
        the busiest intervals already ran past the fitted peak)."""
        return 1.0 - self.observed_peak_throughput / self.peak_throughput

    @property
    def residuals(self) -> np.ndarray:
        """Observed minus fitted latency, seconds."""
        return self.r - _model((self.sigma, self.kappa, self.lambda_), self.x, self.x * self.r)

    @property
    def r2(self) -> float:
        """Share of the latency variance the fit explains."""
        return 1.0 - float(np.sum(self.residuals ** 2) / np.sum((self.r - self.r.mean()) ** 2))

    def latency_ms(self, throughput, branch: str = "normal"):
        """Fitted mean latency (ms) at a throughput, on the normal or the retrograde branch of the nose."""
        return usl_latency(throughput, self.sigma, self.kappa, self.lambda_, branch) * 1000.0

    def latency_limit(self, target_ms: float, cap_at_peak: bool = True) -> LatencyLimit:
        """Where the mean latency reaches ``target_ms`` on the normal branch, as a named result (``.reachable``,
        ``.reason``: ``met``, ``capped_at_peak``, ``past_peak``, ``below_zero_load``, ``unbounded``)."""
        if not target_ms > 0:
            raise InputError(f"latency target must be > 0 ms, got {target_ms!r}")
        return latency_limit(target_ms / 1000.0, self.sigma, self.kappa, self.lambda_, branch="normal",
                             cap_at_peak=cap_at_peak, min_concurrency=0.0)

    def throughput_at_latency(self, target_ms: float) -> float:
        """The throughput at which the mean latency reaches ``target_ms`` (the nose's normal branch; the peak when the
        target is still met there, NaN below the zero-load latency): ``latency_limit(target_ms).throughput``."""
        limit = self.latency_limit(target_ms)
        return limit.throughput if limit.reachable else math.nan

    def bootstrap(self, n_samples: int = 200) -> pd.DataFrame:
        """sigma, kappa, lambda refitted on ``n_samples`` case resamples of the points (seeded; cached)."""
        if n_samples not in self._bootstrap:
            rng = np.random.default_rng(self.seed)
            start = [(self.sigma, self.kappa, self.lambda_)]
            rows = []
            for _ in range(int(n_samples)):
                pick = rng.integers(0, self.n_points, self.n_points)
                rows.append(_fit(self.x[pick], self.r[pick], self.method, self.bins, start))
            self._bootstrap[n_samples] = pd.DataFrame(rows, columns=["sigma", "kappa", "lambda"])
        return self._bootstrap[n_samples]

    def figures(self, planned_throughput: float | None = None, latency_target_ms: float | None = None) -> dict:
        """The derived figures of these parameters (also used on each bootstrap resample)."""
        return _figures(self.sigma, self.kappa, self.lambda_, self.observed_peak_throughput, planned_throughput,
                        latency_target_ms)

    def conf_int(self, level: float = 0.95, n_samples: int = 200, planned_throughput: float | None = None,
                 latency_target_ms: float | None = None) -> pd.DataFrame:
        """Estimate and percentile-bootstrap interval of sigma, kappa, lambda, the peak (nose), the spare fraction, and
        when asked the latency at a planned throughput and the throughput at a latency target."""
        if not 0 < level < 1:
            raise InputError(f"level: expected a confidence level between 0 and 1, got {level!r}")
        boot = self.bootstrap(n_samples)
        draws = pd.DataFrame([_figures(s, k, lam, self.observed_peak_throughput, planned_throughput,
                                       latency_target_ms) for s, k, lam in boot.to_numpy()])
        estimate = self.figures(planned_throughput, latency_target_ms)
        tail = (1 - level) / 2
        return pd.DataFrame({
            "estimate": pd.Series(estimate),
            "low": draws.quantile(tail, interpolation="lower"),
            "high": draws.quantile(1 - tail, interpolation="higher"),
        })

    def summary(self) -> str:
        """The parameters and the nose in a few lines."""
        return "\n".join([
            "USL latency form R(X) fitted on " + ("(throughput, mean latency)" if self.method == "latency" else
                                                  "(concurrency N = X R, throughput)" + (
                                                      f", {self.bins} bins" if self.bins else "")),
            f"points: {self.n_points}; sigma {number(self.sigma, 5)}, kappa {number(self.kappa, 4)}, lambda "
            f"{number(self.lambda_, 5)}; "
            f"R-squared (latency) {self.r2:.3f}",
            f"nose: peak throughput {number(self.peak_throughput, 5)} ops/s at N = {number(self.peak_concurrency, 4)}, "
            f"latency {number(self.peak_latency_ms, 4)} ms",
            f"observed peak {number(self.observed_peak_throughput, 5)} ops/s: {self.spare_fraction:.1%} of the "
            f"fitted peak spare",
        ])

    def __repr__(self):
        return (f"<LatencyFit sigma={number(self.sigma, 4)} kappa={number(self.kappa, 4)} "
                f"lambda={number(self.lambda_, 4)}>")


def _figures(sigma, kappa, lambda_, observed_peak, planned=None, target_ms=None) -> dict:
    n_peak, x_peak = usl_peak(sigma, kappa, lambda_)
    out = {"sigma": sigma, "kappa": kappa, "lambda": lambda_, "peak_concurrency": n_peak, "peak_throughput": x_peak,
           "spare_fraction": 1.0 - observed_peak / x_peak}
    if planned is not None:
        out["latency_at_planned_ms"] = float(usl_latency(planned, sigma, kappa, lambda_)) * 1000.0
    if target_ms is not None:
        out["throughput_at_target"] = throughput_at_latency(target_ms / 1000.0, sigma, kappa, lambda_)
    return out


def fit_usl_latency(curve: pd.DataFrame, method: str = "latency", bins: int | None = None,
                    seed: int | None = 0) -> LatencyFit:
    """Fit the USL's latency form to an observed curve's (throughput, mean latency) pairs.

    A closed system with no think time: R = N / X. Either way of fitting gives the same figures, and the bootstrap
    refits with the same method.

    Parameters
    ----------
    curve : pandas.DataFrame
        A curve table with ``throughput`` and ``latency_mean_ms`` (``Observation.curve``).
    method : {"latency", "throughput"}, default "latency"
        ``latency`` fits R(X) itself: least squares on the relative latency error, a point whose N = X R lies past
        the fitted peak compared with the retrograde branch, every other with the normal one; it needs a clear
        latency-throughput relation. ``throughput`` fits ``capmodel.fit_usl`` on (N = X R, X) instead, which copes
        better with intervals whose throughput scatters at one concurrency.
    bins : int, optional
        With ``method="throughput"``: bin the points by N first and weight each bin by its count
        (``bin_by_concurrency``).
    seed : int, optional, default 0
        The bootstrap's seed.

    Returns
    -------
    LatencyFit

    Raises
    ------
    InputError
        An unknown ``method``, or the curve lacks the columns or usable points.
    FitError
        The fit did not reach finite parameters.

    Examples
    --------
    >>> import capmodel
    >>> from capmodel.observe import bundled_sample, observe_ftdc
    >>> sample = bundled_sample()
    >>> curve = observe_ftdc(sample["path"], since=sample["since"], until=sample["until"]).curve
    >>> fit = capmodel.fit_usl_latency(curve, method="throughput", bins=8)
    >>> round(fit.peak_throughput), round(fit.sigma, 4)
    (645, 0.3295)
    """
    if method not in ("latency", "throughput"):
        raise InputError(f"method: expected 'latency' or 'throughput', got {method!r}")
    x, r = _arrays(curve)
    params = _fit(x, r, method, bins)
    if not np.all(np.isfinite(params)):
        raise FitError("fit_usl_latency: the fit did not converge to finite parameters")
    return LatencyFit(curve, x, r, params, seed, method, bins)


def bin_by_concurrency(curve: pd.DataFrame, bins: int = 12, min_points: int = 1) -> pd.DataFrame:
    """Many noisy observed points at uneven N, averaged into one row per concurrency bin.

    The bins are geometric over the observed range. Fit the result with
    ``capmodel.fit_usl(binned, weights=binned["points"])``: a bin mean of k points has 1/k of a single point's variance,
    so the count is its inverse-variance weight (equal per-point noise assumed).

    Parameters
    ----------
    curve : pandas.DataFrame
        A curve table with ``concurrency`` and ``throughput`` (and ``latency_mean_ms``, averaged too when present).
    bins : int, default 12
        The number of bins (>= 1).
    min_points : int, default 1
        Bins with fewer rows are dropped.

    Returns
    -------
    pandas.DataFrame
        Per bin the mean ``concurrency``, ``throughput`` and ``latency_mean_ms``, and ``points`` (rows in the bin).

    Raises
    ------
    InputError
        A column is missing, ``bins`` is not a whole number >= 1, or no row has a concurrency > 0.
    """
    if "concurrency" not in curve or "throughput" not in curve:
        raise InputError("bin_by_concurrency needs 'concurrency' and 'throughput' columns")
    if not (isinstance(bins, int) and bins >= 1):
        raise InputError(f"bins must be a whole number >= 1, got {bins!r}")
    n = pd.to_numeric(curve["concurrency"], errors="coerce").to_numpy(dtype=float)
    keep = np.isfinite(n) & (n > 0)
    data = curve.loc[keep]
    n = n[keep]
    if not len(n):
        raise InputError("bin_by_concurrency: no row has a concurrency > 0")
    edges = np.geomspace(n.min(), n.max(), bins + 1) if n.max() > n.min() else np.array([n.min(), n.max()])
    which = np.clip(np.searchsorted(edges, n, side="right") - 1, 0, len(edges) - 2)
    columns = [c for c in ("concurrency", "throughput", "latency_mean_ms") if c in data]
    grouped = data[columns].apply(pd.to_numeric, errors="coerce").groupby(which)
    binned = grouped.mean()
    binned["points"] = grouped.size()
    binned = binned[binned["points"] >= min_points].reset_index(drop=True)
    return binned
