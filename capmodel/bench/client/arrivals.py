"""When the open loop's operations are due: evenly spaced (wrk2's constant rate) or a Poisson process (exponential
gaps: the arrival process of M/M/c and of many independent users), drawn before the step and seeded."""
from __future__ import annotations

import math

import numpy as np

from capmodel.errors import BenchError

ARRIVALS = ("uniform", "poisson")


def arrival_schedule(rate: float, seconds: float, arrivals: str = "uniform", seed: int = 0) -> np.ndarray:
    """Due times (seconds from the step's start) of every operation in ``[0, seconds)`` at ``rate`` per second."""
    if arrivals not in ARRIVALS:
        raise BenchError(f"arrivals must be one of {', '.join(ARRIVALS)}, got {arrivals!r}")
    expected = rate * seconds
    if arrivals == "uniform":
        return np.arange(math.ceil(expected - 1e-9)) / rate
    rng = np.random.default_rng(seed)
    times = np.cumsum(rng.exponential(1.0 / rate, size=int(expected + 6 * math.sqrt(expected) + 16)))
    while times[-1] < seconds:  # the draw fell short (improbable): extend it
        times = np.concatenate([times, times[-1] + np.cumsum(rng.exponential(1.0 / rate, size=len(times)))])
    return times[times < seconds]
