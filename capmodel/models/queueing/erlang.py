"""Open queues with Poisson arrivals and exponential service: M/M/1 and M/M/c (Erlang B and Erlang C), FCFS.

Rates are per unit time (e.g. requests per second); times come out in the same unit (seconds). ``a = lambda / mu`` is
the offered load in Erlangs, ``rho = a / c`` the utilization of each of the ``c`` servers.
Formulas: Jain, "The Art of Computer Systems Performance Analysis" (1991), ch. 31 (the M/M/1 and M/M/m boxes);
Kleinrock, "Queueing Systems, Vol. 1" (1975), ch. 3.

Response time of M/M/c FCFS, T = W + S, derived here: the wait W is 0 with probability 1 - C and otherwise exponential
with rate theta = c*mu - lambda; the service S is exponential with rate mu, independent of W. So
    P(T > t) = (1 - C) exp(-mu t) + C P(E_theta + E_mu > t),
    P(E_a + E_b > t) = (b exp(-a t) - a exp(-b t)) / (b - a)   (a != b),   (1 + a t) exp(-a t)   (a == b),
computed below in a form without cancellation near a == b. With c = 1 this collapses to exp(-(mu - lambda) t).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from scipy.optimize import brentq

from capmodel.errors import InputError, PlanError
from capmodel.formatting import number
from capmodel.models.queueing.laws import (
    check_nonnegative,
    check_positive,
    check_probability,
    check_servers,
    check_stable,
)


def _check_servers(c, name: str = "c") -> int:
    return check_servers(c, f"{name} (number of servers)")


def erlang_b(c: int, a: float) -> float:
    """Erlang B: the probability that all ``c`` servers are busy in M/M/c/c (arrivals finding them busy are lost).

    Computed by the recursion B(0) = 1, B(k) = a B(k−1) / (k + a B(k−1)), stable for any ``c`` (no factorials).

    Parameters
    ----------
    c : int
        The number of servers (a whole number >= 1).
    a : float
        The offered load λ/μ in Erlangs (>= 0).

    Returns
    -------
    float
        The blocking probability.

    Raises
    ------
    InputError
        ``c`` is not a whole number >= 1 or ``a`` is negative or not finite.

    Examples
    --------
    >>> from capmodel.models.queueing.erlang import erlang_b
    >>> round(erlang_b(10, 8.0), 4)
    0.1217
    """
    c = _check_servers(c)
    a = check_nonnegative(a, "a (offered load, Erlangs)")
    b = 1.0
    for k in range(1, c + 1):
        b = a * b / (k + a * b)
    return b


def erlang_c(c: int, a: float) -> float:
    """Erlang C: the probability that an arrival waits in M/M/c.

    Computed from Erlang B as C = c B / (c − a (1 − B)).

    Parameters
    ----------
    c : int
        The number of servers (a whole number >= 1).
    a : float
        The offered load λ/μ in Erlangs; below ``c``.

    Returns
    -------
    float
        The probability of waiting.

    Raises
    ------
    InputError
        ``c`` or ``a`` is out of range, or a >= c (the queue grows without bound: no steady state).

    Examples
    --------
    >>> from capmodel.models.queueing.erlang import erlang_c
    >>> round(erlang_c(10, 8.0), 4)
    0.4092
    """
    c = _check_servers(c)
    a = check_nonnegative(a, "a (offered load, Erlangs)")
    check_stable(a / c, f"utilization a / c (a = {number(a, 6)} Erlangs, c = {c} servers)")
    b = erlang_b(c, a)
    return c * b / (c - a * (1.0 - b))


def _sum_of_exponentials_survival(rate1: float, rate2: float, t: float) -> float:
    """P(E1 + E2 > t) for independent exponentials with the given rates, without cancellation when rates are close."""
    lo, hi = min(rate1, rate2), max(rate1, rate2)
    gap = hi - lo
    # (hi e^{-lo t} - lo e^{-hi t}) / gap  ==  e^{-lo t} (1 + lo * (1 - e^{-gap t}) / gap)
    factor = lo * t if gap * t < 1e-12 else lo * (-math.expm1(-gap * t)) / gap
    return math.exp(-lo * t) * (1.0 + factor)


def _solve_decreasing(survival, level: float, scale: float) -> float:
    """Smallest t >= 0 with survival(t) <= level, for a continuous decreasing survival function."""
    if survival(0.0) <= level:
        return 0.0
    hi = scale
    while survival(hi) > level:
        hi *= 2.0
    return brentq(lambda t: survival(t) - level, 0.0, hi, xtol=1e-15, rtol=1e-13, maxiter=500)


@dataclass(frozen=True)
class MMcResult:
    """Steady state of an M/M/c FCFS queue, as ``mmc`` and ``mm1`` return it.

    Rates are per time unit, times in that time unit, counts in requests. The methods give the tails and percentiles
    of the wait and of the response time (wait + service).

    Parameters
    ----------
    arrival_rate : float
        λ.
    service_rate : float
        μ, per server.
    servers : int
        c.
    offered_load : float
        a = λ/μ, in Erlangs.
    utilization : float
        ρ = a/c, per server.
    prob_wait : float
        Erlang C, the probability that an arrival waits.
    mean_wait : float
        W_q, the mean time in the queue before service.
    mean_response : float
        W_q + 1/μ.
    mean_queue_length : float
        L_q = λ W_q.
    mean_in_system : float
        L = L_q + a.
    """

    arrival_rate: float
    service_rate: float
    servers: int
    offered_load: float  # a = lambda / mu, Erlangs
    utilization: float  # rho = a / c, per server
    prob_wait: float  # Erlang C
    mean_wait: float  # Wq, time in queue before service
    mean_response: float  # Wq + 1/mu
    mean_queue_length: float  # Lq = lambda Wq
    mean_in_system: float  # L = Lq + a

    @property
    def _drain_rate(self) -> float:
        return self.servers * self.service_rate - self.arrival_rate

    def prob_wait_exceeds(self, t: float) -> float:
        """P(W > t) = C exp(-(c mu - lambda) t)."""
        t = check_nonnegative(t, "t")
        return self.prob_wait * math.exp(-self._drain_rate * t)

    def prob_response_exceeds(self, t: float) -> float:
        """P(T > t) for the response time T = W + S (see the module docstring for the derivation)."""
        t = check_nonnegative(t, "t")
        mu, c_prob = self.service_rate, self.prob_wait
        if self.servers == 1:
            return math.exp(-self._drain_rate * t)
        return (1.0 - c_prob) * math.exp(-mu * t) + c_prob * _sum_of_exponentials_survival(self._drain_rate, mu, t)

    def wait_percentile(self, p: float) -> float:
        """The p-quantile of the wait: 0 if P(wait) <= 1 - p, else ln(C / (1 - p)) / (c mu - lambda)."""
        p = check_probability(p, "p")
        if self.prob_wait <= 1.0 - p:
            return 0.0
        return math.log(self.prob_wait / (1.0 - p)) / self._drain_rate

    def response_percentile(self, p: float) -> float:
        """The p-quantile of the response time (wait + service); for M/M/1 it is -ln(1 - p) / (mu - lambda)."""
        p = check_probability(p, "p")
        if self.servers == 1:
            return -math.log1p(-p) / self._drain_rate
        scale = -math.log1p(-p) / min(self.service_rate, self._drain_rate)
        return _solve_decreasing(self.prob_response_exceeds, 1.0 - p, scale)

    def to_json(self) -> dict:
        """Every field as plain JSON (infinities as null)."""
        from capmodel.jsonable import to_jsonable

        return to_jsonable(asdict(self))



def mmc(arrival_rate: float, service_rate: float, servers: int) -> MMcResult:
    """Solve the M/M/c queue: Poisson arrivals, ``servers`` exponential servers, first come first served.

    Parameters
    ----------
    arrival_rate : float
        λ, arrivals per time unit (>= 0).
    service_rate : float
        μ, completions per time unit of one server (> 0).
    servers : int
        c, a whole number >= 1.

    Returns
    -------
    MMcResult
        Utilization, probability of waiting, mean wait and response time, queue lengths; ``wait_percentile`` and
        ``response_percentile`` for the tails.

    Raises
    ------
    InputError
        A value is out of range, or λ >= c μ (no steady state).

    See Also
    --------
    servers_for_target : the fewest servers that meet a target.

    Examples
    --------
    >>> from capmodel.models.queueing.erlang import mmc
    >>> queue = mmc(arrival_rate=80, service_rate=10, servers=10)
    >>> round(queue.prob_wait, 4), round(queue.mean_response * 1000, 2)    # ms
    (0.4092, 120.46)
    >>> round(queue.response_percentile(0.95) * 1000, 1)
    332.8
    """
    lam = check_nonnegative(arrival_rate, "arrival_rate")
    mu = check_positive(service_rate, "service_rate")
    c = _check_servers(servers, "servers")
    a = lam / mu
    check_stable(a / c, f"utilization arrival_rate / (servers * service_rate) (more than {number(a, 6)} servers "
                        f"needed)")
    return _mmc_from_erlang_b(lam, mu, c, erlang_b(c, a))


def _mmc_from_erlang_b(lam: float, mu: float, c: int, b: float) -> MMcResult:
    a = lam / mu
    prob_wait = c * b / (c - a * (1.0 - b))
    mean_wait = prob_wait / (c * mu - lam)
    return MMcResult(
        arrival_rate=lam,
        service_rate=mu,
        servers=c,
        offered_load=a,
        utilization=a / c,
        prob_wait=prob_wait,
        mean_wait=mean_wait,
        mean_response=mean_wait + 1.0 / mu,
        mean_queue_length=lam * mean_wait,
        mean_in_system=lam * mean_wait + a,
    )


def mm1(arrival_rate: float, service_rate: float) -> MMcResult:
    """Solve the M/M/1 queue: ρ = λ/μ, L = ρ/(1 − ρ), R = 1/(μ − λ).

    Parameters
    ----------
    arrival_rate : float
        λ, arrivals per time unit (>= 0).
    service_rate : float
        μ, completions per time unit (> 0).

    Returns
    -------
    MMcResult
        As ``mmc`` with one server; its p-quantile of the response time is −ln(1 − p)/(μ − λ).

    Raises
    ------
    InputError
        A value is out of range, or λ >= μ.
    """
    return mmc(arrival_rate, service_rate, 1)


def servers_for_target(
    arrival_rate: float,
    service_rate: float,
    *,
    max_mean_wait: float | None = None,
    max_mean_response: float | None = None,
    max_prob_wait: float | None = None,
    percentile: float = 0.95,
    max_wait_at_percentile: float | None = None,
    max_response_at_percentile: float | None = None,
) -> int:
    """The smallest number of servers c for which M/M/c meets every target given.

    Parameters
    ----------
    arrival_rate : float
        λ, arrivals per time unit (>= 0).
    service_rate : float
        μ, completions per time unit of one server (> 0).
    max_mean_wait, max_mean_response : float, optional
        The longest mean wait in the queue and mean response time (wait + service), in the time unit of 1/μ.
    max_prob_wait : float, optional
        The highest probability of waiting (Erlang C).
    percentile : float, default 0.95
        The quantile the two targets below are set at, strictly between 0 and 1.
    max_wait_at_percentile, max_response_at_percentile : float, optional
        The longest wait and response time at ``percentile``.

    Returns
    -------
    int
        c; at least one more than the offered load λ/μ.

    Raises
    ------
    InputError
        No target is given, or a value is out of range.
    PlanError
        No c can meet a target: a response target at or below what service alone takes, or a wait target of 0 with
        arrivals.

    Examples
    --------
    >>> from capmodel.models.queueing.erlang import servers_for_target
    >>> servers_for_target(80, 10, max_mean_wait=0.01)
    11
    """
    lam = check_nonnegative(arrival_rate, "arrival_rate")
    mu = check_positive(service_rate, "service_rate")
    p = check_probability(percentile, "percentile")
    given = {
        "max_mean_wait": max_mean_wait,
        "max_mean_response": max_mean_response,
        "max_prob_wait": max_prob_wait,
        "max_wait_at_percentile": max_wait_at_percentile,
        "max_response_at_percentile": max_response_at_percentile,
    }
    targets = {name: check_nonnegative(v, name) for name, v in given.items() if v is not None}
    if not targets:
        raise InputError("servers_for_target needs at least one target (e.g. max_mean_wait=0.1)")
    service_quantile = -math.log1p(-p) / mu
    # the values each metric approaches, but never reaches, as c grows (with any arrivals at all)
    floors = {
        "max_mean_response": (1.0 / mu, "the mean service time 1/mu"),
        "max_response_at_percentile": (service_quantile, f"the {number(p, 6)} quantile of the service time"),
    }
    if lam > 0:
        floors["max_mean_wait"] = (0.0, "zero: some arrivals always wait")
        floors["max_prob_wait"] = (0.0, "zero: some arrivals always wait")
    for name, (floor, what) in floors.items():
        if name in targets and targets[name] <= floor:
            raise PlanError(
                f"{name} = {number(targets[name], 6)} cannot be met with any number of servers: it must exceed {what} "
                f"({number(floor, 6)})"
            )

    def meets(r: MMcResult) -> bool:
        checks = {
            "max_mean_wait": lambda: r.mean_wait,
            "max_mean_response": lambda: r.mean_response,
            "max_prob_wait": lambda: r.prob_wait,
            "max_wait_at_percentile": lambda: r.wait_percentile(p),
            "max_response_at_percentile": lambda: r.response_percentile(p),
        }
        return all(checks[name]() <= limit for name, limit in targets.items())

    a = lam / mu
    c = math.floor(a) + 1
    b = erlang_b(c, a)
    while True:  # every metric falls monotonically towards its reachable floor as c grows, so this ends
        if meets(_mmc_from_erlang_b(lam, mu, c, b)):
            return c
        c += 1
        b = a * b / (c + a * b)
