"""Load-dependent stations for the multi-class MVA: a service rate that depends on how many requests are there.

A load-dependent station serves at alpha(j) times its one-request rate while j requests are present (in any mix of
classes, processor sharing among them), so a class-c request with service demand D_c alone needs D_c / alpha(j) per
unit of work when j are present. Three ways to say what alpha is:

- ``multi_server(c)``: c identical servers, alpha(j) = min(j, c);
- ``rate_function(f)``: any positive function of j (e.g. a disk array that gets faster with a longer queue);
- ``usl_station(fit)``: a fitted Universal Scalability Law as a tier. The USL's X(N) is the throughput with N requests
  inside, so the station completes X(j) requests per unit time with j present: alpha(j) = X(j) / X(1) and the demand
  of one visit is 1 / X(1) = 1 / lambda. This is the bridge from a measured curve (say, the database tier) to one
  station inside a larger network (an application tier in front of it, client think time...).

The exact recursion for such stations (Reiser and Lavenberg 1980; Lazowska et al., "Quantitative System Performance",
1984, ch. 20, "load dependent service centers") carries the marginal queue-length probabilities p(j | n):
    R_c(n)   = D_c * sum_{j>=1} j / alpha(j) * p(j-1 | n - e_c)
    p(j | n) = sum_c D_c X_c(n) p(j-1 | n - e_c) / alpha(j)              for j >= 1
and p(0 | n) from the throughput of the network without the station (see ``mva_multiclass``), never as 1 minus the
others (that subtraction loses every digit at high load). Stations whose alpha stops growing after ``flat_from``
requests (c servers: after c) only need p(j) for j < flat_from; the tail is summed in closed form.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from capmodel.errors import InputError
from capmodel.formatting import number
from capmodel.models.queueing.laws import check_servers


@dataclass(frozen=True)
class LoadDependent:
    """A load-dependent station: its rate multiplier α(j) and, optionally, its own demand.

    With j requests present the station serves α(j) times faster than with one (α(1) = 1 by convention). Build one
    with ``multi_server``, ``rate_function`` or ``usl_station`` and pass it in a solver's ``servers``.

    Parameters
    ----------
    multiplier : callable
        α(j) for a queue length j >= 1; finite and > 0.
    label : str
        The station's kind, as error messages and tables name it.
    flat_from : int, optional
        α(j) = α(flat_from) for every j >= flat_from (None: no such bound).
    demand : float, optional
        The demand of one visit when the network's demands do not name this station (a USL station knows it: 1/λ).
    """

    multiplier: Callable[[int], float]
    label: str
    flat_from: int | None = None
    demand: float | None = None

    def alpha(self, upto: int) -> np.ndarray:
        """alpha(1..upto) as an array (index 0 is alpha(1)), checked: finite and > 0."""
        j = np.arange(1, upto + 1)
        if self.flat_from is not None:
            j = np.minimum(j, self.flat_from)
        values = np.array([float(self.multiplier(int(k))) for k in j], dtype=float)
        bad = ~np.isfinite(values) | (values <= 0)
        if np.any(bad):
            k = int(np.arange(1, upto + 1)[bad][0])
            raise InputError(f"station {self.label}: rate multiplier alpha({k}) = {values[bad][0]!r}; it must be "
                             "finite and > 0 for every queue length")
        return values

    @property
    def servers(self) -> int | None:
        """The server count when this is ``multi_server(c)``, else None."""
        return self.flat_from if self.label.startswith("multi-server") else None


def multi_server(c) -> LoadDependent:
    """c identical servers: α(j) = min(j, c).

    Exact for FCFS with a class-independent service time, or processor sharing.

    Parameters
    ----------
    c : int
        The number of servers, a whole number >= 1.

    Returns
    -------
    LoadDependent

    Raises
    ------
    InputError
        ``c`` is not a whole number >= 1.
    """
    c = check_servers(c, "servers (number of servers)")
    return LoadDependent(lambda j: min(j, c), f"multi-server c={c}", flat_from=c)


def rate_function(multiplier: Callable[[int], float], label: str = "rate function",
                  flat_from: int | None = None) -> LoadDependent:
    """A station that serves ``multiplier(j)`` times faster with j requests present than with one.

    Parameters
    ----------
    multiplier : callable
        α(j) for j >= 1; it must give a finite number > 0 for every queue length the solver meets.
    label : str, default "rate function"
        The station's kind in messages and tables.
    flat_from : int, optional
        The queue length from which the rate stays constant.

    Returns
    -------
    LoadDependent

    Raises
    ------
    InputError
        ``multiplier`` is not callable or ``flat_from`` is not a whole number >= 1. A value of α(j) that is not finite
        and > 0 is refused when the network is solved.
    """
    if not callable(multiplier):
        raise InputError(f"rate_function needs a function of the queue length j, got {type(multiplier).__name__}")
    if flat_from is not None:
        flat_from = check_servers(flat_from, "flat_from (queue length after which the rate stays constant)")
    return LoadDependent(multiplier, label, flat_from=flat_from)


def usl_station(fit) -> LoadDependent:
    """A fitted USL as a station: with j requests inside it completes X(j) = ``fit.predict(j)`` per time unit.

    Uses only the fit's public ``lambda_`` and ``predict``; the station's demand is 1/λ (one request alone). A fit whose
    throughput falls to 0 (or below) at some j cannot be a station at that queue length: solving then raises an error
    naming j.

    Parameters
    ----------
    fit : USLFit or any object with ``lambda_`` and ``predict(n)``
        A fitted scalability curve, e.g. ``capmodel.fit_usl(curve)``.

    Returns
    -------
    LoadDependent
        With ``demand`` = 1/λ and α(j) = X(j)/λ.

    Raises
    ------
    InputError
        ``fit`` has no ``lambda_`` or ``predict``, or ``lambda_`` is not finite and > 0.
    """
    if not (hasattr(fit, "predict") and hasattr(fit, "lambda_")):
        raise InputError("usl_station needs a fitted USL (an object with lambda_ and predict(n)), e.g. fit_usl(curve)")
    lam = float(fit.lambda_)
    if not math.isfinite(lam) or lam <= 0:
        raise InputError(f"usl_station: the fit's lambda_ = {lam!r} must be finite and > 0")
    cache: dict[int, float] = {}

    def multiplier(j: int) -> float:
        if j not in cache:
            cache[j] = float(np.asarray(fit.predict(float(j))).ravel()[0]) / lam
        return cache[j]

    sigma, kappa = getattr(fit, "sigma", float("nan")), getattr(fit, "kappa", float("nan"))
    return LoadDependent(multiplier, f"USL sigma={number(sigma, 4)} kappa={number(kappa, 4)} "
                                     f"lambda={number(lam, 4)}", demand=1.0 / lam)


def residence_factor(marginals: np.ndarray, alpha: np.ndarray, flat_from: int | None, n_total: int) -> np.ndarray:
    """sum_{j>=1} j / alpha(j) p(j-1 | n - e_c) for each row of ``marginals`` (p(0..m-1 | n - e_c)).

    With ``flat_from`` = m (alpha constant = a_m from m on) only p(0..m-1) are carried; the tail j > m adds
    (sum_{j>m} j p(j-1)) / a_m = (Q - sum_{i<m} i p(i) + 1 - sum_{i<m} p(i)) / a_m with Q the mean queue length,
    passed in as the last column of ``marginals``. Without it, ``marginals`` holds p(0..n_total-1) in full.
    """
    if flat_from is None:
        j = np.arange(1, marginals.shape[1] + 1)
        return marginals @ (j / alpha[: marginals.shape[1]])
    m = flat_from
    p, queue = marginals[:, :m], marginals[:, m]
    j = np.arange(1, m + 1)
    head = p @ (j / alpha[:m])
    i = np.arange(m)
    tail_mass = np.clip(1.0 - p.sum(axis=1), 0.0, None)
    tail_first_moment = np.clip(queue - p @ i, 0.0, None)
    return head + (tail_first_moment + tail_mass) / alpha[m - 1]
