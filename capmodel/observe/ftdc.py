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

Decoding here is vectorised with numpy (varints, zero runs and the cumulative sums) and uses ``bson`` from pymongo
for the documents; only the metrics asked for are rebuilt. Samples from several files are joined by time and
duplicates (an interim file repeating an archive) dropped. A file that is truncated, corrupt, empty or not FTDC at
all raises ``InputError`` naming the file and the byte offset of the document at fault.
"""
from __future__ import annotations

import math
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from capmodel.errors import InputError
from capmodel.observe.varint import decode_varints, expand_zero_runs

METADATA, METRIC_CHUNK, PERIODIC_METADATA = 0, 1, 2
INTERIM_NAME = "metrics.interim"
MAX_UNCOMPRESSED = 10_000_000    # decompressor.cpp refuses a larger chunk; so do we
_HEADER = b"\x09_id\x00"      # every FTDC document opens with its _id, a BSON date (type 9)
_INT64_MIN, _INT64_MAX = -(2 ** 63), 2 ** 63 - 1


@dataclass
class Chunk:
    """One decoded metric chunk: metric names in file order and their values, one column per sample."""

    names: list[str]
    reference: np.ndarray        # uint64, one per metric: the reference document's values
    deltas: np.ndarray           # uint64, shape (metrics, samples - 1)
    source: str
    offset: int
    positions: dict | None = None    # name -> row, shared by chunks of one layout

    @property
    def samples(self) -> int:
        """Samples in the chunk, the reference document included."""
        return self.deltas.shape[1] + 1

    def values(self, name: str) -> np.ndarray | None:
        """Every sample's value of one metric (int64), or None when the chunk does not carry it."""
        index = self._index().get(name)
        if index is None:
            return None
        out = np.empty(self.samples, dtype=np.uint64)
        out[0] = self.reference[index]
        np.cumsum(self.deltas[index], out=out[1:])
        out[1:] += self.reference[index]           # unsigned wrap-around, as the writer computed the deltas
        return out.view(np.int64)

    def _index(self) -> dict:
        if self.positions is None:
            self.positions = {name: i for i, name in enumerate(self.names)}
        return self.positions


# --------------------------------------------------------------------------------------------------- metric extraction
# The reference document is walked as raw BSON, not decoded into a dict: serverStatus can repeat a field name inside
# one object, and a dict would keep only one of them while the writer counted both.
_FIXED = {0x06: 0, 0x07: 12, 0x0A: 0, 0x7F: 0, 0xFF: 0}          # undefined, ObjectId, null, MaxKey, MinKey
_STRINGS = (0x02, 0x0D, 0x0E)                                       # string, JavaScript code, symbol


def _clamp_double(value: float) -> int:
    """numberLong() of a double: NaN -> 0, clamped to the int64 range, truncated towards zero."""
    if math.isnan(value):
        return 0
    return int(min(max(value, _INT64_MIN), _INT64_MAX))


