"""One step's load cut into shares for several client processes, and their results put back together.

For a step of N clients over P processes, process j runs ``split(N, P)[j]`` clients (N // P, the first N % P one
more). Operation counts are cut in proportion (``portion``: the parts add up exactly), the open loop's target rate
too (a union of independent Poisson streams is a Poisson stream of the summed rate). ``merge`` turns the shares'
``StepResult.as_record()`` dicts into one ``StepResult``: rates and counts add up, the HdrHistograms are added (so
percentiles are those of every operation, not an average of percentiles), an open loop's windows add up window by
window, errors add up by kind, the worst silence
and the latest start are kept, and each share's worker row is kept.
"""
from __future__ import annotations

import datetime as dt
import math

from capmodel.bench.client.measurements import StepMeasurements, combine_windows
from capmodel.bench.client.runner import StepResult


def split(total: int, parts: int) -> list[int]:
    """``total`` clients over at most ``parts`` processes, as evenly as possible, no process with zero."""
    parts = max(1, min(int(parts), int(total)))
    return [total // parts + (1 if j < total % parts else 0) for j in range(parts)]


def portion(operations: int, shares: list[int], j: int) -> int:
    """Process j's part of an operation count, in proportion to its clients; the parts add up exactly."""
    total, done = sum(shares), sum(shares[:j])
    return math.floor(operations * (done + shares[j]) / total) - math.floor(operations * done / total)


def merge(records: list[dict], op_names: list[str], throughput_unit: str, rate: float | None = None,
          rate_shape: str | None = None) -> StepResult:
    """One ``StepResult`` from the ``as_record()`` dicts of the shares of one step (none: nothing measured); an open
    loop's windows add up window by window."""
    m = StepMeasurements.combine(op_names, records)
    ops_per_s = sum(r["ops_per_s"] for r in records)  # the shares ran side by side: their rates add up
    return StepResult(
        concurrency=sum(r["concurrency"] for r in records), mode="closed" if rate is None else "open",
        seconds=max((r["seconds"] for r in records), default=0.0), operations=m.operations,
        documents=sum(r["documents"] for r in records),
        throughput=sum(r["throughput"] for r in records) if throughput_unit == "documents" else ops_per_s,
        ops_per_s=ops_per_s, errors=dict(m.errors), latency=m.latency(), histograms=m.encoded(),
        started_at=min((r["started_at"] for r in records),
                       default=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")),
        wall_seconds=max((r["wall_seconds"] for r in records), default=0.0), target_rate=rate, rate_shape=rate_shape,
        windows=combine_windows([r["windows"] for r in records]) if records and all(
            r.get("windows") for r in records) else [],
        error_samples=m.error_samples, runner_failures=sum(r["runner_failures"] for r in records),
        stuck_workers=sum(r["stuck_workers"] for r in records),
        in_flight_at_end=sum(r.get("in_flight_at_end", 0) for r in records),
        late_operations=sum(r.get("late_operations", 0) for r in records),
        late_max_ms=max((r.get("late_max_ms", 0.0) for r in records), default=0.0),
        longest_silence_s=max((r.get("longest_silence_s", 0.0) for r in records), default=0.0),
        late_start_s=max((r.get("late_start_s", 0.0) for r in records), default=0.0),
        ended_early=next((r["ended_early"] for r in records if r.get("ended_early")), None),
        workers=[w for r in records for w in r.get("workers", [])],
        failed_attempts=(None if not records or any(r.get("failed_attempts") is None for r in records)
                         else sum(r["failed_attempts"] for r in records)),
    )
