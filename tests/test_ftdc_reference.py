"""capmodel's FTDC reader against an independent decoder, value by value, on the bundled sample (real mongod output).

The fixture ``tests/fixtures/ftdc_sample_reference.jsonl.gz`` is the Go decoder of ``../shared/tools/ftdc-reference``
(written from MongoDB's source without reference to capmodel's reader) run on ``data/ftdc_sample/diagnostic.data``:
one JSON line per chunk (file offset, metric names, BSON types) and one per sample (every metric's value), behind a
header naming the command that made it (``sh benchmarks/make_ftdc_fixture.sh``) and the sha256 of each file it read.
The suite does not need Go: when the sample is regenerated, that command is re-run.

How the Go decoder prints values: sample 0 of a double is the double itself (capmodel, like MongoDB's
``numberLong()``, keeps it truncated towards zero), Timestamps as unsigned, everything else as int64.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import math
from pathlib import Path

import numpy as np
import pytest

from capmodel.observe import bundled_sample, ftdc
from capmodel.observe.serverstatus import FTDC_TIME, ftdc_metrics

FIXTURE = Path(__file__).parent / "fixtures" / "ftdc_sample_reference.jsonl.gz"
DOUBLE, TIMESTAMP, DECIMAL = 0x01, 0x11, 0x13
INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1


@pytest.fixture(scope="module")
def reference():
    lines = [json.loads(line) for line in gzip.open(FIXTURE, "rt")]
    header, chunks = lines[0], {}
    for line in lines[1:]:
        if line["kind"] == "chunk":
            chunks[line["offset"]] = {**line, "rows": []}
        else:
            chunks[line["offset"]]["rows"].append(line["v"])
    return header, chunks


def _as_int64(value, kind: int, sample: int) -> int:
    """A value of the Go decoder's output as capmodel's int64."""
    if kind == DOUBLE and sample == 0:
        number = float(value)
        return 0 if math.isnan(number) else int(min(max(number, INT64_MIN), INT64_MAX))
    value = int(value)
    return value - 2 ** 64 if value > INT64_MAX else value


def test_the_fixture_was_made_from_the_bundled_sample_as_it_is_now(reference):
    header, _ = reference
    assert header["command"] == "sh benchmarks/make_ftdc_fixture.sh"
    files = ftdc.ftdc_files(bundled_sample()["path"])
    now = {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in files}
    assert header["sha256"] == now, f"data/ftdc_sample changed: re-run `{header['command']}` (needs Go)"


def test_every_value_of_every_chunk_agrees_with_the_independent_decoder(reference):
    _, chunks = reference
    seen, compared = set(), 0
    for file in ftdc.ftdc_files(bundled_sample()["path"]):
        for chunk in ftdc.iter_chunks(file):
            expected = chunks[chunk.offset]
            seen.add(chunk.offset)
            assert chunk.names == expected["names"] and chunk.samples == expected["nsamples"]
            assert DECIMAL not in expected["types"]       # the Go decoder writes decimals as 0: none to compare
            kinds = expected["types"]
            wanted = np.array([[_as_int64(v, kinds[m], s) for m, v in enumerate(row)]
                               for s, row in enumerate(expected["rows"])], dtype=np.int64).T
            values = np.empty((len(chunk.names), chunk.samples), dtype=np.uint64)    # every metric at once
            values[:, 0] = chunk.reference
            np.cumsum(chunk.deltas, axis=1, out=values[:, 1:])
            values[:, 1:] += values[:, :1]
            assert np.array_equal(values.view(np.int64), wanted)
            first = {}                                                              # metric by metric, by name
            for m, name in enumerate(chunk.names):
                first.setdefault(name, m)
            got = chunk.columns(list(first))
            for name, m in first.items():
                assert np.array_equal(got[name], wanted[m]), name
            compared += wanted.size
    assert seen == set(chunks) and compared > 50_000


def test_what_observe_reads_agrees_with_the_independent_decoder(reference):
    _, chunks = reference
    table = ftdc.read_metrics(bundled_sample()["path"], ftdc_metrics(), time_metric=FTDC_TIME)
    rows = {}
    for chunk in chunks.values():
        names = chunk["names"]
        for s, row in enumerate(chunk["rows"]):
            time_ms = _as_int64(row[names.index(FTDC_TIME)], 0x09, s)
            rows.setdefault(time_ms, {column: (_as_int64(row[names.index(metric)], chunk["types"][names.index(metric)],
                                                         s) if metric in names else None)
                                      for column, metric in ftdc_metrics().items()})
    assert table["time_ms"].tolist() == sorted(rows)
    for column in ftdc_metrics():
        expected = [rows[t][column] for t in table["time_ms"]]
        got = table[column].tolist()
        assert all((e is None and math.isnan(g)) or g == float(e) for e, g in zip(expected, got)), column
