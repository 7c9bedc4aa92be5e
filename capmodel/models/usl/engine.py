"""The fitting engine shared by every model of the family X(N) = lambda*N / (1 + sum_j theta_j g_j(N)).

``fit_model(model, curve, ...)`` checks the input, solves the bounded least-squares problem and hands (curve,
estimates, covariance) to the model's results class, which only derives. The solver is a bound-respecting
Levenberg-Marquardt iteration in numpy (``levenberg_marquardt`` for one curve; ``batch_fit``, the same iteration over
many data sets at once, for the bootstrap), started from the linearised model; scipy's MINPACK and trust-region solvers
are the fallback for the rare curve where it does not converge (imported only then: scipy.optimize alone costs a
command-line call about half a second).
"""
from __future__ import annotations

import numpy as np

from capmodel.data.curve import CONCURRENCY_RANGE, MAX_SPAN, MAX_THROUGHPUT, validate_curve
from capmodel.errors import FitError, InputError
from capmodel.formatting import plural
from capmodel.models.usl.verdict.curve_rules import check_curve

SOLVER_TOLERANCE = 1e-15     # relative change of the cost at which the iteration stops
SOLVER_MAX_ITERATIONS = 500
ROUNDOFF = 1e-13             # a step that raises the cost by less than this (relative) is rounding, not a direction


# --- input ---------------------------------------------------------------------------------------------------------

def curve_arrays(curve):
    """(curve, concurrency, throughput) from a curve table; the full validation runs only when a quick check fails."""
    import pandas as pd  # already loaded wherever a table comes from

    try:
        if not (isinstance(curve, pd.DataFrame) and curve.columns.is_unique
                and all(curve[c].dtype.kind in "iuf" for c in ("concurrency", "throughput"))):
            raise TypeError("not a plain table of real numbers")   # the gate below names what it is
        n = curve["concurrency"].to_numpy(dtype=float)
        x = curve["throughput"].to_numpy(dtype=float)
        low, high = CONCURRENCY_RANGE
        positive = x[x > 0]
        clean = bool(np.all(np.isfinite(n)) and np.all(np.isfinite(x)) and np.all((n >= low) & (n <= high))
                     and np.all((x >= 0) & (x <= MAX_THROUGHPUT))
                     and (not len(positive) or positive.max() <= MAX_SPAN * positive.min()))
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError):
        clean = False
    if not clean:  # let the one gate produce the message (file/column/row)
        curve = validate_curve(curve)
        n = curve["concurrency"].to_numpy(dtype=float)
        x = curve["throughput"].to_numpy(dtype=float)
    else:
        curve = curve.copy()
    return curve, n, x


