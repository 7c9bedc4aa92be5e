"""One shape's running figures, in memory that does not grow with the number of its operations.

Latencies go into a histogram (``LatencyHistogram``): the log's whole milliseconds below 1,024 ms each in a bin of
their own (exact), longer ones in bins 1 % wide; a percentile is read from it. Each operation counts with a weight,
1 over the sample rate in force when it was logged (``slowOpSampleRate``: an operation logged at a rate of 0.25
stands for four). The per-interval counts (for the CPU regression of ``capmodel.observe.shapes.demand``) are one
number per interval of ``interval_s`` seconds in which the shape ran, where they are asked for.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

EXACT_BELOW_MS = 1024          # durations below this (whole ms, as the log writes them) keep a bin each
LOG_BIN = math.log(1.01)       # above it, bins 1 % wide


def _bin(duration_ms: float) -> float:
    """The bin a duration falls in, named by the value it stands for."""
    if duration_ms < EXACT_BELOW_MS:
        return float(duration_ms)
    return math.exp(round(math.log(duration_ms) / LOG_BIN) * LOG_BIN)


def percentile(histogram: dict, q: float) -> float:
    """The q-quantile (0 to 1) of a weighted histogram {value: weight}: the smallest value whose cumulative weight
    reaches q of the total (nearest rank); NaN when it is empty."""
    total = sum(histogram.values())
    if total <= 0:
        return math.nan
    running = 0.0
    for value in sorted(histogram):
        running += histogram[value]
        if running >= q * total * (1 - 1e-12):
            return float(value)
    return float(max(histogram))


@dataclass
class ShapeTally:
    """The running figures of one shape (weights: 1 / sample rate)."""

    count: int = 0                    # operations logged
    weight: float = 0.0               # operations they stand for
    weight_complete: float = 0.0      # of those, logged while every operation was eligible (slowms 0)
    duration_ms: float = 0.0          # weighted sums...
    keys_examined: float = 0.0
    docs_examined: float = 0.0
    returned: float = 0.0
    reply_bytes: float = 0.0
    cpu_count: int = 0                # operations with cpuNanos, and their sums (ms, ms^2)
    cpu_ms: float = 0.0
    cpu_ms_squared: float = 0.0
    plans: dict = field(default_factory=dict)         # plan summary -> operations
    query_hashes: dict = field(default_factory=dict)  # queryHash -> operations
    latency: dict = field(default_factory=dict)       # histogram bin (ms) -> weight
    per_interval: dict = field(default_factory=dict)  # interval index -> weight (slowms 0 only)

    def add(self, operation, weight: float, complete: bool, interval_s: float | None) -> None:
        """Count one operation standing for ``weight``; ``complete``: logged where every operation was eligible."""
        self.count += 1
        self.weight += weight
        self.duration_ms += weight * operation.duration_ms
        self.keys_examined += weight * operation.keys_examined
        self.docs_examined += weight * operation.docs_examined
        self.returned += weight * operation.returned
        self.reply_bytes += weight * operation.reply_bytes
        if operation.cpu_nanos is not None:
            cpu = operation.cpu_nanos / 1e6
            self.cpu_count += 1
            self.cpu_ms += cpu
            self.cpu_ms_squared += cpu * cpu
        self.plans[operation.plan] = self.plans.get(operation.plan, 0) + 1
        if operation.query_hash:
            self.query_hashes[operation.query_hash] = self.query_hashes.get(operation.query_hash, 0) + 1
        b = _bin(operation.duration_ms)
        self.latency[b] = self.latency.get(b, 0.0) + weight
        if complete:
            self.weight_complete += weight
        if complete and interval_s is not None:
            slot = int(operation.time // interval_s)
            self.per_interval[slot] = self.per_interval.get(slot, 0.0) + weight
