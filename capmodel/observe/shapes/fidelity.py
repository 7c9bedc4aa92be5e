"""How faithfully a replay ran production: the shapes the replay's own log holds against the production shapes its
workload was written from (``capmodel.observe.shapes.replay``), per shape its share of the operations and its CPU per
operation, side by side.

A production shape and a replay shape are the same when their operation, filter shape and sort are (the namespace is
the replay's own collection; a projection's values became 1 in the replay). Shares are of the replayed shapes'
operations on each side; the mix error is the replay's share less production's (a difference of shares: 0.05 is 5
points). CPU per operation comes from each side's ``ShapesWhatIf`` (the regression on the server's CPU) or a
mapping of figures measured otherwise (each shape alone) where one is given, else from the log's ``cpuNanos``; the
CPU error is replay / production - 1. A replay runs a fixed mix, so a regression on its CPU cannot tell its shapes
apart: measure each replayed operation alone (``benchmarks/bench_replay.py`` does), or read ``cpuNanos`` (MongoDB
6.3 and later).

Each operation alone (``alone_cpu``): the server's process CPU over a window in which only that replayed operation ran
(the mean of the FTDC samples wholly inside it, ``window_cpu``), less its CPU over a window in which nothing ran, over
the operation's rate in that window (its entries in the replay's log, over the window's length).
"""
from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from capmodel.formatting import number, percent
from capmodel.jsonable import to_jsonable
from capmodel.observe.shapes.replay import ReplayWorkload
from capmodel.observe.shapes.result import QueryShapes

#: what makes a replay shape the production shape it replays
MATCH_FIELDS = ("operation", "filter_shape", "sort")


@dataclass(frozen=True)
class ReplayFidelity:
    """Production's shapes and the replay's, matched; every figure derives from ``table``.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per replayed shape: ``shape`` (production's id), ``replay_shape``, ``operation``, ``filter_shape``,
        ``production_share``, ``replay_share``, ``mix_error``, ``production_cpu_ms_per_op`` with its interval
        (``production_cpu_ms_per_op_low``, ``_high``: the demand fit's, NaN where the figure has none),
        ``replay_cpu_ms_per_op``, ``cpu_error``.
    collection : str
        The replay's collection.
    """

    table: pd.DataFrame
    collection: str

    @cached_property
    def missing(self) -> list:
        """Production shapes the replay's log does not hold."""
        return self.table.loc[self.table["replay_shape"].isna(), "shape"].tolist()

    @property
    def largest_mix_error(self) -> float:
        """The largest difference of shares (absolute)."""
        return float(self.table["mix_error"].abs().max())

    @property
    def largest_cpu_error(self) -> float:
        """The largest relative CPU-per-operation error (absolute; NaN where no shape has both figures)."""
        errors = self.table["cpu_error"].abs().dropna()
        return float(errors.max()) if len(errors) else math.nan

    @property
    def cpu_inside(self) -> pd.Series:
        """Per row: whether the replay's CPU per operation lies inside production's interval (NaN where a figure is
        missing or the interval has no width: a fit without a bootstrap). Production's figure is itself an estimate:
        an error inside its interval is one the production data cannot tell from none."""
        t = self.table
        low, high = t["production_cpu_ms_per_op_low"], t["production_cpu_ms_per_op_high"]
        inside = (t["replay_cpu_ms_per_op"] >= low) & (t["replay_cpu_ms_per_op"] <= high)
        known = t["replay_cpu_ms_per_op"].notna() & (high > low)
        return inside.astype(object).where(known, math.nan)

    def to_json(self) -> dict:
        """The comparison as a record: the rows (with ``cpu_inside``), the largest errors, the missing shapes and the
        sentence."""
        return to_jsonable({"collection": self.collection, "shapes": self.table.assign(cpu_inside=self.cpu_inside),
                            "missing": self.missing, "largest_mix_error": self.largest_mix_error,
                            "largest_cpu_error": self.largest_cpu_error, "sentence": self.describe()})

    def describe(self) -> str:
        """The comparison in sentences, one per shape."""
        if len(self.missing) == len(self.table):
            return (f"The replay's log holds none of the {len(self.table)} replayed shapes on {self.collection} (is it "
                    "the log of the server that ran the workload, with every operation logged?).")
        lines = [f"The replay on {self.collection} against production: largest mix error "
                 f"{number(100 * self.largest_mix_error)} points"
                 + ("" if math.isnan(self.largest_cpu_error) else
                    f", largest CPU per operation error {percent(self.largest_cpu_error)}") + "."]
        for (_, row), inside in zip(self.table.iterrows(), self.cpu_inside):
            within = "" if not isinstance(inside, bool) else (
                f", {'inside' if inside else 'outside'} production's {number(row['production_cpu_ms_per_op_low'])} "
                f"to {number(row['production_cpu_ms_per_op_high'])}")
            cpu = ("" if math.isnan(row["cpu_error"]) else
                   f"; CPU {number(row['production_cpu_ms_per_op'])} -> {number(row['replay_cpu_ms_per_op'])} ms per "
                   f"operation ({percent(row['cpu_error'])}{within})")
            lines.append(f"{row['shape']} {row['operation']} {row['filter_shape']}".rstrip()
                         + f": {percent(row['production_share'])} -> {percent(row['replay_share'])}" + cpu + ".")
        if self.missing:
            lines.append(f"Not in the replay's log: {', '.join(self.missing)}.")
        return "\n".join(lines)


