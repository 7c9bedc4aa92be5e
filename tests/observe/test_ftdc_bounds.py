"""The FTDC reader on crafted files: values as the format defines them, and MongoDB's own limits kept before
anything is allocated, each refusal one ``InputError`` naming the file and the byte offset. Every crafted case is
tested with its neighbours (the limit itself, one past it, far past it).

Limits, from MongoDB's source (mongodb/mongo, src/mongo/db/ftdc): ``decompressor.cpp`` refuses a chunk whose
uncompressed length exceeds 10,000,000 bytes ("Metrics chunk has exceeded the allowable size.") and one whose
``metricsCount * sampleCount > 1000000`` ("Metrics Count and Sample Count have exceeded the allowable range.");
``util.cpp`` refuses a document nested deeper than ``kMaxRecursion = 10`` ("Recursion limit reached."); its
``getBSONDocumentType`` accepts only the known FTDC types.
"""
from __future__ import annotations

import json
import struct
import tracemalloc
import zlib

import bson
import pytest
from bson.int64 import Int64
from bson.timestamp import Timestamp

from tests.support import ftdc_bytes as fb
from capmodel.cli import main
from capmodel.errors import InputError
from capmodel.observe import ftdc

START = {"start": bson.DatetimeMS(fb.T0)}


def _file(tmp_path, *documents: bytes):
    """An FTDC archive: the metadata document, then ``documents``; (path, offset of the first of them)."""
    path = tmp_path / "metrics.2023-11-14T22-13-20Z-00000"
    head = fb.metadata()
    path.write_bytes(head + b"".join(documents))
    return path, len(head)


def _chunks(path) -> list:
    return list(ftdc.iter_chunks(path))


