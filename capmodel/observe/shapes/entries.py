"""The operations a mongod recorded: its structured (JSON) log's slow-operation entries and the profiler's
``system.profile`` documents, read one line (or document) at a time into ``LoggedOperation`` records, with the profiler
settings the log shows being changed (``Settings``).

The log (MongoDB 4.4 and later; ``src/mongo/db/curop.cpp``, ``OpDebug::report``): an operation slower than ``slowms``
(and drawn by ``slowOpSampleRate``) is one line ``{"t": {"$date": ...}, "id": 51803, "msg": "Slow query", "attr":
{"type", "ns", "command", "planSummary", "queryHash", "durationMillis", "keysExamined", "docsExamined", "nreturned",
"reslen", "cpuNanos" (Linux, 6.3 and later)...}}``.
A write batch is one entry for the ``update`` or ``delete`` command (on
``db.$cmd``) and one per statement (``type`` ``update`` or ``remove``, with ``q``): the statements are the operations,
the batch entry is skipped (it would count them twice). The settings: ``"Options set by command line"``
(``operationProfiling.slowOpThresholdMs`` and ``slowOpSampleRate``) at start and ``"Profiler settings changed"``
(``attr.to.slowms`` and ``sampleRate``) when ``profile`` or ``setProfilingLevel`` changes them.

A line of another kind (another message, a log of the text format before 4.4, a blank line) is skipped and counted by
kind; a line that should be an entry and is not (JSON cut short in mid-file, a slow-query entry without its
namespace or with a duration that is not a number) raises ``InputError`` naming the file and the line. The last line of
a file, when it has no newline, may be one mongod is still writing: it is skipped and counted.
"""
from __future__ import annotations

import datetime as dt
import gzip
import json
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from capmodel.errors import InputError
from capmodel.observe.shapes.filter_shape import filter_shape, key_shape, pipeline_shape

SLOW_QUERY = 51803          # the log id of "Slow query"
OPTIONS = 21951             # "Options set by command line"
PROFILER_CHANGED = 48742    # "Profiler settings changed"
#: the server's defaults: operations of 100 ms or more are logged, every one of them
DEFAULT_SLOWMS, DEFAULT_SAMPLE_RATE = 100.0, 1.0
#: the profiler's ``op`` as the operation names the log's commands use
PROFILE_OPS = {"query": "find", "getmore": "getMore", "update": "update", "remove": "delete", "insert": "insert"}
#: the skipped lines' kinds, as the answer names them
NOT_JSON, OTHER_ENTRY, WRITE_BATCH, CUT_SHORT = ("not JSON (a log from before MongoDB 4.4?)", "other log entries",
                                                 "write batches (their statements are entries of their own)",
                                                 "a last line still being written")


class LoggedOperation(NamedTuple):
    """One operation as the server recorded it; its shape's parts carry no value from the data. (A named tuple: a
    log has millions, and its shape's key is the slice ``SHAPE_KEY``.)"""

    time: float                  # seconds since the epoch (UTC)
    namespace: str
    operation: str               # find, aggregate, update, delete, getMore, insert, count...
    filter_shape: str
    sort: str
    projection: str
    query_hash: str
    plan: str                    # the plan summary ("COLLSCAN", "IXSCAN { a: 1 }"), "" where none
    duration_ms: float
    keys_examined: float
    docs_examined: float
    returned: float
    reply_bytes: float           # the reply's size (the log's reslen, the profiler's responseLength), 0 where none
    cpu_nanos: float | None      # where the server wrote it


#: the fields that make two operations one shape, as a slice of a LoggedOperation
SHAPE_KEY = slice(1, 7)


@dataclass(frozen=True)
class Settings:
    """The profiler settings in force from ``time`` on, as the log shows them: ``startup``, the command line's (a
    server starting, so the runtime changes before are gone); ``before``, the (slowms, sampleRate) a change replaced."""

    time: float | None           # None: from the file's start
    slowms: float
    sample_rate: float
    startup: bool = False
    before: tuple | None = None


class LogScan:
    """What reading saw besides the operations: the lines skipped, by kind, and the first and last time of an entry
    in the file being read (the window its operations came from)."""

    def __init__(self):
        self.skipped: dict[str, int] = {}
        self.first: float | None = None
        self.last: float | None = None

    def skip(self, kind: str) -> None:
        self.skipped[kind] = self.skipped.get(kind, 0) + 1

    def note(self, time: float | None) -> None:
        if time is not None:
            self.first = time if self.first is None else min(self.first, time)
            self.last = time if self.last is None else max(self.last, time)


