"""Operational laws: the relations that hold for any system in steady state, whatever its distributions.

Units are whatever you bring, as long as they agree: if throughput is in requests per second, times are in seconds.
Notation follows Lazowska et al., "Quantitative System Performance" (1984), ch. 3 and Jain (1991), ch. 33:
X throughput, S service time per visit, V visits per request, D = V*S service demand, U utilization, N population,
R response time, Z think time.
"""
from __future__ import annotations

import math

from capmodel.constraints import Number
from capmodel.errors import InputError
from capmodel.formatting import number

#: the longest service demand or think time, in seconds (about 32 years): a larger figure is a unit slip, and near
#: 1e308 the queueing solvers' sums overflow into a "no finite solution" that would hide the real problem
MAX_SECONDS = 1e9
#: the most customers a closed network or an MVA population may hold
MAX_POPULATION = 10**9

# The models' vocabulary for their inputs (capmodel.constraints): numbers are numbers (not text, not bools), finite.
SERVERS = Number(int, 1, math.inf, name="c (number of servers)", required=True)
NONNEGATIVE = Number(float, 0.0, math.inf, text=False, required=True)
LAW_POSITIVE = Number(float, 0.0, math.inf, low_open=True, text=False, required=True)
#: a service demand or think time, in seconds: at most ``MAX_SECONDS``, from Python and from a model file alike
SECONDS = Number(float, 0.0, MAX_SECONDS, text=False, required=True,
                 wanted_text=f"a number of seconds from 0 to {MAX_SECONDS:,.0f} (about 32 years)")
PROBABILITY = Number(float, 0.0, 1.0, low_open=True, high_open=True, text=False, required=True,
                     wanted_text="a probability strictly between 0 and 1 (e.g. 0.95)")


def check_servers(c, label: str = "c (number of servers)") -> int:
    """A server count: a whole number >= 1 (3.0 is accepted, True is not); ``InputError`` naming ``label`` otherwise."""
    return SERVERS.check(c, InputError, label)


def check_nonnegative(value: float, name: str) -> float:
    """Return ``value`` as float, or raise ``InputError`` naming ``name`` if it is negative, NaN or infinite."""
    return NONNEGATIVE.check(value, InputError, name)


def check_positive(value: float, name: str) -> float:
    """Return ``value`` as float, or raise ``InputError`` naming ``name`` unless it is finite and > 0."""
    return LAW_POSITIVE.check(value, InputError, name)


def check_probability(value: float, name: str) -> float:
    """Return ``value`` as float, or raise ``InputError`` naming ``name`` unless it is strictly between 0 and 1."""
    return PROBABILITY.check(value, InputError, name)


def check_stable(utilization: float, name: str = "utilization") -> float:
    """Return ``utilization`` if it is in [0, 1); a queue at or above 1 has no steady state."""
    u = check_nonnegative(utilization, name)
    if u >= 1:
        raise InputError(f"{name} = {number(u, 6)} >= 1: the queue is unstable (arrivals exceed capacity), no "
                         f"steady state")
    return u


def utilization(throughput: float, service_time: float) -> float:
    """Utilization law U = X S.

    Parameters
    ----------
    throughput : float
        X, completions per time unit (>= 0).
    service_time : float
        S, busy time per completion, in the same time unit (>= 0).

    Returns
    -------
    float
        U, the busy fraction of one server (above 1 means more than one server's work).

    Raises
    ------
    InputError
        A value is negative, NaN or infinite.

    Examples
    --------
    >>> from capmodel.models.queueing.laws import utilization
    >>> utilization(throughput=200, service_time=0.003)
    0.6
    """
    return check_nonnegative(throughput, "throughput") * check_nonnegative(service_time, "service_time")


def service_demand(utilization: float, throughput: float) -> float:
    """Service demand law D = U / X: busy time per system-level request.

    Parameters
    ----------
    utilization : float
        U, the resource's busy fraction (>= 0).
    throughput : float
        X, system-level requests per time unit (> 0).

    Returns
    -------
    float
        D, in the time unit of 1/X.

    Raises
    ------
    InputError
        ``utilization`` is negative or ``throughput`` is not > 0 (or either is not a finite number).
    """
    u = check_nonnegative(utilization, "utilization")
    return u / check_positive(throughput, "throughput")


