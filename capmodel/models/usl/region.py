"""Which curves of the scalability family the data do not reject, and the interval every figure takes over them.

A figure read off a fitted curve (the peak throughput, its concurrency, the ceiling, a planned capacity, the
throughput under a latency target) is a function of the parameters. Its confidence interval is the range the figure
takes over the *likelihood region*: every parameter set (σ, κ, λ) whose residual sum of squares is within
RSS_min · (1 + F(1, m − 3; level) / (m − 3)) of the best, m the points (the profile-likelihood interval of one
figure, Bates & Watts, *Nonlinear Regression Analysis and Its Applications*, 1988, sec. 6.1; its image under a
continuous figure is an interval, the figure's profile interval). Unlike an interval built from the estimate's
standard errors (the delta method) or from resampled fits, it follows the curvature of the model: where the data
stop before the peak, a curve with no peak fits them too, and the peak's interval reaches infinity, which is what
the data say.

The region is searched over the whole family the answer chose from, not over one model: κ = 0 (Amdahl) and
σ = κ = 0 (linear) are edges of the USL's region, and an answer whose model was chosen by comparison (``--model
auto``) takes the union of the families compared, so the choice of model carries its uncertainty into the interval.
It is searched twice, once with absolute residuals (the least squares the fit solves) and once with relative ones
(log throughput: the noise of a benchmark's rate grows with the rate), and the union is kept, so the interval covers
whichever of the two the measurements have. ``benchmarks/calibrate_verdicts.py`` measures its coverage on curves
of known truth.

The search is a grid over (σ, κ), each on a log scale with 0 as an edge of its own, with fine lines along the two
edges, then zooms on the accepted part until it is resolved; for each grid point λ enters linearly (absolute) or
additively in logs (relative), so the range of λ it accepts is exact. The edge models (Amdahl's law, κ = 0; linear
scaling) join with regions of their own, on their own degrees of freedom, unless the data reject them
(``EDGE_PLAUSIBLE``): a figure such as the ceiling changes steeply as κ leaves 0, and a κ fitted above 0 by noise
would otherwise shrink the edge's part. Every figure this package reads off a region grows with λ for fixed (σ, κ)
(the peak, a capacity, the throughput under a latency target) or does not depend on it (a concurrency), so its
interval is its range over the accepted grid points at the two ends of their λ ranges. The region is computed at
``nominal_level`` of the level stated.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

LEVEL = 0.95
SCALES = ("absolute", "relative")


def nominal_level(level: float) -> float:
    """The level the region is computed at so that its intervals cover at least ``level`` of the time: the stated
    miss rate halved (0.95 -> 0.975). On curves of known truth (benchmarks/calibrate_verdicts.py) the profile
    intervals at their nominal 95% held the truth 94-95% of the time among narrow intervals and less with few
    points (the model's curvature and a scatter estimated from few degrees of freedom, Bates & Watts 1988, ch. 6);
    at the halved miss rate they hold it about 97% of the time."""
    return 1.0 - (1.0 - level) / 2.0


#: the coarse grid's points on each axis (``Family.axes``: log-spaced, plus 0)
GRID_SIGMA, GRID_KAPPA = 50, 60
#: points along each edge of the family (σ = 0, κ = 0), points per axis of a zoom, zooms at most, the accepted
#: points that count as resolved, and how far a zoom reaches beyond the accepted part (times its width)
EDGE_POINTS, ZOOM_POINTS, MAX_ZOOMS, RESOLVED, ZOOM_GROW = 400, 36, 5, 400, 0.5
SIGMA_HIGH = 1.0
#: an edge model (Amdahl, linear) joins with its own region unless the data reject it at this level (F test of the
#: family against it): the union then covers at least about 1 - (1 - level) - (1 - EDGE_PLAUSIBLE)
EDGE_PLAUSIBLE = 0.99
#: grid points times data points evaluated at once (memory: a few arrays of this many floats)
CHUNK_CELLS = 2_000_000


@dataclass(frozen=True)
class Region:
    """The parameter sets the data do not reject at ``level``, as ``likelihood_region`` returns them.

    ``interval(figure)`` is the range a figure takes over the region; ``limit_interval()``,
    ``peak_concurrency_interval()`` and ``ceiling_interval()`` are the fit's figures'. Each accepted grid point holds a
    range of λ.

    Attributes
    ----------
    sigma, kappa : numpy.ndarray
        Each accepted grid point's σ and κ.
    family : numpy.ndarray
        Its family (an index into ``families``).
    lambda_low, lambda_high : numpy.ndarray
        The accepted range of λ at that point.
    families, peaks, coherencies : tuple
        The families' names, vectorised peaks and coherency terms.
    level : float
        The nominal coverage.
    points, dof : int
        The points it rests on and their residual degrees of freedom.
    """

    sigma: np.ndarray
    kappa: np.ndarray
    family: np.ndarray
    lambda_low: np.ndarray
    lambda_high: np.ndarray
    families: tuple
    peaks: tuple
    coherencies: tuple
    level: float
    points: int
    dof: int

    @property
    def empty(self) -> bool:
        """No parameter set accepted (too few points for an interval)."""
        return len(self.sigma) == 0

    def interval(self, figure: Callable) -> tuple[float, float]:
        """(low, high) of ``figure(sigma, kappa, lambda_, family)`` over the region (arrays in, an array out; NaN
        counts as unbounded); (nan, nan) when the region is empty."""
        if self.empty:
            return math.nan, math.nan
        values = np.concatenate([np.asarray(figure(self.sigma, self.kappa, lam, self.family), dtype=float)
                                 for lam in (self.lambda_low, self.lambda_high)])
        if np.isnan(values).any():
            return float(np.nanmin(values)) if np.isfinite(values).any() else math.inf, math.inf
        return float(values.min()), float(values.max())

    def only(self, name: str) -> "Region":
        """The region's points of the family called ``name`` (a capacity read by the USL's closed forms reads the
        USL family's alone)."""
        if name not in self.families:
            return Region(np.zeros(0), np.zeros(0), np.zeros(0, int), np.zeros(0), np.zeros(0), (name,),
                          (self.peaks[0],), (self.coherencies[0],), self.level, self.points, self.dof)
        i = self.families.index(name)
        mine = self.family == i
        return Region(self.sigma[mine], self.kappa[mine], np.zeros(int(mine.sum()), int), self.lambda_low[mine],
                      self.lambda_high[mine], (name,), (self.peaks[i],), (self.coherencies[i],), self.level,
                      self.points, self.dof)

    def band(self, concurrency) -> tuple[np.ndarray, np.ndarray]:
        """The throughput's range over the region at each concurrency: a pointwise band of the mean curve (NaN
        without a region)."""
        n = np.atleast_1d(np.asarray(concurrency, dtype=float))
        if self.empty:
            return np.full(len(n), math.nan), np.full(len(n), math.nan)
        low, high = np.full(len(n), math.inf), np.full(len(n), -math.inf)
        for i, coherency in enumerate(self.coherencies):
            mine = self.family == i
            if not mine.any():
                continue
            s, k = self.sigma[mine, None], self.kappa[mine, None]
            with np.errstate(all="ignore"):
                shape = n / (1.0 + s * (n - 1.0) + k * coherency(n))
            for lam in (self.lambda_low[mine, None], self.lambda_high[mine, None]):
                values = lam * shape
                low = np.minimum(low, np.nanmin(values, axis=0))
                high = np.maximum(high, np.nanmax(values, axis=0))
        return low, high

    def peak(self, sigma, kappa, lambda_, family) -> tuple[np.ndarray, np.ndarray]:
        """(N*, X*) of every parameter set, each by its family's peak (inf where a set has none)."""
        n = np.full(np.shape(sigma), math.inf)
        x = np.full(np.shape(sigma), math.inf)
        for i, peak in enumerate(self.peaks):
            mine = family == i
            if mine.any():
                n[mine], x[mine] = peak(sigma[mine], kappa[mine], lambda_[mine])
        return n, x

    def limit_interval(self) -> tuple[float, float]:
        """The most throughput the server delivers (the peak, or the ceiling λ/σ without one): its interval."""
        return self.interval(lambda s, k, lam, f: self.peak(s, k, lam, f)[1])

    def peak_concurrency_interval(self) -> tuple[float, float]:
        """The concurrency of the peak: its interval (the high end inf where a curve without a peak is accepted)."""
        return self.interval(lambda s, k, lam, f: self.peak(s, k, lam, f)[0])

    def ceiling_interval(self) -> tuple[float, float]:
        """The contention ceiling λ/σ: its interval (inf where σ = 0 is accepted)."""
        def ceiling(s, k, lam, f):
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.where(s > 0, lam / np.where(s > 0, s, 1.0), math.inf)
        return self.interval(ceiling)


def threshold_factor(dof: int, level: float) -> float:
    """RSS may be this many times the least: 1 + F(1, dof; level) / dof (scipy.special: no scipy.stats import)."""
    from scipy.special import fdtri

    return 1.0 + float(fdtri(1, dof, level)) / dof


class _Scale:
    """The residuals of one scale at a batch of grid points: the least-squares λ and the residual sum of squares."""

    def __init__(self, name: str, n: np.ndarray, x: np.ndarray, w: np.ndarray):
        self.name = name
        if name == "relative":
            keep = x > 0
            n, x, w = n[keep], np.log(x[keep]), np.ones(int(keep.sum()))
        self.n, self.x, self.w = n, x, w
        self.m = len(n)

    def evaluate(self, design_sigma, design_kappa, sigma, kappa):
        """(rss, lambda_hat, curvature) per grid point: rss(λ) = rss + curvature · (λ − λ̂)² (absolute) or the same
        in log λ (relative); rss inf where the denominator is not positive."""
        rss = np.empty(len(sigma))
        centre = np.empty(len(sigma))
        curve = np.empty(len(sigma))
        step = max(1, CHUNK_CELLS // max(self.m, 1))
        for start in range(0, len(sigma), step):
            s, k = sigma[start:start + step, None], kappa[start:start + step, None]
            denom = 1.0 + s * design_sigma + k * design_kappa
            ok = np.all(denom > 0, axis=1)
            with np.errstate(all="ignore"):
                f = self.n / np.where(denom > 0, denom, 1.0)
                if self.name == "relative":
                    r = self.x - np.log(f)
                    lam = r.mean(axis=1)
                    ss = ((r - lam[:, None]) ** 2).sum(axis=1)
                    c = np.full(len(lam), float(self.m))
                else:
                    sff = (self.w * f * f).sum(axis=1)
                    sfx = (self.w * f) @ self.x
                    lam = sfx / sff
                    ss = float(self.w @ (self.x * self.x)) - sfx * lam
                    c = sff
            rss[start:start + step] = np.where(ok, np.maximum(ss, 0.0), math.inf)
            centre[start:start + step] = lam
            curve[start:start + step] = c
        return rss, centre, curve

    def lambda_range(self, rss, centre, curve, limit):
        """The λ each accepted point accepts: rss + curvature (λ − λ̂)² <= limit."""
        half = np.sqrt(np.maximum(limit - rss, 0.0) / curve)
        if self.name == "relative":
            return np.exp(centre - half), np.exp(centre + half)
        return np.maximum(centre - half, 0.0), centre + half


def _grid(sigma_values, kappa_values):
    s, k = np.meshgrid(sigma_values, kappa_values, indexing="ij")
    return s.ravel(), k.ravel()


@dataclass(frozen=True)
class Family:
    """One family X = λN / (1 + σ(N − 1) + κ t(N)) to search: its ``coherency`` term t, its vectorised ``peak``
    ((σ, κ, λ) arrays -> (N*, X*)), the bounds of σ and κ, and (σ, κ) pairs put on the grid for sure (the fits' own
    estimates, so the least RSS is on it)."""

    name: str
    coherency: Callable
    peak: Callable
    sigma_bounds: tuple = (0.0, 1.0)
    kappa_bounds: tuple = (0.0, 1.0)
    estimates: tuple = ()

    def axes(self, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The coarse grid's σ and κ values within the bounds: 0, then log-spaced from where the term adds 1e-5 at
        the largest concurrency to where it outweighs 1 a hundredfold at the smallest (σ up to ``SIGMA_HIGH``);
        negative σ when its bound allows (superlinear)."""
        s_lo, s_hi = float(self.sigma_bounds[0]), min(float(self.sigma_bounds[1]), SIGMA_HIGH)
        k_lo, k_hi = float(self.kappa_bounds[0]), float(self.kappa_bounds[1])
        n_low, n_high = max(float(np.min(n)), 2.0), max(float(np.max(n)), 2.0)
        top = np.geomspace(1e-5 / n_high, SIGMA_HIGH, GRID_SIGMA)
        sigmas = np.concatenate([[0.0], top, -top])
        t_low, t_high = (float(self.coherency(np.array([v]))[0]) for v in (n_low, n_high))
        kappas = np.concatenate([[0.0], np.geomspace(1e-5 / t_high, 1e2 / t_low, GRID_KAPPA)])
        return (sigmas[(sigmas >= s_lo) & (sigmas <= s_hi)], kappas[(kappas >= k_lo) & (kappas <= k_hi)])


def _log_box(values: np.ndarray, step: float, grow: float) -> tuple[float, float] | None:
    """The log-range of the positive ``values``, each side widened by ``grow`` times its width and at least
    ``step`` (None without a positive value)."""
    positive = values[values > 0]
    if not len(positive):
        return None
    low, high = float(np.log(positive.min())), float(np.log(positive.max()))
    margin = max(grow * (high - low), step)
    return low - margin, high + margin


class _Search:
    """One family's parameter sets evaluated on one scale: a coarse grid, fine lines along the edges σ = 0 and
    κ = 0 (where the USL meets pure coherency and Amdahl's law, and the region often lies), then zooms on the
    accepted part until it is resolved (``RESOLVED`` points) or ``MAX_ZOOMS`` passes have run. A zoom refines the
    positive values on a log scale and keeps 0; negative σ (superlinear) stays on the coarse grid."""

    def __init__(self, fam, scale, n):
        self.fam, self.scale = fam, scale
        self.d_sigma, self.d_kappa = n - 1.0, fam.coherency(n)
        self.s_bounds = (float(fam.sigma_bounds[0]), min(float(fam.sigma_bounds[1]), SIGMA_HIGH))
        self.k_bounds = (float(fam.kappa_bounds[0]), float(fam.kappa_bounds[1]))
        sigmas, kappas = fam.axes(n)
        self.steps = (float(np.log(sigmas[sigmas > 0][1] / sigmas[sigmas > 0][0])) if (sigmas > 0).sum() > 1
                      else 1.0, float(np.log(kappas[kappas > 0][1] / kappas[kappas > 0][0]))
                      if (kappas > 0).sum() > 1 else 1.0)
        s, k = _grid(sigmas, kappas)
        lines = []
        if self.k_bounds[0] <= 0:
            fine = np.geomspace(max(sigmas[sigmas > 0].min(), 1e-12), self.s_bounds[1], EDGE_POINTS) \
                if (sigmas > 0).any() else np.zeros(0)
            lines.append((fine, np.zeros_like(fine)))
        if self.s_bounds[0] <= 0 and (kappas > 0).any():
            fine = np.geomspace(kappas[kappas > 0].min(), kappas.max(), EDGE_POINTS)
            lines.append((np.zeros_like(fine), fine))
        extra = np.array(fam.estimates, dtype=float).reshape(-1, 2)
        s = np.concatenate([s, *(line[0] for line in lines), extra[:, 0]])
        k = np.concatenate([k, *(line[1] for line in lines), extra[:, 1]])
        self.batches = []
        self.add(s, k)

    def add(self, s, k):
        ok = (s >= self.s_bounds[0]) & (s <= self.s_bounds[1]) & (k >= self.k_bounds[0]) & (k <= self.k_bounds[1])
        s, k = s[ok], k[ok]
        self.batches.append((s, k, *self.scale.evaluate(self.d_sigma, self.d_kappa, s, k)))

    @property
    def least(self) -> float:
        return min(float(np.min(b[2])) if len(b[2]) else math.inf for b in self.batches)

    def accepted(self, limit: float):
        """(σ, κ) of every evaluated set within ``limit``."""
        s = np.concatenate([b[0][b[2] <= limit] for b in self.batches])
        k = np.concatenate([b[1][b[2] <= limit] for b in self.batches])
        return s, k

    def zoom(self, limit: float, grow: float) -> int:
        """One pass over the accepted part's box (log scale, each side widened); the accepted count before it."""
        s, k = self.accepted(limit)
        if not len(s):
            return 0
        box_s, box_k = _log_box(s, self.steps[0] / 2, grow), _log_box(k, self.steps[1] / 2, grow)
        axis_s = np.exp(np.linspace(*box_s, ZOOM_POINTS)) if box_s else np.zeros(0)
        axis_k = np.exp(np.linspace(*box_k, ZOOM_POINTS)) if box_k else np.zeros(0)
        if np.any(s == 0):
            axis_s = np.append(axis_s, 0.0)
        if np.any(k == 0):
            axis_k = np.append(axis_k, 0.0)
        if len(axis_s) and len(axis_k):
            self.add(*_grid(axis_s, axis_k))
        if box_s:
            self.steps = ((box_s[1] - box_s[0]) / ZOOM_POINTS, self.steps[1])
        if box_k:
            self.steps = (self.steps[0], (box_k[1] - box_k[0]) / ZOOM_POINTS)
        return len(s)

    def rows(self, limit: float, index: int):
        for s, k, rss, centre, curve in self.batches:
            keep = rss <= limit
            lo, hi = self.scale.lambda_range(rss[keep], centre[keep], curve[keep], limit)
            yield s[keep], k[keep], np.full(int(keep.sum()), index), lo, hi


def _edge_model(search: "_Search", which: str, dof: int, level: float, plausible: float, index: int):
    """A model at the family's edge (``amdahl``: κ = 0; ``linear``: σ = κ = 0) when the data do not reject it (its
    least RSS within ``plausible``), with its own region: within its own threshold on its own degrees of freedom.
    The family's region alone under-covers a figure such as the ceiling when the truth sits on the edge (κ = 0):
    the figure changes steeply as κ leaves 0, and a κ fitted above 0 by noise shrinks the edge's accepted part."""
    if which == "amdahl":
        if search.k_bounds[0] > 0:
            return []
        s = np.concatenate([b[0][b[1] == 0] for b in search.batches])
        s = s[s > 0]
        if not len(s):
            return []
        fine = np.geomspace(s.min(), s.max(), EDGE_POINTS)
        k = np.zeros_like(fine)
    else:
        if search.k_bounds[0] > 0 or search.s_bounds[0] > 0:
            return []
        fine, k = np.zeros(1), np.zeros(1)
    rss, centre, curve = search.scale.evaluate(search.d_sigma, search.d_kappa, fine, k)
    least = float(np.min(rss))
    if not (least <= plausible and dof >= 1):
        return []
    own = least * threshold_factor(dof, level)
    keep = rss <= own
    lo, hi = search.scale.lambda_range(rss[keep], centre[keep], curve[keep], own)
    return [(fine[keep], k[keep], np.full(int(keep.sum()), index), lo, hi)]


def likelihood_region(concurrency, throughput, families, weights=None, level: float = LEVEL) -> Region:
    """The parameter sets the data do not reject at ``level``, over one or more families of the USL.

    The union of the families' regions over both scales (the throughput and its logarithm), each scale with one
    threshold over all the families (their least residual sum of squares times ``threshold_factor``), with the plausible
    edge models' own regions. The module docstring says how the grid is searched.

    Parameters
    ----------
    concurrency, throughput : array_like
        The measured points.
    families : iterable of Family
        The families searched (a coherency term, a vectorised peak, the bounds, the fits' own estimates).
    weights : array_like, optional
        Per-point weights.
    level : float, optional
        The region's nominal coverage.

    Returns
    -------
    Region
        Empty with fewer than four points (no residual degree of freedom beyond three parameters).
    """
    n = np.asarray(concurrency, dtype=float)
    x = np.asarray(throughput, dtype=float)
    w = np.ones_like(x) if weights is None else np.asarray(weights, dtype=float)
    families = tuple(families)
    rows = []
    for scale_name in SCALES:
        scale = _Scale(scale_name, n, x, w)
        dof = scale.m - 3
        if dof < 1:
            continue
        factor = threshold_factor(dof, nominal_level(level))
        searches = [_Search(fam, scale, n) for fam in families]
        least = min(s.least for s in searches)
        for zoom in range(MAX_ZOOMS):
            counts = [s.zoom(least * factor, ZOOM_GROW if zoom < 2 else ZOOM_GROW / 4) for s in searches]
            least = min(s.least for s in searches)
            if min(counts) >= RESOLVED:
                break
        limit = least * factor
        plausible = least * threshold_factor(dof, EDGE_PLAUSIBLE)
        for i, search in enumerate(searches):
            rows.extend(search.rows(limit, i))
            for edge, edge_dof in (("amdahl", scale.m - 2), ("linear", scale.m - 1)):
                rows.extend(_edge_model(search, edge, edge_dof, nominal_level(level), plausible, i))
    names = tuple(f.name for f in families)
    peaks = tuple(f.peak for f in families)
    coherencies = tuple(f.coherency for f in families)
    if not rows:
        empty = np.zeros(0)
        return Region(empty, empty, np.zeros(0, int), empty, empty, names, peaks, coherencies, level, len(n),
                      len(n) - 3)
    sigma, kappa, family, lo, hi = (np.concatenate([r[i] for r in rows]) for i in range(5))
    return Region(sigma, kappa, family, lo, hi, names, peaks, coherencies, level, len(n), len(n) - 3)
