"""What a benchmark step saw: latencies per operation type (HdrHistogram, microseconds) and errors by kind.

Each worker owns a ``Recorder`` (plain lists, no lock: appending is the only per-operation cost); after the step the
recorders are merged into one ``HdrHistogram`` per operation type plus one over all operations. Histograms are kept
with 3 significant digits from 1 microsecond to 1 hour, and travel in ``steps.jsonl`` in HdrHistogram's standard
compressed base64 encoding, so they can be re-read and merged later (``decode_histogram``).
"""
from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:   # hdrh comes with the 'bench' extra: imported where a histogram is made, so that the sweep's
    from hdrh.histogram import HdrHistogram  # modules import without it and name the extra instead

LOWEST_US, HIGHEST_US, DIGITS = 1, 3_600_000_000, 3
PERCENTILES = (("p50", 50.0), ("p95", 95.0), ("p99", 99.0), ("p999", 99.9))


def new_histogram() -> HdrHistogram:
    from hdrh.histogram import HdrHistogram

    return HdrHistogram(LOWEST_US, HIGHEST_US, DIGITS)


def decode_histogram(encoded: str) -> HdrHistogram:
    from hdrh.histogram import HdrHistogram

    return HdrHistogram.decode(encoded)


def error_kind(exc: BaseException) -> str:
    """A short stable label: the exception class, plus the server error code when there is one."""
    code = getattr(exc, "code", None)
    name = type(exc).__name__
    if name == "PyMongoError" and type(exc).__module__.startswith("mongojet") and "I/O error" in str(exc)[:200]:
        name = "ConnectionFailure"  # mongojet's generic class for a connection that broke (pymongo: AutoReconnect)
    return f"{name}:{code}" if isinstance(code, int) else name


class Recorder:
    """One worker's observations: latency lists per operation index, documents counted, errors by kind; in an open
    loop also each measured operation's and each failure's intended start (``due``, ``error_due``: the clock's
    seconds), so that the step can be cut into windows."""

    __slots__ = ("latencies", "documents", "errors", "error_samples", "busy_since", "late", "due", "error_due")

    def __init__(self, n_ops: int):
        self.latencies: list[list[int]] = [[] for _ in range(n_ops)]  # microseconds
        self.due: list[list[float]] = [[] for _ in range(n_ops)]  # open loop: intended starts, as latencies
        self.error_due: list[float] = []
        self.documents = [0] * n_ops
        self.errors: Counter = Counter()
        self.error_samples: dict[str, str] = {}
        self.busy_since = 0.0  # when the operation in flight started (0: none in flight)
        self.late: list[int] = []  # latencies (us) of operations started in the window that completed after it

    def error(self, exc: BaseException) -> None:
        kind = error_kind(exc)
        self.errors[kind] += 1
        if kind not in self.error_samples:
            self.error_samples[kind] = str(exc)[:300]

    def count(self) -> int:
        return sum(len(values) for values in self.latencies)


def _record_all(histogram: HdrHistogram, values_us) -> None:
    if len(values_us) == 0:
        return
    values, counts = np.unique(np.clip(np.asarray(values_us, dtype=np.int64), LOWEST_US, HIGHEST_US),
                               return_counts=True)
    for value, count in zip(values.tolist(), counts.tolist()):
        histogram.record_value(value, count)


def mean_value(histogram: HdrHistogram) -> float:
    """The histogram's mean as ``HdrHistogram.get_mean_value`` gives it (each recorded bucket at its median equivalent
    value), summed over the recorded buckets only: hdrh's own iterator steps through every bucket up to the largest
    value in Python objects, a second or more for an open-loop step's long tail on a busy core."""
    counts = histogram.counts
    counts = np.asarray(counts) if isinstance(counts, list) else np.ctypeslib.as_array(counts)
    total = 0
    for index in np.flatnonzero(counts[: histogram.counts_len]).tolist():
        total += int(counts[index]) * histogram._hdr_median_equiv_value(histogram.get_value_from_index(index))
    return total / histogram.get_total_count()


def summarize(histogram: HdrHistogram) -> dict:
    """count, mean and percentiles in milliseconds (NaN when nothing was recorded)."""
    n = histogram.get_total_count()
    out: dict[str, float] = {"count": int(n)}
    if n == 0:
        out.update({"mean_ms": float("nan"), "max_ms": float("nan")})
        out.update({f"{name}_ms": float("nan") for name, _ in PERCENTILES})
        return out
    out["mean_ms"] = mean_value(histogram) / 1000.0
    for name, q in PERCENTILES:
        out[f"{name}_ms"] = histogram.get_value_at_percentile(q) / 1000.0
    out["max_ms"] = histogram.get_max_value() / 1000.0
    return out


