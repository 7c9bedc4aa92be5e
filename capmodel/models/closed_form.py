"""The Universal Scalability Law answered in closed form: the curve, its peak, the N for a throughput, the N for a
Little's-law response time.

X(N) = lambda*N / D(N) with D(N) = 1 + sigma*(N-1) + kappa*N*(N-1) (Gunther, *Guerrilla Capacity Planning*, Springer
2007, ch. 4-6). Every question here is a root of a quadratic in N, solved once, so the fitted object
(``USLFit.max_concurrency_for_latency``), the planning layer (capmodel.plan) and every bootstrap sample get the same
answer. Pure functions of the parameters: no fitting, no I/O.
"""
from __future__ import annotations

import math

import numpy as np


def usl_throughput(n, sigma, kappa, lambda_):
    """X(N) = lambda*N / (1 + sigma*(N-1) + kappa*N*(N-1)), vectorised over ``n``."""
    n = np.asarray(n, dtype=float)
    return lambda_ * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))


def usl_peak(sigma, kappa, lambda_):
    """(N*, X(N*)): the peak of the USL curve; (inf, ceiling lambda/sigma) without coherency, (inf, inf) when linear.

    N* = sqrt((1 - sigma)/kappa) (Gunther 2007, eq. 4.33). Below one client the formula has no meaning: a curve whose
    sqrt((1 - sigma)/kappa) <= 1 falls from the first client on, and its peak is reported at N = 1.
    """
    if kappa > 0:
        n_star = max(1.0, math.sqrt(max(1.0 - sigma, 0.0) / kappa))
        return n_star, float(usl_throughput(n_star, sigma, kappa, lambda_))
    return math.inf, (lambda_ / sigma if sigma > 0 else math.inf)


def whole_peak(peak_concurrency: float, throughput_at) -> int:
    """The whole number of clients next to a real-valued peak (floor or ceil, at least 1) with the higher throughput."""
    lo = max(1, math.floor(peak_concurrency))
    hi = max(1, math.ceil(peak_concurrency))
    return int(lo if float(throughput_at(lo)) >= float(throughput_at(hi)) else hi)


def concurrency_for_throughput(x: float, sigma: float, kappa: float, lambda_: float = 1.0) -> float:
    """The N on the rising side of the curve where X(N) = x; inf when x is beyond the peak."""
    if x <= 0:
        return 0.0
    # x * (1 + sigma (N-1) + kappa N (N-1)) = lambda N  ->  a N^2 + b N + c = 0
    a, b, c = x * kappa, x * sigma - x * kappa - lambda_, x * (1.0 - sigma)
    if a == 0:
        return c / -b if b < 0 else math.inf
    disc = b * b - 4 * a * c
    if disc < 0:
        return math.inf
    return (-b - math.sqrt(disc)) / (2 * a)


def response_time_root(seconds: float, sigma: float, kappa: float, lambda_: float) -> float:
    """The largest real N with N/X(N) = D(N)/lambda <= ``seconds``: the latency quadratic, solved exactly.

    D(N) <= lambda*R  <=>  kappa N^2 + (sigma - kappa) N + (1 - sigma - lambda R) <= 0. Returns -inf when no N meets
    it (kappa > 0 and a negative discriminant), inf when nothing bounds N (kappa = 0 and sigma <= 0 with the target
    met at N = 0). The root may lie below 1: the callers decide what fewer than one client means.
    """
    a, b, c = kappa, sigma - kappa, 1.0 - sigma - lambda_ * seconds
    if a == 0:
        if b > 0:
            return -c / b
        return math.inf if c <= 0 else -math.inf
    disc = b * b - 4 * a * c
    if disc < 0:
        return -math.inf
    return (-b + math.sqrt(disc)) / (2 * a)


def concurrency_for_response_time(seconds: float, sigma: float, kappa: float, lambda_: float) -> float:
    """Largest N >= 0 whose Little's-law response time N/X(N) = (1 + sigma(N-1) + kappa N(N-1))/lambda is <= seconds
    (0 when none; inf when latency never grows with N)."""
    if kappa == 0 and sigma < 0:
        return max(0.0, -(1.0 - sigma - lambda_ * seconds) / sigma)   # superlinear: the bound is a lower one
    return max(0.0, response_time_root(seconds, sigma, kappa, lambda_))


def log_coherency_peak(sigma, kappa, lambda_):
    """(N*, X(N*)) of X(N) = lambda*N / (1 + sigma(N-1) + kappa N ln N): dX/dN = 0 at N* = (1 - sigma)/kappa;
    (inf, lambda/sigma) without coherency, (inf, inf) when linear."""
    if kappa > 0:
        n_star = (1.0 - sigma) / kappa
        return n_star, float(lambda_ * n_star / (1.0 + sigma * (n_star - 1.0) + kappa * n_star * math.log(n_star)))
    return math.inf, (lambda_ / sigma if sigma > 0 else math.inf)
