"""What one observation produced: the per-interval samples, the curve table, and what was dropped; written as
``samples.csv`` and ``curve.csv`` (both with ``time``, UTC, ISO 8601, the end of each interval)."""
from __future__ import annotations

import datetime as dt
import itertools
import json
import os
from collections import Counter
from pathlib import Path

import numpy as np

from capmodel.csv_cells import unguard_frame
from capmodel.errors import InputError
from capmodel.extras import require
from capmodel.formatting import printable
from capmodel.observe import ftdc, serverstatus
from capmodel.observe.clients import CAPACITY_INPUTS, served_latencies
from capmodel.observe.columns import Coded, Columns, Rows, cell_text, release_free_memory
from capmodel.observe.csv_out import write_csv
from capmodel.observe.ftdc_samples import sample_blocks
from capmodel.observe.member_folders import folder_name
from capmodel.observe.tables import CURVE_INPUTS, curve_columns, curve_from_samples

TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_BLOCK = 2048                          # intervals derived and written at a time (``observe_ftdc_into``)
OBSERVE_RECORD = "observe.json"        # what wrote the folder's tables (a live recording keeps its state there too)


def _sha256(path: Path) -> str | None:
    """The file's SHA-256, read a megabyte at a time (a day's tables are tens of MB); None if it cannot be read."""
    import hashlib

    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            for piece in iter(lambda: handle.read(1 << 20), b""):
                digest.update(piece)
    except OSError:
        return None
    return digest.hexdigest()


def _written_tables(record: Path) -> dict:
    """File name -> SHA-256 of the tables an earlier ``Observation.write`` put in the folder ({} when none)."""
    try:
        tables = json.loads(record.read_text()).get("tables")
    except (OSError, ValueError, AttributeError):
        return {}
    return tables if isinstance(tables, dict) else {}


def write_tables(out_dir, tables: dict, source: str, members: list[str] | None = None) -> dict:
    """Write each table as ``<name>.csv`` into ``out_dir``, replaced whole (never half-written), under the folder's
    lock; ``observe.json`` records their SHA-256, so that a later write replaces only files an earlier one wrote (an
    existing table it did not write, a symlink or a device is refused, naming it). Returns name -> path. A table is
    a table, or a function writing one to the path it is given (a table written as it is made: when it fails, the
    folder's tables are as they were).

    The observation replaces the one before it: the earlier one's tables that this one does not write (its
    ``members.csv``, a member's folder under ``members/`` other than ``members``' folder names) are removed when
    they are as it wrote them, so that none is read later as part of this one; a changed or foreign file stays."""
    from capmodel.output_folder import FolderLock, refuse_foreign, write_atomic

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    partials = {name: out / f".{name}.csv.{os.getpid()}.partial" for name in tables}
    try:
        with FolderLock(out):
            for name, table in tables.items():
                partial = partials[name]
                if partial.is_symlink() or partial.exists():
                    partial.unlink()                  # our own leftover or a planted link: removed, never followed
                os.close(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644))
                if callable(table):
                    table(partial)
                else:
                    write_csv(table, partial, TIME_FORMAT)
            written = _retire(out, keep={f"{name}.csv" for name in tables})
            _retire_members(out, set(members or []))
            for name in tables:
                refuse_foreign(out / f"{name}.csv", lambda p: written.get(p.name) == _sha256(p))
            paths = {}
            for name, partial in partials.items():
                paths[name] = out / f"{name}.csv"
                os.replace(partial, paths[name])
            write_atomic(out / OBSERVE_RECORD, json.dumps({
                "format_version": 1, "kind": "tables", "source": source,
                "tables": {**written, **{p.name: _sha256(p) for p in paths.values()}}}, indent=1))
    except BaseException:                             # a full disk, Ctrl-C, unreadable input: no half-written file
        for partial in partials.values():
            partial.unlink(missing_ok=True)
        raise
    return paths


def _retire(out: Path, keep: set) -> dict:
    """Remove the tables ``out``'s record lists, other than ``keep``, that are as it wrote them; the record's
    remaining entries (name -> SHA-256)."""
    written = _written_tables(out / OBSERVE_RECORD)
    for name in [n for n in written if n not in keep]:
        path = out / name
        if Path(name).name == name and path.is_file() and not path.is_symlink() and _sha256(path) == written[name]:
            path.unlink()
            del written[name]
    return written