def open_log(path: Path):
    """One log file opened as text (gzip allowed, by its ``.gz`` suffix); undecodable bytes replaced."""
    opener = gzip.open if Path(path).suffix == ".gz" else open
    return opener(path, "rt", encoding="utf-8", errors="replace")


def read_log(path: Path, scan: LogScan) -> Iterator[LoggedOperation | Settings]:
    """The operations and settings changes of one log file (gzip allowed), in its order; ``scan`` counts the lines
    of other kinds and notes the entries' times."""
    try:
        with open_log(path) as lines:
            previous = None
            for number, line in enumerate(lines, start=1):
                if previous is not None:
                    yield from _entry(*previous, scan, last=False)
                previous = (path, number, line)
            if previous is not None:
                yield from _entry(*previous, scan, last=not previous[2].endswith("\n"))
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise InputError(f"{path}: cannot be read ({exc})") from None


def _entry(path: Path, number: int, line: str, scan: LogScan, last: bool) -> Iterator[LoggedOperation | Settings]:
    text = line.strip()
    if not text:
        return
    if not text.startswith("{"):
        scan.skip(NOT_JSON)
        return
    try:
        entry = json.loads(text)
    except json.JSONDecodeError as exc:
        if last:
            scan.skip(CUT_SHORT)
            return
        raise InputError(f"{path}: line {number}: not a JSON log entry ({exc.msg} at column {exc.colno})") from None
    where = f"{path}: line {number}"
    if not isinstance(entry, dict):
        raise InputError(f"{where}: a JSON log entry is an object, this line is a {type(entry).__name__}")
    if "msg" not in entry and "op" in entry and "ns" in entry:      # mongoexport of system.profile
        profiled = profile_operation(entry, where)
        scan.note(profiled.time)
        yield profiled
        return
    kind = entry.get("id")
    scan.note(_time(entry.get("t"), where) if kind in (SLOW_QUERY, PROFILER_CHANGED, OPTIONS) else
              entry_time(entry))
    if kind == SLOW_QUERY or entry.get("msg") == "Slow query":
        record = log_operation(entry, where)
        if record is None:
            scan.skip(WRITE_BATCH)
        else:
            yield record
    elif kind == PROFILER_CHANGED:
        attr = entry.get("attr") or {}
        to, before = attr.get("to") or {}, attr.get("from")
        yield Settings(_time(entry.get("t"), where), _figure(to, "slowms", where, DEFAULT_SLOWMS),
                       _figure(to, "sampleRate", where, DEFAULT_SAMPLE_RATE), before=(
                           _figure(before, "slowms", where, DEFAULT_SLOWMS),
                           _figure(before, "sampleRate", where, DEFAULT_SAMPLE_RATE))
                       if isinstance(before, dict) else None)
    elif kind == OPTIONS:
        profiling = ((entry.get("attr") or {}).get("options") or {}).get("operationProfiling") or {}
        yield Settings(_time(entry.get("t"), where), _figure(profiling, "slowOpThresholdMs", where, DEFAULT_SLOWMS),
                       _figure(profiling, "slowOpSampleRate", where, DEFAULT_SAMPLE_RATE), startup=True)
    else:
        scan.skip(OTHER_ENTRY)


def log_operation(entry: dict, where: str) -> LoggedOperation | None:
    """The operation of a "Slow query" entry; None for a write batch's own entry (its statements have theirs)."""
    attr = entry.get("attr")
    if not isinstance(attr, dict):
        raise InputError(f"{where}: a slow-query entry without its attr object")
    # an operation without a description has no command
    namespace, command = _checked(attr.get("ns"), attr.get("command", {}), where, "a slow-query entry")
    kind = attr.get("type")
    if kind in ("update", "remove"):
        operation = "update" if kind == "update" else "delete"
    else:
        operation = str(next(iter(command), kind or "?"))
        if kind == "command" and operation in ("update", "delete") and namespace.endswith(".$cmd"):
            return None
    duration = _figure(attr, "durationMillis", where, None)
    return _operation(_time(entry.get("t"), where), namespace, operation, command, attr, duration, where)


def profile_operation(document: dict, where: str) -> LoggedOperation:
    """The operation of a ``system.profile`` document (as pymongo returns it or mongoexport writes it)."""
    namespace, command = _checked(document.get("ns"), document.get("command", {}), where, "a profile document")
    op = str(document.get("op"))
    operation = PROFILE_OPS.get(op) or str(next(iter(command), op))
    duration = _figure(document, "millis", where, None)
    return _operation(_time(document.get("ts"), where), namespace, operation, command, document, duration, where)


