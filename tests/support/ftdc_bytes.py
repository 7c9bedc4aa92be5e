"""FTDC written from the format's definition (MongoDB src/mongo/db/ftdc: README.md, compressor.cpp, varint.cpp), for
tests that craft files byte by byte: plain Python, no capmodel code, so that a reader bug cannot hide in a shared
helper.

A file is BSON documents {_id: Date, type: 0|1|2, ...}; a metric chunk's ``data`` is uint32 (uncompressed length) +
zlib(reference BSON document, uint32 metrics, uint32 deltas, the deltas metric by metric as unsigned LEB128 varints,
a run of k + 1 zeros written as 0 then k).
"""
from __future__ import annotations

import struct
import zlib

import bson
from bson.binary import Binary
from bson.son import SON

T0 = 1_700_000_000_000          # ms since the epoch: 2023-11-14T22:13:20Z


def leb128(value: int) -> bytes:
    """Unsigned LEB128, written here from its definition (7 bits a byte, high bit = more)."""
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def delta_stream(deltas: list[list[int]]) -> bytes:
    """Metric-major deltas (uint64), zero runs spanning metrics, as compressor.cpp writes them."""
    flat = [d % 2 ** 64 for row in deltas for d in row]
    out, i = bytearray(), 0
    while i < len(flat):
        if flat[i] == 0:
            j = i
            while j < len(flat) and flat[j] == 0:
                j += 1
            out += leb128(0) + leb128(j - i - 1)
            i = j
        else:
            out += leb128(flat[i])
            i += 1
    return bytes(out)


def chunk_data(reference: bytes, n_metrics: int, n_deltas: int, stream: bytes, declared: int | None = None,
               level: int = 6) -> bytes:
    """A chunk's ``data``: the declared uncompressed length (the true one unless given), then zlib."""
    body = reference + struct.pack("<II", n_metrics, n_deltas) + stream
    return struct.pack("<I", len(body) if declared is None else declared) + zlib.compress(body, level)


def document(kind: int, payload=None, at_ms: int = T0) -> bytes:
    fields = [("_id", bson.DatetimeMS(at_ms)), ("type", kind)]
    if kind == 1:
        fields.append(("data", Binary(payload)))
    elif payload is not None:
        fields.append(("doc", payload))
    return bson.encode(SON(fields))


def metadata() -> bytes:
    return document(0, {"buildInfo": {"version": "6.0.5"}, "hostInfo": {"system": {"hostname": "crafted:27017"}}})


def metric_chunk(reference: dict, deltas: list[list[int]]) -> bytes:
    """A whole metric-chunk document from a reference document (a dict, encoded by pymongo) and its deltas; the
    metric count is len(deltas), the caller's claim of how many metrics the document holds."""
    ref = bson.encode(SON(reference))
    n_deltas = len(deltas[0]) if deltas else 0
    return document(1, chunk_data(ref, len(deltas), n_deltas, delta_stream(deltas)))


def nested(depth: int, leaf: bytes = b"\x10x\x00\x07\x00\x00\x00") -> bytes:
    """Raw BSON: {a: {a: ... {x: int32 7}}} with ``depth`` levels of sub-documents below the top one (written by
    hand: pymongo's encoder refuses deep nesting)."""
    body = leaf
    for _ in range(depth):
        inner = struct.pack("<i", len(body) + 5) + body + b"\x00"
        body = b"\x03a\x00" + inner
    start = b"\x09start\x00" + struct.pack("<q", T0)
    body = start + body
    return struct.pack("<i", len(body) + 5) + body + b"\x00"