def _retire_members(out: Path, keep: set) -> None:
    """An earlier observation's member folders (``members/<host_port>``) that this one does not write: emptied of
    the tables it wrote, and removed once nothing else is in them."""
    from capmodel.output_folder import LOCK_FILE

    folder = out / "members"
    if not folder.is_dir() or folder.is_symlink():
        return
    for member in folder.iterdir():
        if member.name in keep or not member.is_dir() or member.is_symlink() \
                or not (member / OBSERVE_RECORD).is_file():
            continue
        if not _retire(member, keep=set()):        # every table it recorded is gone: its record and lock too
            for name in (OBSERVE_RECORD, LOCK_FILE):
                (member / name).unlink(missing_ok=True)
            try:
                member.rmdir()
            except OSError:                        # something else is in it: left as found
                pass
    try:
        folder.rmdir()                             # empty once the last member went
    except OSError:
        pass


class Observation:
    """A server's telemetry as ``observe_ftdc``, ``observe_uri`` and ``read_observation`` return it.

    ``samples`` holds every interval (``dropped`` naming why one is not fitted: a counter reset, no operations, a clock
    jump); ``curve`` is the curve table of the rest (concurrency from Little's law, throughput, mean latency), ready for
    ``capmodel.fit_usl``. Both are pandas DataFrames when read; the FTDC path keeps them as plain numpy ``Columns`` in
    ``tables`` until then (a command-line run never imports pandas). ``files`` names the tables it was written as;
    ``read_back``: ``tables`` hold some of their columns only (``observe_ftdc_into``), and ``samples`` and ``curve``
    are those files read back.

    Parameters
    ----------
    samples, curve : pandas.DataFrame or Columns
        The per-interval table and the curve table.
    source : str
        Where the telemetry came from, as ``summary()`` says it.
    interrupted : bool, default False
        Sampling was stopped early (every complete interval is kept).
    """

    def __init__(self, samples, curve, source: str, interrupted: bool = False):
        self.tables = {"samples": samples, "curve": curve}
        self.notes: list[str] = []
        self.files: dict = {}
        self.read_back = False
        self.source, self.interrupted = source, interrupted

    def __repr__(self) -> str:
        return (f"Observation({self.source!r}: {len(self.tables['samples']):,} intervals, "
                f"{len(self.tables['curve']):,} curve points)")

    @property
    def samples(self):
        """Every interval (a pandas DataFrame)."""
        return self._frame("samples")

    @property
    def curve(self):
        """The curve table of the usable intervals (a pandas DataFrame)."""
        return self._frame("curve")

    def _frame(self, name: str):
        table = self.tables[name]
        if self.read_back and isinstance(table, Columns):
            path = self.files[name]                                         # every column, as written
            table = self.tables[name] = read_samples(path) if name == "samples" else _read_curve(path)
        elif isinstance(table, Columns):
            table = self.tables[name] = table.frame()
        return table

    @property
    def dropped(self) -> dict:
        """Intervals left out of the curve, by reason (``counter_reset``, ``no_operations``)."""
        samples = self.tables["samples"]
        if not len(samples):
            return {}
        counts = Counter(_values(samples["dropped"]).tolist())
        reasons: Counter = Counter()
        for reason, count in counts.items():
            reasons[cell_text(reason)] += count
        return {reason: reasons[reason] for reason in sorted(reasons) if reason != ""}

    @property
    def start(self):
        """End of the first interval (a UTC datetime), or None."""
        return self._time(0)

    @property
    def end(self):
        """End of the last interval (a UTC datetime), or None."""
        return self._time(-1)

    def _time(self, row: int):
        samples = self.tables["samples"]
        if not len(samples):
            return None
        if isinstance(samples, Columns):
            ms = int(samples["time"][row].astype("datetime64[ms]").astype(np.int64))
            return _EPOCH + dt.timedelta(milliseconds=ms)
        return samples["time"].iloc[row]

    def write(self, out_dir) -> dict:
        """Write ``samples.csv`` and ``curve.csv`` into ``out_dir`` (``write_tables``: whole, owned, locked)."""
        import shutil

        tables = {name: (lambda partial, written=self.files[name]: shutil.copyfile(written, partial))
                  if self.read_back else table for name, table in self.tables.items()}
        self.files = write_tables(out_dir, tables, self.source)
        return self.files

    def summary(self) -> str:
        """A few lines: the source, the time span, intervals kept and dropped (figures by capmodel.formatting)."""
        from capmodel.formatting import integer, number

        samples, curve = self.tables["samples"], self.tables["curve"]
        lines = [f"source: {printable(self.source)}"]
        if self.start is not None:
            lines.append(f"intervals: {integer(len(samples))} ending {self.start:%Y-%m-%dT%H:%M:%SZ} to "
                         f"{self.end:%Y-%m-%dT%H:%M:%SZ}")
        lines.append(f"curve points: {integer(len(curve))}")
        lines.append(dropped_words(self.dropped))
        if len(curve):
            x, n = (np.asarray(_values(curve[name]), dtype=float) for name in ("throughput", "concurrency"))
            lines.append(f"throughput: {number(np.nanmedian(x), 4)} ops/s median, {number(np.nanmax(x), 4)} ops/s "
                         f"max; concurrency (Little's law): {number(np.nanmedian(n))} median, "
                         f"{number(np.nanmax(n))} max")
        if self.interrupted:
            lines.append("sampling was interrupted: every complete interval is kept")
        return "\n".join(lines)


