"""Bounds on a closed network's throughput and response time from the service demands alone (single-server stations).

D = sum of demands, Dmax = the bottleneck's demand, Davg = D / K for K stations, Z = think time, N = population.
- Asymptotic bounds (Lazowska et al., "Quantitative System Performance", 1984, ch. 5):
  N / (N D + Z) <= X(N) <= min(N / (D + Z), 1 / Dmax);  max(D, N Dmax - Z) <= R(N) <= N D.
- Balanced job bounds (Zahorjan, Sevcik, Eager & Galler 1982; Lazowska et al. ch. 5):
  N / (D + Z + (N-1) Dmax / (1 + Z / (N D))) <= X(N) <= min(1 / Dmax, N / (D + Z + (N-1) Davg / (1 + Z / D)))
  max(N Dmax - Z, D + (N-1) Davg / (1 + Z / D)) <= R(N) <= D + (N-1) Dmax / (1 + Z / (N D)).
- N* = (D + Z) / Dmax: the population where the two asymptotes cross; beyond it the bottleneck saturates.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from capmodel.errors import InputError
from capmodel.models.queueing.laws import check_nonnegative


def _demands(demands) -> np.ndarray:
    values = list(demands.values()) if isinstance(demands, Mapping) else list(np.atleast_1d(demands))
    if not values:
        raise InputError("demands is empty: give at least one service demand")
    d = np.array([check_nonnegative(v, f"demands[{i}]") for i, v in enumerate(values)], dtype=float)
    if d.max() <= 0:
        raise InputError("all service demands are 0: there is no bottleneck to bound the throughput")
    return d


def _population(n) -> np.ndarray:
    n = np.asarray(n, dtype=float)
    if np.any(~np.isfinite(n)) or np.any(n < 1):
        raise InputError(f"population must be >= 1, got {n.tolist()!r}")
    return n


def saturation_population(demands, think_time: float = 0.0) -> float:
    """N* = (D + Z) / D_max: the population beyond which the bottleneck limits the throughput.

    Parameters
    ----------
    demands : mapping or sequence of float
        The stations' service demands (single-server stations).
    think_time : float, default 0.0
        Z, in the demands' unit.

    Returns
    -------
    float
        N*.

    Raises
    ------
    InputError
        ``demands`` is empty or all 0, or a value is negative or not finite.
    """
    d = _demands(demands)
    return (d.sum() + check_nonnegative(think_time, "think_time")) / d.max()


def asymptotic_bounds(demands, think_time: float = 0.0, population=1) -> pd.DataFrame:
    """Asymptotic bounds on a closed network's throughput and response time (single-server stations).

    N / (N D + Z) <= X(N) <= min(N / (D + Z), 1 / D_max) and max(D, N D_max − Z) <= R(N) <= N D.

    Parameters
    ----------
    demands : mapping or sequence of float
        The stations' service demands.
    think_time : float, default 0.0
        Z, in the demands' unit.
    population : int or array_like, default 1
        The populations N (each >= 1).

    Returns
    -------
    pandas.DataFrame
        One row per population: ``concurrency``, ``throughput_low``, ``throughput_high``, ``response_time_low``,
        ``response_time_high``.

    Raises
    ------
    InputError
        ``demands`` is empty or all 0, or a value is out of range.

    Examples
    --------
    >>> from capmodel.models.queueing.bounds import asymptotic_bounds
    >>> asymptotic_bounds([0.005, 0.008], think_time=0.1, population=[10, 50])["throughput_high"].tolist()
    [88.49557522123894, 125.0]
    """
    d = _demands(demands)
    z = check_nonnegative(think_time, "think_time")
    n = _population(np.atleast_1d(population))
    total, dmax = d.sum(), d.max()
    return pd.DataFrame(
        {
            "concurrency": n,
            "throughput_low": n / (n * total + z),
            "throughput_high": np.minimum(n / (total + z), 1.0 / dmax),
            "response_time_low": np.maximum(total, n * dmax - z),
            "response_time_high": n * total,
        }
    )


def balanced_job_bounds(demands, think_time: float = 0.0, population=1) -> pd.DataFrame:
    """Balanced job bounds (Zahorjan et al., 1982): never looser than ``asymptotic_bounds``.

    Parameters
    ----------
    demands, think_time, population
        As for ``asymptotic_bounds``.

    Returns
    -------
    pandas.DataFrame
        The columns ``asymptotic_bounds`` returns.

    Raises
    ------
    InputError
        ``demands`` is empty or all 0, or a value is out of range.
    """
    d = _demands(demands)
    z = check_nonnegative(think_time, "think_time")
    n = _population(np.atleast_1d(population))
    total, dmax, davg = d.sum(), d.max(), d.mean()
    optimistic_r = total + (n - 1) * davg / (1 + z / total)
    pessimistic_r = total + (n - 1) * dmax / (1 + z / (n * total))
    return pd.DataFrame(
        {
            "concurrency": n,
            "throughput_low": n / (pessimistic_r + z),
            "throughput_high": np.minimum(1.0 / dmax, n / (optimistic_r + z)),
            "response_time_low": np.maximum(n * dmax - z, optimistic_r),
            "response_time_high": pessimistic_r,
        }
    )
