"""Read MongoDB's full-time diagnostic data capture (FTDC): the ``diagnostic.data`` files every mongod writes.

The layout, as MongoDB's own source describes it (mongodb/mongo, ``src/mongo/db/ftdc/README.md``, with the reading
side in ``decompressor.cpp``, the metric extraction in ``util.cpp`` and the integer coding in ``varint.h``):

- A file (``metrics.<UTC date>-NNNNN`` archives, rotated by size and on restart, and ``metrics.interim``, rewritten
  with the newest samples that have not reached an archive yet) is a plain sequence of BSON documents
  ``{_id: Date, type: int, ...}``. ``type`` 0 is metadata (``doc``: buildInfo, getCmdLineOpts, hostInfo), 2 a
  periodic-metadata delta (``doc``), and 1 a metric chunk whose ``data`` (BinData) holds the samples.
- A chunk's ``data`` is a little-endian uint32 (the uncompressed length) followed by a zlib stream. Uncompressed:
  a BSON reference document (the first sample, e.g. ``{start, serverStatus: {...}, systemMetrics: {...}, end}``),
  uint32 metric count M, uint32 sample count S, then M x S deltas, metric by metric.
- Metrics are the reference document's fields of type double, int32, int64, decimal128, bool, Date (milliseconds)
  and Timestamp (two metrics: seconds, then increment), in document order, descending into objects and arrays; all are
  cast to 64-bit integers (doubles truncated). Strings and other types carry no metric.
- Each delta is the difference to the previous sample of the same metric (the first to the reference document's
  value), unsigned 64-bit with wrap-around. The deltas are written as unsigned LEB128 varints, and a run of zeros as
  the pair (0, k): one zero followed by k more.

Decoding here streams a file document by document, walks each reference document's raw BSON (``ftdc_bson``, with a
cache of sub-document layouts), reads the varints and zero runs with numpy (``varint``) and rebuilds only the metrics
asked for. Samples from several files are joined by time and duplicates (an interim file repeating an archive)
dropped. MongoDB's own limits are kept (``decompressor.cpp``: at most 10,000,000 bytes uncompressed and metrics x
deltas at most 1,000,000; ``util.cpp``: nesting at most 10 deep), every size is checked before it is allocated, and a
file that is truncated, corrupt, empty or not FTDC at all raises ``InputError`` naming the file and the byte offset of
the document at fault (and, inside a chunk, the byte of the uncompressed chunk).
"""
from __future__ import annotations

import datetime as dt
import math
import os
import struct
import zlib
from pathlib import Path

import numpy as np

from capmodel.errors import InputError
from capmodel.observe.columns import Columns, Rows
from capmodel.observe.ftdc_bson import BadDocument, LayoutCache, read_layout, value_at
from capmodel.observe.varint import DeltaStream

__all__ = ["Chunk", "TruncatedTail", "date_offsets", "decode_chunk", "ftdc_files", "inflate", "iter_chunks",
           "iter_documents", "metric_blocks", "metric_names", "read_metric_columns", "read_metrics",
           "SamplesOutOfOrder"]

METADATA, METRIC_CHUNK, PERIODIC_METADATA = 0, 1, 2
TYPES = {METADATA: "metadata", METRIC_CHUNK: "metric chunk", PERIODIC_METADATA: "periodic metadata"}
INTERIM_NAME = "metrics.interim"
MAX_UNCOMPRESSED = 10_000_000    # decompressor.cpp: "Metrics chunk has exceeded the allowable size."
MAX_DELTAS = 1_000_000           # decompressor.cpp: metricsCount * sampleCount > 1000000 is refused
MAX_DOCUMENT = 16 * 1024 * 1024 + 16 * 1024     # BSONObjMaxInternalSize: the largest document mongod writes
_PIECE = 1 << 16                 # bytes of a zlib stream inflated at a time
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_HEADER = b"\x09_id\x00"      # every FTDC document opens with its _id, a BSON date (type 9)