def dropped_words(dropped: dict) -> str:
    """What was dropped and why, in words: '21 intervals dropped: no operations in them; 1 interval dropped: a
    counter went back (the server restarted)', or 'no interval dropped'."""
    from capmodel.formatting import plural

    said = [f"{plural(count, 'interval')} dropped: "
            f"{serverstatus.DROPPED_WORDS.get(reason, reason.replace('_', ' '))}"
            for reason, count in dropped.items() if count]
    return "; ".join(said) or "no interval dropped"


def _values(column) -> np.ndarray:
    """A column's values as a numpy array (a pandas Series' or a ``Columns``' own)."""
    return column.to_numpy() if hasattr(column, "to_numpy") else np.asarray(column)


def _observation(raw, source: str, interrupted: bool = False, own_commands: int = 0) -> Observation:
    samples = serverstatus.intervals(raw, own_commands)
    return Observation(samples, curve_from_samples(samples), source, interrupted)


def observe_ftdc(path, since=None, until=None) -> Observation:
    """Samples and curve from the FTDC files a mongod writes into ``diagnostic.data``.

    The host's cores come from the FTDC's ``systemMetrics``, else from its metadata document's ``hostInfo``.

    Parameters
    ----------
    path : str or path-like
        A ``diagnostic.data`` folder or FTDC ``metrics.*`` files.
    since, until : str or datetime, optional
        Keep only the samples in this window (ISO 8601 text, UTC unless it says otherwise).

    Returns
    -------
    Observation
        Its tables stay numpy ``Columns`` until ``samples`` or ``curve`` is read; ``notes`` says what a cut newest file
        or a clock jump left out.

    Raises
    ------
    InputError
        The files cannot be read as FTDC, or fewer than two ``serverStatus`` samples fall in the window (an interval
        needs two).

    Examples
    --------
    >>> from capmodel.observe import bundled_sample, observe_ftdc
    >>> sample = bundled_sample()
    >>> observation = observe_ftdc(sample["path"], since=sample["since"], until=sample["until"])
    >>> len(observation.samples), len(observation.curve), observation.dropped
    (67, 67, {})
    """
    require("observe", "observe_ftdc")
    notes: list[str] = []

    def whole():                                  # one block, not held here: its columns let go of once used
        yield ftdc.read_metric_columns(path, serverstatus.ftdc_metrics(), time_metric=serverstatus.FTDC_TIME,
                                       since=since, until=until, dropped=notes)

    (samples,) = sample_blocks(whole(), path, notes)
    observation = Observation(samples, curve_columns(samples), f"FTDC {path}")
    observation.notes = notes                     # a cut newest file, a clock jump: what was dropped, and where
    return observation


