"""Each shape's CPU per operation: from ``cpuNanos`` where the server logs it, else from the server's CPU over the
same intervals (FTDC or serverStatus samples), by the mix what-if's regression with the shapes as its classes.

The intervals: the shapes' per-interval counts (``QueryShapes.per_interval``, intervals of ``interval_s`` seconds in
which every operation was eligible for the log) and the process CPU of the ``capmodel observe`` samples, over the same
seconds: each CPU sample's own window where the log's intervals are at most half as long (the counts spread evenly
over each log interval), else each log interval with the samples' CPU in proportion to their overlap with it. A
window is kept where it lies wholly inside a part of the log's window with slowms 0 (and, for a log interval, the
samples cover at least ``MIN_COVER`` of it); a shape that did not run in it counts 0 there.

The fit (``capmodel.models.mix.production.cpu_demands``): the process CPU less what the shapes with ``cpuNanos`` take
(their logged mean) is regressed, non-negatively, on the other shapes' rates with a background term. A shape with under
``MINOR_SHARE`` of the operations (health checks, a driver's own commands, a createIndexes) cannot be told from the
background: its CPU stays there and it has no figure of its own (nor a place in the what-if, which keeps the
background as observed). The fitted figures are a
``capmodel.models.mix.production.ServerDemands`` whose classes are the shapes' ids, so that its utilization, its
latency split and ``predict_demands`` serve the what-if unchanged.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from capmodel.errors import InputError
from capmodel.formatting import number, plural
from capmodel.models.evidence import Reason
from capmodel.models.mix.intervals import REPLICATION_RATE
from capmodel.models.mix.production import MINOR_SHARE, SERVER_CORES, ServerDemands, cpu_demands
from capmodel.models.mix.served_latency import MIN_INTERVALS
from capmodel.models.queueing.open_networks import stretch as mmc_stretch
from capmodel.observe.shapes.result import RESOLUTION_MS, QueryShapes

MIN_COVER = 0.8        # the share of an interval the CPU samples must cover


def shape_intervals(shapes: QueryShapes, samples: pd.DataFrame) -> pd.DataFrame:
    """One row per usable interval: ``start`` and ``seconds`` (epoch s, length), ``<shape id>_per_s`` for every
    shape, ``cpu_cores``.

    The intervals are the CPU samples themselves where the log's intervals are at most half as long (each shape's
    operations counted over each sample's own window), else the log's intervals with the CPU of the samples
    overlapping each, in proportion to the overlap: a rate and a CPU figure always describe the same seconds. Only
    intervals wholly inside a part of the log with every operation eligible, and at least ``MIN_COVER`` covered by
    samples, are kept."""
    for column in ("time", "interval_s", "cpu_cores"):
        if column not in samples:
            raise InputError(f"the CPU samples have no {column!r} column (capmodel observe's samples.csv has it)")
    rates = shapes.per_interval()            # refused where no intervals were counted
    width = float(shapes.interval_s or 0)
    end = ((pd.to_datetime(samples["time"], utc=True) - pd.Timestamp(0, tz="UTC")) / pd.Timedelta(seconds=1)).to_numpy(
        float)
    seconds = pd.to_numeric(samples["interval_s"], errors="coerce").to_numpy(float)
    cpu = pd.to_numeric(samples["cpu_cores"], errors="coerce").to_numpy(float)
    ok = np.isfinite(end) & np.isfinite(seconds) & (seconds > 0) & np.isfinite(cpu)
    if "dropped" in samples:
        ok &= samples["dropped"].astype(object).fillna("").astype(str).eq("").to_numpy()
    end, seconds, cpu = end[ok], seconds[ok], cpu[ok]
    if len(seconds) and 2 * width <= float(np.median(seconds)):
        starts, stops, cpu_cores = end - seconds, end, cpu
    else:
        starts, stops, cpu_cores = _cpu_per_slot(end - seconds, end, cpu, width)
    spans = [(s.start, s.end) for s in shapes.coverage.segments if s.complete]
    inside = np.array([any(a <= t and u <= b for a, b in spans) for t, u in zip(starts, stops)], dtype=bool)
    starts, stops, cpu_cores = starts[inside], stops[inside], cpu_cores[inside]
    out = pd.DataFrame({"start": starts, "seconds": stops - starts})
    slots = np.rint(rates.index.to_numpy(float) / width).astype(np.int64)
    for sid in shapes.ids:
        counts = rates[sid].to_numpy(float) * width if sid in rates else np.zeros(len(slots))
        out[f"{sid}_per_s"] = (_operations_before(slots, counts, stops / width)
                               - _operations_before(slots, counts, starts / width)) / (stops - starts)
    out["cpu_cores"] = cpu_cores
    out[REPLICATION_RATE] = 0.0           # the column ``cpu_residuals`` reads for work that is not a class: none
    return out


def _operations_before(slots: np.ndarray, counts: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Operations counted before each time ``at`` (in units of the log's intervals), the ``counts`` of the intervals
    numbered ``slots`` (ascending) spread evenly over each: the piecewise-linear cumulative count."""
    edges = np.union1d(slots, slots + 1)
    done = np.concatenate([[0.0], np.cumsum(counts)])[np.searchsorted(slots, edges, side="left")]
    return np.interp(at, edges, done, left=0.0, right=float(done[-1]) if len(done) else 0.0)