class Chunk:
    """One decoded metric chunk: its layout (metric names and where their reference values sit), and its checked delta
    stream, from which any metric's samples are rebuilt on demand."""

    def __init__(self, raw: bytes, layout, stream: DeltaStream | None, n_deltas: int, source: str, offset: int):
        self.raw, self.layout, self.stream, self.n_deltas = raw, layout, stream, n_deltas
        self.source, self.offset = source, offset

    @property
    def samples(self) -> int:
        """Samples in the chunk, the reference document included."""
        return self.n_deltas + 1

    @property
    def names(self) -> list[str]:
        """Every metric name, in file order."""
        return [name for name, _, _ in self.layout.entries()]

    @property
    def reference(self) -> np.ndarray:
        """The reference document's value of every metric (uint64)."""
        return np.array([value_at(self.raw, coding, at) for _, coding, at in self.layout.entries()], dtype=np.uint64)

    @property
    def deltas(self) -> np.ndarray:
        """Every metric's deltas, shape (metrics, samples - 1), uint64."""
        if self.stream is None:
            return np.zeros((self.layout.count, 0), dtype=np.uint64)
        return self.stream.rows(np.arange(self.layout.count))

    def columns(self, names) -> dict:
        """name -> every sample's value (int64) for each of ``names`` the chunk carries (the others are left out)."""
        found = {name: self.layout.locate(name) for name in names}
        found = {name: hit for name, hit in found.items() if hit is not None}
        if not found:
            return {}
        out = np.empty((len(found), self.samples), dtype=np.uint64)
        out[:, 0] = [value_at(self.raw, coding, at) for _, coding, at in found.values()]
        if self.n_deltas and self.stream is not None:   # deltas come with their stream
            np.cumsum(self.stream.rows([index for index, _, _ in found.values()]), axis=1, out=out[:, 1:])
            out[:, 1:] += out[:, :1]           # unsigned wrap-around, as the writer computed the deltas
        values = out.view(np.int64)
        return {name: values[i] for i, name in enumerate(found)}

    def values(self, name: str) -> np.ndarray | None:
        """Every sample's value of one metric (int64), or None when the chunk does not carry it."""
        return self.columns([name]).get(name)


def metric_names(reference: bytes, cache: LayoutCache | None = None) -> tuple[list[str], np.ndarray]:
    """Dotted metric names (``serverStatus.opcounters.insert``) and values (uint64) of a raw BSON reference document
    (``cache``: a ``LayoutCache`` kept across chunks)."""
    (size,) = struct.unpack_from("<i", reference, 0)
    entries = read_layout(reference, size, MAX_DELTAS, cache).entries()
    return [name for name, _, _ in entries], np.array([value_at(reference, c, at) for _, c, at in entries],
                                                      dtype=np.uint64)


def date_offsets(reference: bytes) -> list[int]:
    """Byte offsets of every Date value in a raw BSON reference document (to re-time a chunk)."""
    from capmodel.observe.ftdc_bson import DATE

    layout = read_layout(reference, struct.unpack_from("<i", reference, 0)[0], MAX_DELTAS)
    return [at for _, coding, at in layout.entries() if coding == DATE]


def inflate(data: bytes, limit: int = MAX_UNCOMPRESSED) -> bytes:
    """A chunk's ``data`` (uncompressed length, then a zlib stream) uncompressed, never past the length it declares
    nor past ``limit``; ValueError otherwise."""
    if len(data) < 5:
        raise ValueError(f"{len(data)} bytes of data")
    (length,) = struct.unpack_from("<I", data, 0)
    if length > limit:
        raise ValueError(f"uncompressed length {length:,} exceeds the {limit:,} bytes MongoDB allows")
    inflater, view = zlib.decompressobj(), memoryview(data)[4:]
    pieces, inflated = [], 0
    try:
        for start in range(0, len(view), _PIECE):        # fed in pieces: nothing is copied in proportion to a bomb
            piece = inflater.decompress(view[start:start + _PIECE], length + 1 - inflated)
            pieces.append(piece)
            inflated += len(piece)
            if inflated > length or inflater.unconsumed_tail:
                raise ValueError(f"the zlib stream inflates past the {length:,} bytes the header declares")
            if inflater.eof:
                break
    except zlib.error as exc:
        raise ValueError(f"zlib: {exc}") from None
    raw = b"".join(pieces)
    if not inflater.eof:
        raise ValueError(f"the zlib stream ends early: {len(raw):,} of {length:,} bytes")
    if len(raw) != length:
        raise ValueError(f"{len(raw):,} bytes uncompressed, the header says {length:,}")
    return raw


