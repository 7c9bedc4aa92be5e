"""Mean Value Analysis of a closed, single-class, product-form queueing network.

The network: ``N`` users (client threads) cycle between a delay station (think time ``Z``, no queueing) and queueing
stations, each with a total service demand ``D_k`` per request (visits x service time) and ``c_k`` identical servers
(FCFS, exponential service; or any processor-sharing station). Times in any unit; throughput comes out per that unit.

- ``exact_mva``: Reiser & Lavenberg's exact recursion (Lazowska et al., "Quantitative System Performance", 1984,
  ch. 6, and its appendix on load-dependent service centers). Multi-server stations are solved exactly with the
  marginal queue-length probabilities p_k(j | n), which the recursion carries for j < c_k only; the probability of an
  empty station comes from the throughput of the network without it, not from a subtraction, so large populations
  stay accurate.
- ``approximate_mva``: Bard-Schweitzer approximate MVA, Q_k(N-1) ~ (N-1)/N Q_k(N), solved by fixed-point iteration
  per population; cost independent of N. Multi-server stations there use Seidmann's approximation (a c-server
  station of demand D becomes a single server of demand D/c plus a pure delay of D (c-1)/c): approximate twice over.

Both return a DataFrame with one row per population: ``concurrency`` (N), ``throughput`` X(N), ``response_time`` R(N)
(time at the queueing stations, think time excluded), and per station ``residence_time_<name>``,
``queue_length_<name>`` (mean number there, waiting or in service) and ``utilization_<name>`` (per server, X D / c).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from capmodel.errors import CapmodelError, InputError, shown
from capmodel.formatting import number
from capmodel.models.queueing.laws import MAX_POPULATION, check_nonnegative, check_servers

MAX_POPULATION_ROWS = 100_000  # populations listed (one table row each)
MAX_EXACT_STEPS = 2_000_000    # N x 2^(multi-server stations): the exact recursion's Python-level steps


def _stations(demands, servers) -> tuple[list[str], np.ndarray, np.ndarray]:
    if isinstance(demands, pd.Series):
        demands = demands.to_dict()
    if isinstance(demands, Mapping):
        names = [str(k) for k in demands]
        values = list(demands.values())
    elif isinstance(demands, Sequence) or isinstance(demands, np.ndarray):
        values = list(demands)
        names = [f"station{k + 1}" for k in range(len(values))]
    else:
        raise InputError(f"demands must be a mapping name -> demand or a list of demands, got {type(demands).__name__}")
    if not values:
        raise InputError("demands is empty: give at least one queueing station")
    d = np.array([check_nonnegative(v, f"demands[{name}]") for name, v in zip(names, values)], dtype=float)
    if servers is None:
        c = np.ones(len(d), dtype=int)
    else:
        if isinstance(servers, Mapping):
            unknown = set(map(str, servers)) - set(names)
            if unknown:
                raise InputError(f"servers names unknown stations {sorted(unknown)}; stations are {names}")
            raw = [servers.get(name, 1) for name in names]
        else:
            raw = list(servers)
            if len(raw) != len(d):
                raise InputError(f"servers has {len(raw)} entries but there are {len(d)} stations")
        c = np.array([check_servers(v, f"servers[{name}]") for name, v in zip(names, raw)], dtype=int)
    return names, d, c


def _populations(populations) -> np.ndarray:
    try:
        pops = np.array(list(populations) if isinstance(populations, Iterable) else [populations], dtype=float)
    except (TypeError, ValueError):
        pops = np.array([])
    if not isinstance(populations, Iterable) and pops.size == 1 and pops[0] >= 1 and float(pops[0]).is_integer():
        if pops[0] > MAX_POPULATION_ROWS:
            raise InputError(f"populations = {shown(populations)} asks for every N from 1 to it: more than "
                             f"{MAX_POPULATION_ROWS:,} rows; list the populations wanted instead")
        pops = np.arange(1, pops[0] + 1)
    if pops.size == 0 or not np.all(np.isfinite(pops)) or np.any(np.mod(pops, 1) != 0) or np.any(pops < 1):
        raise InputError(
            f"populations must be an integer N >= 1 (meaning 1..N) or a list of integers >= 1, got {shown(populations)}"
        )
    if pops.max() > MAX_POPULATION:
        raise InputError(f"populations: {pops.max():,.0f} customers is more than {MAX_POPULATION:,}")
    if pops.size > MAX_POPULATION_ROWS:
        raise InputError(f"populations: {pops.size:,} of them is more than {MAX_POPULATION_ROWS:,} rows")
    return pops.astype(int)


def _table(names, d, c, pops, x, residence) -> pd.DataFrame:
    x = np.asarray(x, dtype=float)
    residence = np.asarray(residence, dtype=float).reshape(len(pops), len(names))
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(residence))):
        raise CapmodelError("MVA has no finite solution for these demands (a demand or think time too small or too "
                            "large for double precision)")
    out = {"concurrency": pops, "throughput": x, "response_time": residence.sum(axis=1)}
    for k, name in enumerate(names):
        out[f"residence_time_{name}"] = residence[:, k]
        out[f"queue_length_{name}"] = x * residence[:, k]
        out[f"utilization_{name}"] = x * d[k] / c[k]
    return pd.DataFrame(out)


def exact_mva(demands, think_time: float = 0.0, populations=1, servers=None) -> pd.DataFrame:
    """Exact Mean Value Analysis of a closed single-class network, at each population asked for.

    N users cycle between a delay station (think time Z) and queueing stations of total demand D_k per request and
    c_k identical servers. Multi-server stations are solved exactly (marginal queue-length probabilities); a network
    with L of them solves 2^L subnetworks, which keeps the probabilities accurate at large N.

    Parameters
    ----------
    demands : mapping or sequence of float
        The service demand D_k of each queueing station (time per request): a mapping station name -> demand, or a
        list (the stations are then named ``station1``, ``station2`` ...).
    think_time : float, default 0.0
        Z, the users' think time, in the demands' time unit.
    populations : int or list of int, default 1
        An integer N for every population 1..N, or the populations wanted (each >= 1).
    servers : mapping or sequence of int, optional
        The server count c_k of each station (default 1 everywhere), keyed or ordered as ``demands``.

    Returns
    -------
    pandas.DataFrame
        One row per population: ``concurrency`` (N), ``throughput`` X(N) (per time unit), ``response_time`` R(N)
        (time at the queueing stations, think time excluded), and per station ``residence_time_<name>``,
        ``queue_length_<name>`` and ``utilization_<name>`` (per server, X D / c).

    Raises
    ------
    InputError
        A demand, think time, server count or population is out of range; every demand and Z are 0; or the recursion
        would take more than 2,000,000 steps (N × 2^multi-server stations; ``approximate_mva`` then).
    CapmodelError
        No finite solution in double precision.

    See Also
    --------
    approximate_mva : Bard-Schweitzer, at a cost independent of N.

    capmodel.models.queueing.multiclass.multiclass_mva : several classes of users.

    Examples
    --------
    >>> from capmodel.models.queueing.mva import exact_mva
    >>> table = exact_mva({"cpu": 0.005, "disk": 0.008}, think_time=0.1, populations=[1, 10])
    >>> table[["concurrency", "throughput", "response_time", "utilization_disk"]].round(4)
       concurrency  throughput  response_time  utilization_disk
    0            1      8.8496         0.0130            0.0708
    1           10     80.1841         0.0247            0.6415
    """
    names, d, c = _stations(demands, servers)
    z = check_nonnegative(think_time, "think_time")
    pops = _populations(populations)
    if z == 0 and not np.any(d > 0):
        raise InputError("all service demands and think_time are 0: the throughput would be infinite")
    steps = int(pops.max()) * 2 ** int(np.sum(c > 1))
    if steps > MAX_EXACT_STEPS:
        raise InputError(f"exact MVA up to N = {int(pops.max()):,} with {int(np.sum(c > 1))} multi-server station(s) "
                         f"takes {steps:,} steps (N x 2^stations), more than {MAX_EXACT_STEPS:,}; use approximate_mva")
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        x_by_n, residence_by_n = _solve(d, c, z, int(pops.max()), {})
    rows = pops - 1
    return _table(names, d, c, pops, x_by_n[rows], residence_by_n[rows])


def _solve(d, c, z, n_max, memo) -> tuple[np.ndarray, np.ndarray]:
    """Throughput X(1..n_max) and residence times of the network (d, c, z) by the exact MVA recursion.

    A c-server station needs its marginals p(j | n) for j < c. For j >= 1 they follow from
    p(j | n) = D / j * X(n) * p(j-1 | n-1); p(0 | n) is not taken as 1 minus the others (that subtraction loses all
    accuracy at large N) but from p(0 | n) = p(0 | n-1) * X(n) / X_without(n), where X_without is the throughput of
    the same network without that station (both are ratios of normalising constants: G_without(n) / G(n)).
    """
    key = (tuple(d), tuple(c), z)
    if key in memo:
        return memo[key]
    k_all = range(len(d))
    multi = [k for k in k_all if c[k] > 1]
    without = {}
    for k in multi:
        keep = [j for j in k_all if j != k]
        if z > 0 or np.any(d[keep] > 0):
            without[k] = _solve(d[keep], c[keep], z, n_max, memo)[0]
        else:  # nothing else can hold a job: the station is never empty once n >= 1
            without[k] = np.full(n_max, np.inf)
    marginals = {k: np.eye(1, int(c[k]))[0] for k in multi}  # p_k(j | 0) for j = 0..c_k-1
    queue = np.zeros(len(d))
    x_by_n = np.empty(n_max)
    residence_by_n = np.empty((n_max, len(d)))
    for n in range(1, n_max + 1):
        residence = d * (1.0 + queue)
        for k, p in marginals.items():
            ck = c[k]
            extra = np.dot(np.arange(ck - 1, 0, -1), p[: ck - 1])  # sum_{j<c-1} (c-1-j) p(j | n-1)
            residence[k] = d[k] / ck * (1.0 + queue[k] + extra)
        x = n / (z + residence.sum())
        queue = x * residence
        for k, p in marginals.items():
            new = np.empty(c[k])
            new[1:] = d[k] * x * p[:-1] / np.arange(1, c[k])
            new[0] = p[0] * x / without[k][n - 1]
            marginals[k] = new
        x_by_n[n - 1] = x
        residence_by_n[n - 1] = residence
    memo[key] = (x_by_n, residence_by_n)
    return memo[key]


def approximate_mva(
    demands,
    think_time: float = 0.0,
    populations=1,
    servers=None,
    tolerance: float = 1e-10,
    max_iterations: int = 100_000,
) -> pd.DataFrame:
    """Bard-Schweitzer approximate MVA, each population solved on its own (APPROXIMATE).

    Iterates R_k = D_k (1 + (N−1)/N Q_k), X = N / (Z + Σ R_k), Q_k = X R_k until the largest change of a Q_k is below
    ``tolerance`` × N. Multi-server stations use Seidmann's approximation (a single server of demand D/c plus a delay
    of D (c−1)/c).

    Parameters
    ----------
    demands, think_time, populations, servers
        As for ``exact_mva``.
    tolerance : float, default 1e-10
        The convergence threshold, relative to the population.
    max_iterations : int, default 100000
        The iterations allowed per population.

    Returns
    -------
    pandas.DataFrame
        The table ``exact_mva`` returns.

    Raises
    ------
    InputError
        An input is out of range (as for ``exact_mva``).
    CapmodelError
        The iteration did not converge within ``max_iterations``, or no finite solution.

    Examples
    --------
    >>> from capmodel.models.queueing.mva import approximate_mva
    >>> approximate_mva({"cpu": 0.005, "disk": 0.008}, think_time=0.1, populations=[10])["throughput"].round(2).tolist()
    [79.14]
    """
    names, d, c = _stations(demands, servers)
    z = check_nonnegative(think_time, "think_time")
    pops = _populations(populations)
    if z == 0 and not np.any(d > 0):
        raise InputError("all service demands and think_time are 0: the throughput would be infinite")
    queueing_demand = d / c  # Seidmann: a single server of demand D/c ...
    seidmann_delay = d * (c - 1) / c  # ... plus a pure delay of D (c-1)/c; both exact when c == 1
    xs, residences = [], []
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for n in pops:
            x, residence = _schweitzer_point(n, d, z, queueing_demand, seidmann_delay, tolerance, max_iterations)
            xs.append(x)
            residences.append(residence + seidmann_delay)
    return _table(names, d, c, pops, xs, residences)


def _schweitzer_point(n, d, z, queueing_demand, seidmann_delay, tolerance, max_iterations):
    """(X, queueing residence times) at population n by the Bard-Schweitzer fixed point."""
    total = d.sum()
    queue = n * d / total if total > 0 else np.zeros(len(d))
    for _ in range(max_iterations):
        residence = queueing_demand * (1.0 + (n - 1) / n * queue)
        x = n / (z + residence.sum() + seidmann_delay.sum())
        new_queue = x * residence
        change = np.max(np.abs(new_queue - queue))
        queue = new_queue
        if change < tolerance * n:
            break
    else:
        raise CapmodelError(
            f"approximate MVA did not converge for N = {n} within {max_iterations} iterations "
            f"(tolerance {number(tolerance, 6)}); use exact_mva or loosen the tolerance"
        )
    return x, residence

