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

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "ftdc_sample_reference.jsonl.gz"
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


@pytest.mark.parametrize("segment", [16_384, 7])
def test_what_observe_reads_agrees_with_the_independent_decoder(reference, segment, monkeypatch):
    """Also with segments of 7 rows: the samples of a chunk split across segments, and joined back, unchanged."""
    from capmodel.observe import columns

    monkeypatch.setattr(columns, "_SEGMENT", segment)
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


# ------------------------------------------------------------------ the tables observe writes, from the fixture alone
def _reference_rows(chunks) -> tuple[list[int], dict]:
    """Sample time (ms) -> {figure column: int or None}, first sample of each time, from the Go decoder's output."""
    rows = {}
    for chunk in sorted(chunks.values(), key=lambda c: c["offset"]):
        names, kinds = chunk["names"], chunk["types"]
        for s, row in enumerate(chunk["rows"]):
            time_ms = _as_int64(row[names.index(FTDC_TIME)], 0x09, s)
            rows.setdefault(time_ms, {column: (_as_int64(row[names.index(metric)], kinds[names.index(metric)], s)
                                               if metric in names else None)
                                      for column, metric in ftdc_metrics().items()})
    return sorted(rows), rows


def _expected_tables(chunks) -> tuple[list[dict], list[dict]]:
    """samples.csv and curve.csv as the serverStatus arithmetic gives them (rates over the interval, summed latency
    over operations, Little's law N = X * R per class), computed here row by row in plain Python floats."""
    times, rows = _reference_rows(chunks)
    samples, curve = [], []
    for before_ms, after_ms in zip(times, times[1:]):
        before, after = rows[before_ms], rows[after_ms]
        seconds = (after_ms - before_ms) / 1000.0
        diff = {c: (float(after[c]) - float(before[c])) if after[c] is not None and before[c] is not None else math.nan
                for c in after}
        row = {"interval_s": seconds}
        for op in ("insert", "query", "update", "delete", "getmore", "command"):
            row[f"{op}_per_s"] = diff[op] / seconds
        for kind in ("reads", "writes", "commands"):
            ops = diff[f"{kind}_ops"]
            row[f"{kind}_per_s"] = ops / seconds
            row[f"{kind}_latency_ms"] = diff[f"{kind}_latency_us"] / ops / 1000.0 if ops > 0 else math.nan
        for name in ("oplog_getmores", "repl_applied", "repl_update_position"):
            row[f"{name}_per_s"] = diff[name] / seconds
        row["cpu_cores"] = (diff["cpu_user_us"] + diff["cpu_system_us"]) / 1e6 / seconds
        for gauge in ("active_readers", "queued_writers", "tickets_read_available", "connections_current",
                      "cache_bytes", "cache_max_bytes", "cores"):
            row[gauge] = float(after[gauge])
        counters = ("insert", "query", "update", "delete", "getmore", "command", "cpu_user_us", "cpu_system_us",
                    "oplog_getmores", "repl_applied", "repl_update_position",
                    *(f"{k}_{what}" for k in ("reads", "writes", "commands") for what in ("ops", "latency_us")))
        restarted = any(diff[c] < 0 for c in counters) or \
            after["uptime_ms"] < before["uptime_ms"] or after["pid"] != before["pid"]
        busy = sum(diff[f"{k}_ops"] for k in ("reads", "writes", "commands") if not math.isnan(diff[f"{k}_ops"]))
        row["dropped"] = "counter_reset" if restarted else ("" if busy > 0 else "no_operations")
        samples.append({"time_ms": after_ms, **row})
        if row["dropped"]:
            continue
        point = {"time_ms": after_ms}
        n_total = x_total = 0.0
        for kind in ("reads", "writes", "commands"):
            x, r = row[f"{kind}_per_s"], row[f"{kind}_latency_ms"]
            n = x * (0.0 if math.isnan(r) else r) / 1000.0 if x > 0 else 0.0
            point.update({f"concurrency_{kind}": n, f"throughput_{kind}": x, f"latency_{kind}_ms": r})
            n_total, x_total = n_total + n, x_total + (0.0 if math.isnan(x) else x)
        point.update(concurrency=n_total, throughput=x_total,
                     latency_mean_ms=n_total / x_total * 1000.0 if x_total > 0 else math.nan)
        if n_total > 0:
            curve.append(point)
    return samples, curve


def _read_csv(path: Path) -> list[dict]:
    import csv

    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def _same(text: str, expected) -> bool:
    if isinstance(expected, str):
        return text == expected
    return text == "" if math.isnan(expected) else float(text) == expected


def test_the_tables_observe_writes_agree_with_the_arithmetic_on_the_independent_decoder(reference, tmp_path):
    """Every cell of samples.csv and curve.csv that ``capmodel observe --ftdc`` writes for the bundled sample, against
    the same arithmetic done here on the Go decoder's values (the CSV's shortest text reads back exactly)."""
    import datetime as dt

    from capmodel.cli import main

    _, chunks = reference
    samples, curve = _expected_tables(chunks)
    assert main(["observe", "--ftdc", str(bundled_sample()["path"]), "--out", str(tmp_path)]) == 0
    for written, expected in ((_read_csv(tmp_path / "samples.csv"), samples),
                              (_read_csv(tmp_path / "curve.csv"), curve)):
        assert len(written) == len(expected) > 60
        for got, want in zip(written, expected):
            moment = dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=want["time_ms"])
            assert got["time"] == moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            for column, value in want.items():
                if column != "time_ms":
                    assert _same(got[column], value), (got["time"], column, got[column], value)
    assert {r["source"] for r in _read_csv(tmp_path / "curve.csv")} == {"observed"}


def test_observe_ftdc_runs_without_pandas_and_its_tables_still_read_as_dataframes(tmp_path):
    """The command-line path never imports pandas (80 MB before it holds a row); the API still hands DataFrames out."""
    import subprocess
    import sys

    script = ("import sys; from capmodel.cli import main; "
              f"code = main(['observe', '--ftdc', {str(bundled_sample()['path'])!r}, '--out', {str(tmp_path)!r}]); "
              "print(code, sorted(m for m in sys.modules if m.split('.')[0] in ('pandas', 'pyarrow', 'scipy')))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "0 []"
    from capmodel.observe import observe_ftdc, read_observation

    observed, again = observe_ftdc(bundled_sample()["path"]), read_observation(tmp_path)
    assert str(observed.samples["time"].dtype) == "datetime64[us, UTC]"
    assert observed.samples["time"].tolist() == again.samples["time"].tolist()
    for name in ("samples", "curve"):
        ours, theirs = getattr(observed, name), getattr(again, name)
        numbers = [c for c in ours.columns if c not in ("time", "dropped", "source")]
        assert np.array_equal(ours[numbers].to_numpy(float), theirs[numbers].to_numpy(float), equal_nan=True)
    assert observed.dropped == again.dropped
