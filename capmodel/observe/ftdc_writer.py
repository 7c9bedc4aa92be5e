"""Write FTDC files the way mongod does (for synthetic fleets, tests and benchmarks; the reader is ``ftdc.py``).

A metric chunk is ``{_id: Date, type: 1, data: BinData}`` whose ``data`` is the uncompressed length (uint32, little
endian) and a zlib stream of: the reference document (BSON: the chunk's first sample), the metric count M and the
delta count S (uint32 each), then M x S deltas metric by metric, each the difference to the previous sample of that
metric as an unsigned 64-bit integer, written as LEB128 varints, with a run of zeros written as a zero and the number
of further zeros (MongoDB ``src/mongo/db/ftdc/compressor.cpp``, ``varint.h``). Metrics are the reference document's
numbers, dates and booleans in document order (doubles truncated to integers). A metadata document
``{_id, type: 0, doc: {...}}`` opens each file.
"""
from __future__ import annotations

import datetime as dt
import struct
import zlib
from pathlib import Path

import numpy as np

from capmodel.observe.ftdc import METADATA, METRIC_CHUNK

_MASK64 = (1 << 64) - 1


def _leaf_value(value):
    """The integer FTDC keeps of one BSON leaf, or None for a value that carries no metric (strings, None)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return int(value)                          # truncated towards zero, as numberLong() does
    if isinstance(value, dt.datetime):
        return int(value.timestamp() * 1000)
    return None


def flatten(document: dict, prefix: str = "") -> list[tuple[str, int]]:
    """(dotted name, integer value) of every metric of a document, in document order."""
    out: list[tuple[str, int]] = []
    for key, value in document.items():
        name = prefix + key
        if isinstance(value, dict):
            out.extend(flatten(value, name + "."))
        elif isinstance(value, (list, tuple)):
            out.extend(flatten({str(i): v for i, v in enumerate(value)}, name + "."))
        else:
            number = _leaf_value(value)
            if number is not None:
                out.append((name, number))
    return out


def encode_varints(values: np.ndarray) -> bytes:
    """Unsigned LEB128 of every uint64 value, concatenated."""
    values = np.asarray(values, dtype=np.uint64)
    if values.size == 0:
        return b""
    groups = np.stack([(values >> np.uint64(7 * k)) & np.uint64(0x7F) for k in range(10)], axis=1).astype(np.uint8)
    bits = np.zeros(values.size, dtype=np.int64)
    rest = values.copy()
    while rest.any():
        bits += rest > 0
        rest >>= np.uint64(7)
    length = np.maximum(bits, 1)                  # bytes per value
    position = np.arange(10)[None, :]
    groups |= np.where(position < (length[:, None] - 1), 0x80, 0).astype(np.uint8)
    return groups[position < length[:, None]].tobytes()


def zero_run_code(deltas: np.ndarray) -> np.ndarray:
    """Runs of zeros as (0, run length - 1); every other value as itself."""
    deltas = np.asarray(deltas, dtype=np.uint64)
    zero = deltas == 0
    if not zero.any():
        return deltas
    start = zero & ~np.concatenate(([False], zero[:-1]))
    run_id = np.cumsum(start) - 1
    lengths = np.bincount(run_id[zero], minlength=int(start.sum()))
    keep = ~zero | start                          # one slot per run (its first zero) plus every non-zero
    out = deltas[keep]
    run_slot = np.flatnonzero(start[keep])
    out = np.insert(out, run_slot + 1, (lengths - 1).astype(np.uint64))
    return out


def encode_chunk(reference: dict, series: dict) -> bytes:
    """A metric chunk's ``data``: ``reference`` is the first sample as a document; ``series`` maps a metric's dotted
    name to its values in every sample of the chunk (int64, the first equal to the reference's); a metric without a
    series keeps its reference value throughout."""
    import bson

    metrics = flatten(reference)
    lengths = {len(v) for v in series.values()}
    if len(lengths) > 1:
        raise ValueError(f"series of different lengths: {sorted(lengths)}")
    samples = lengths.pop() if lengths else 1
    matrix = np.empty((len(metrics), samples), dtype=np.uint64)
    for row, (name, value) in enumerate(metrics):
        column = series.get(name)
        if column is None:
            matrix[row] = np.uint64(value & _MASK64)
        else:
            column = np.asarray(column, dtype=np.int64)
            if int(column[0]) != value:
                raise ValueError(f"{name}: the reference document holds {value}, its series starts at {column[0]}")
            matrix[row] = column.view(np.uint64)
    deltas = np.diff(matrix, axis=1)              # unsigned wrap-around, as mongod computes them
    body = bson.encode(reference) + struct.pack("<II", len(metrics), samples - 1)
    body += encode_varints(zero_run_code(deltas.ravel()))
    return struct.pack("<I", len(body)) + zlib.compress(body)


def chunk_document(when: dt.datetime, data: bytes) -> bytes:
    """The BSON document holding one metric chunk."""
    import bson

    return bson.encode({"_id": when, "type": METRIC_CHUNK, "data": bson.Binary(data)})


def metadata_document(when: dt.datetime, doc: dict) -> bytes:
    """The BSON metadata document (buildInfo, getCmdLineOpts, hostInfo) that opens an FTDC file."""
    import bson

    return bson.encode({"_id": when, "type": METADATA, "doc": doc})


def archive_name(when: dt.datetime, index: int = 0) -> str:
    """An archive file's name as mongod gives it: ``metrics.2024-05-01T00-00-00Z-00000``."""
    return f"metrics.{when.astimezone(dt.timezone.utc):%Y-%m-%dT%H-%M-%SZ}-{index:05d}"


def write_file(path: Path, metadata: bytes, chunks: list[bytes]) -> Path:
    """One FTDC file: the metadata document, then the chunk documents."""
    path = Path(path)
    with open(path, "wb") as handle:
        handle.write(metadata)
        for chunk in chunks:
            handle.write(chunk)
    return path
