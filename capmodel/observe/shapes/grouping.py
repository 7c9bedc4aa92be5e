"""``query_shapes``: a server's logs (or profiler documents) read once, in order, into ``QueryShapes``.

Memory: one ``ShapeTally`` per shape (``capmodel.observe.shapes.tally``), none per operation, whatever the logs' size
(with ``interval_s``, one count more per shape and interval in which it ran);
beyond ``max_shapes`` shapes (an application building its filters' field names from data would make one per value)
the operations of further shapes are counted as skipped, not kept.
"""
from __future__ import annotations

from collections.abc import Iterable

from capmodel.constraints import Number
from capmodel.errors import InputError
from capmodel.observe.shapes.entries import (
    SHAPE_KEY,
    LoggedOperation,
    LogScan,
    Settings,
    log_files,
    read_log,
    read_profile,
)
from capmodel.observe.shapes.result import QueryShapes
from capmodel.observe.shapes.sampling import Coverage, SettingsTimeline
from capmodel.observe.shapes.tally import ShapeTally

INTERVAL_S = Number(float, 0.1, 86_400.0, name="interval_s", wanted_text="seconds from 0.1 to 86,400", text=False)
SLOWMS = Number(float, 0.0, 1e9, name="slowms", wanted_text="milliseconds >= 0", text=False)
SAMPLE_RATE = Number(float, 0.0, 1.0, name="sample_rate", wanted_text="a share from 0 to 1", text=False)
MAX_SHAPES = Number(int, 1, 10_000_000, name="max_shapes", wanted_text="a whole number >= 1", text=False)


class _Grouping:
    """The shapes being gathered: one tally per key."""

    def __init__(self, interval_s, max_shapes):
        self.interval_s = None if interval_s is None else INTERVAL_S.check(interval_s, InputError)
        self.max_shapes = MAX_SHAPES.check(max_shapes, InputError)
        self.tallies: dict[tuple, ShapeTally] = {}
        self.beyond = 0

    def add(self, operation: LoggedOperation, timeline: SettingsTimeline) -> None:
        key = tuple(operation)[SHAPE_KEY]
        tally = self.tallies.get(key)
        if tally is None:
            if len(self.tallies) >= self.max_shapes:
                self.beyond += 1
                return
            tally = self.tallies[key] = ShapeTally()
        tally.add(operation, timeline.weight, timeline.complete, self.interval_s)


def query_shapes(paths, slowms: float | None = None, sample_rate: float | None = None,
                 interval_s: float | None = None, max_shapes: int = 100_000) -> QueryShapes:
    """The query shapes of mongod's JSON logs (or mongoexports of ``system.profile``), with their figures.

    Parameters
    ----------
    paths : path or list of paths
        Log files (gzip allowed) or folders of them (``*.log``, rotated ``*.log.*``, ``*.json``, ``*.gz``).
    slowms, sample_rate : float, optional
        The profiler settings in force where a file does not show them (default: the server's defaults, 100 ms and 1,
        and the evidence says they were assumed); a profile export says nothing of them.
    interval_s : float, optional
        Count each shape's operations per interval of this many seconds (``QueryShapes.per_interval``, which the CPU
        per shape of ``shapes_what_if`` needs); None: not counted. Memory then grows with the window over it (a number
        per shape and interval in which it ran); otherwise only with the number of shapes.
    max_shapes : int, default 100,000
        At most this many shapes are kept; further shapes' operations are counted as skipped.

    Returns
    -------
    QueryShapes

    Raises
    ------
    InputError
        A path that does not exist, a folder without logs, a file that cannot be read, a line that should be an entry
        and is not (named by file and line), an option out of range.
    """
    grouping = _Grouping(interval_s, max_shapes)
    slowms = None if slowms is None else SLOWMS.check(slowms, InputError)
    sample_rate = None if sample_rate is None else SAMPLE_RATE.check(sample_rate, InputError)
    files = log_files([paths] if isinstance(paths, (str, bytes)) or not isinstance(paths, Iterable) else paths)
    skipped: dict[str, int] = {}
    segments = []
    for path in files:
        scan, timeline = LogScan(), SettingsTimeline(str(path), slowms, sample_rate)
        for item in read_log(path, scan):
            if isinstance(item, Settings):
                timeline.change(item)
            else:
                grouping.add(item, timeline)
        segments += timeline.segments(scan.first, scan.last)
        for kind, n in scan.skipped.items():
            skipped[kind] = skipped.get(kind, 0) + n
    return _result(grouping, Coverage(tuple(segments)), skipped, tuple(map(str, files)))


def shapes_from_profile(documents: Iterable[dict], slowms: float = 0.0, sample_rate: float = 1.0,
                        source: str = "system.profile", interval_s: float | None = None,
                        max_shapes: int = 100_000) -> QueryShapes:
    """The query shapes of ``system.profile`` documents (a pymongo cursor over it, in time order), with their figures.

    The window is from the first document's time to the last's.

    Parameters
    ----------
    documents : iterable of dict
        The profiler's documents (``op``, ``ns``, ``command``, ``millis``, ``ts``...), as pymongo returns them or
        mongoexport writes them.
    slowms : float, default 0
        The profiler's slowms while it recorded them (level 2 records every operation: 0); the documents do not say.
    sample_rate : float, default 1
        Its sampleRate then.
    source : str, default "system.profile"
        The name messages give the documents.
    interval_s : float, optional
        As for ``query_shapes``.
    max_shapes : int, default 100,000
        As for ``query_shapes``.

    Returns
    -------
    QueryShapes

    Raises
    ------
    InputError
        A document without its namespace, command, duration or time (named by its position), an option out of range.
    """
    grouping = _Grouping(interval_s, max_shapes)
    timeline = SettingsTimeline(source, SLOWMS.check(slowms, InputError), SAMPLE_RATE.check(sample_rate, InputError))
    scan = LogScan()
    for operation in read_profile(documents, source):
        scan.note(operation.time)
        grouping.add(operation, timeline)
    return _result(grouping, Coverage(tuple(timeline.segments(scan.first, scan.last))), {}, (source,))


def _result(grouping: _Grouping, coverage: Coverage, skipped: dict, sources: tuple) -> QueryShapes:
    if grouping.beyond:
        skipped[f"operations of shapes beyond the first {grouping.max_shapes:,}"] = grouping.beyond
    return QueryShapes(keys=tuple(grouping.tallies), tallies=tuple(grouping.tallies.values()), coverage=coverage,
                       skipped=skipped, sources=sources, interval_s=grouping.interval_s)