def _walk(raw: bytes, start: int, end: int, prefix: str, names: list, values: list, layout: list | None = None) -> None:
    """Append the name and value of every metric in the BSON document raw[start:end], in the order util.cpp uses
    (and, when ``layout`` is a list, each metric's (coding, byte offset of its value), see ``_Layout``)."""
    if layout is None:
        layout = []
    unpack = struct.unpack_from
    pos = start + 4
    while pos < end - 1:
        kind = raw[pos]
        key_end = raw.index(b"\x00", pos + 1)
        name = prefix + raw[pos + 1:key_end].decode("utf-8", "replace")
        pos = key_end + 1
        if kind == 0x01:
            names.append(name)
            values.append(_clamp_double(unpack("<d", raw, pos)[0]))
            layout.append(("f8", pos))
            pos += 8
        elif kind == 0x10:
            names.append(name)
            values.append(unpack("<i", raw, pos)[0])
            layout.append(("i4", pos))
            pos += 4
        elif kind in (0x12, 0x09):                                  # int64, Date (ms since the epoch)
            names.append(name)
            values.append(unpack("<q", raw, pos)[0])
            layout.append(("i8" if kind == 0x12 else "date", pos))
            pos += 8
        elif kind == 0x08:
            names.append(name)
            values.append(raw[pos])
            layout.append(("u1", pos))
            pos += 1
        elif kind == 0x11:                                          # Timestamp: increment, then seconds, uint32 each
            increment, seconds = unpack("<II", raw, pos)
            names += [name + ".t", name + ".i"]
            values += [seconds, increment]
            layout += [("u4", pos + 4), ("u4", pos)]
            pos += 8
        elif kind == 0x13:
            from bson.decimal128 import Decimal128

            decimal = Decimal128.from_bid(raw[pos:pos + 16]).to_decimal()
            names.append(name)
            values.append(int(min(max(decimal, _INT64_MIN), _INT64_MAX)) if decimal.is_finite() else 0)
            layout.append(("decimal", pos))
            pos += 16
        elif kind in (0x03, 0x04):
            (size,) = unpack("<i", raw, pos)
            _walk(raw, pos, pos + size, name + ".", names, values, layout)
            pos += size
        elif kind in _STRINGS:
            pos += 4 + unpack("<i", raw, pos)[0]
        elif kind == 0x05:
            pos += 5 + unpack("<i", raw, pos)[0]
        elif kind == 0x0C:                                          # DBPointer: string, then an ObjectId
            pos += 4 + unpack("<i", raw, pos)[0] + 12
        elif kind == 0x0F:                                          # code with scope: total length first
            pos += unpack("<i", raw, pos)[0]
        elif kind == 0x0B:                                          # regex: two C strings
            pos = raw.index(b"\x00", raw.index(b"\x00", pos) + 1) + 1
        elif kind in _FIXED:
            pos += _FIXED[kind]
        else:
            raise ValueError(f"unknown BSON type 0x{kind:02x} at field {name!r}")


def date_offsets(reference: bytes) -> list[int]:
    """Byte offsets of every Date value in a raw BSON reference document (to re-time a chunk)."""
    layout: list = []
    _walk(reference, 0, struct.unpack_from("<i", reference, 0)[0], "", [], [], layout)
    return [at for coding, at in layout if coding == "date"]


def metric_names(reference: bytes, layouts: list | None = None) -> tuple[list[str], np.ndarray]:
    """Dotted metric names (``serverStatus.opcounters.insert``) and values of a raw BSON reference document.

    ``layouts``: a list kept across chunks; a reference document laid out byte for byte like an earlier one (same
    fields, types and strings; only numbers differ: the usual case from one chunk to the next) is then read with numpy
    at the known offsets instead of being walked again."""
    if layouts is not None:
        for layout in layouts:
            if layout.matches(reference):
                return layout.names, layout.values(reference)
    names: list[str] = []
    values: list[int] = []
    entries: list = []
    (size,) = struct.unpack_from("<i", reference, 0)
    _walk(reference, 0, size, "", names, values, entries)
    if layouts is not None and all(coding != "decimal" for coding, _ in entries):
        layouts.insert(0, _Layout(reference, names, entries))
        del layouts[_MAX_LAYOUTS:]
    return names, np.array(values, dtype=np.int64).view(np.uint64) if values else np.zeros(0, np.uint64)


_MAX_LAYOUTS = 8
_CODINGS = {"f8": (8, "<f8"), "i4": (4, "<i4"), "i8": (8, "<i8"), "date": (8, "<i8"), "u1": (1, "u1"),
            "u4": (4, "<u4")}


