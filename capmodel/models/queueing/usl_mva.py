"""A bridge from a USL fit to a queueing network: the same parameters read as service demands, solved by exact MVA.

The mapping. The USL, X(N) = lambda N / (1 + sigma (N-1) + kappa N (N-1)), rewrites exactly as
    X(N) = N / (Z + N * D(N)),   Z = (1 - sigma) / lambda,   D(N) = (sigma + kappa (N-1)) / lambda,
which is the throughput of a repairman model (N users thinking for Z, one serial FCFS station of demand D(N)) in the
worst case where every request queues behind all N-1 others (R = N D, the pessimistic asymptotic bound): Gunther's
reading of Amdahl's law as a repairman with synchronous arrivals ("A General Theory of Computational Scalability
Based on Rational Functions", arXiv:0808.1431, 2008). So:
- 1/lambda is the time one request takes alone; sigma/lambda of it is serial (the contended resource), the remaining
  (1 - sigma)/lambda runs in parallel (a delay station: no queueing);
- kappa adds kappa/lambda of serial coherence work per request for each of the N-1 peers, so the serial demand grows
  with N and each population is its own network.
``mva_throughput_for_usl`` solves that network exactly with MVA (random, asynchronous arrivals instead of synchronous
ones). The two curves agree at N = 1; for N > 1 the MVA throughput is at least the USL's (exact MVA never exceeds the
pessimistic bound R = N D); with kappa = 0 both approach the same ceiling lambda / sigma. The gap between them is how
much of the measured loss the USL attributes to synchronised queueing that a product-form network would not predict.
Superlinear fits (sigma < 0) have no counterpart here.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from capmodel.constraints import typed
from capmodel.errors import InputError


def usl_parameters(fit_or_sigma, kappa: float | None = None, lambda_: float | None = None
                   ) -> tuple[float, float, float]:
    """(sigma, kappa, lambda_) from a fit object (attributes .sigma .kappa .lambda_) or from three numbers, checked."""
    if kappa is None and lambda_ is None and hasattr(fit_or_sigma, "sigma"):
        sigma, kappa, lambda_ = fit_or_sigma.sigma, fit_or_sigma.kappa, fit_or_sigma.lambda_
    else:
        sigma = fit_or_sigma
        if kappa is None or lambda_ is None:
            raise InputError("give a USL fit, or all three of sigma, kappa, lambda_")
    try:
        sigma, kappa, lambda_ = float(sigma), float(kappa), float(lambda_)
    except (TypeError, ValueError):
        raise InputError(f"sigma, kappa, lambda_ must be numbers, got {sigma!r}, {kappa!r}, {lambda_!r}") from None
    if not 0 <= sigma <= 1:
        raise InputError(
            f"sigma = {typed(sigma)} is outside [0, 1]: a queueing network has no serial fraction below 0 "
            f"(superlinear "
            "scaling) or above 1"
        )
    if not kappa >= 0 or not np.isfinite(kappa):
        raise InputError(f"kappa = {typed(kappa)} must be finite and >= 0")
    if not lambda_ > 0 or not np.isfinite(lambda_):
        raise InputError(f"lambda_ = {typed(lambda_)} must be finite and > 0 (throughput of one user)")
    return sigma, kappa, lambda_


def _concurrency(concurrency) -> np.ndarray:
    n = np.atleast_1d(np.asarray(concurrency, dtype=float))
    if n.size == 0 or np.any(~np.isfinite(n)) or np.any(n < 1) or np.any(np.mod(n, 1) != 0):
        raise InputError(f"concurrency must be whole numbers >= 1 (a closed network's population), got {n.tolist()!r}")
    return n.astype(int)


def usl_network(sigma: float, kappa: float, lambda_: float, concurrency) -> pd.DataFrame:
    """The queueing network behind the USL at each concurrency.

    The USL rewrites exactly as X(N) = N / (Z + N D(N)) with a parallel time Z = (1 − σ)/λ and a serial demand
    D(N) = (σ + κ(N − 1))/λ (the module docstring gives the reading).

    Parameters
    ----------
    sigma, kappa, lambda_ : float
        The USL's parameters: 0 <= σ <= 1, κ >= 0, λ > 0.
    concurrency : int or array_like
        The populations N (whole numbers >= 1).

    Returns
    -------
    pandas.DataFrame
        Columns ``concurrency``, ``serial_demand`` D(N) and ``parallel_time`` Z, in the time unit of 1/λ.

    Raises
    ------
    InputError
        A parameter is out of range (σ < 0, superlinear, has no network) or a concurrency is not a whole number >= 1.
    """
    sigma, kappa, lambda_ = usl_parameters(sigma, kappa, lambda_)
    n = _concurrency(concurrency)
    return pd.DataFrame(
        {
            "concurrency": n,
            "serial_demand": (sigma + kappa * (n - 1)) / lambda_,
            "parallel_time": np.full(n.size, (1.0 - sigma) / lambda_),
        }
    )


def mva_throughput_for_usl(fit_or_sigma, kappa=None, lambda_=None, *, concurrency) -> np.ndarray:
    """Exact-MVA throughput of the USL's network (see the module docstring) at each concurrency, in lambda's unit."""
    net = usl_network(*usl_parameters(fit_or_sigma, kappa, lambda_), concurrency)
    n = net["concurrency"].to_numpy()
    demand = net["serial_demand"].to_numpy()
    think = net["parallel_time"].to_numpy()
    # one repairman recursion per target population, all advanced together: R = D (1 + Q), X = k / (Z + R), Q = X R
    queue = np.zeros(n.size)
    throughput = np.empty(n.size)
    for k in range(1, int(n.max()) + 1):
        residence = demand * (1.0 + queue)
        x = k / (think + residence)
        queue = x * residence
        done = n == k
        throughput[done] = x[done]
    return throughput


def usl_vs_mva(fit_or_sigma, kappa=None, lambda_=None, *, concurrency=None) -> pd.DataFrame:
    """The USL's throughput beside exact MVA's on the same network, at each concurrency.

    The two agree at N = 1; beyond it MVA's throughput is at least the USL's. The gap is how much of the measured loss
    the USL puts down to synchronised queueing that a product-form network would not predict.

    Parameters
    ----------
    fit_or_sigma : USLFit or float
        A fit (its ``sigma``, ``kappa``, ``lambda_`` are used) or σ.
    kappa, lambda_ : float, optional
        κ and λ when ``fit_or_sigma`` is σ.
    concurrency : array_like of int, optional
        The populations; default 1 to the largest measured concurrency of the fit's ``curve``.

    Returns
    -------
    pandas.DataFrame
        Columns ``concurrency``, ``usl_throughput`` and ``mva_throughput``.

    Raises
    ------
    InputError
        A parameter is out of range, only some of the three numbers are given, or no concurrency is given or known.
    """
    from capmodel.models.usl.closed_form import usl_throughput

    sigma, kappa, lambda_ = usl_parameters(fit_or_sigma, kappa, lambda_)
    if concurrency is None:
        curve = getattr(fit_or_sigma, "curve", None)
        if curve is None or "concurrency" not in curve:
            raise InputError("give concurrency=[...] (the populations to compare at)")
        concurrency = np.arange(1, int(np.ceil(curve["concurrency"].max())) + 1)
    n = _concurrency(concurrency)
    return pd.DataFrame(
        {
            "concurrency": n,
            "usl_throughput": usl_throughput(n, sigma, kappa, lambda_),
            "mva_throughput": mva_throughput_for_usl(sigma, kappa, lambda_, concurrency=n),
        }
    )
