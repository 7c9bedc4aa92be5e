"""YCSB client output: one run (one thread count) per file, as one row of the curve table.

The YCSB client ends a run with lines ``[SECTION], metric, value`` (format shown in YCSB's wiki, "Running a Workload",
step 6: https://github.com/brianfrankcooper/YCSB/wiki/Running-a-Workload), e.g.::

    [OVERALL], RunTime(ms), 10110
    [OVERALL], Throughput(ops/sec), 9891.2
    [READ], Operations, 475
    [READ], AverageLatency(us), 340.5
    [READ], 95thPercentileLatency(us), 623
    [READ-FAILED], Operations, 3

How the row is built:

- ``throughput``: ``[OVERALL], Throughput(ops/sec)``.
- ``concurrency``: the thread count from the echoed command line (``-threads 16`` or ``-p threadcount=16``), else
  from the file name (``run_t16.txt``, ``threads-16.log``, ``16threads.out``), else an error naming the file.
- ``latency_mean_ms``: the mean over all successful operations, i.e. the per-operation-type averages weighted by their
  ``Operations`` counts. ``latency_p95_ms`` / ``latency_p99_ms`` (and p50 when printed): the largest per-type
  percentile — conservative, since percentiles of a mix cannot be rebuilt from per-type percentiles, and the mix's
  percentile never exceeds the largest of them. Per-type columns ``latency_<op>_mean_ms``, ``latency_<op>_p95_ms`` ...
  and counts ``ops_<op>`` are kept too. ``[CLEANUP]`` (closing the client threads) and ``*-FAILED`` sections are not
  operations of the workload and stay out of the latencies.
- Units follow the label: ``(us)`` is divided by 1000, ``(ms)`` kept (older YCSB versions print ms), ``(ns)``
  divided by 10^6.
- ``errors``: the sum of ``Operations`` over the ``*-FAILED`` sections (and ``READ-ERROR``-style sections written
  with ``reportlatencyforeacherror``); when a file has none, the sum of the non-OK
  ``Return=`` counts of the operation sections (YCSB reports each failure in both places, so they are never added).
- labels: ``run`` (the file name without extension), ``runtime_ms``.
- ``client_bound``: only for a run throttled by a throughput target (``-target N`` or ``-p target=N`` echoed): True
  when the run reached its target (within 5%), so its throughput is the target's, not the server's; the fit's
  verdict then treats the step as the bench's client-bound steps (all such: no server peak follows).
"""
from __future__ import annotations

import re
from pathlib import Path

from capmodel.data.curve_columns import COLUMNS, LATENCY_NAMES, OP_LATENCY, YCSB, YCSB_OP_COUNT
from capmodel.errors import InputError

_LINE = re.compile(r"^\s*\[([^\]]+)\]\s*,\s*([^,]+?)\s*,\s*(\S+)\s*$")
_UNIT_FACTOR_TO_MS = {"us": 1e-3, "µs": 1e-3, "ms": 1.0, "ns": 1e-6, "s": 1e3}
_THREADS_IN_TEXT = (
    re.compile(r"(?:^|\s)-threads\s+(\d+)\b"),
    re.compile(r"\bthreadcount\s*=\s*(\d+)\b"),
)
_THREADS_IN_NAME = (
    re.compile(r"(?:^|[^a-z0-9])(?:t|th|thread|threads|threadcount|clients?)[-_=]?(\d+)(?:$|[^0-9])", re.I),
    re.compile(r"(?:^|[^0-9])(\d+)[-_]?(?:t|threads?)(?:$|[^a-z])", re.I),
)
# A throughput target (``-target N``, ``-p target=N``) throttles the client: a run that reaches it measured the target,
# not the server. Reached: within ``TARGET_REACHED`` of it (YCSB's throttle paces each thread to target / threads
# and lands just under the total).
_TARGET_IN_TEXT = (
    re.compile(r"(?:^|\s)-target\s+(\d+(?:\.\d+)?)\b"),
    re.compile(r"(?:^|\s)-p\s+target\s*=\s*(\d+(?:\.\d+)?)\b"),
)
TARGET_REACHED = 0.95
_NOT_OPERATIONS = ("OVERALL", "CLEANUP")
# The single columns first, in their declared order; the per-operation ones after them, sorted by name.
_SUMMARY_COLUMNS = tuple(c.name for c in COLUMNS if YCSB in c.written_by and not c.keys)
# Sections holding failed operations: "READ-FAILED", or "READ-<status>" with -p reportlatencyforeacherror=true.
_FAILURE_SUFFIX = re.compile(r"-(FAILED|ERROR|NOT_FOUND|NOT_IMPLEMENTED|UNEXPECTED_STATE|BAD_REQUEST|FORBIDDEN|"
                             r"SERVICE_UNAVAILABLE)$")


def _number(text: str, p: Path, lineno: int) -> float:
    try:
        return float(text)
    except ValueError:
        raise InputError(f"{p}: line {lineno}: '{text}' is not a number") from None


