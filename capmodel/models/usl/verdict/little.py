"""Little's law against a measured curve's own columns: about one operation in flight per client.

In a closed loop each client has at most one operation outstanding, so throughput × mean latency (the operations in
flight, Little's law L = λW) is the concurrency, less the time clients spend between operations. The median over the
points of X·R/N (one odd step does not decide) is judged both ways:

- above ``IN_FLIGHT_EXCESS`` = 1.5 (room for a latency timed around the operation by the client's own clock, and for
  noise): the columns disagree. The concurrency counts fewer clients than ran (the threads of one load-generator
  host of several: the peak's concurrency is then off by that factor, its throughput is not) or ``latency_mean_ms``
  is not a mean in milliseconds (a p95 or p99 mapped to it): weak. Above ``IN_FLIGHT_UNUSABLE`` = 20 no such slip
  explains it; a unit does (throughput per minute, latency in microseconds), and every figure in ops/s may be off by
  it: unusable.
- below ``IN_FLIGHT_SHORT`` = 0.5: most clients had no operation in flight most of the time: they waited between
  operations (think time, a throttled target), or the rows are parts of a step, or a unit is wrong: weak. Below
  ``IN_FLIGHT_LOST`` = 0.05, twenty times fewer operations in flight than clients, a unit slip is the likelier
  reading (throughput per millisecond, latency in seconds: 1,000x) and the throughput figures cannot be trusted:
  unusable.
"""
from __future__ import annotations

import numpy as np

from capmodel.formatting import number
from capmodel.models.evidence import Reason

IN_FLIGHT_EXCESS = 1.5
IN_FLIGHT_UNUSABLE = 20.0
IN_FLIGHT_SHORT = 0.5
IN_FLIGHT_LOST = 0.05
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


def check_in_flight(curve) -> Reason | None:
    """Operations in flight (X·R) against the clients counted, both ways (the module's rule), with the factor."""
    found = in_flight_ratio(curve)
    if found is None or IN_FLIGHT_SHORT <= found[0] <= IN_FLIGHT_EXCESS:
        return None
    ratio, points = found
    said = (f"throughput × mean latency (Little's law) puts {number(ratio, 3)}x as many operations in flight as the "
            f"concurrency counts clients (median over {points} points)")
    if ratio > IN_FLIGHT_UNUSABLE:
        return Reason("in_flight", "unusable", f"{said}: a closed loop runs one operation per client, so a unit is "
                      "wrong (throughput per minute? latency_mean_ms in microseconds?) and every figure in ops/s "
                      "may be off by it", ratio)
    if ratio > IN_FLIGHT_EXCESS:
        return Reason("in_flight", "weak", f"{said}: a closed loop cannot run more than one operation per client, "
                      "so the concurrency counts fewer clients than ran (one host's threads of several?), or "
                      "latency_mean_ms is not a mean in milliseconds (a p95 or p99); a short concurrency puts the "
                      "peak's concurrency off by that factor", ratio)
    if ratio < IN_FLIGHT_LOST:
        return Reason("in_flight", "unusable", f"{said}: {number(1 / ratio, 3)}x fewer than clients is no think "
                      "time a benchmark has; a unit is wrong (throughput per millisecond? latency in seconds?) and "
                      "every figure in ops/s may be off by it", ratio)
    return Reason("in_flight", "weak", f"{said}: most clients had no operation in flight, so they waited between "
                  "operations (think time, a throttled target), or the rows are parts of a step, or a unit is "
                  "wrong", ratio)
