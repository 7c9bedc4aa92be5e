"""``QueryShapes``: the shapes a server's records hold, each with its figures; the one source of their words."""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd
from scipy import stats

from capmodel.errors import InputError
from capmodel.formatting import number, plural
from capmodel.jsonable import to_jsonable
from capmodel.models.evidence import Evidence
from capmodel.observe.shapes.sampling import Coverage
from capmodel.observe.shapes.tally import percentile

#: what makes two operations one shape (``capmodel.observe.shapes.entries.Operation``'s fields)
KEY_FIELDS = ("namespace", "operation", "filter_shape", "sort", "projection", "query_hash")
LATENCY_QUANTILES = {"latency_p50_ms": 0.50, "latency_p95_ms": 0.95, "latency_p99_ms": 0.99}
#: the log's durations are whole milliseconds: a latency under one millisecond is not resolved, and a table shows it
#: as UNRESOLVED (its column saying "ms"), never as 0
RESOLUTION_MS = 1.0
UNRESOLVED = "under 1"
#: the columns of shapes.csv, in order
SHAPE_COLUMNS = ["shape", "namespace", "operation", "filter_shape", "sort", "projection", "query_hash", "plan",
                 "collscan", "count", "operations", "rate_per_s", "latency_mean_ms", *LATENCY_QUANTILES,
                 "latency_max_ms", "keys_examined_per_op", "docs_examined_per_op", "returned_per_op",
                 "docs_examined_per_returned", "reply_bytes_per_returned",
                 "cpu_ms_per_op", "cpu_ms_per_op_low", "cpu_ms_per_op_high", "cpu_source"]
FORMAT_VERSION = 1
CPU_LEVEL = 0.95


def shape_id(key: tuple) -> str:
    """A shape's id: 8 hex digits of a hash of its key, the same in every run over any log."""
    return hashlib.sha1("\x1f".join(key).encode()).hexdigest()[:8]


def _mean_interval(count: int, total: float, squares: float) -> tuple[float, float, float]:
    """Mean of ``count`` values with their sum and sum of squares, and its 95 % t interval (NaN for none)."""
    if count <= 0:
        return math.nan, math.nan, math.nan
    mean = total / count
    if count < 2:
        return mean, math.nan, math.nan
    variance = max(squares - count * mean * mean, 0.0) / (count - 1)
    half = stats.t.ppf(0.5 + CPU_LEVEL / 2, count - 1) * math.sqrt(variance / count)
    return mean, max(mean - half, 0.0), mean + half