def decode_chunk(data: bytes, source: str = "<chunk>", offset: int = 0, cache: LayoutCache | None = None) -> Chunk:
    """One chunk's ``data`` field (uncompressed length, then the zlib stream), checked: the layout of its reference
    document and its delta stream (``cache``: a ``LayoutCache`` kept across chunks)."""
    def bad(reason: str, at: int | None = None) -> InputError:
        where = f" (byte {at:,} of the uncompressed chunk)" if at is not None else ""
        return InputError(f"{source}: corrupt FTDC metric chunk at byte offset {offset}: {reason}{where}")

    try:
        raw = inflate(data)
    except ValueError as exc:
        raise bad(str(exc)) from None
    if len(raw) < 13:
        raise bad(f"{len(raw)} bytes uncompressed, too few for a reference document and the counts")
    (ref_size,) = struct.unpack_from("<i", raw, 0)
    if not 5 <= ref_size <= len(raw) - 8 or raw[ref_size - 1] != 0:
        raise bad(f"the reference document declares {ref_size:,} bytes in {len(raw):,}", 0)
    n_metrics, n_deltas = struct.unpack_from("<II", raw, ref_size)
    if n_metrics * max(n_deltas, 1) > MAX_DELTAS:
        raise bad(f"{n_metrics:,} metrics x {n_deltas:,} deltas exceeds the {MAX_DELTAS:,} MongoDB's reader "
                  "allows (decompressor.cpp)", ref_size)
    try:
        layout = read_layout(raw, ref_size, n_metrics, cache)
    except BadDocument as exc:
        raise bad(f"reference document: {exc}", exc.at) from None
    if layout.count != n_metrics:
        raise bad(f"the reference document has {layout.count:,} metrics, the header says {n_metrics:,}", ref_size)
    stream = None
    if n_deltas:
        try:
            stream = DeltaStream(np.frombuffer(raw, dtype=np.uint8, offset=ref_size + 8), n_metrics, n_deltas)
        except ValueError as exc:
            raise bad(str(exc), ref_size + 8) from None
    return Chunk(raw, layout, stream, n_deltas, source, offset)


def _top_fields(blob: bytes, path, offset: int) -> dict:
    """_id (ms), type, and data (a metric chunk's bytes) or doc (metadata, decoded) of one FTDC document."""
    out: dict = {}
    unpack = struct.unpack_from
    end, pos = len(blob) - 1, 4
    try:
        while pos < end:
            kind = blob[pos]
            key_end = blob.index(b"\x00", pos + 1, end)
            key = blob[pos + 1:key_end]
            pos = key_end + 1
            shown = key.decode("utf-8", "replace")
            if kind in (0x01, 0x09, 0x12, 0x11):
                value = unpack("<d" if kind == 0x01 else "<q", blob, pos)[0]
                width = 8
            elif kind == 0x10:
                value, width = unpack("<i", blob, pos)[0], 4
            elif kind == 0x08:
                value, width = blob[pos], 1
            elif kind in (0x02, 0x0D, 0x0E):
                value, width = None, 4 + unpack("<i", blob, pos)[0]
            elif kind in (0x03, 0x04):
                value, width = None, unpack("<i", blob, pos)[0]
            elif kind == 0x05:
                width = 5 + unpack("<i", blob, pos)[0]
                value = blob[pos + 5:pos + width]
            elif kind == 0x07:
                value, width = None, 12
            elif kind in (0x06, 0x0A, 0x7F, 0xFF):
                value, width = None, 0
            else:
                raise ValueError(f"unknown BSON type 0x{kind:02x} at field {shown!r}")
            if width < 0 or pos + width > end:
                raise ValueError(f"field {shown!r} runs past the end of the document")
            if key == b"_id" and kind == 0x09:
                out["_id"] = value
            elif key == b"type" and kind in (0x01, 0x10, 0x12):
                out["type"] = value
            elif key == b"data" and kind == 0x05:
                out["data"] = value
            elif key == b"doc" and kind == 0x03:
                out["doc"] = (pos, pos + width)
            pos += width
    except (ValueError, struct.error) as exc:
        raise InputError(f"{path}: corrupt FTDC file: invalid BSON at byte offset {offset} ({exc})") from None
    if "_id" not in out or "type" not in out:
        raise InputError(f"{path}: corrupt FTDC file: the document at byte offset {offset} has no FTDC _id/type")
    if out["type"] not in TYPES:
        raise InputError(f"{path}: unknown FTDC document type {out['type']!r} at byte offset {offset} (MongoDB writes "
                         "0: metadata, 1: metric chunk, 2: periodic metadata)")
    out["type"] = int(out["type"])
    if "doc" in out:
        import bson

        start, stop = out["doc"]
        try:
            out["doc"] = bson.decode(blob[start:stop])
        except Exception as exc:   # bson's own errors, RecursionError on absurd nesting
            raise InputError(f"{path}: corrupt FTDC file: the {TYPES[out['type']]} document at byte offset {offset} "
                             f"is not valid BSON ({type(exc).__name__})") from None
    return out