def replicate_weights(n: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Inverse-variance weights from replicates: each point gets 1 / (sample variance of its concurrency level).

    A level measured once (or whose replicates are identical) has no variance of its own; it gets the pooled
    within-level variance of the levels that have one. Weights are scaled to mean 1 (this changes no estimate).
    """
    levels, inverse = np.unique(n, return_inverse=True)
    var = np.full(len(levels), np.nan)
    ss, dof = 0.0, 0
    for i in range(len(levels)):
        group = x[inverse == i]
        if len(group) >= 2 and np.var(group, ddof=1) > 0:
            var[i] = np.var(group, ddof=1)
            ss += var[i] * (len(group) - 1)
            dof += len(group) - 1
    if dof == 0:
        raise InputError(
            "weights='replicates' needs at least one concurrency level measured more than once "
            "(with differing throughputs); fit without weights instead"
        )
    var[np.isnan(var)] = ss / dof
    w = 1.0 / var[inverse]
    return w / w.mean()


def resolve_weights(weights, n: np.ndarray, x: np.ndarray) -> np.ndarray | None:
    """None, "replicates" or an array of non-negative weights -> None or a float array (mean 1)."""
    if weights is None:
        return None
    if isinstance(weights, str):
        if weights != "replicates":
            raise InputError(f"weights: expected None, 'replicates' or an array of numbers, got {weights!r}")
        return replicate_weights(n, x)
    w = np.asarray(weights, dtype=float).ravel()
    if w.shape != n.shape:
        raise InputError(f"weights: {len(w)} weights for {len(n)} points")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or not np.any(w > 0):
        raise InputError("weights: every weight must be a finite number >= 0 and at least one > 0")
    return w / w.mean()


def check_identifiable(model, n: np.ndarray, x: np.ndarray) -> None:
    """As many points and distinct concurrency levels as parameters (exactly determined is allowed), some throughput."""
    k = model.n_params
    if len(n) < k:
        raise InputError(f"{plural(len(n), 'point')} cannot fit {model.name} with {k} parameters; measure at least "
                         f"{k} points "
                         f"({k + 1} or more for intervals)")
    levels = len(np.unique(n))
    if levels < k:
        raise InputError(f"only {plural(levels, 'distinct concurrency level')}: {model.name} with {k} parameters needs "
                         f"at least {k}")
    if not np.any(x > 0):
        raise FitError("every throughput is 0: nothing to fit")


# --- the solver ----------------------------------------------------------------------------------------------------

def starting_values(model, n, x, lower, upper) -> np.ndarray:
    """lambda from the best X/N, theta from the linearised model lambda*N/X - 1 = G theta, cut to the bounds."""
    pos = x > 0
    lam = float(np.max(x[pos] / n[pos]))
    G = model.design(n)
    theta = np.zeros(G.shape[1])
    if G.shape[1]:
        target = lam * n[pos] / x[pos] - 1.0
        if np.all(np.isfinite(G[pos])) and np.all(np.isfinite(target)):  # LAPACK prints to stdout on inf/NaN
            theta = np.clip(np.linalg.lstsq(G[pos], target, rcond=None)[0], lower[:-1], upper[:-1])
        denom = 1.0 + G @ theta
        if np.all(denom > 0):
            f = n / denom
            lam = float(np.dot(f, x) / np.dot(f, f))
    return np.clip(np.append(theta, lam), lower, upper)


def batch_fit(n, y, sw, terms, start, lower, upper, max_iter: int = 100, tol: float = 1e-10):
    """Fit lambda*N / (1 + sum theta_j g_j(N)) to each row of ``y`` (B x m) at once.

    ``n`` is (B x m) or (m,), ``sw`` square-root weights like ``y``, ``start`` (B x p) or (p,), ``terms`` the model's
    name -> g(N) mapping. Returns (params B x p, converged mask B). Parameters at a bound whose gradient points
    outwards are held there.
    """
    y = np.asarray(y, float)
    B, m = y.shape
    n = np.broadcast_to(np.asarray(n, float), (B, m))
    sw = np.broadcast_to(np.asarray(sw, float), (B, m))
    G = np.stack([g(n) for g in terms.values()], axis=-1) if terms else np.zeros((B, m, 0))
    p = np.array(np.broadcast_to(np.asarray(start, float), (B, G.shape[-1] + 1)))
    lower, upper = np.asarray(lower, float), np.asarray(upper, float)
    k = p.shape[1]
    mu = np.full(B, 1e-3)
    eye = np.eye(k)

    def residual_and_jac(p):
        denom = 1.0 + np.einsum("bmj,bj->bm", G, p[:, :-1])
        f = p[:, -1:] * n / denom
        r = sw * (y - f)
        J = np.empty((B, m, k))
        J[:, :, :-1] = -(p[:, -1:] * n / denom**2)[:, :, None] * G
        J[:, :, -1] = n / denom
        J *= sw[:, :, None]
        bad = ~np.all(denom > 0, axis=1)
        return r, J, bad

    with np.errstate(all="ignore"):
        r, J, bad = residual_and_jac(p)
        cost = np.where(bad, np.inf, np.sum(r * r, axis=1))
        converged = np.zeros(B, dtype=bool)
        for _ in range(max_iter):
            active = ~converged
            if not active.any():
                break
            g = np.einsum("bmk,bm->bk", J, r)                       # J'r: the descent direction in parameter space
            held = ((p <= lower) & (g < 0)) | ((p >= upper) & (g > 0))
            Jf = np.where(held[:, None, :], 0.0, J)
            A = np.einsum("bmk,bml->bkl", Jf, Jf)
            diag = np.einsum("bkk->bk", A)
            scale = np.where(diag > 0, diag, 1.0)
            A = A + (mu[:, None] * scale)[:, :, None] * eye
            rhs = np.where(held, 0.0, g)
            step = np.linalg.solve(A, rhs[:, :, None])[:, :, 0]
            trial = np.clip(p + step, lower, upper)
            r_t, J_t, bad_t = residual_and_jac(trial)
            cost_t = np.where(bad_t | ~np.all(np.isfinite(r_t), axis=1), np.inf, np.sum(r_t * r_t, axis=1))
            better = (cost_t <= cost) & active
            small = np.abs(cost - cost_t) <= tol * np.maximum(cost, 1e-300)
            tiny_step = np.all(np.abs(trial - p) <= tol * np.maximum(np.abs(p), 1e-12), axis=1)
            p = np.where(better[:, None], trial, p)
            r = np.where(better[:, None], r_t, r)
            J = np.where(better[:, None, None], J_t, J)
            stuck = active & ~better & (mu > 1e12)                 # no downhill step even with a tiny one: a minimum
            converged |= (active & better & (small | tiny_step)) | stuck
            cost = np.where(better, cost_t, cost)
            mu = np.where(active, np.where(better, mu / 3.0, mu * 4.0), mu)
    ok = converged & np.all(np.isfinite(p), axis=1) & np.isfinite(cost)
    return p, ok


def levenberg_marquardt(model, n, x, sw, start, lower, upper, max_iter: int | None = None, tol: float | None = None):
    """One curve's bounded least squares: ``batch_fit``'s iteration without the batch dimension (a 3x3 solve per
    step costs microseconds, so one fit takes about a millisecond). Returns (params, converged). ``max_iter`` and
    ``tol`` default to SOLVER_MAX_ITERATIONS and SOLVER_TOLERANCE."""
    max_iter = SOLVER_MAX_ITERATIONS if max_iter is None else max_iter
    tol = SOLVER_TOLERANCE if tol is None else tol
    G = model.design(n)
    k = len(start)
    diagonal = np.diag_indices(k)

    def residual_and_jac(p):
        denom = 1.0 + G @ p[:-1]
        if not np.all(denom > 0):
            return None, None, np.inf
        r = sw * (x - p[-1] * n / denom)
        J = np.empty((len(n), k))
        J[:, :-1] = -(p[-1] * n / denom**2)[:, None] * G
        J[:, -1] = n / denom
        J *= sw[:, None]
        cost = float(r @ r)
        return r, J, (cost if np.isfinite(cost) else np.inf)

    p = np.array(start, dtype=float)
    r, J, cost = residual_and_jac(p)
    if r is None or not np.isfinite(cost):
        return p, False
    mu = 1e-3
    with np.errstate(all="ignore"):
        for _ in range(max_iter):
            g = J.T @ r                                            # J'r: the descent direction
            held = ((p <= lower) & (g < 0)) | ((p >= upper) & (g > 0))
            Jf = np.where(held[None, :], 0.0, J)
            A = Jf.T @ Jf
            scale = np.where(A[diagonal] > 0, A[diagonal], 1.0)
            A[diagonal] += mu * scale
            trial = np.clip(p + np.linalg.solve(A, np.where(held, 0.0, g)), lower, upper)
            r_t, J_t, cost_t = residual_and_jac(trial)
            if cost_t <= cost:
                done = (cost - cost_t <= tol * max(cost, 1e-300)
                        or np.all(np.abs(trial - p) <= tol * np.maximum(np.abs(p), 1e-12)))
                p, r, J, cost, mu = trial, r_t, J_t, cost_t, mu / 3.0
                if done:
                    return p, bool(np.all(np.isfinite(p)))
            elif cost_t - cost <= ROUNDOFF * cost or mu > 1e12:
                # uphill only by rounding error, or no downhill step even with a tiny one: this is the minimum
                return p, bool(np.all(np.isfinite(p)))
            else:
                mu *= 4.0
    return p, False


def _gradient(model, n, x, sw, p):
    """d(cost/2)/dp of the weighted residuals."""
    r = sw * (model.evaluate(n, p) - x)
    return (sw[:, None] * model.jacobian(n, p)).T @ r


def _kkt_holds(model, n, x, sw, p, lower, upper) -> bool:
    """Stationary in the free parameters, and each parameter held at a bound wants to leave the feasible set."""
    change = _gradient(model, n, x, sw, p) * np.maximum(np.abs(p), 1e-12)   # cost per relative change of each
    tol = 1e-6 * max(float(np.sum((sw * x) ** 2)), 1e-300)
    at_lower, at_upper = p <= lower, p >= upper
    free = ~(at_lower | at_upper)
    return bool(np.all(np.abs(change[free]) <= tol) and np.all(change[at_lower] >= -tol)
                and np.all(change[at_upper] <= tol))


def _scipy_fit(model, n, x, sw, lower, upper, start):
    """The fallback: bounded trust-region reflective least squares (scipy), from the linearised start."""
    from scipy import optimize

    def resid(q):
        return sw * (model.evaluate(n, q) - x)

    def jac(q):
        return sw[:, None] * model.jacobian(n, q)

    with np.errstate(all="ignore"):
        res = optimize.least_squares(resid, start, jac=jac, bounds=(lower, upper), method="trf",
                                     x_scale="jac", ftol=1e-14, xtol=1e-14, gtol=1e-14, max_nfev=2000)
        cost = np.sum(resid(res.x) ** 2)
    if not np.isfinite(cost):
        raise FitError("the least-squares fit did not converge to finite parameters")
    return res.x


def fit_parameters(model, n, x, w, lower, upper):
    """Bounded least squares for lambda*N / (1 + sum theta_j g_j(N)); returns (estimates, at_bound mask)."""
    sw = np.ones_like(x) if w is None else np.sqrt(w)
    start = starting_values(model, n, x, lower, upper)
    best, ok = levenberg_marquardt(model, n, x, sw, start, lower, upper)
    if not (ok and _kkt_holds(model, n, x, sw, best, lower, upper)):
        best = _scipy_fit(model, n, x, sw, lower, upper, start)
    at_lower = np.isfinite(lower) & (np.abs(best - lower) <= 1e-9 * np.maximum(1.0, np.abs(lower)))
    at_upper = np.isfinite(upper) & (np.abs(best - upper) <= 1e-9 * np.maximum(1.0, np.abs(upper)))
    best = np.where(at_lower, lower, np.where(at_upper, upper, best))
    return best, at_lower | at_upper


def covariance(model, n, x, w, p) -> np.ndarray:
    """Asymptotic covariance s^2 (J'WJ)^-1, computed with all parameters (as R's usl and nls do); NaN when the curve
    is exactly determined (no residual degrees of freedom) or J'WJ is singular."""
    k = len(p)
    wt = np.ones_like(x) if w is None else w
    dof = len(n) - k
    if dof <= 0:
        return np.full((k, k), np.nan)
    s2 = float(np.sum(wt * (x - model.evaluate(n, p)) ** 2)) / dof
    J = model.jacobian(n, p) * np.sqrt(wt)[:, None]
    try:
        return np.linalg.inv(J.T @ J) * s2
    except np.linalg.LinAlgError:
        return np.full((k, k), np.nan)


def fit_model(model, curve, allow_superlinear: bool = False, weights=None, bounds: dict | None = None):
    """Fit a declared model (capmodel.models.usl.family) to a curve table; returns the model's results object. The
    table passes the rules every fit runs first (capmodel.models.usl.verdict.curve_rules: one curve, not parts of
    steps)."""
    curve, n, x = curve_arrays(curve)
    check_curve(curve)
    w = resolve_weights(weights, n, x) if weights is not None else None
    if w is not None and np.any(w == 0):
        # a weight of 0 takes the point out: it is no data point for the fit's degrees of freedom, its best measured
        # rate or its verdict (a zero-weighted 10x outlier made the peak 'past_peak, unusable')
        keep = w > 0
        curve, n, x, w = curve.iloc[np.flatnonzero(keep)], n[keep], x[keep], w[keep] / w[keep].mean()
        try:
            check_identifiable(model, n, x)
        except InputError as exc:
            raise InputError(f"weights: {plural(len(n), 'point has', 'points have')} a weight above 0, the rest "
                             f"are left out: {exc}") from None
    check_identifiable(model, n, x)
    lower, upper = model.parameter_bounds(allow_superlinear, bounds)
    with np.errstate(all="ignore"):  # numerical noise is judged by the result (warnings), never printed
        try:
            p, at_bound = fit_parameters(model, n, x, w, lower, upper)
        except (np.linalg.LinAlgError, ValueError, FloatingPointError, OverflowError) as exc:
            raise FitError(f"the {model.name} fit failed numerically ({str(exc)[:100]})") from None
    if not np.all(np.isfinite(p)):
        raise FitError(f"the {model.name} fit did not converge to finite estimates")
    return model.results_class(model, curve, p, covariance(model, n, x, w, p), weights=w, at_bound=at_bound,
                               lower=lower, upper=upper, allow_superlinear=allow_superlinear, concurrency=n,
                               throughput=x)