class _Layout:
    """Where each metric's value sits in one reference document, and which bytes must match for another to share it."""

    def __init__(self, reference: bytes, names: list, entries: list):
        self.names = names
        self.positions = {name: i for i, name in enumerate(names)}
        self.template = np.frombuffer(reference, dtype=np.uint8)
        self.fixed = np.ones(self.template.size, dtype=bool)
        self.groups = []
        for coding, (width, dtype) in _CODINGS.items():
            index = np.array([i for i, (c, _) in enumerate(entries) if c == coding], dtype=np.int64)
            if index.size:
                at = np.array([entries[i][1] for i in index], dtype=np.int64)[:, None] + np.arange(width)
                self.fixed[at.ravel()] = False
                self.groups.append((coding, dtype, index, at))
        self.fixed_bytes = self.template[self.fixed]

    def matches(self, reference: bytes) -> bool:
        data = np.frombuffer(reference, dtype=np.uint8)
        return data.size == self.template.size and np.array_equal(data[self.fixed], self.fixed_bytes)

    def values(self, reference: bytes) -> np.ndarray:
        data = np.frombuffer(reference, dtype=np.uint8)
        out = np.empty(len(self.names), dtype=np.int64)
        for coding, dtype, index, at in self.groups:
            raw = np.ascontiguousarray(data[at]).view(dtype).ravel()
            if coding == "f8":                        # numberLong(): NaN -> 0, clamped, truncated towards zero
                big, small = raw >= 2.0 ** 63, raw < -(2.0 ** 63)
                safe = np.where(np.isnan(raw) | big | small, 0.0, raw)
                raw = np.where(big, _INT64_MAX, np.where(small, _INT64_MIN, safe.astype(np.int64)))
            out[index] = raw.astype(np.int64)
        return out.view(np.uint64)


# ---------------------------------------------------------------------------------------------- varints and zero runs
def decode_chunk(data: bytes, source: str = "<chunk>", offset: int = 0, layouts: list | None = None) -> Chunk:
    """The metrics of one chunk's ``data`` field (uncompressed length, then the zlib stream); ``layouts`` as in
    ``metric_names``."""
    def bad(reason: str) -> InputError:
        return InputError(f"{source}: corrupt FTDC metric chunk at byte offset {offset}: {reason}")

    if len(data) < 5:
        raise bad(f"{len(data)} bytes of data")
    (length,) = struct.unpack_from("<I", data, 0)
    if length > MAX_UNCOMPRESSED:
        raise bad(f"uncompressed length {length} exceeds the {MAX_UNCOMPRESSED} bytes MongoDB allows")
    try:
        raw = zlib.decompress(data[4:])
    except zlib.error as exc:
        raise bad(f"zlib: {exc}") from None
    if len(raw) != length:
        raise bad(f"{len(raw)} bytes uncompressed, the header says {length}")
    try:
        (ref_size,) = struct.unpack_from("<i", raw, 0)
        if not 5 <= ref_size <= len(raw) - 8 or raw[ref_size - 1] != 0:
            raise ValueError(f"a BSON length of {ref_size} in {len(raw)} bytes")
        names, reference_values = metric_names(raw[:ref_size], layouts)
        n_metrics, n_deltas = struct.unpack_from("<II", raw, ref_size)
    except (struct.error, ValueError, IndexError) as exc:
        raise bad(f"reference document: {exc}") from None
    if len(names) != n_metrics:
        raise bad(f"the reference document has {len(names)} metrics, the header says {n_metrics}")
    stream = np.frombuffer(raw, dtype=np.uint8, offset=ref_size + 8)
    try:
        deltas = expand_zero_runs(decode_varints(stream), n_metrics * n_deltas) if n_deltas else \
            np.zeros(0, dtype=np.uint64)
    except ValueError as exc:
        raise bad(str(exc)) from None
    positions = next((layout.positions for layout in layouts or () if layout.names is names), None)
    return Chunk(names, reference_values, deltas.reshape(n_metrics, n_deltas), source, offset, positions)