@dataclass(frozen=True)
class QueryShapes:
    """The operations of a server's log (or profiler) grouped into shapes; every figure derives from the tallies.

    ``query_shapes`` builds it. ``table`` is one row per shape (``SHAPE_COLUMNS``), ``to_json()`` the record of
    ``shapes.json``, ``describe()`` the answer in sentences.

    Attributes
    ----------
    keys : tuple
        Each shape's key (``KEY_FIELDS``), in the order of ``tallies``.
    tallies : tuple of ShapeTally
        Each shape's running figures.
    coverage : Coverage
        The profiler settings over the window: what the log can have seen.
    skipped : dict
        Lines not read as operations, by kind.
    sources : tuple of str
        The files (or profile sources) read.
    interval_s : float or None
        The width of the intervals the per-interval counts are kept in (None: none kept).
    """

    keys: tuple
    tallies: tuple
    coverage: Coverage
    skipped: dict = field(default_factory=dict)
    sources: tuple = ()
    interval_s: float | None = None

    @cached_property
    def ids(self) -> list[str]:
        """Each shape's id (``shape_id``), in the order of ``tallies``."""
        return [shape_id(key) for key in self.keys]

    @cached_property
    def operations_read(self) -> int:
        """The operations read (entries, not the operations they stand for)."""
        return sum(t.count for t in self.tallies)

    @property
    def table(self) -> pd.DataFrame:
        """One row per shape (``SHAPE_COLUMNS``), most operations first (a copy of ``rows``)."""
        return self.rows.copy()

    @cached_property
    def rows(self) -> pd.DataFrame:
        """One row per shape (``SHAPE_COLUMNS``), most operations first: its parts, plan, count and the operations they
        stand for, rate, latency, work per operation and CPU per operation where the log has ``cpuNanos``."""
        rows = []
        complete_s = self.coverage.complete_s
        for key, sid, t in zip(self.keys, self.ids, self.tallies):
            row = dict(zip(KEY_FIELDS, key), shape=sid)
            plan = max(t.plans, key=lambda p: (t.plans[p], p)) if t.plans else ""
            cpu, cpu_low, cpu_high = _mean_interval(t.cpu_count, t.cpu_ms, t.cpu_ms_squared)
            w = t.weight if t.weight > 0 else math.nan
            row.update(
                plan=plan, collscan=any("COLLSCAN" in p for p in t.plans), count=t.count, operations=t.weight,
                rate_per_s=t.weight_complete / complete_s if complete_s > 0 else math.nan,
                latency_mean_ms=t.duration_ms / w, latency_max_ms=max(t.latency, default=math.nan),
                keys_examined_per_op=t.keys_examined / w, docs_examined_per_op=t.docs_examined / w,
                returned_per_op=t.returned / w,
                docs_examined_per_returned=t.docs_examined / t.returned if t.returned > 0 else math.nan,
                reply_bytes_per_returned=t.reply_bytes / t.returned if t.returned > 0 else math.nan,
                cpu_ms_per_op=cpu, cpu_ms_per_op_low=cpu_low, cpu_ms_per_op_high=cpu_high,
                cpu_source="cpuNanos" if t.cpu_count else "")
            row.update({name: percentile(t.latency, q) for name, q in LATENCY_QUANTILES.items()})
            rows.append(row)
        table = pd.DataFrame(rows, columns=SHAPE_COLUMNS)
        return table.sort_values(["count", "shape"], ascending=[False, True], kind="stable").reset_index(drop=True)

    @cached_property
    def evidence(self) -> Evidence:
        """What the profiler settings let the log see (``Coverage.reasons``)."""
        return self.coverage.evidence

    def per_interval(self) -> pd.DataFrame:
        """Operations per second of each shape (columns: shape ids) in each interval of ``interval_s`` seconds (index:
        the interval's start, epoch seconds) where every operation was eligible for the log; 0 where a shape did not
        run. Only intervals in which some shape ran are rows. ``InputError`` where no intervals were counted."""
        if self.interval_s is None:
            raise InputError("the shapes were read without interval_s: no per-interval rates (query_shapes(..., "
                             "interval_s=10))")
        slots = sorted({s for t in self.tallies for s in t.per_interval})
        data = {sid: [t.per_interval.get(s, 0.0) / self.interval_s for s in slots]
                for sid, t in zip(self.ids, self.tallies)}
        return pd.DataFrame(data, index=pd.Index(np.asarray(slots, float) * self.interval_s, name="start"))

    def to_json(self) -> dict:
        """The record of ``shapes.json``: format version, the shapes' rows, what the log can have seen, the lines
        skipped and the evidence."""
        rows = self.rows.to_dict(orient="records")
        by_id = dict(zip(self.ids, self.tallies))
        for row in rows:
            tally = by_id[row["shape"]]
            row["plans"] = dict(sorted(tally.plans.items(), key=lambda kv: -kv[1]))
        return to_jsonable({
            "format_version": FORMAT_VERSION, "kind": "query shapes", "sources": list(self.sources),
            "operations_read": self.operations_read, "shapes": rows, "sampling": self.coverage.to_json(),
            "skipped": dict(self.skipped), "interval_s": self.interval_s, "evidence": self.evidence.to_json()})

    def describe(self, top: int = 10) -> str:
        """The answer in sentences: how many shapes, what the log can have seen, the busiest shapes and the lines
        skipped (the verdict is ``evidence``)."""
        table = self.rows
        lines = [f"{plural(len(table), 'query shape')} in {plural(self.operations_read, 'logged operation')} from "
                 f"{plural(len(self.sources), 'source')}.", self.coverage.describe()]
        for _, row in table.head(top).iterrows():
            rate = "" if math.isnan(row["rate_per_s"]) else f", {number(row['rate_per_s'])} ops/s"
            plan = "a collection scan (COLLSCAN)" if row["collscan"] else (row["plan"] or "no plan")
            lines.append(f"{row['shape']} {row['operation']} on {row['namespace']} {row['filter_shape']}".rstrip()
                         + f": {plural(row['count'], 'operation')}{rate}, p50 {_ms(row['latency_p50_ms'])} ms, "
                         f"p99 {_ms(row['latency_p99_ms'])} ms; {plan}; "
                         f"documents examined per operation: {number(row['docs_examined_per_op'])}.")
        if len(table) > top:
            lines.append(f"... and {plural(len(table) - top, 'more shape')} (shapes.csv has them all).")
        if self.skipped:
            lines.append("Skipped: " + "; ".join(f"{plural(n, 'line')} of {kind}" for kind, n in
                                                  self.skipped.items()) + ".")
        return "\n".join(lines)


def logged_latency(ms):
    """A latency read from the log as a page shows it: the figure (``number``'s spelling in a sentence), or
    ``UNRESOLVED`` under ``RESOLUTION_MS``; a missing figure stays missing."""
    if ms is None or (isinstance(ms, float) and math.isnan(ms)):
        return ms
    return UNRESOLVED if float(ms) < RESOLUTION_MS else ms


def _ms(ms) -> str:
    shown = logged_latency(ms)
    return shown if isinstance(shown, str) else number(shown)
