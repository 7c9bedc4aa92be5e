"""The timing the benchmark scripts share: the median wall time of a call over several repetitions."""
from __future__ import annotations

import statistics
import time


def median_time(func, repeat: int) -> float:
    """Median seconds of ``func()`` over ``repeat`` calls (the median: a shared machine's stalls move the mean)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
