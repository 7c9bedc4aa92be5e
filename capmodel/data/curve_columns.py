"""The curve table's columns, declared once: name, unit, value type, meaning, required or optional, and which of
capmodel's producers (``bench``, ``observe``, and ``ycsb``, the reader of YCSB client output) writes it.

The readers (``capmodel.data.readers``, ``validate_curve``), the bench's ``curve.csv`` (``capmodel.bench.sweep.files``)
and the observed one (``capmodel.observe.tables``) take their column names from here, and the manual's page
``docs/curve-table.md`` is ``markdown_table()`` (a test and the docs build keep the two equal). A family of columns
has its key in angle brackets: ``latency_<op>_<stat>_ms`` stands for ``latency_read_p95_ms``,
``latency_update_mean_ms`` ...

The order of ``COLUMNS`` is the order in which the producers write them. This module imports no third-party package,
so the FTDC path can name its columns without loading pandas.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

BENCH, OBSERVE, YCSB = "bench", "observe", "ycsb"   # ycsb: the reader of YCSB client output
DTYPES = {"float": "number", "int": "whole number", "bool": "True/False", "str": "text",
          "time": "UTC time, ISO 8601"}
LATENCY_STATS = ("mean", "p50", "p95", "p99", "p999")   # the latency summary the bench writes, each in ms
LATENCY_NAMES = {stat: f"latency_{stat}_ms" for stat in LATENCY_STATS}   # of all operations
_STAT_WORDS = {"mean": "mean", "p50": "median (50th percentile)", "p95": "95th percentile",
               "p99": "99th percentile", "p999": "99.9th percentile"}
# What a family's key may be, as a regular expression (readers accept any percentile pNN for <stat>):
_KEYS = {"op": "[a-z][a-z0-9_]*", "stat": r"mean|p\d+", "class": "[a-z]+"}


@dataclass(frozen=True)
class CurveColumn:
    """One column (or family of columns) of the curve table, as ``capmodel.data.curve_columns.COLUMNS`` declares it.

    Parameters
    ----------
    name : str
        The column's name; a family's holds its keys in angle brackets (``latency_<op>_<stat>_ms``).
    unit : str
        Its unit ("" for labels).
    dtype : str
        Its kind of value (a key of ``DTYPES``).
    meaning : str
        What it holds, as the manual's table says it.
    required : bool, default False
        Every curve table has it.
    written_by : tuple of str, default ()
        capmodel's producers that write it (``bench``, ``observe``, ``ycsb``); () when read from users' files only.
    checked : bool, default False
        ``validate_curve`` reads it as a number and checks its range.
    label : bool, default False
        It tells rows (or curves) apart; not a measurement.
    """

    name: str                       # a family's name holds its keys in angle brackets
    unit: str                       # "" for labels
    dtype: str                      # one of DTYPES
    meaning: str
    required: bool = False
    written_by: tuple[str, ...] = ()    # capmodel's producers that write it; () = read from users' files only
    checked: bool = False           # validate_curve reads it as a number and checks its range
    label: bool = False             # tells rows (or curves) apart; not a measurement

    @property
    def keys(self) -> tuple[str, ...]:
        """The keys of a family (``("op", "stat")``); empty for a single column."""
        return tuple(re.findall(r"<([a-z]+)>", self.name))

    @property
    def pattern(self) -> re.Pattern:
        """The names this entry stands for, as an anchored regular expression."""
        parts = re.split(r"<([a-z]+)>", self.name)
        text = "".join(re.escape(p) if i % 2 == 0 else f"({_KEYS[p]})" for i, p in enumerate(parts))
        return re.compile(f"^{text}$")

    def named(self, *values: str, **keys: str) -> str:
        """A family member's name, its keys given in order or by name: ``OP_LATENCY.named("read", stat="p95")`` is
        ``latency_read_p95_ms``."""
        keys = {**dict(zip(self.keys, values)), **keys}
        if len(values) > len(self.keys) or set(keys) != set(self.keys):
            raise TypeError(f"{self.name} takes the keys {', '.join(self.keys) or 'none'}")
        return re.sub(r"<([a-z]+)>", lambda m: keys[m.group(1)], self.name)


def _latency(stat: str) -> CurveColumn:
    observed = " (observe: the server's own, weighted by the operations of each class)" if stat == "mean" else ""
    written_by = (BENCH, OBSERVE, YCSB) if stat == "mean" else (BENCH,) if stat == "p999" else (BENCH, YCSB)
    return CurveColumn(LATENCY_NAMES[stat], "ms", "float", f"{_STAT_WORDS[stat]} latency of all operations"
                       + observed, written_by=written_by, checked=True)


OP_LATENCY = CurveColumn("latency_<op>_<stat>_ms", "ms", "float", "latency of one operation type (read, update, "
                         "insert ...): `<stat>` is mean, p50, p95, p99 or p999 (a file may carry any pNN)",
                         written_by=(BENCH, YCSB), checked=True)
OP_COUNT = CurveColumn("<op>_count", "operations", "int", "operations of that type completed in the measured "
                       "window (empty where a step ran none)", written_by=(BENCH,))
YCSB_OP_COUNT = CurveColumn("ops_<op>", "operations", "int", "operations of that type YCSB counted (its "
                            "`Operations` line)", written_by=(YCSB,))
#: the classes of operations the server reports latencies for (serverStatus opLatencies), one set of columns each
OPERATION_CLASSES = ("reads", "writes", "commands")
CLASS_CONCURRENCY = CurveColumn("concurrency_<class>", "operations", "float", "operations of one class (reads, "
                                "writes, commands) inside the server at once, by Little's law", written_by=(OBSERVE,))
CLASS_THROUGHPUT = CurveColumn("throughput_<class>", "ops/s", "float", "operations of that class completed per "
                               "second", written_by=(OBSERVE,))
CLASS_LATENCY = CurveColumn("latency_<class>_ms", "ms", "float", "the server's mean latency of that class (empty "
                            "when none ran)", written_by=(OBSERVE,))

COLUMNS = (
    CurveColumn("member", "", "str", "the replica-set member (host:port) the row was observed on; only in the "
                "curve.csv that combines the members", written_by=(OBSERVE,), label=True),
    CurveColumn("time", "", "time", "end of the sampled interval", written_by=(OBSERVE,)),
    CurveColumn("concurrency", "clients", "float", "load N: the clients the bench ran (a file's threads, users or "
                "nodes); observe: operations inside the server at once, N = X·R (Little's law); > 0", required=True,
                written_by=(BENCH, OBSERVE, YCSB), checked=True),
    CurveColumn("throughput", "ops/s", "float", "X: operations completed per second (documents per second for a "
                "workload that counts documents); >= 0", required=True, written_by=(BENCH, OBSERVE, YCSB),
                checked=True),
    *(_latency(stat) for stat in LATENCY_STATS),
    CurveColumn("errors", "operations", "int", "operations that failed in the measured window",
                written_by=(BENCH, YCSB), checked=True),
    CurveColumn("cpu_util", "fraction 0–1", "float", "the server process's CPU share of its machine (bench: the "
                "embedded server only, left out when a step has none)", written_by=(BENCH,), checked=True),
    CurveColumn("system", "", "str", "the system measured (a VM type, a cluster)", label=True),
    CurveColumn("workload", "", "str", "the workload's name", written_by=(BENCH,), label=True),
    CurveColumn("op", "", "str", "the operation type the row measures", label=True),
    CurveColumn("run", "", "str", "the run (or file) the row comes from (ycsb: the file's name without its "
                "extension)", written_by=(YCSB,), label=True),
    CurveColumn("runtime_ms", "ms", "float", "the run's length as YCSB reports it (`[OVERALL], RunTime(ms)`)",
                written_by=(YCSB,)),
    CurveColumn("repeat", "", "int", "which repetition of its concurrency (1, 2 ...); readers number replicates",
                written_by=(BENCH,), label=True),
    CurveColumn("ops_per_s", "ops/s", "float", "operations completed per second (throughput counts documents for "
                "a workload that says so)", written_by=(BENCH,)),
    CurveColumn("client_bound", "", "bool", "the client, not the server, may have limited the step (see the "
                "verdict's reasons in steps.jsonl; a YCSB run that reached its -target)", written_by=(BENCH, YCSB)),
    CurveColumn("client_cpu", "cores", "float", "CPU the client processes used, summed", written_by=(BENCH,)),
    CurveColumn("effective_concurrency", "clients", "float", "throughput × mean latency (Little's law): the "
                "clients actually in flight (closed loop only)", written_by=(BENCH,)),
    OP_LATENCY,
    OP_COUNT,
    YCSB_OP_COUNT,
    CLASS_CONCURRENCY,
    CLASS_THROUGHPUT,
    CLASS_LATENCY,
    CurveColumn("source", "", "str", "'observed': the row comes from the server's own counters",
                written_by=(OBSERVE,), label=True),
)

_SINGLE = {c.name: c for c in COLUMNS if not c.keys}
_FAMILIES = tuple(c for c in COLUMNS if c.keys)
REQUIRED = tuple(c.name for c in COLUMNS if c.required)
LATENCY = tuple(c.name for c in COLUMNS if c.name in _SINGLE and c.checked and c.unit == "ms")
OPTIONAL_NUMERIC = tuple(c.name for c in COLUMNS if c.name in _SINGLE and c.checked and not c.required)
LABELS = tuple(c.name for c in COLUMNS if c.label)
PER_OP_LATENCY = OP_LATENCY.pattern


def column(name: str) -> CurveColumn | None:
    """The declaration a column name falls under: a single column first, then the families.

    Parameters
    ----------
    name : str
        A column name, e.g. ``throughput`` or ``latency_read_p95_ms``.

    Returns
    -------
    CurveColumn or None
        None when the curve table does not declare it.

    Examples
    --------
    >>> from capmodel.data.curve_columns import column
    >>> column("latency_read_p95_ms").name
    'latency_<op>_<stat>_ms'
    """
    if name in _SINGLE:
        return _SINGLE[name]
    return next((f for f in _FAMILIES if f.pattern.match(name)), None)


def markdown_table() -> str:
    """The declaration as the markdown table of the manual's page ``docs/curve-table.md``, one row per column or
    family."""
    lines = ["| column | required | checked | unit | value | written by | meaning |", "|---|---|---|---|---|---|---|"]
    for c in COLUMNS:
        written = ", ".join(c.written_by) or "(files only)"
        lines.append(f"| `{c.name}` | {'yes' if c.required else ''} | {'yes' if c.checked else ''} | {c.unit} | "
                     f"{DTYPES[c.dtype]} | {written} | {c.meaning} |")
    return "\n".join(lines) + "\n"