class TruncatedTail(InputError):
    """A file that ends inside a document (mongod stopped while writing it): ``path`` and the document's ``offset``."""
    def __init__(self, message: str, path, offset: int):
        super().__init__(message)
        self.path, self.offset = path, offset


def iter_documents(path: Path):
    """(byte offset, document) for every BSON document of one FTDC file, read one at a time and checked: each
    document a dict with ``_id`` (ms since the epoch), ``type``, and ``data`` (a chunk's bytes) or ``doc``."""
    with open(path, "rb") as handle:
        total = os.fstat(handle.fileno()).st_size
        if not total:
            raise InputError(f"{path}: empty file (0 bytes), no FTDC documents at byte offset 0")
        offset = 0
        while True:
            head = handle.read(9)
            if not head:
                return
            what = "not an FTDC file" if offset == 0 else "corrupt FTDC file"
            if len(head) < 5:
                raise TruncatedTail(f"{path}: truncated FTDC file: {len(head)} stray bytes at byte offset {offset}",
                                    path, offset)
            (size,) = struct.unpack_from("<i", head, 0)
            if size < 5 or head[4:9] != _HEADER[:len(head) - 4]:
                raise InputError(f"{path}: {what}: no FTDC document (BSON starting with an _id date) at byte offset "
                                 f"{offset}")
            if offset + size > total:
                raise TruncatedTail(f"{path}: truncated FTDC file: the document at byte offset {offset} declares "
                                    f"{size} bytes, {total - offset} remain", path, offset)
            if size > MAX_DOCUMENT:
                raise InputError(f"{path}: {what}: the document at byte offset {offset} declares {size:,} bytes, "
                                 f"more than the {MAX_DOCUMENT:,} of MongoDB's largest document")
            blob = head + handle.read(size - len(head))
            if len(blob) != size or blob[-1] != 0:
                raise InputError(f"{path}: {what}: invalid BSON at byte offset {offset} (no closing NUL)")
            yield offset, _top_fields(blob, path, offset)
            offset += size


def iter_chunks(path: Path, cache: LayoutCache | None = None):
    """Every metric chunk of one file, decoded (``cache``: a ``LayoutCache`` kept across chunks)."""
    for offset, document in iter_documents(path):
        if document["type"] == METRIC_CHUNK:
            data = document.get("data")
            if data is None:
                raise InputError(f"{path}: corrupt FTDC file: the metric chunk at byte offset {offset} has no data")
            yield decode_chunk(data, str(path), offset, cache)