class StepMeasurements:
    """Merged observations of all workers of one step."""

    def __init__(self, op_names: list[str], recorders: list[Recorder]):
        self.op_names = list(op_names)
        self.histograms = {name: new_histogram() for name in op_names}
        self.overall = new_histogram()
        self.documents = {name: 0 for name in op_names}
        self.errors: Counter = Counter()
        self.error_samples: dict[str, str] = {}
        for i, name in enumerate(op_names):
            values = np.concatenate([np.asarray(r.latencies[i], dtype=np.int64) for r in recorders]
                                    or [np.zeros(0, np.int64)])
            _record_all(self.histograms[name], values)
            self.overall.add(self.histograms[name])
            self.documents[name] = sum(r.documents[i] for r in recorders)
        for r in recorders:
            self.errors.update(r.errors)
            for kind, text in r.error_samples.items():
                self.error_samples.setdefault(kind, text)

    @classmethod
    def combine(cls, op_names: list[str], records: list[dict]) -> "StepMeasurements":
        """The observations of steps measured apart (one per client process), from their ``as_record()`` dicts:
        histograms added, errors added by kind."""
        m = cls(op_names, [])
        for r in records:
            for name, encoded in r["histograms"].items():
                h = decode_histogram(encoded)
                m.histograms[name].add(h)
                m.overall.add(h)
            m.errors.update(r["errors"])
            for kind, text in r["error_samples"].items():
                m.error_samples.setdefault(kind, text)
        return m

    @property
    def operations(self) -> int:
        return int(self.overall.get_total_count())

    @property
    def error_count(self) -> int:
        return int(sum(self.errors.values()))

    def latency(self) -> dict:
        """Per operation type and ``all``: the summary of ``summarize``."""
        out = {name: summarize(h) for name, h in self.histograms.items()}
        out["all"] = summarize(self.overall)
        return out

    def encoded(self) -> dict:
        return {name: h.encode().decode() for name, h in self.histograms.items()}


def window_measurements(recorders: list[Recorder], edges) -> list[dict]:
    """An open-loop step cut by its operations' intended starts into the windows ``[edges[k], edges[k+1])`` (the
    clock's seconds): per window the operations measured, the errors, the latency summary (``summarize``) and the
    histogram (encoded, so windows of several client processes add up: ``combine_windows``)."""
    due = np.concatenate([np.asarray(d, dtype=float) for r in recorders for d in r.due] or [np.zeros(0)])
    latency = np.concatenate([np.asarray(v, dtype=np.int64) for r in recorders for v in r.latencies]
                             or [np.zeros(0, np.int64)])
    failed = np.asarray([t for r in recorders for t in r.error_due], dtype=float)
    out = []
    for a, b in zip(edges[:-1], edges[1:]):
        h = new_histogram()
        _record_all(h, latency[(due >= a) & (due < b)])
        out.append({"errors": int(np.count_nonzero((failed >= a) & (failed < b))), "histogram": h.encode().decode()})
    return out


def combine_windows(shares: list[list[dict]]) -> list[dict]:
    """The windows of several client processes' shares of one step (``summarize_window``'s rows), added window by
    window: histograms, errors and asked rates add up."""
    out = []
    for parts in zip(*shares):
        h = new_histogram()
        for part in parts:
            h.add(decode_histogram(part["histogram"]))
        asked = [p.get("target_rate") for p in parts]
        out.append(summarize_window({
            "start_s": parts[0]["start_s"], "end_s": parts[0]["end_s"], "errors": sum(p["errors"] for p in parts),
            "target_rate": None if None in asked else sum(asked), "histogram": h.encode().decode()}))
    return out


def summarize_window(window: dict) -> dict:
    """A window's figures for the step record: operations, errors, ops/s, latency summary, and its histogram."""
    h = decode_histogram(window["histogram"])
    seconds = window["end_s"] - window["start_s"]
    summary = summarize(h)
    operations = summary.pop("count")
    return {"start_s": window["start_s"], "end_s": window["end_s"], "target_rate": window.get("target_rate"),
            "operations": operations, "errors": window["errors"],
            "ops_per_s": operations / seconds if seconds > 0 else float("nan"), **summary,
            "histogram": window["histogram"]}