def _cpu(shapes: QueryShapes, given, column: str = "cpu_ms_per_op") -> tuple[dict, bool]:
    """({shape id: CPU ms per operation}, whether keyed by production's ids): a mapping as given, else the
    what-if's fit where given and the log's cpuNanos. ``column``: the figure, or an end of its interval
    (``cpu_ms_per_op_low``, ``_high``: the what-if's only)."""
    if isinstance(given, Mapping):
        return ({str(k): float(v) for k, v in given.items()} if column == "cpu_ms_per_op" else {}), True
    rows = shapes.rows.set_index("shape")[column].to_dict() if column in shapes.rows else {}
    if given is not None:
        rows.update(given.table.set_index("shape")[column].to_dict())
    return rows, False


def replay_fidelity(production: QueryShapes, replay: QueryShapes, workload: ReplayWorkload,
                    production_cpu=None, replay_cpu=None) -> ReplayFidelity:
    """Each replayed shape's share and CPU per operation in the replay's log against production's.

    Parameters
    ----------
    production : QueryShapes
        The shapes the workload was written from.
    replay : QueryShapes
        The shapes of the log of the server the workload ran on (``capmodel bench --workload``).
    workload : ReplayWorkload
        The workload (``replay_workload``): which shapes it replays, and its collection.
    production_cpu, replay_cpu : ShapesWhatIf or mapping, optional
        Each side's CPU per operation where the logs have no ``cpuNanos``: its demand fit (``shapes_what_if`` with
        the server's CPU), or ``{production shape id: ms}`` measured otherwise (each shape run alone).

    Returns
    -------
    ReplayFidelity
    """
    collection = str(workload.spec["collection"])
    theirs = replay.rows[replay.rows["namespace"].str.split(".", n=1).str[-1] == collection]
    by_key = {tuple(r[f] for f in MATCH_FIELDS): r for _, r in theirs.iterrows()}
    ours = production.rows.set_index("shape")
    (cpu_production, _), (cpu_replay, by_production) = _cpu(production, production_cpu), _cpu(replay, replay_cpu)
    low, high = (_cpu(production, production_cpu, f"cpu_ms_per_op_{end}")[0] for end in ("low", "high"))
    rows = []
    for item in workload.replayed:
        key = tuple(ours.loc[item["shape"], f] for f in MATCH_FIELDS)
        match = by_key.get(key)
        rows.append({"shape": item["shape"], "replay_shape": None if match is None else match["shape"],
                     "operation": item["operation"], "filter_shape": item["filter_shape"],
                     "production_operations": float(ours.loc[item["shape"], "operations"]),
                     "replay_operations": 0.0 if match is None else float(match["operations"]),
                     "production_cpu_ms_per_op": cpu_production.get(item["shape"], math.nan),
                     "production_cpu_ms_per_op_low": low.get(item["shape"], math.nan),
                     "production_cpu_ms_per_op_high": high.get(item["shape"], math.nan),
                     "replay_cpu_ms_per_op": cpu_replay.get(item["shape"], math.nan) if by_production else
                     math.nan if match is None else cpu_replay.get(match["shape"], math.nan)})
    table = pd.DataFrame(rows)
    for side in ("production", "replay"):
        total = table[f"{side}_operations"].sum()
        table[f"{side}_share"] = table[f"{side}_operations"] / total if total > 0 else math.nan
    table["mix_error"] = table["replay_share"] - table["production_share"]
    table["cpu_error"] = table["replay_cpu_ms_per_op"] / table["production_cpu_ms_per_op"] - 1
    return ReplayFidelity(table, collection)


def _epoch(moment) -> float:
    """Seconds since the epoch of a number or an ISO 8601 time (UTC where it names no zone)."""
    if isinstance(moment, (int, float)):
        return float(moment)
    parsed = datetime.fromisoformat(str(moment).replace("Z", "+00:00"))
    return parsed.timestamp() if parsed.tzinfo else pd.Timestamp(parsed, tz="UTC").timestamp()


