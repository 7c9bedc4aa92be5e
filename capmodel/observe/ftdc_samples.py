"""Observe's per-interval samples of a server's FTDC, derived a block of intervals at a time (``sample_blocks``), so
that ``capmodel observe --ftdc`` writes ``samples.csv`` as it reads the files, and what FTDC adds to the intervals
of ``serverstatus.interval_columns``: the host's cores, the intervals across a clock jump, the identity in the
metadata document.

A block's intervals start at the last snapshot of the block before it, so the blocks are the rows of the whole
table, in order. The rules over the whole table are kept: the ``cores`` column is FTDC's ``systemMetrics`` figure
when any sample has one, else the metadata's ``hostInfo`` count, else absent (blocks are held back until that is
known: with no ``systemMetrics`` at all, to the end), and the clock-jump note counts every block's jumps.
"""
from __future__ import annotations

import datetime as dt

import numpy as np

from capmodel.errors import InputError
from capmodel.observe import ftdc, serverstatus
from capmodel.observe.columns import Columns

CLOCK_JUMP_MS = 2000       # the clock and the uptime may disagree by this much over one interval (NTP slews less)


class TooFewSamples(InputError):
    """The FTDC was read but holds one sample (no interval): a finding about the data, which the fleet reports as a
    server it cannot rank, not as unreadable files."""


def sample_blocks(raw_blocks, path, notes: list):
    """Observe's samples (``Columns``, one block of intervals at a time) of ``raw_blocks``: consecutive blocks of
    ``ftdc.read_metric_columns``' rows of ``serverstatus.ftdc_metrics()`` (the whole table as one block, or
    ``ftdc.metric_blocks``' blocks), in time order. The sentence on clock jumps, if any, is added to ``notes`` once
    the last block is given. ``InputError`` (``TooFewSamples`` for one) before any block when the first raw block,
    and so the table, holds fewer than two samples."""
    raw_blocks = iter(raw_blocks)
    first = next(raw_blocks, None)
    if first is None or len(first) < 2:
        from capmodel.formatting import plural

        rows = 0 if first is None else len(first)
        cut = f"; {notes[0]}" if notes else ""
        refused = TooFewSamples if rows == 1 else InputError     # none at all: nothing was read
        raise refused(f"{path}: {plural(rows, 'serverStatus sample')} in the FTDC data; an interval needs two{cut}")
    column = serverstatus.CORES_COLUMN
    held: list = []                                 # blocks given once it is known where their cores come from
    from_ftdc = False
    jumps, first_jumped = 0, None
    previous: dict | None = None                    # the last snapshot of the block before: its intervals' start
    raw, first = first, None
    while raw is not None:
        columns = {name: raw[name] if previous is None else np.concatenate((previous[name], raw[name]))
                   for name in raw.names}
        raw = None                                  # its columns are let go of as they are used
        previous = {name: values[-1:].copy() for name, values in columns.items()}   # not a view holding the block
        time_ms, uptime_ms, cores = columns.pop("time_ms"), columns["uptime_ms"], columns.pop(column, None)
        from_ftdc = from_ftdc or (cores is not None and not np.isnan(cores).all())
        block = serverstatus.interval_columns(time_ms, columns)
        jump = clock_jumps(time_ms, uptime_ms, block["dropped"])
        jumps += int(jump.sum())
        first_jumped = first_jumped or first_jump(time_ms, uptime_ms, jump)
        held.append((block, None if cores is None else cores[1:]))
        if from_ftdc:
            for block, cores in held:
                yield with_cores(block, cores if cores is not None else np.full(len(block), np.nan))
            held = []
        raw = next(raw_blocks, None)
    if held:                                        # no sample had systemMetrics' count: the metadata's, if any
        host = metadata_identity(path)["cores"]
        for block, _ in held:
            yield with_cores(block, None if host is None else np.full(len(block), host))
    notes += clock_jump_note(path, jumps, first_jumped)