def _chunk_columns(file: Path, cache, wanted: list, time_metric: str):
    """(the ``wanted`` columns found, the times) of each chunk of ``file`` that has ``time_metric``."""
    for chunk in iter_chunks(file, cache):
        found = chunk.columns(wanted)
        del chunk                                  # the next chunk is decoded without this one held
        if found.get(time_metric) is not None:
            yield found, found[time_metric]


# ------------------------------------------------------------------------------------------------------------- files
def ftdc_files(path) -> list[Path]:
    """The FTDC files a path names: a file itself, or a ``diagnostic.data`` folder's archives (oldest first) and its
    interim file (last). An empty interim file in a folder (written at the next sample) is left out."""
    path = Path(path).expanduser()
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise InputError(f"--ftdc {path}: no such file or directory")
    archives = sorted(p for p in path.glob("metrics.*") if p.is_file() and p.name != INTERIM_NAME
                      and not p.name.endswith(".temp"))
    interim = path / INTERIM_NAME
    files = archives + ([interim] if interim.is_file() and interim.stat().st_size > 0 else [])
    if not files:
        raise InputError(f"--ftdc {path}: no FTDC files (metrics.*) in this folder")
    return files


def _to_ms(value) -> int | None:
    """Milliseconds since the epoch of a time (naive means UTC): a ``datetime`` directly, anything else as
    ``pandas.Timestamp`` reads it."""
    if value is None:
        return None
    if isinstance(value, dt.datetime) and not hasattr(value, "nanosecond"):       # pandas' Timestamp has ns
        aware = value if value.tzinfo is not None else value.replace(tzinfo=dt.timezone.utc)
        return (aware - _EPOCH) // dt.timedelta(milliseconds=1)
    import pandas as pd

    stamp = pd.Timestamp(value)
    stamp = stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
    return int(stamp.value // 1_000_000)


def _iso(ms: float) -> str:
    return (_EPOCH + dt.timedelta(milliseconds=ms)).isoformat()


def read_metrics(path, metrics: dict, time_metric: str = "start", since=None, until=None):
    """``read_metric_columns`` as a pandas DataFrame."""
    return read_metric_columns(path, metrics, time_metric, since, until).frame()


def _windowed_pieces(path, names: list, time_metric: str, since, until, dropped: list | None):
    """(times, name -> values or None, the rows in ``since <= time <= until``) of every chunk of ``path``'s files
    that has ``time_metric`` and a row in the window, in file order, each chunk let go of once its columns are copied
    out. The newest file cut inside a document: see ``read_metric_columns``. No row in a window the files do not
    reach: ``InputError`` naming what they cover."""
    low, high = _to_ms(since), _to_ms(until)
    wanted = [time_metric, *dict.fromkeys(names)]
    cache = LayoutCache()
    covered, any_kept = [math.inf, -math.inf], False
    files = ftdc_files(path)
    for file in files:
        try:
            for found, stamps in _chunk_columns(file, cache, wanted, time_metric):
                covered = [min(covered[0], int(stamps.min())), max(covered[1], int(stamps.max()))]
                keep = np.ones(stamps.size, dtype=bool)
                if low is not None:
                    keep &= stamps >= low
                if high is not None:
                    keep &= stamps <= high
                if keep.any():
                    any_kept = True
                    yield stamps, found, keep
        except TruncatedTail as cut:
            if dropped is None or file != files[-1]:
                raise
            dropped.append(f"{file}: truncated FTDC file: it ends inside the document at byte offset {cut.offset} "
                           "(mongod stopped while writing it, or is writing it still: a running server's folder); "
                           "its complete chunks are read, that one is dropped")
    if not any_kept and (low is not None or high is not None) and covered[0] <= covered[1]:
        raise InputError(f"--since/--until: no FTDC sample in {path} falls in that window; the files cover "
                         f"{_iso(covered[0])} .. {_iso(covered[1])}")


def read_metric_columns(path, metrics: dict, time_metric: str = "start", since=None, until=None,
                        dropped: list | None = None) -> Columns:
    """One row per FTDC sample: ``time_ms`` (the ``time_metric``, ms since the epoch, int64) and one float column per
    entry of ``metrics`` (column name -> FTDC metric name; NaN in chunks that lack it), sorted by time, duplicates
    dropped, limited to ``since <= time <= until`` (a ``datetime`` or anything ``pandas.Timestamp`` reads; naive
    means UTC). Chunks are decoded one at a time, only these metrics rebuilt, and each chunk let go of once its
    columns are copied out. With a ``dropped`` list, the newest file cut inside a document (mongod stopped while
    writing) keeps its complete chunks and a sentence naming the file and byte offset goes in ``dropped``."""
    names = list(metrics.values())
    rows = Rows(len(names) + 1)                       # the time, then each metric
    for stamps, found, keep in _windowed_pieces(path, names, time_metric, since, until, dropped):
        rows.append([stamps] + [found.get(name) for name in names], keep)
    if not len(rows):
        return Columns({"time_ms": np.zeros(0, dtype=np.int64), **{c: np.zeros(0) for c in metrics}})
    stamps, *table = rows.joined()                     # the times, then one float array per metric
    times = stamps.astype(np.int64)
    del stamps
    if times.size > 1 and not (times[1:] > times[:-1]).all():
        order = np.argsort(times, kind="stable")     # drop repeated times (an interim file repeating an archive),
        times = times[order]                         # keeping the sample read first
        first = np.ones(times.size, dtype=bool)
        first[1:] = times[1:] != times[:-1]
        order, times = order[first], times[first]
        for column in range(len(table)):             # one column's copy at a time
            table[column] = table[column][order]
    return Columns({"time_ms": times, **dict(zip(metrics, table))})


class SamplesOutOfOrder(Exception):
    """``metric_blocks`` met a sample older than one it has given (not a repeat of one): only the whole table, sorted,
    holds them in order (``read_metric_columns``)."""


def metric_blocks(path, metrics: dict, time_metric: str = "start", since=None, until=None,
                  dropped: list | None = None, rows: int = 8192):
    """``read_metric_columns``' rows, a ``Columns`` of about ``rows`` consecutive rows at a time (the last block
    shorter), without holding the table: the same rows in the same order when the files give their samples in time
    order, a sample repeating the time of one already given dropped (an interim file repeating an archive's).
    ``SamplesOutOfOrder`` when a sample is older than one already given without repeating its time (the blocks given
    so far are then of no use: read the whole table)."""
    names = list(metrics.values())
    given: list[np.ndarray] = []                      # the times given: a repeat is told from a sample out of order
    pieces: list[list] = []
    held, last = 0, -math.inf
    for stamps, found, keep in _windowed_pieces(path, names, time_metric, since, until, dropped):
        times = stamps[keep].astype(np.int64)
        chosen = np.flatnonzero(keep)
        if times[0] <= last:                           # before the newest given: a repeat, or out of order
            seen = np.concatenate(given + [np.concatenate([p[0] for p in pieces])] if pieces else given)
            fresh = ~np.isin(times, seen)
            if (times[fresh] <= last).any():
                raise SamplesOutOfOrder(f"{path}: a sample at {_iso(int(times[fresh][0]))} follows one at "
                                        f"{_iso(last)}")
            times, chosen = times[fresh], chosen[fresh]
            if not times.size:
                continue
        if (times[1:] <= times[:-1]).any():
            raise SamplesOutOfOrder(f"{path}: the samples of a chunk are not in time order")
        last = int(times[-1])
        pieces.append([times] + [found[n][chosen].astype(float) if found.get(n) is not None
                                 else np.full(times.size, np.nan) for n in names])
        held += times.size
        if held >= rows:
            given.append(pieces[0][0] if len(pieces) == 1 else np.concatenate([p[0] for p in pieces]))
            yield _joined(pieces, metrics)
            pieces, held = [], 0
    if pieces:
        yield _joined(pieces, metrics)


def _joined(pieces: list, metrics: dict) -> Columns:
    """One ``Columns`` of consecutive pieces (each a list: the times, then one array per metric)."""
    columns = [np.concatenate(parts) if len(parts) > 1 else parts[0] for parts in zip(*pieces)]
    return Columns({"time_ms": columns[0], **dict(zip(metrics, columns[1:]))})