def observe_ftdc_into(path, out_dir, since=None, until=None) -> Observation:
    """``observe_ftdc(path, since, until).write(out_dir)``, the tables written as the files are read, a block of
    samples at a time, and held only in part: what ``capmodel observe --ftdc`` runs (a day is read in a few tens of
    MB, not the hundred its whole tables take).

    Returns
    -------
    Observation
        Its ``tables`` hold the samples' columns the operational laws and the curve read (``CAPACITY_INPUTS``,
        ``CURVE_INPUTS``) and the curve's ``throughput`` and ``concurrency``, which ``summary`` reads; ``samples``
        and ``curve`` are the written files read back (``files``). Files whose samples are not in time order (a
        sample older than one before it, other than an interim file repeating an archive's) are read whole, as
        ``observe_ftdc`` reads them, and written the same.

    Raises
    ------
    InputError
        As ``observe_ftdc``; when the files cannot be read, ``out_dir`` is left as it was.
    """
    require("observe", "observe_ftdc")
    from capmodel.observe.csv_out import CsvWriter

    notes: list[str] = []
    blocks = sample_blocks(ftdc.metric_blocks(path, serverstatus.ftdc_metrics(), time_metric=serverstatus.FTDC_TIME,
                                              since=since, until=until, dropped=notes, rows=_BLOCK), path, notes)
    held = _HeldColumns()
    kept: dict = {}
    try:
        pending = [next(blocks)]                  # too few samples, unreadable files: said before out_dir is touched

        def write_samples(partial) -> None:
            with CsvWriter(partial, TIME_FORMAT) as writer:
                for block in itertools.chain((pending.pop(),), blocks):
                    writer.write(block)
                    held.add(block)
                release_free_memory()            # what reading the files took, handed back before the columns join
                kept["samples"] = held.joined(writer.distinct)

        def write_curve(partial) -> None:                # a block of intervals at a time, too
            samples = kept["samples"]
            served_s = served_latencies(samples, np.ones(len(samples), dtype=bool))
            summary: dict = {"throughput": [], "concurrency": []}
            with CsvWriter(partial, TIME_FORMAT) as writer:
                for start in range(0, len(samples), _BLOCK):
                    curve = curve_columns(samples.part(start, start + _BLOCK), served_s)
                    writer.write(curve)
                    for name, parts in summary.items():
                        parts.append(curve[name])
            kept["curve"] = Columns({name: np.concatenate(parts) for name, parts in summary.items()})

        paths = write_tables(out_dir, {"samples": write_samples, "curve": write_curve}, f"FTDC {path}")
    except ftdc.SamplesOutOfOrder:
        observation = observe_ftdc(path, since, until)
        observation.write(out_dir)
        return observation
    release_free_memory()                        # what the tables' blocks used, handed back before the laws run
    observation = Observation(kept["samples"], kept["curve"], f"FTDC {path}")
    observation.notes, observation.files, observation.read_back = notes, paths, True
    return observation


class _HeldColumns:
    """The samples' columns the operational laws and the curve read (``CAPACITY_INPUTS``, ``CURVE_INPUTS``), gathered
    a block at a time into ``Rows`` (``time`` as ms, ``dropped`` as the index of its word: every column a float),
    and given back as one ``Columns``: a day's intervals held once, in a few large blocks of memory."""

    WORDS = ("", serverstatus.COUNTER_RESET, serverstatus.NO_OPERATIONS, serverstatus.CLOCK_JUMP)

    def __init__(self):
        self.names: list[str] = []
        self.rows: Rows | None = None

    def add(self, block: Columns) -> None:
        if self.rows is None:
            self.names = [name for name in dict.fromkeys((*CURVE_INPUTS, *CAPACITY_INPUTS)) if name in block]
            self.rows = Rows(len(self.names))
        columns = []
        for name in self.names:
            values = block[name]
            if name == "time":
                values = values.view(np.int64).astype(float)
            elif name == "dropped":
                values = np.select([values == word for word in self.WORDS], range(len(self.WORDS)), np.nan)
            columns.append(values)
        self.rows.append(columns, np.ones(len(block), dtype=bool))

    def joined(self, distinct=lambda name: None) -> Columns:
        """The columns, each made whole and narrowed in turn: a column of one value (a standalone's replication)
        held once, one of a few thousand rates or latencies ``Coded`` (``distinct(name)``: its distinct values when
        known, ``CsvWriter.distinct``)."""
        assert self.rows is not None, "a block was added"
        data: dict = {}
        for index, name in enumerate(self.names):
            values = self.rows.column(index)
            if name == "time":
                data[name] = values.astype(np.int64).view("datetime64[ms]")
            elif name == "dropped":
                data[name] = np.array(self.WORDS, dtype=object)[values.astype(np.int64)]
            elif np.isnan(values).all() or (values == values[0]).all():
                data[name] = np.broadcast_to(values[:1].copy(), values.shape)
            else:
                data[name] = Coded.of(values, distinct(name))
            del values
        self.rows = None                         # the segments let go of
        return Columns(data)


def observe_uri(uri: str, interval: float = 1.0, duration: float = 600.0, on_row=None,
                should_stop=None) -> Observation:
    """Samples and curve from live ``serverStatus`` sampling of a running server (read-only).

    Parameters
    ----------
    uri : str
        A MongoDB connection string (it needs ``pymongo``; the ``observe`` answer shows it with the password removed).
    interval : float, default 1.0
        Seconds between samples (> 0).
    duration : float, default 600.0
        Seconds to sample for: ``duration / interval`` intervals.
    on_row : callable, optional
        Called with each raw ``serverStatus`` figure row as it is taken (a progress display).
    should_stop : callable, optional
        Checked between samples; returning True stops sampling early (``interrupted`` then says so).

    Returns
    -------
    Observation

    Raises
    ------
    InputError
        ``interval`` is not > 0 or ``duration`` is shorter than one interval.
    ServerError
        The server cannot be reached.
    """
    require("observe", "observe_uri")
    from capmodel.observe import sampler

    raw, interrupted = sampler.sample_server(uri, interval, duration, on_row=on_row, should_stop=should_stop)
    return _observation(raw, sampler.redact_uri(uri), interrupted, own_commands=1)   # its own serverStatus


