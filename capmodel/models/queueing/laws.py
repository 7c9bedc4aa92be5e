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

# The models' vocabulary for their inputs (capmodel.constraints): numbers are numbers (not text, not bools), finite.
SERVERS = Number(int, 1, math.inf, name="c (number of servers)", required=True)
NONNEGATIVE = Number(float, 0.0, math.inf, text=False, required=True)
POSITIVE = Number(float, 0.0, math.inf, low_open=True, text=False, required=True)
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
    return POSITIVE.check(value, InputError, name)


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
    """Utilization law U = X * S (X completions per unit time, S time per completion; U is a fraction of 1 server)."""
    return check_nonnegative(throughput, "throughput") * check_nonnegative(service_time, "service_time")


def service_demand(utilization: float, throughput: float) -> float:
    """Service demand law D = U / X: busy time per system-level request (time units of 1/X)."""
    u = check_nonnegative(utilization, "utilization")
    return u / check_positive(throughput, "throughput")


def demand_from_visits(visits: float, service_time: float) -> float:
    """Service demand D = V * S: visits per request times service time per visit."""
    return check_nonnegative(visits, "visits") * check_nonnegative(service_time, "service_time")


def forced_flow(visits: float, system_throughput: float) -> float:
    """Forced flow law X_k = V_k * X: a device's throughput from its visits per request and the system throughput."""
    return check_nonnegative(visits, "visits") * check_nonnegative(system_throughput, "system_throughput")


def littles_law(
    population: float | None = None, throughput: float | None = None, response_time: float | None = None
) -> float:
    """Little's law N = X * R; give exactly two of the three and get the third.

    ``population`` is the mean number in the system (requests), ``throughput`` requests per time unit,
    ``response_time`` the mean time a request spends inside, in the same time unit.
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
    """Response-time law for an interactive (closed) system: R = N / X - Z.

    ``users`` N is the number of users (or client threads), ``throughput`` X their completed requests per time unit,
    ``think_time`` Z the mean time a user waits between a reply and the next request. Raises ``InputError`` if the
    numbers are inconsistent (N / X < Z would mean a negative response time).
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
    """The same law solved for throughput: X = N / (R + Z)."""
    n = check_nonnegative(users, "users")
    cycle = check_nonnegative(response_time, "response_time") + check_nonnegative(think_time, "think_time")
    if cycle == 0:
        raise InputError("response_time + think_time must be > 0")
    return n / cycle