def _cpu_per_slot(begin, end, cpu, width: float):
    """The log's intervals of ``width`` seconds that the CPU samples ([begin, end], cores) cover at least
    ``MIN_COVER``: their starts, stops and CPU (cores), each sample counted in proportion to its overlap."""
    busy: dict[int, float] = {}
    covered: dict[int, float] = {}
    for a, b, c in zip(begin, end, cpu):
        slot = int(np.floor(a / width))
        while slot * width < b:
            overlap = min(b, (slot + 1) * width) - max(a, slot * width)
            if overlap > 0:
                busy[slot] = busy.get(slot, 0.0) + c * overlap
                covered[slot] = covered.get(slot, 0.0) + overlap
            slot += 1
    kept = sorted(k for k, v in covered.items() if v >= MIN_COVER * width)
    starts = np.array(kept, float) * width
    return starts, starts + width, np.array([busy[k] / covered[k] for k in kept], float)


def fit_shape_demands(shapes: QueryShapes, samples: pd.DataFrame, cores, table: pd.DataFrame | None = None,
                      member: str = "server") -> ServerDemands:
    """Each shape's CPU per operation and the split of its latency, over the intervals the log and the CPU share.

    Parameters
    ----------
    shapes : QueryShapes
        The log's shapes (``query_shapes``).
    samples : pandas.DataFrame
        ``capmodel observe``'s per-interval samples over the same time (``time``, ``interval_s``, ``cpu_cores``).
    cores : int
        The processors the mongod may use.
    table : pandas.DataFrame, optional
        The intervals (``shape_intervals``) when already built (a bootstrap's resample of them).
    member : str, default "server"
        The name messages give the server.

    Returns
    -------
    ServerDemands
        Its classes are the shape ids that ran in the intervals.

    Raises
    ------
    InputError
        Fewer than MIN_INTERVALS shared intervals, or ``cores`` out of range.
    """
    cores = SERVER_CORES.check(cores, InputError)
    table = shape_intervals(shapes, samples) if table is None else table
    if len(table) < MIN_INTERVALS:
        length = float(table["seconds"].median()) if len(table) else float(shapes.interval_s or 0)
        raise InputError(f"{plural(len(table), 'interval')} of {number(length)} s where the log saw every "
                         f"operation and the CPU samples cover it; the demand fit needs at least {MIN_INTERVALS} "
                         "(do the log and the FTDC cover the same time?)")
    rows = shapes.rows.set_index("shape")
    ran = {sid: float(table[f"{sid}_per_s"].mean()) for sid in shapes.ids if table[f"{sid}_per_s"].mean() > 0}
    # a shape with a few operations (health checks, the driver's own commands, a createIndexes) cannot be told from
    # the background: its CPU stays in the background, it gets no figure of its own
    ids = [sid for sid, rate in ran.items() if rate >= MINOR_SHARE * sum(ran.values())]
    x = table[[f"{sid}_per_s" for sid in ids]].to_numpy(float)
    cpu = table["cpu_cores"].to_numpy(float)
    logged = {sid: float(rows.loc[sid, "cpu_ms_per_op"]) / 1000.0 for sid in ids
              if np.isfinite(rows.loc[sid, "cpu_ms_per_op"])}
    latency = np.array([float(rows.loc[sid, "latency_mean_ms"]) / 1000.0 for sid in ids])
    free = [j for j, sid in enumerate(ids) if sid not in logged]
    known = np.array([logged.get(sid, 0.0) for sid in ids])
    reasons: list = []
    unresolved = [sid for sid in ids if rows.loc[sid, "latency_p99_ms"] < RESOLUTION_MS]
    if unresolved:
        reasons.append(Reason("latency_below_resolution", "weak", (
            f"{member}: the log's durations are whole milliseconds and {plural(len(unresolved), 'shape')} ("
            f"{', '.join(unresolved[:4])}{', ...' if len(unresolved) > 4 else ''}) ran under 1 ms: their latency is "
            "the log's rounded-down mean, a lower bound")))
    d = known.copy()
    background = max(float(np.mean(cpu - x @ known)), 0.0)
    if free:
        xf = x[:, free]
        mean_x = xf.mean(axis=0)
        minor = mean_x < MINOR_SHARE * mean_x.sum()
        r = np.tile(latency[free], (len(table), 1))
        background, d_free, _ = cpu_demands(xf, cpu - x @ known, r, minor, [ids[j] for j in free], member, reasons)
        d[free] = d_free
    u = float(np.clip(cpu.mean() / cores, 0.0, 0.999))
    stretch = float(mmc_stretch(np.array([u]), np.array([float(cores)]))[0])
    inside = {sid: float(min(d[j], latency[j] / stretch)) for j, sid in enumerate(ids)}
    fixed = {sid: float(latency[j] - inside[sid] * stretch) for j, sid in enumerate(ids)}
    reasons.append(Reason("latency_split_assumed", "weak", (
        f"{member}: the log's latencies are mean whole milliseconds per shape, not per interval, so the part of each "
        "shape's latency that grows with CPU contention is assumed (at most its CPU time), not measured")))
    return ServerDemands(member, cores, tuple(ids), {sid: float(d[j]) for j, sid in enumerate(ids)},
                         float(background), fixed, inside, {sid: float(x[:, j].mean()) for j, sid in enumerate(ids)},
                         len(table), tuple(reasons))