def thread_count(text: str, p: Path) -> int:
    """Threads of a run: echoed command line first, then the file name; ``InputError`` naming the file otherwise."""
    for pattern in _THREADS_IN_TEXT:
        found = pattern.findall(text)
        if found:
            if len(set(found)) > 1:
                raise InputError(f"{p}: several thread counts in one file ({', '.join(sorted(set(found)))}); "
                                 "keep one YCSB run per file")
            return int(found[-1])
    for pattern in _THREADS_IN_NAME:
        m = pattern.search(p.stem)
        if m:
            return int(m.group(1))
    raise InputError(f"{p}: no thread count found: neither '-threads N' / 'threadcount=N' in the file nor a name "
                     "like run_t16.txt or threads-16.log")


def throughput_target(text: str) -> float | None:
    """The run's throughput target in ops/s from the echoed command line (None: not throttled, or 0 = unthrottled)."""
    for pattern in _TARGET_IN_TEXT:
        m = pattern.search(text)
        if m and float(m.group(1)) > 0:
            return float(m.group(1))
    return None


def parse_sections(text: str, p: Path) -> dict[str, dict[str, float]]:
    """``{section: {metric: value}}`` from the ``[SECTION], metric, value`` lines; other lines are ignored."""
    sections: dict[str, dict[str, float]] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        m = _LINE.match(line)
        if not m:
            continue
        section, metric, value = m.groups()
        if metric.isdigit():  # histogram buckets of measurementtype=histogram: "[READ], 0, 4575"
            continue
        number = float("nan") if value.lower() == "nan" else _number(value, p, lineno)
        sections.setdefault(section.strip(), {})[metric] = number
    return sections


def _latencies_ms(metrics: dict[str, float]) -> dict[str, float]:
    """``{"mean": ms, "p95": ms, ...}`` from one section's ``AverageLatency(us)``, ``95thPercentileLatency(us)`` ..."""
    out = {}
    for metric, value in metrics.items():
        m = re.fullmatch(r"(Average|\d+(?:\.\d+)?th)(?:Percentile)?Latency\((\w+)\)", metric.replace(" ", ""))
        if not m or m.group(2) not in _UNIT_FACTOR_TO_MS:
            continue
        kind = "mean" if m.group(1) == "Average" else "p" + m.group(1)[:-2].replace(".", "_")
        out[kind] = value * _UNIT_FACTOR_TO_MS[m.group(2)]
    return out


def read_ycsb_run(path) -> dict[str, float | str]:
    """One YCSB output file as one curve-table row (a dict); see the module docstring for each column."""
    p = Path(path)
    text = p.read_text(encoding="utf-8", errors="replace")
    sections = parse_sections(text, p)
    runs = len(re.findall(r"^\s*\[OVERALL\]\s*,\s*Throughput", text, re.MULTILINE))
    if runs > 1:
        raise InputError(f"{p}: holds {runs} YCSB runs (e.g. load and run phases); keep one run per file")
    overall = sections.get("OVERALL", {})
    if "Throughput(ops/sec)" not in overall:
        raise InputError(f"{p}: no '[OVERALL], Throughput(ops/sec), ...' line; is this YCSB client output?")
    row: dict[str, float | str] = {
        "concurrency": thread_count(text, p),
        "throughput": overall["Throughput(ops/sec)"],
    }
    target = throughput_target(text)
    if target is not None:   # the verdict's client_bound check reads it: a run held at its target measured the client
        row["client_bound"] = bool(overall["Throughput(ops/sec)"] >= TARGET_REACHED * target)
    failed = [s for s in sections if _FAILURE_SUFFIX.search(s)]
    operations = {s: m for s, m in sections.items()
                  if s not in _NOT_OPERATIONS and s not in failed and "Operations" in m
                  and not s.startswith("TOTAL_GC")}
    total_ops, weighted_mean = 0.0, 0.0
    percentiles: dict[str, float] = {}
    for section, metrics in operations.items():
        op = section.lower().replace("-", "_")
        count = metrics["Operations"]
        row[YCSB_OP_COUNT.named(op)] = count
        if count <= 0:
            continue
        lat = _latencies_ms(metrics)
        for kind, value in lat.items():
            row[OP_LATENCY.named(op, kind)] = value
            if kind != "mean":
                percentiles[kind] = max(percentiles.get(kind, value), value)
        if "mean" in lat:
            total_ops += count
            weighted_mean += count * lat["mean"]
    if total_ops > 0:
        row["latency_mean_ms"] = weighted_mean / total_ops
    for kind in ("p50", "p95", "p99"):
        if kind in percentiles:
            row[LATENCY_NAMES[kind]] = percentiles[kind]
    if failed:
        row["errors"] = sum(sections[s].get("Operations", 0.0) for s in failed)
    else:
        row["errors"] = sum(value for metrics in operations.values() for metric, value in metrics.items()
                            if metric.startswith("Return=") and metric not in ("Return=OK", "Return=0"))
    row["run"] = p.stem
    if "RunTime(ms)" in overall:
        row["runtime_ms"] = overall["RunTime(ms)"]
    first = [c for c in _SUMMARY_COLUMNS if c in row]
    return {c: row[c] for c in first + sorted(set(row) - set(first))}