def _refusal(path, offset: int, *words: str, limit_mb: float = 32) -> str:
    """The one InputError reading ``path`` gives: it names the file, the byte offset and ``words``; the memory the
    attempt allocated (tracemalloc, numpy included) stays under ``limit_mb``."""
    tracemalloc.start()
    try:
        with pytest.raises(InputError) as info:
            _chunks(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    message = str(info.value)
    assert str(path) in message and f"byte offset {offset}" in message, message
    for word in words:
        assert word in message, message
    assert peak < limit_mb * 1e6, f"{peak / 1e6:.0f} MB allocated before refusing"
    return message


def _chunk(reference: bytes, n_metrics: int, n_deltas: int, stream: bytes, **kw) -> bytes:
    return fb.document(1, fb.chunk_data(reference, n_metrics, n_deltas, stream, **kw))


# ------------------------------------------------------------------------------------------------------- the values
def test_a_crafted_chunk_reads_as_the_format_defines_it(tmp_path):
    reference = {**START, "serverStatus": {"a": -5, "b": Int64(2 ** 62), "c": 2.9, "d": -2.9, "ok": True,
                                           "ts": Timestamp(100, 7), "s": "text", "arr": [1, 2]},
                 "end": bson.DatetimeMS(fb.T0 + 5)}
    names = ["start", "serverStatus.a", "serverStatus.b", "serverStatus.c", "serverStatus.d", "serverStatus.ok",
             "serverStatus.ts.t", "serverStatus.ts.i", "serverStatus.arr.0", "serverStatus.arr.1", "end"]
    first = [fb.T0, -5, 2 ** 62, 2, -2, 1, 100, 7, 1, 2, fb.T0 + 5]   # doubles truncated towards zero
    deltas = [[1000, 1000, 1000], [0, 0, 3], [2 ** 64 - 1, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0], [1, 0, 1],
              [0, 2, 0], [0, 0, 0], [0, 0, 0], [1000, 1000, 2 ** 64 - 2000]]
    path, _ = _file(tmp_path, fb.metric_chunk(reference, deltas))
    (chunk,) = _chunks(path)
    assert chunk.names == names and chunk.samples == 4
    for name, start, steps in zip(names, first, deltas):
        expected, value = [start], start
        for step in steps:
            value = (value + step) % 2 ** 64
            expected.append(value - 2 ** 64 if value >= 2 ** 63 else value)
        assert chunk.values(name).tolist() == expected, name
    assert chunk.values("serverStatus.s") is None and chunk.values("nothing") is None


# --------------------------------------------------------------------------------------- metrics x deltas <= 1e6
@pytest.mark.parametrize("n_metrics, n_deltas, accepted", [
    (1, 1_000_000, True), (2, 500_000, True), (1, 1_000_001, False), (2, 500_001, False),
    (1, 4_000_000_000, False), (4_000_000_000, 1, False)])
def test_metrics_times_deltas_is_bounded_as_mongodb_bounds_it(tmp_path, n_metrics, n_deltas, accepted):
    reference = bson.encode({**START, "x": 5}) if n_metrics == 2 else bson.encode(START)
    # a consistent run-length stream: one run of zeros covering every delta the header claims
    stream = fb.leb128(0) + fb.leb128(n_metrics * n_deltas - 1)
    data = _chunk(reference, n_metrics, n_deltas, stream)
    path, offset = _file(tmp_path, data)
    if accepted:
        (chunk,) = _chunks(path)
        times = chunk.values("start")
        assert times.size == n_deltas + 1 and (times == fb.T0).all()
    else:
        assert len(data) < 200
        _refusal(path, offset, "1,000,000", "decompressor.cpp")


@pytest.mark.parametrize("count, outcome", [(9, "accepted"), (8, "holds 9 values"), (10, "a run of 11 zeros"),
                                            (2 ** 40, "a run of"), (2 ** 64 - 1, "a run of")])
def test_a_zero_run_is_checked_against_the_header_before_it_is_expanded(tmp_path, count, outcome):
    path, offset = _file(tmp_path, _chunk(bson.encode(START), 1, 10, fb.leb128(0) + fb.leb128(count)))
    if outcome == "accepted":
        assert _chunks(path)[0].values("start").tolist() == [fb.T0] * 11
    else:
        _refusal(path, offset, outcome)


@pytest.mark.parametrize("stream, words", [
    (b"\x01" * 1000, ["1,000 codes"]),                  # more codes than 1 x 10 deltas can need
    (b"\x01" * 10 + b"\x05", ["holds 11 values"]),       # one delta too many
    (b"\x01" * 9, ["holds 9 values"]),                   # one too few
    (b"\x01" * 9 + b"\x81", ["ends inside a varint"]),
    (b"\x01" * 9 + b"\xff" * 10 + b"\x01", ["a varint of 11 bytes"]),
    (b"\x01" * 9 + b"\x00", ["zero without its run length"])])
def test_a_delta_stream_that_overruns_or_stops_short_is_refused(tmp_path, stream, words):
    path, offset = _file(tmp_path, _chunk(bson.encode(START), 1, 10, stream))
    _refusal(path, offset, *words)


# ----------------------------------------------------------------------------------------- bounded decompression
def _zlib_of_zeros(total: int) -> bytes:
    deflate, block = zlib.compressobj(9, zlib.DEFLATED, 15, 9, zlib.Z_RLE), bytes(1 << 20)   # RLE: 3x faster here
    return b"".join(deflate.compress(block) for _ in range(total >> 20)) + deflate.flush()


def test_a_zlib_bomb_is_refused_without_inflating_it(tmp_path):
    bomb = _zlib_of_zeros(1 << 30)                       # 1 GiB of zeros in about a megabyte
    for declared in (9_000_000, 1000, 5):                # inflated up to what the header declares (at most 10 MB)
        path, offset = _file(tmp_path, fb.document(1, struct.pack("<I", declared) + bomb))
        _refusal(path, offset, "inflates past", limit_mb=48 if declared > 1000 else 16)


@pytest.mark.parametrize("declared, words", [(10_000_001, ["10,000,000"]), (2 ** 32 - 1, ["10,000,000"]),
                                             ("true+1", ["the header says"]), ("true-1", ["inflates past"]),
                                             ("cut", ["ends early"])])
def test_the_declared_length_is_checked_as_decompressor_cpp_checks_it(tmp_path, declared, words):
    body = bson.encode(START) + struct.pack("<II", 1, 2) + fb.delta_stream([[1, 1]])
    packed = zlib.compress(body)
    if declared == "cut":
        data = struct.pack("<I", len(body)) + packed[:-6]
    else:
        length = {"true+1": len(body) + 1, "true-1": len(body) - 1}.get(declared, declared)
        data = struct.pack("<I", length) + packed
    path, offset = _file(tmp_path, fb.document(1, data))
    _refusal(path, offset, *words)


# -------------------------------------------------------------------------------------------------------- nesting
@pytest.mark.parametrize("depth", [1, 10])
def test_nesting_up_to_mongodbs_limit_is_read(tmp_path, depth):
    path, _ = _file(tmp_path, _chunk(fb.nested(depth), 2, 1, fb.delta_stream([[1000], [3]])))
    (chunk,) = _chunks(path)
    assert chunk.values("a." * depth + "x").tolist() == [7, 10]


@pytest.mark.parametrize("depth", [11, 12, 3000])
def test_nesting_past_mongodbs_limit_is_refused_with_file_and_offset(tmp_path, depth):
    path, offset = _file(tmp_path, _chunk(fb.nested(depth), 2, 1, fb.delta_stream([[1000], [3]])))
    _refusal(path, offset, "nested more than 10 levels", "kMaxRecursion")


def test_a_deeply_nested_metadata_document_is_refused_with_file_and_offset(tmp_path):
    inner = fb.nested(3000)               # {_id, type: 0, doc: <3000 deep>} written by hand
    body = b"\x09_id\x00" + struct.pack("<q", fb.T0) + b"\x10type\x00" + struct.pack("<i", 0) + b"\x03doc\x00" + inner
    doc = struct.pack("<i", len(body) + 5) + body + b"\x00"
    path = tmp_path / "metrics.2023-11-14T22-13-20Z-00000"
    path.write_bytes(doc)
    with pytest.raises(InputError) as info:
        _chunks(path)
    assert str(path) in str(info.value) and "byte offset 0" in str(info.value)


# ------------------------------------------------------------------------------------------- types and structure
@pytest.mark.parametrize("kind", [3, 7, -1, 2 ** 31 - 1])
def test_an_unknown_ftdc_type_is_named_as_such(tmp_path, kind):
    path, offset = _file(tmp_path, fb.document(kind))
    _refusal(path, offset, f"unknown FTDC document type {kind}")


def test_periodic_metadata_is_known_and_skipped(tmp_path):
    chunk = fb.metric_chunk(START, [[1000]])
    path, _ = _file(tmp_path, fb.document(2, {"x": 1}), chunk)
    assert [c.values("start").tolist() for c in _chunks(path)] == [[fb.T0, fb.T0 + 1000]]


def test_an_unknown_bson_type_in_the_reference_document_is_named(tmp_path):
    reference = bytearray(bson.encode({**START, "x": 5}))
    reference[reference.index(b"\x10x\x00")] = 0x42
    path, offset = _file(tmp_path, _chunk(bytes(reference), 2, 0, b""))
    _refusal(path, offset, "unknown BSON type 0x42", "'x'")


@pytest.mark.parametrize("claimed, words", [(1, ["more metrics than the chunk's header promises"]),
                                            (3, ["has 2 metrics, the header says 3"])])
def test_a_metric_count_that_disagrees_with_the_reference_document_is_refused(tmp_path, claimed, words):
    reference = bson.encode({**START, "x": 5})
    path, offset = _file(tmp_path, _chunk(reference, claimed, 1, fb.delta_stream([[0]] * claimed)))
    _refusal(path, offset, *words)


def test_observe_json_gives_the_error_as_json_with_exit_2(tmp_path, capsys):
    path, offset = _file(tmp_path, _chunk(bson.encode(START), 1, 4_000_000_000,
                                          fb.leb128(0) + fb.leb128(3_999_999_999)))
    assert main(["observe", "--ftdc", str(path), "--json", "--out", str(tmp_path / "out")]) == 2
    captured = capsys.readouterr()
    answer = json.loads(captured.out)
    assert list(answer) == ["error"] and str(path) in answer["error"] and f"byte offset {offset}" in answer["error"]
    assert not (tmp_path / "out").exists()


def test_observe_json_gives_an_unreadable_file_as_json_too(tmp_path, capsys, monkeypatch):
    path, _ = _file(tmp_path, fb.metric_chunk(START, [[1000]]))

    def refuse(name, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(name))

    monkeypatch.setattr(ftdc, "open", refuse, raising=False)     # as root, chmod cannot make a file unreadable
    assert main(["observe", "--ftdc", str(path), "--json", "--out", str(tmp_path / "out")]) == 2
    said = capsys.readouterr()
    error = json.loads(said.out)["error"]        # the same one line as on stderr (capmodel.cli: every --json command)
    assert "Permission denied" in error and str(path) in error
    assert said.err == f"capmodel: error: {error}\n"