def demand_from_visits(visits: float, service_time: float) -> float:
    """Service demand D = V S from visits per request and service time per visit.

    Parameters
    ----------
    visits : float
        V, visits to the resource per request (>= 0).
    service_time : float
        S, service time per visit (>= 0).

    Returns
    -------
    float
        D, service time per request.

    Raises
    ------
    InputError
        A value is negative, NaN or infinite.
    """
    return check_nonnegative(visits, "visits") * check_nonnegative(service_time, "service_time")


def forced_flow(visits: float, system_throughput: float) -> float:
    """Forced flow law X_k = V_k X: a device's throughput from its visits per request and the system's throughput.

    Parameters
    ----------
    visits : float
        V_k, visits to device k per system-level request (>= 0).
    system_throughput : float
        X, system-level requests per time unit (>= 0).

    Returns
    -------
    float
        X_k, visits to device k per time unit.

    Raises
    ------
    InputError
        A value is negative, NaN or infinite.
    """
    return check_nonnegative(visits, "visits") * check_nonnegative(system_throughput, "system_throughput")


def littles_law(
    population: float | None = None, throughput: float | None = None, response_time: float | None = None
) -> float:
    """Little's law N = X R: give exactly two of the three and get the third.

    Parameters
    ----------
    population : float, optional
        N, the mean number of requests in the system.
    throughput : float, optional
        X, requests per time unit.
    response_time : float, optional
        R, the mean time a request spends inside, in the same time unit.

    Returns
    -------
    float
        The one not given.

    Raises
    ------
    InputError
        Not exactly two are given, one is negative or not finite, or a divisor (X or R) is 0.

    Examples
    --------
    >>> from capmodel.models.queueing.laws import littles_law
    >>> littles_law(throughput=2000, response_time=0.004)      # requests inside the server at once
    8.0
    >>> littles_law(population=8, throughput=2000)
    0.004
    """
    given = {"population": population, "throughput": throughput, "response_time": response_time}
    missing = [name for name, value in given.items() if value is None]
    if len(missing) != 1:
        raise InputError(f"littles_law needs exactly two of population, throughput, response_time; missing {missing}")
    if population is None:
        assert throughput is not None and response_time is not None   # exactly one of the three is missing
        return check_nonnegative(throughput, "throughput") * check_nonnegative(response_time, "response_time")
    n = check_nonnegative(population, "population")
    if throughput is None:
        assert response_time is not None
        return n / check_positive(response_time, "response_time")
    return n / check_positive(throughput, "throughput")


def interactive_response_time(users: float, throughput: float, think_time: float = 0.0) -> float:
    """Response-time law of an interactive (closed) system: R = N / X − Z.

    Parameters
    ----------
    users : float
        N, the users or client threads (> 0).
    throughput : float
        X, their completed requests per time unit (> 0).
    think_time : float, default 0.0
        Z, the mean time a user waits between a reply and its next request.

    Returns
    -------
    float
        R, the mean response time, in the time unit of Z (never below 0).

    Raises
    ------
    InputError
        A value is out of range, or N / X < Z: the three cannot belong to one closed system (check the units).
    """
    n = check_positive(users, "users")
    x = check_positive(throughput, "throughput")
    z = check_nonnegative(think_time, "think_time")
    r = n / x - z
    if r < -1e-12 * max(1.0, z):
        raise InputError(
            f"users / throughput = {number(n / x, 6)} is below think_time = {number(z, 6)}: these three "
            f"measurements cannot "
            "belong to one closed system (check units)"
        )
    return max(r, 0.0)


def interactive_throughput(users: float, response_time: float, think_time: float = 0.0) -> float:
    """Response-time law solved for throughput: X = N / (R + Z).

    Parameters
    ----------
    users : float
        N, the users or client threads (>= 0).
    response_time : float
        R, the mean response time (>= 0).
    think_time : float, default 0.0
        Z, the mean think time, in the unit of R.

    Returns
    -------
    float
        X, requests per time unit.

    Raises
    ------
    InputError
        A value is negative or not finite, or R + Z is 0.
    """
    n = check_nonnegative(users, "users")
    cycle = check_nonnegative(response_time, "response_time") + check_nonnegative(think_time, "think_time")
    if cycle == 0:
        raise InputError("response_time + think_time must be > 0")
    return n / cycle
