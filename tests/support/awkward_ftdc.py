"""Damaged FTDC bytes for property-based tests (tests/observe/test_ftdc_fuzz.py) and benchmarks/fuzz.py (target
``ftdc``): real chunks of the bundled sample mutated inside and outside their zlib stream, crafted chunks with random headers
and random varint / zero-run streams, and truncations. ``check_ftdc`` reads one file as ``capmodel observe`` does and
says how it ended: ``ok``, ``refused`` (an ``InputError`` naming the file and a byte offset), ``unnamed`` (refused
without them), ``memory`` (more than ``MEMORY_MB`` allocated, tracemalloc, numpy included), ``noise`` or
``traceback``.
"""
from __future__ import annotations

import contextlib
import functools
import gc
import io
import os
import struct
import tempfile
import tracemalloc
import warnings
import zlib

import bson
from hypothesis import strategies as st

from tests.support import ftdc_bytes as fb

MEMORY_MB = 64
ACCEPTABLE = ("ok", "refused")


@functools.lru_cache(maxsize=1)
def real_file() -> bytes:
    """The bundled sample's FTDC file (real mongod 6.0.5 output: a metadata document and a metric chunk)."""
    from capmodel.observe import bundled_sample, ftdc

    return ftdc.ftdc_files(bundled_sample()["path"])[0].read_bytes()


@functools.lru_cache(maxsize=1)
def real_chunk() -> tuple[bytes, bytes]:
    """(everything before the first metric chunk, that chunk's uncompressed bytes)."""
    blob, at = real_file(), 0
    while True:
        (size,) = struct.unpack_from("<i", blob, at)
        document = bson.decode(blob[at:at + size])
        if document["type"] == 1:
            return blob[:at], zlib.decompress(document["data"][4:])
        at += size


def _mutate(data: bytes, edits) -> bytes:
    out = bytearray(data)
    for kind, where, value in edits:
        if not out:
            break
        at = where % len(out)
        if kind == 0:
            out[at] = value
        elif kind == 1:
            del out[at:at + 1 + value % 16]
        elif kind == 2:
            out[at:at] = bytes([value]) * (1 + value % 8)
        else:                                       # a 32-bit count somewhere: huge, zero, or off by one
            word = [0, 1, 0xFFFFFFFF, 0x7FFFFFFF, 1_000_001, value << 20][value % 6]
            out[at:at + 4] = struct.pack("<I", word)
    return bytes(out)


_edits = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2 ** 31), st.integers(0, 255)), min_size=1,
                  max_size=6)


@st.composite
def mutated_files(draw) -> bytes:
    """The real file with bytes changed, dropped or inserted anywhere (mostly caught by BSON or zlib checks)."""
    return _mutate(real_file(), draw(_edits))


@st.composite
def mutated_chunks(draw) -> bytes:
    """The real chunk changed inside its zlib stream (reference document, counts, deltas), then recompressed with its
    true length, or a wrong one."""
    head, raw = real_chunk()
    raw = _mutate(raw, draw(_edits))
    declared = draw(st.sampled_from([None, None, None, 0, len(raw) + 1, max(len(raw) - 1, 0), 10_000_001]))
    data = struct.pack("<I", len(raw) if declared is None else declared) + zlib.compress(raw, 1)
    return head + fb.document(1, data)


@st.composite
def crafted_chunks(draw) -> bytes:
    """A small reference document, counts near and far past MongoDB's limits, and a random stream: raw bytes, or
    varint codes with zero runs of any length."""
    n_fields = draw(st.integers(0, 4))
    reference = bson.encode({"start": bson.DatetimeMS(fb.T0), **{f"m{i}": i for i in range(n_fields)}})
    counts = st.one_of(st.integers(0, 12), st.sampled_from([1_000_000, 1_000_001, 2 ** 31, 2 ** 32 - 1]))
    n_metrics = draw(st.one_of(st.just(n_fields + 1), counts))
    n_deltas = draw(st.one_of(st.integers(0, 12), counts))
    if draw(st.booleans()):
        stream = draw(st.binary(max_size=64))
    else:
        codes = draw(st.lists(st.one_of(st.integers(0, 3), st.integers(0, 2 ** 64 - 1)), max_size=40))
        stream = b"".join(fb.leb128(c) for c in codes)
    return fb.metadata() + fb.document(1, fb.chunk_data(reference, n_metrics, n_deltas, stream))


@st.composite
def truncated_files(draw) -> bytes:
    blob = real_file()
    return blob[:draw(st.integers(0, len(blob) - 1))]


ftdc_files = st.one_of(mutated_files(), mutated_chunks(), crafted_chunks(), truncated_files())


def check_ftdc(data: bytes) -> str:
    """How reading ``data`` as an FTDC file ended (see the module docstring)."""
    from capmodel.errors import CapmodelError
    from capmodel.observe import ftdc
    from capmodel.observe.serverstatus import FTDC_TIME, ftdc_metrics

    handle, path = tempfile.mkstemp(prefix="metrics.capmodel-fuzz-")
    with os.fdopen(handle, "wb") as out_file:
        out_file.write(data)
    out = io.StringIO()
    gc.collect()      # an earlier test's unclosed socket warns when the collector finds it, not when the reader runs
    tracemalloc.start()
    try:
        with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(out):
            warnings.simplefilter("always")
            try:
                ftdc.read_metrics(path, ftdc_metrics(), time_metric=FTDC_TIME)
                outcome = "ok"
            except CapmodelError as exc:
                outcome = "refused" if path in str(exc) and "byte offset" in str(exc) else "unnamed"
            except Exception:  # noqa: BLE001 - exactly what is being counted
                outcome = "traceback"
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        os.unlink(path)
    if outcome in ACCEPTABLE and peak > MEMORY_MB * 1e6:
        return "memory"
    # the reader's own warnings; a ResourceWarning that does not name this file is another object's, found by the
    # collector while the reader ran (a clean-clone CI run met one once; it did not come back on replay)
    ours = [w for w in caught if not (issubclass(w.category, ResourceWarning) and path not in str(w.message))]
    if outcome in ACCEPTABLE and (ours or out.getvalue()):
        return "noise"
    return outcome
