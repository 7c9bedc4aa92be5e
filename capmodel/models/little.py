"""Little's law against a measured curve's own columns: no more operations in flight than clients.

In a closed loop each client has at most one operation outstanding, so throughput × mean latency (the operations in
flight, Little's law L = λW) cannot exceed the concurrency. Clients with think time, or client-side overhead, keep it
below; above it, the columns disagree with each other: the concurrency counts fewer clients than ran (the threads of
one load-generator host of several), or ``latency_mean_ms`` is not a mean in milliseconds (microseconds read as ms:
1,000x; a p99 mapped to the mean column). In the first case the peak's concurrency is off by that factor. ``IN_FLIGHT_EXCESS`` = 1.5 leaves room for a latency timed
around the operation (the client's own clock, queueing in the driver) and for measurement noise; the median over the
points keeps one odd step from deciding.
"""
from __future__ import annotations

import numpy as np

from capmodel.formatting import number
from capmodel.models.evidence import Reason

IN_FLIGHT_EXCESS = 1.5
MEAN_LATENCY = "latency_mean_ms"


def in_flight_ratio(curve) -> tuple[float, int] | None:
    """(median over the points of throughput × mean latency / concurrency, points used), None without latencies."""
    if curve is None or MEAN_LATENCY not in curve.columns:
        return None
    x = curve["throughput"].to_numpy(dtype=float)
    r = curve[MEAN_LATENCY].to_numpy(dtype=float) / 1000.0
    n = curve["concurrency"].to_numpy(dtype=float)
    ok = np.isfinite(x) & np.isfinite(r) & (x > 0) & (r > 0) & (n > 0)
    if not ok.any():
        return None
    return float(np.median(x[ok] * r[ok] / n[ok])), int(ok.sum())


def check_in_flight(fit) -> Reason | None:
    """More operations in flight (X·R) than the concurrency column counts -> weak, with the factor."""
    found = in_flight_ratio(getattr(fit, "curve", None))
    if found is None or not found[0] > IN_FLIGHT_EXCESS:
        return None
    ratio, points = found
    return Reason("in_flight", "weak", f"throughput × mean latency (Little's law) puts {number(ratio, 3)}x as many "
                  f"operations in flight as the concurrency counts clients (median over {points} points): a closed "
                  "loop cannot run more than one operation per client, so the concurrency counts fewer clients than "
                  "ran (one host's threads of several?), or latency_mean_ms is not a mean in milliseconds (microseconds, a "
                  "p95 or p99); a short concurrency puts the "
                  "peak's concurrency off by that factor", ratio)
