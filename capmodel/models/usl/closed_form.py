"""The Universal Scalability Law answered in closed form: the curve, its peak, the N for a throughput, the N for a
Little's-law response time.

X(N) = lambda*N / D(N) with D(N) = 1 + sigma*(N-1) + kappa*N*(N-1) (Gunther, *Guerrilla Capacity Planning*, Springer
2007, ch. 4-6). Every question here is a root of a quadratic in N, solved once, so the fitted objects
(``USLFit.latency_limit`` and ``largest_concurrency_within``, ``LatencyFit.latency_limit``), the planning layer
(capmodel.plan) and every bootstrap sample get the same answer. ``latency_limit`` is the one solver of the
latency-target question: its branch and its cap at the peak are arguments, and "unreachable" is a named
``LatencyLimit``. Pure functions of the parameters: no fitting, no I/O.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from capmodel.errors import InputError
from capmodel.formatting import number


def usl_throughput(n, sigma, kappa, lambda_):
    """The USL's throughput X(N) = λN / (1 + σ(N − 1) + κN(N − 1)).

    Parameters
    ----------
    n : float or array_like
        The concurrency N.
    sigma, kappa, lambda_ : float
        Contention σ, coherency κ and the throughput of one client λ.

    Returns
    -------
    numpy.ndarray or float
        X(N), in λ's unit, vectorised over ``n``.

    Examples
    --------
    >>> from capmodel.models.usl.closed_form import usl_throughput
    >>> usl_throughput([1, 8, 32], sigma=0.05, kappa=0.001, lambda_=100).round(1).tolist()
    [100.0, 569.0, 903.4]
    """
    n = np.asarray(n, dtype=float)
    return lambda_ * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))


def usl_peak(sigma, kappa, lambda_):
    """The peak of the USL curve: N* = √((1 − σ)/κ) and X(N*) (Gunther 2007, eq. 4.33).

    Without coherency (κ = 0) there is no peak: (inf, the ceiling λ/σ); linear scaling gives (inf, inf). A curve whose
    √((1 − σ)/κ) <= 1 falls from the first client on, and its peak is reported at N = 1.

    Parameters
    ----------
    sigma, kappa, lambda_ : float or array_like
        The parameters; arrays give one peak per element.

    Returns
    -------
    tuple
        (N*, X(N*)): floats for scalars, arrays for arrays.

    Examples
    --------
    >>> from capmodel.models.usl.closed_form import usl_peak
    >>> n_star, x_star = usl_peak(0.05, 0.001, 100)
    >>> round(n_star, 2), round(x_star, 1)
    (30.82, 903.8)
    """
    if np.ndim(sigma) == 0 and np.ndim(kappa) == 0 and np.ndim(lambda_) == 0:
        if kappa > 0:
            n_star = max(1.0, math.sqrt(max(1.0 - sigma, 0.0) / kappa))
            return n_star, float(usl_throughput(n_star, sigma, kappa, lambda_))
        return math.inf, (lambda_ / sigma if sigma > 0 else math.inf)
    sigma, kappa, lambda_ = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (sigma, kappa, lambda_)))
    with np.errstate(divide="ignore", invalid="ignore"):
        n_peak = np.where(kappa > 0, np.maximum(1.0, np.sqrt(np.maximum(1.0 - sigma, 0.0) / kappa)), math.inf)
        x_peak = np.where(kappa > 0, usl_throughput(np.where(kappa > 0, n_peak, 1.0), sigma, kappa, lambda_),
                          np.where(sigma > 0, lambda_ / sigma, math.inf))
    return n_peak, x_peak


def whole_peak(peak_concurrency: float, throughput_at) -> int:
    """The whole number of clients next to a real-valued peak (floor or ceil, at least 1) with the higher throughput."""
    lo = max(1, math.floor(peak_concurrency))
    hi = max(1, math.ceil(peak_concurrency))
    return int(lo if float(throughput_at(lo)) >= float(throughput_at(hi)) else hi)


def concurrency_for_throughput(x: float, sigma: float, kappa: float, lambda_: float = 1.0) -> float:
    """The concurrency on the rising side of the USL curve where X(N) reaches a throughput.

    Parameters
    ----------
    x : float
        The throughput, in λ's unit.
    sigma, kappa : float
        Contention and coherency.
    lambda_ : float, default 1.0
        The throughput of one client.

    Returns
    -------
    float
        N; 0 for x <= 0, inf when x is beyond the peak.
    """
    if x <= 0:
        return 0.0
    # x * (1 + sigma (N-1) + kappa N (N-1)) = lambda N  ->  a N^2 + b N + c = 0
    a, b, c = x * kappa, x * sigma - x * kappa - lambda_, x * (1.0 - sigma)
    if a == 0:
        return c / -b if b < 0 else math.inf
    disc = b * b - 4 * a * c
    if disc < -1e-12 * b * b:      # beyond the peak; a rounding error below 0 at the peak itself is the peak
        return math.inf
    return (-b - math.sqrt(max(disc, 0.0))) / (2 * a)


BRANCHES = ("normal", "retrograde")


@dataclass(frozen=True)
class LatencyLimit:
    """The answer to "the largest N (and its X) whose Little's-law response time N/X(N) is within a target".

    ``latency_limit`` returns it.

    Parameters
    ----------
    concurrency, throughput : float
        The answer: inf when nothing bounds N, NaN only when ``reachable`` is False.
    reachable : bool
        Whether there is an answer.
    reason : str
        The case, one of ``LATENCY_REASONS`` (``met``, ``capped_at_peak``, ``retrograde``, ``unbounded``,
        ``below_zero_load``, ``past_peak``).
    message : str
        The case in words.
    branch : str, default ""
        Where the answer lies: ``normal`` (the rising side of the curve), ``peak`` (the target is met up to the peak
        and the answer was capped there) or ``retrograde`` (the far side of the nose).
    target_seconds : float, default nan
        The target.
    zero_load_seconds : float, default nan
        The fastest response time the curve offers over the allowed N.
    """

    concurrency: float
    throughput: float
    reachable: bool
    reason: str
    message: str
    branch: str = ""
    target_seconds: float = math.nan
    zero_load_seconds: float = math.nan


LATENCY_REASONS = {
    "met": "the target is crossed on the rising side of the curve",
    "capped_at_peak": "the target is still met at the peak: the answer is the peak",
    "retrograde": "the target is crossed past the peak, on the retrograde branch",
    "unbounded": "the response time never reaches the target as N grows: nothing bounds N",
    "below_zero_load": "unreachable: the target is below the zero-load response time",
    "past_peak": "unreachable on the rising side: the response time at the peak is still below the target",
}


def _latency_result(reason, n, x, branch, seconds, zero_load) -> LatencyLimit:
    reachable = reason not in ("below_zero_load", "past_peak")
    ms = f"{number(seconds * 1000, 4)} ms"
    if reason == "below_zero_load":
        message = (f"a response time of {ms} is unreachable: even at the lightest load it is "
                   f"{number(zero_load * 1000, 4)} ms")
    elif reason == "past_peak":
        message = (f"the response time stays below {ms} up to the peak ({x:,.0f} ops/s at N = {number(n, 4)}) and "
                   "reaches it only past the peak, on the retrograde branch")
    elif reason == "unbounded":
        message = f"the response time does not grow with N: a {ms} target bounds neither N nor the throughput"
    elif reason == "capped_at_peak":
        message = f"the response time stays below {ms} up to the peak: {x:,.0f} ops/s at N = {number(n, 4)}"
    else:
        side = "past the peak, on the retrograde branch" if reason == "retrograde" else "on the rising side"
        message = f"the response time reaches {ms} at N = {number(n, 4)}, {x:,.0f} ops/s ({side})"
    if not reachable:
        n, x = math.nan, math.nan
    return LatencyLimit(float(n), float(x), reachable, reason, message, branch if reachable else "", seconds,
                        zero_load)


def latency_root(budget, sigma, kappa):
    """The largest N with D(N) <= ``budget`` (= λ(T + Z)): the larger root of κN² + (σ − κ)N + (1 − σ − budget)
    = 0 (Gunther 2007, ch. 6); -inf where D never comes down to the budget, inf where it never grows (κ = 0,
    σ <= 0). Vectorised: arrays of parameter sets give an array."""
    budget, sigma, kappa = (np.asarray(v, dtype=float) for v in (budget, sigma, kappa))
    a, b, c = kappa, sigma - kappa, 1.0 - sigma - budget
    with np.errstate(divide="ignore", invalid="ignore"):
        disc = b * b - 4 * a * c
        # the roots as q / a and c / q, q = -(b + sign(b) sqrt(disc)) / 2: no difference of nearly equal terms when
        # 4ac is small beside b² (a tiny κ: -b + sqrt(disc) loses every digit)
        q = -0.5 * (b + np.where(b >= 0, 1.0, -1.0) * np.sqrt(np.maximum(disc, 0.0)))
        roots = np.maximum(q / np.where(a > 0, a, 1.0), np.where(q != 0, c / np.where(q != 0, q, 1.0), -math.inf))
        quadratic = np.where(disc >= 0, roots, -math.inf)
        linear = np.where(b > 0, -c / np.where(b > 0, b, 1.0), np.where(c <= 0, math.inf, -math.inf))
    return np.where(a > 0, quadratic, linear)


def latency_throughput(target_s, sigma, kappa, lambda_, min_concurrency: float = 1.0):
    """The most throughput whose Little's-law response time N/X(N) meets ``target_s``, on the rising side and capped
    at the peak (``latency_limit(..., branch="normal", cap_at_peak=True)``'s throughput), over arrays of parameter
    sets at once; 0 where even ``min_concurrency`` misses the target, inf where nothing bounds N (linear)."""
    sigma, kappa, lambda_ = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (sigma, kappa, lambda_)))
    n_t = latency_root(lambda_ * target_s, sigma, kappa)
    n_peak, x_peak = usl_peak(sigma, kappa, lambda_)
    n = np.minimum(n_t, n_peak)
    with np.errstate(invalid="ignore"):
        at = np.where(np.isfinite(n), usl_throughput(np.where(np.isfinite(n), n, 1.0), sigma, kappa, lambda_), x_peak)
    return np.where(n_t < min_concurrency * (1 - 1e-12), 0.0, at)


def latency_limit(target_s: float, sigma: float, kappa: float, lambda_: float, *, branch: str = "normal",
                  cap_at_peak: bool = True, min_concurrency: float = 1.0, think_time_s: float = 0.0) -> LatencyLimit:
    """The one solver of "the largest N (and its X) whose response time N/X(N) − Z is within a target".

    N/X(N) = D(N)/λ, so the condition is κN² + (σ − κ)N + (1 − σ − λ(T + Z)) <= 0: the largest root N_T of that
    quadratic (Gunther 2007, ch. 6), solved exactly. N_T lies on the rising side of the curve when N_T <= N* (the peak,
    ``usl_peak``), on the retrograde branch past it otherwise. A target below the response time at every allowed N is
    ``below_zero_load``; a curve whose response time never grows with N (κ = 0, σ <= 0) answers ``unbounded`` (N and X
    infinite, reachable). Nothing here returns 0 or NaN without saying so.

    Parameters
    ----------
    target_s : float
        The response-time target T, in seconds (> 0).
    sigma, kappa, lambda_ : float
        The USL's parameters (λ in operations per second).
    branch : {"normal", "retrograde"}, default "normal"
        Without ``cap_at_peak``, past the peak: ``normal`` gives no answer on the rising side (reason ``past_peak``,
        not reachable); ``retrograde`` gives N_T and X(N_T) on the far side of the nose (reason ``retrograde``: the
        largest N, whatever its throughput).
    cap_at_peak : bool, default True
        Past the peak, the answer is the peak itself (reason ``capped_at_peak``: the most throughput that meets the
        target, what capacity planning asks).
    min_concurrency : float, default 1.0
        The smallest N the question allows (1 client for a closed benchmark; 0 for the latency form of observed load,
        whose N = X R is a time average below 1 at light load).
    think_time_s : float, default 0.0
        The clients' think time Z, in seconds (>= 0).

    Returns
    -------
    LatencyLimit
        ``reachable``, ``reason`` (one of ``LATENCY_REASONS``) and ``message``, the answer's ``concurrency`` and
        ``throughput``, and its ``branch``.

    Raises
    ------
    InputError
        An unknown ``branch``, a target that is not a number of seconds > 0, or a negative think time.

    Examples
    --------
    >>> from capmodel.models.usl.closed_form import latency_limit
    >>> limit = latency_limit(0.03, sigma=0.05, kappa=0.001, lambda_=100)
    >>> limit.reason, round(limit.concurrency, 2), round(limit.throughput, 1)
    ('met', 26.98, 899.4)
    >>> latency_limit(0.05, sigma=0.05, kappa=0.001, lambda_=100).reason           # met up to the peak
    'capped_at_peak'
    >>> limit = latency_limit(0.05, sigma=0.05, kappa=0.001, lambda_=100, cap_at_peak=False, branch="retrograde")
    >>> limit.reason, round(limit.concurrency, 2)
    ('retrograde', 43.69)
    """
    if branch not in BRANCHES:
        raise InputError(f"branch: expected one of {', '.join(BRANCHES)}, got {branch!r}")
    if not (math.isfinite(target_s) and target_s > 0) or not (math.isfinite(think_time_s) and think_time_s >= 0):
        raise InputError(f"a latency target must be a number of seconds > 0 (think time >= 0), got {target_s!r}"
                         + (f" (think time {think_time_s!r})" if think_time_s else ""))
    budget = lambda_ * (target_s + think_time_s)
    n_lo = max(float(min_concurrency), 0.0)
    # the fastest response time over N >= n_lo: D's minimum at N = (kappa - sigma) / (2 kappa) when kappa > 0
    if kappa > 0:
        n_fast = max(n_lo, (kappa - sigma) / (2 * kappa))
    else:
        n_fast = n_lo if sigma >= 0 else math.inf
    zero_load = ((1.0 + sigma * (n_fast - 1.0) + kappa * n_fast * (n_fast - 1.0)) / lambda_ - think_time_s
                 if math.isfinite(n_fast) else math.nan)
    if kappa == 0 and sigma <= 0:      # D(N) never grows with N: constant (linear scaling) or falling (superlinear)
        if sigma == 0 and 1.0 - budget > 0:
            return _latency_result("below_zero_load", 0, 0, "", target_s, zero_load)
        return _latency_result("unbounded", math.inf, usl_peak(sigma, kappa, lambda_)[1], "normal", target_s,
                               zero_load)
    n_t = float(latency_root(budget, sigma, kappa))
    if n_t < n_lo * (1 - 1e-12):
        return _latency_result("below_zero_load", 0, 0, "", target_s, zero_load)
    n_t = max(n_t, n_lo)
    n_peak, x_peak = usl_peak(sigma, kappa, lambda_)
    if n_t <= n_peak:
        return _latency_result("met", n_t, usl_throughput(n_t, sigma, kappa, lambda_), "normal", target_s, zero_load)
    if cap_at_peak:
        return _latency_result("capped_at_peak", n_peak, x_peak, "peak", target_s, zero_load)
    if branch == "normal":
        return _latency_result("past_peak", n_peak, x_peak, "", target_s, zero_load)
    return _latency_result("retrograde", n_t, usl_throughput(n_t, sigma, kappa, lambda_), "retrograde", target_s,
                           zero_load)


def log_coherency_peak(sigma, kappa, lambda_):
    """(N*, X(N*)) of X(N) = lambda*N / (1 + sigma(N-1) + kappa N ln N): dX/dN = 0 at N* = (1 - sigma)/kappa;
    (inf, lambda/sigma) without coherency, (inf, inf) when linear. As for the USL, a curve whose N* <= 1 falls from
    the first client on and its peak is reported at N = 1 (ln N* is then never taken of a non-positive N*). Scalars
    give floats; arrays give arrays."""
    if np.ndim(sigma) == 0 and np.ndim(kappa) == 0 and np.ndim(lambda_) == 0:
        if kappa > 0:
            n_star = max(1.0, (1.0 - sigma) / kappa)
            return n_star, float(lambda_ * n_star / (1.0 + sigma * (n_star - 1.0) + kappa * n_star * math.log(n_star)))
        return math.inf, (lambda_ / sigma if sigma > 0 else math.inf)
    sigma, kappa, lambda_ = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (sigma, kappa, lambda_)))
    with np.errstate(divide="ignore", invalid="ignore"):
        n_star = np.where(kappa > 0, np.maximum(1.0, (1.0 - sigma) / np.where(kappa > 0, kappa, 1.0)), math.inf)
        finite = np.where(kappa > 0, n_star, 1.0)
        x_star = np.where(kappa > 0,
                          lambda_ * finite / (1.0 + sigma * (finite - 1.0) + kappa * finite * np.log(finite)),
                          np.where(sigma > 0, lambda_ / sigma, math.inf))
    return n_star, x_star