def _checked(namespace, command, where: str, what: str) -> tuple[str, dict]:
    """(namespace, command) as given; ``InputError`` where the namespace is missing or the command (where there is
    one) is not an object."""
    if not isinstance(namespace, str):
        raise InputError(f"{where}: {what} without ns")
    if not isinstance(command, dict):
        raise InputError(f"{where}: {what} whose command is not an object")
    return namespace, command


def _operation(time: float, namespace: str, operation: str, command: dict, attr: dict, duration: float,
               where: str) -> LoggedOperation:
    if operation == "getMore" and isinstance(attr.get("originatingCommand"), dict):
        shaped = attr["originatingCommand"]          # a cursor's next batch has its first batch's shape
    else:
        shaped = command
    filter_text, sort, projection = shape_parts(shaped)
    cpu = attr.get("cpuNanos")
    return LoggedOperation(
        time=time, namespace=namespace, operation=operation, filter_shape=filter_text, sort=sort,
        projection=projection, query_hash=str(attr.get("queryHash") or ""), plan=str(attr.get("planSummary") or ""),
        duration_ms=duration, keys_examined=_figure(attr, "keysExamined", where, 0.0),
        docs_examined=_figure(attr, "docsExamined", where, 0.0), returned=_figure(attr, "nreturned", where, 0.0),
        reply_bytes=_figure(attr, "reslen" if "reslen" in attr else "responseLength", where, 0.0),
        cpu_nanos=None if cpu is None else _figure(attr, "cpuNanos", where, None))


def shape_parts(command: dict) -> tuple[str, str, str]:
    """(filter, sort, projection) shapes of a command or a write statement, "" where it has none."""
    if "pipeline" in command:
        return pipeline_shape(command["pipeline"]), "", ""
    for name in ("filter", "q", "query"):
        if name in command:
            return (filter_shape(command[name]), key_shape(command.get("sort")),
                    key_shape(command.get("projection", command.get("fields"))))
    return "", "", ""


def _figure(holder: dict, name: str, where: str, default: float | None) -> float:
    """A number the entry carries (plain JSON or extended JSON's ``{"$numberLong": "..."}``), ``default`` where it
    is absent; ``InputError`` naming the field where it is not a number (or absent without a default)."""
    value = holder.get(name)
    if type(value) is int and value >= 0:        # the common case, first
        return float(value)
    if value is None and default is not None:
        return default
    if isinstance(value, dict) and len(value) == 1:
        value = next(iter(value.values()))
        try:
            value = float(value)
        except (TypeError, ValueError):
            pass
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise InputError(f"{where}: {name} is {'missing' if value is None else 'not a number >= 0'}")
    return float(value)


def _time(value, where: str) -> float:
    """Seconds since the epoch of the entry's time (``{"$date": ISO text or milliseconds}``, or a datetime)."""
    if isinstance(value, dict) and "$date" in value:
        value = value["$date"]
        if isinstance(value, dict):          # canonical extended JSON: {"$numberLong": "ms"}
            value = next(iter(value.values()), None)
    if isinstance(value, dt.datetime):
        return (value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)).timestamp()
    if isinstance(value, str):
        try:
            if not value.lstrip("-").isdigit():
                return dt.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            raise InputError(f"{where}: the entry's time is not a date") from None
    try:
        if value is not None and not isinstance(value, bool):
            return float(value) / 1000.0
    except (TypeError, ValueError):
        pass
    raise InputError(f"{where}: the entry has no time")


def entry_time(entry: dict) -> float | None:
    """The time of an entry of another kind, None where it has none that reads (such a line is skipped, not
    refused)."""
    try:
        return _time(entry.get("t"), "")
    except InputError:
        return None


def read_profile(documents: Iterable[dict], source: str = "system.profile") -> Iterator[LoggedOperation]:
    """The operations of ``system.profile`` documents (a pymongo cursor over it, or its mongoexport read as dicts)."""
    for index, document in enumerate(documents, start=1):
        where = f"{source}: document {index}"
        if not isinstance(document, dict):
            raise InputError(f"{where}: not a document")
        yield profile_operation(document, where)


def log_files(paths) -> list[Path]:
    """The files to read: each path a file, or a folder's files (not descending) whose names say a log (``*.log``,
    rotated ``*.log.*``, ``*.json``, ``*.gz``), in name order; ``InputError`` for a path that does not exist or a
    folder without one."""
    out: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.is_file() and _is_log_name(p.name))
            if not found:
                raise InputError(f"{path}: a folder without log files (*.log, *.log.*, *.json, *.gz)")
            out += found
        elif path.is_file():
            out.append(path)
        else:
            raise InputError(f"{path}: no such file or folder")
    return out


def _is_log_name(name: str) -> bool:
    return name.endswith((".log", ".json", ".jsonl", ".gz")) or ".log." in name