def window_cpu(samples: pd.DataFrame, start, end) -> float:
    """The server's mean process CPU (cores) over the FTDC samples wholly inside [start, end] (epoch seconds or ISO
    8601), weighted by their lengths; NaN where no sample lies wholly inside."""
    begin, stop = _epoch(start), _epoch(end)
    ends = (pd.to_datetime(samples["time"], utc=True) - pd.Timestamp(0, tz="UTC")) / pd.Timedelta(seconds=1)
    inside = (ends - samples["interval_s"] >= begin) & (ends <= stop) & samples["cpu_cores"].notna()
    if not inside.any():
        return math.nan
    return float(np.average(samples.loc[inside, "cpu_cores"], weights=samples.loc[inside, "interval_s"]))


def log_window(paths, start, end, out) -> Path:
    """The entries of mongod JSON logs (gzip allowed) whose time is in [start, end] (epoch seconds or ISO 8601),
    written to ``out``: a replay's log cut to one of its runs, for ``query_shapes``."""
    from capmodel.observe.shapes.entries import entry_time, log_files, open_log

    begin, stop = _epoch(start), _epoch(end)
    target = Path(out)
    with target.open("w", encoding="utf-8") as kept:
        for path in log_files([paths] if isinstance(paths, (str, Path)) else paths):
            with open_log(path) as lines:
                for line in lines:
                    try:
                        entry = json.loads(line)
                    except ValueError:
                        continue
                    when = entry_time(entry) if isinstance(entry, dict) else None
                    if when is not None and begin <= when <= stop:
                        kept.write(line)
    return target


def alone_cpu(production: QueryShapes, workload: ReplayWorkload, replay_log, samples: pd.DataFrame, windows: Mapping,
              idle, edge_s: float | None = None) -> pd.DataFrame:
    """Each replayed operation's CPU per operation, measured alone (the module's docstring).

    Parameters
    ----------
    production : QueryShapes
        The shapes the workload was written from (what makes an entry of the replay's log one of its operations).
    workload : ReplayWorkload
        The workload; its operations are named in ``windows``.
    replay_log : path or list of paths
        The log of the server the replay ran on, every operation logged.
    samples : pandas.DataFrame
        That server's FTDC samples (``observe_ftdc(...).samples``) over the windows.
    windows : mapping
        ``{operation name: (start, end)}`` (or ``{"start": ..., "end": ...}``), epoch seconds or ISO 8601: where that
        operation ran alone.
    idle : (start, end) or mapping
        A window in which nothing ran: the server's own CPU.
    edge_s : float, optional
        Narrow each window to its operation's first and last entries in it, this many seconds in from each (a window
        that also holds what came before the operation: its run's data load, its client's start).

    Returns
    -------
    pandas.DataFrame
        One row per operation measured: ``name``, ``shape`` (production's id), ``start``, ``end`` (epoch seconds),
        ``operations`` (its entries in the window), ``rate_per_s``, ``cpu_cores``, ``idle_cores``, ``cpu_ms_per_op``.
    """
    from capmodel.observe.shapes.entries import LoggedOperation, LogScan, log_files, read_log

    def bounds(window) -> tuple[float, float]:
        if isinstance(window, Mapping):
            window = (window["start"], window["end"])
        return _epoch(window[0]), _epoch(window[1])

    collection = str(workload.spec["collection"])
    ours = production.rows.set_index("shape")
    keys = {tuple(ours.loc[item["shape"], f] for f in MATCH_FIELDS): item["name"] for item in workload.replayed}
    times: dict = {name: [] for name in keys.values()}
    for path in log_files([replay_log] if isinstance(replay_log, (str, Path)) else replay_log):
        for op in read_log(path, LogScan()):
            if isinstance(op, LoggedOperation) and op.namespace.split(".", 1)[-1] == collection:
                name = keys.get((op.operation, op.filter_shape, op.sort))
                if name is not None:
                    times[name].append(op.time)
    idle_cores = window_cpu(samples, *bounds(idle))
    rows = []
    for item in workload.replayed:
        if item["name"] not in windows:
            continue
        start, end = bounds(windows[item["name"]])
        if edge_s is not None:
            inside = [t for t in times[item["name"]] if start <= t <= end]
            if len(inside) < 2:
                continue
            start, end = min(inside) + edge_s, max(inside) - edge_s
        count = sum(start <= t <= end for t in times[item["name"]])
        rate = count / (end - start) if end > start else math.nan
        cores = window_cpu(samples, start, end)
        rows.append({"name": item["name"], "shape": item["shape"], "start": start, "end": end, "operations": count,
                     "rate_per_s": rate, "cpu_cores": cores, "idle_cores": idle_cores,
                     "cpu_ms_per_op": (cores - idle_cores) / rate * 1000 if rate > 0 else math.nan})
    return pd.DataFrame(rows, columns=["name", "shape", "start", "end", "operations", "rate_per_s", "cpu_cores",
                                       "idle_cores", "cpu_ms_per_op"])