def iter_documents(path: Path):
    """(byte offset, document) for every BSON document of one FTDC file, checked as it is read."""
    import bson
    from bson.codec_options import CodecOptions, DatetimeConversion

    options = CodecOptions(datetime_conversion=DatetimeConversion.DATETIME_MS)
    blob = Path(path).read_bytes()
    if not blob:
        raise InputError(f"{path}: empty file (0 bytes), no FTDC documents at byte offset 0")
    offset = 0
    while offset < len(blob):
        if len(blob) - offset < 5:
            raise InputError(f"{path}: truncated FTDC file: {len(blob) - offset} stray bytes at byte offset {offset}")
        (size,) = struct.unpack_from("<i", blob, offset)
        what = "not an FTDC file" if offset == 0 else "corrupt FTDC file"
        if size < 5 or blob[offset + 4:offset + 9] != _HEADER[:len(blob[offset + 4:offset + 9])]:
            raise InputError(f"{path}: {what}: no FTDC document (BSON starting with an _id date) at byte offset "
                             f"{offset}")
        if offset + size > len(blob):
            raise InputError(f"{path}: truncated FTDC file: the document at byte offset {offset} declares {size} "
                             f"bytes, {len(blob) - offset} remain")
        try:
            document = bson.decode(blob[offset:offset + size], options)
        except bson.errors.BSONError as exc:
            raise InputError(f"{path}: {what}: invalid BSON at byte offset {offset} ({exc})") from None
        kind = document.get("type")
        if "_id" not in document or kind not in (METADATA, METRIC_CHUNK, PERIODIC_METADATA):
            raise InputError(f"{path}: {what}: the document at byte offset {offset} has no FTDC _id/type")
        yield offset, document
        offset += size


def iter_chunks(path: Path, layouts: list | None = None):
    """Every metric chunk of one file, decoded (``layouts``: see ``metric_names``)."""
    for offset, document in iter_documents(path):
        if document["type"] == METRIC_CHUNK:
            data = document.get("data")
            if not isinstance(data, bytes):
                raise InputError(f"{path}: corrupt FTDC file: the metric chunk at byte offset {offset} has no data")
            yield decode_chunk(data, str(path), offset, layouts)


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
    if value is None:
        return None
    stamp = pd.Timestamp(value)
    stamp = stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
    return int(stamp.value // 1_000_000)


def read_metrics(path, metrics: dict, time_metric: str = "start", since=None, until=None) -> pd.DataFrame:
    """One row per FTDC sample: ``time_ms`` (the ``time_metric``, ms since the epoch) and one column per entry of
    ``metrics`` (column name -> FTDC metric name; NaN in chunks that lack it), sorted by time, duplicates dropped,
    limited to ``since <= time <= until`` (anything ``pandas.Timestamp`` reads; naive means UTC)."""
    low, high = _to_ms(since), _to_ms(until)
    frames = []
    layouts: list = []
    covered = [math.inf, -math.inf]
    for file in ftdc_files(path):
        for chunk in iter_chunks(file, layouts):
            times = chunk.values(time_metric)
            if times is None:
                continue
            covered = [min(covered[0], int(times.min())), max(covered[1], int(times.max()))]
            keep = np.ones(times.size, dtype=bool)
            if low is not None:
                keep &= times >= low
            if high is not None:
                keep &= times <= high
            if not keep.any():
                continue
            columns = {"time_ms": times[keep]}
            for column, name in metrics.items():
                values = chunk.values(name)
                columns[column] = values[keep].astype(float) if values is not None else np.full(keep.sum(), np.nan)
            frames.append(pd.DataFrame(columns))
    if not frames:
        if (low is not None or high is not None) and covered[0] <= covered[1]:
            first, last = (pd.Timestamp(t, unit="ms", tz="UTC").isoformat() for t in covered)
            raise InputError(f"--since/--until: no FTDC sample in {path} falls in that window; the files cover "
                             f"{first} .. {last}")
        return pd.DataFrame(columns=["time_ms", *metrics])
    table = pd.concat(frames, ignore_index=True)
    return table.drop_duplicates("time_ms", keep="first").sort_values("time_ms", kind="stable").reset_index(drop=True)