def refuse_several_members(samples, folder, option: str, repeatable: bool = False) -> None:
    """An ``InputError`` when ``samples`` (a ``samples.csv``) holds several replica-set members' intervals (its
    ``member`` column, as ``observe`` writes for a replica set): one server's laws cannot be fitted to them. The
    message names each member's own folder to give to ``option`` instead."""
    if "member" not in samples:
        return
    hosts = sorted({str(h) for h in samples["member"].dropna().unique()})
    if len(hosts) < 2:
        return
    folders = ", ".join(str(Path(folder) / "members" / folder_name(h)) for h in hosts)
    raise InputError(f"{folder}: samples.csv holds {len(hosts)} replica-set members' intervals ({', '.join(hosts)}); "
                     f"{option} takes one member's folder" + (" (repeat it for each)" if repeatable else "")
                     + f": {folders}")


def read_observation(folder) -> Observation:
    """Read back a folder written by ``capmodel observe --out``, without sampling again.

    Parameters
    ----------
    folder : str or path-like
        The folder holding ``samples.csv``; the curve is derived from the samples as ``observe`` derived its
        ``curve.csv``.

    Returns
    -------
    Observation

    Raises
    ------
    InputError
        No ``samples.csv`` in the folder, it cannot be read as CSV or lacks the ``time`` and ``interval_s`` columns, or
        it holds several replica-set members' intervals (give one member's folder).
    """

    folder = Path(folder)
    path = folder / "samples.csv"
    if not path.is_file():
        raise InputError(f"{folder}: no samples.csv here (expected a folder written by 'capmodel observe --out')")
    samples = read_samples(path)
    if "time" not in samples or "interval_s" not in samples:
        raise InputError(f"{path}: no 'time'/'interval_s' columns: not the samples.csv of 'capmodel observe'")
    refuse_several_members(samples, folder, "-p observed")
    return Observation(samples, curve_from_samples(samples), f"the observe folder {folder.name}")


def read_samples(path, max_bytes: int | None = None):
    """A ``samples.csv`` as ``capmodel observe`` wrote it, read back: ``time`` as UTC timestamps (unreadable cells
    NaT), ``dropped`` as text ("" where nothing was dropped), the text cells observe guarded unguarded. The one
    reader of the file: ``read_observation``, a resumed recording and ``capmodel mva --observed`` call it.
    ``max_bytes`` refuses a larger file before reading it (and reads it as UTF-8 text, naming the byte offset of
    binary content). ``InputError`` naming the file when it cannot be read as CSV; the callers check the columns they
    need."""
    import io

    import pandas as pd

    from capmodel.data.structured import read_text

    source = io.StringIO(read_text(path, max_bytes)) if max_bytes else path
    try:
        samples = unguard_frame(pd.read_csv(source, keep_default_na=True))
    except (ValueError, OSError) as exc:
        raise InputError(f"{path}: cannot be read as CSV ({str(exc).splitlines()[0][:100]})") from None
    if "time" in samples:
        samples["time"] = pd.to_datetime(samples["time"], utc=True, format="ISO8601", errors="coerce")
    samples["dropped"] = samples["dropped"].astype(object).fillna("").astype(str) if "dropped" in samples else ""
    return samples


def _read_curve(path):
    """A ``curve.csv`` as ``Observation.write`` wrote it, read back (``time`` as UTC timestamps)."""
    import pandas as pd

    curve = unguard_frame(pd.read_csv(path))
    curve["time"] = pd.to_datetime(curve["time"], utc=True, format="ISO8601")
    return curve


def bundled_sample() -> dict:
    """The bundled FTDC sample (``data/ftdc_sample``, made by ``scripts/make_ftdc_sample.py``).

    Returns
    -------
    dict
        ``path``, the ``diagnostic.data`` folder; ``since`` and ``until``, the load window; and how it was made (from
        its ``sample.json``: the workload, the mongod version, the server's and the clients' CPUs, the steps).

    Examples
    --------
    >>> from capmodel.observe import bundled_sample
    >>> sample = bundled_sample()
    >>> sample["path"].name, sample["cores"]
    ('diagnostic.data', 1)
    """
    from capmodel._bundled import bundled_dir

    folder = bundled_dir("data") / "ftdc_sample"
    info = json.loads((folder / "sample.json").read_text())
    return {**info, "path": folder / "diagnostic.data"}