def with_cores(block: Columns, cores: np.ndarray | None) -> Columns:
    """``block`` with the ``cores`` column (None: without), where ``serverstatus.interval_columns`` puts it."""
    if cores is None:
        return block
    data = {name: block[name] for name in block.names if name != "dropped"}
    data[serverstatus.CORES_COLUMN] = cores
    data["dropped"] = block["dropped"]
    return Columns(data, len(block))


def clock_jumps(time_ms, uptime_ms, dropped) -> np.ndarray:
    """Which intervals cross a move of the server's clock otherwise than its uptime (the clock set back or forward
    while it ran; their rates would be counted over the wrong span: a day's clock set back ten minutes made one
    interval of 655,000 ops/s), marked ``clock_jump`` in ``dropped`` (a restart is said as one already)."""
    if uptime_ms is None or len(time_ms) < 2:
        return np.zeros(max(len(time_ms) - 1, 0), dtype=bool)
    clock = np.diff(np.asarray(time_ms, dtype=float))
    ran = np.diff(np.asarray(uptime_ms, dtype=float))
    with np.errstate(invalid="ignore"):
        jump = (ran >= 0) & (np.abs(clock - ran) > np.maximum(CLOCK_JUMP_MS, 0.5 * ran))
    jump &= dropped != serverstatus.COUNTER_RESET
    dropped[jump] = serverstatus.CLOCK_JUMP
    return jump


def first_jump(time_ms, uptime_ms, jump: np.ndarray) -> tuple | None:
    """(its start in ms since the epoch, the uptime's ms and the clock's ms across it) of the first interval
    ``jump`` marks; None when none."""
    if not jump.any():
        return None
    at = int(np.flatnonzero(jump)[0])
    return (float(time_ms[at]), float(uptime_ms[at + 1]) - float(uptime_ms[at]),
            float(time_ms[at + 1]) - float(time_ms[at]))


def clock_jump_note(path, jumps: int, first: tuple | None) -> list[str]:
    """The sentence saying that ``jumps`` intervals crossed a clock jump, ``first`` the first (``first_jump``); []
    when none."""
    if not jumps or first is None:
        return []
    start_ms, ran, clock = first
    when = dt.datetime.fromtimestamp(start_ms / 1000.0, dt.timezone.utc)
    from capmodel.formatting import number, plural

    return [f"{path}: the server's clock moved otherwise than its uptime across {plural(jumps, 'interval')} "
            f"(the first after {when:%Y-%m-%dT%H:%M:%SZ}: the uptime ran {number(ran / 1000)} s, the clock "
            f"{number(clock / 1000)} s): the clock was set back or forward; those intervals are dropped, and "
            "samples whose times repeat earlier ones were read once"]


def metadata_identity(path) -> dict:
    """``host``, ``replica_set``, ``cores`` and the MongoDB ``version`` from the metadata document of the first FTDC
    file ``path`` names (None where it does not say)."""
    files = ftdc.ftdc_files(path)
    for _, document in ftdc.iter_documents(files[0]):
        if document.get("type") == ftdc.METADATA and isinstance(document.get("doc"), dict):
            return identity_of(document["doc"])
    return {"host": None, "replica_set": None, "cores": None, "version": None}


def identity_of(doc: dict) -> dict:
    """The identity fields of one FTDC metadata document (see ``server_identity``)."""
    system = (doc.get("hostInfo") or {}).get("system") or {}
    parsed = (doc.get("getCmdLineOpts") or {}).get("parsed") or {}
    host = system.get("hostname")
    host = host.strip() if isinstance(host, str) and host.strip() else None   # "" names no host (not ":27017")
    port = (parsed.get("net") or {}).get("port")
    if isinstance(host, str) and ":" not in host:
        host = f"{host}:{port or 27017}"
    replication = parsed.get("replication") or {}
    name = replication.get("replSetName") or replication.get("replSet")
    cores = system.get("numCores")
    version = (doc.get("buildInfo") or {}).get("version")
    return {"host": host if isinstance(host, str) else None,
            "replica_set": name.split("/")[0] if isinstance(name, str) else None,
            "cores": float(cores) if isinstance(cores, (int, float)) and cores > 0 else None,
            "version": version if isinstance(version, str) else None}
