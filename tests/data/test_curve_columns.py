"""The curve table's columns are declared once (``capmodel.data.curve_columns``): the manual's page
``docs/curve-table.md`` documents exactly the declaration, the bench and observe writers write only declared columns,
in the declared order, of the declared value types, and byte for byte what they wrote before the declaration existed.

The golden files in ``tests/fixtures/curve_columns/`` were written by the writers as they were before this change:
``bench_steps.jsonl`` holds two steps of a real ``capmodel bench --workload ycsb-a`` run on the embedded server (their
HdrHistograms left out), a third edited to have no server CPU, no Little's-law figure and one more operation type,
and a failed fourth; ``bench_curve_measured.csv`` is the curve of the first two, ``bench_curve_edited.csv`` of all
four. ``observe_ftdc_*_curve.csv`` are ``capmodel observe --ftdc`` on the bundled FTDC sample and on
``tests/fixtures/ftdc_idle``. ``ycsb_*_curve.csv`` are ``read_curve`` of the YCSB client output in
``tests/fixtures/ycsb_sweep`` and ``tests/fixtures/ycsb_other/old_histogram_threads-2.txt``.
"""
from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from capmodel.bench.sweep.files import curve_table, curve_text, read_steps
from capmodel.data import curve_columns as cc
from capmodel.data.readers import read_curve
from capmodel.errors import InputError
from capmodel.observe.members import Member, ReplicaSetObservation
from capmodel.observe.observation import observe_ftdc

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "fixtures" / "curve_columns"
FTDC = {"sample": ROOT / "data" / "ftdc_sample" / "diagnostic.data", "idle": ROOT / "tests" / "fixtures" / "ftdc_idle"}


def test_the_manual_documents_exactly_the_declared_columns():
    section = (ROOT / "docs" / "curve-table.md").read_text()
    assert cc.markdown_table() in section
    documented = re.findall(r"^\| `([^`]+)` \|", section, flags=re.M)
    assert documented == [c.name for c in cc.COLUMNS]
    assert len(documented) == len(set(documented)) > 20


def test_the_validation_vocabulary_is_the_declarations():
    assert cc.REQUIRED == ("concurrency", "throughput")
    assert cc.LATENCY == tuple(f"latency_{s}_ms" for s in ("mean", "p50", "p95", "p99", "p999"))
    assert set(cc.OPTIONAL_NUMERIC) == set(cc.LATENCY) | {"errors", "cpu_util"}
    assert {"system", "workload", "op", "run", "repeat"} <= set(cc.LABELS)


def test_every_header_spelling_the_readers_know_maps_to_a_declared_column():
    from capmodel.data.readers import _ALIASES

    assert all(cc.column(target) is not None for target in _ALIASES)


def test_a_family_names_its_members_and_recognises_them():
    name = cc.OP_LATENCY.named("read", stat="p95")
    assert name == "latency_read_p95_ms" and cc.column(name) is cc.OP_LATENCY
    assert cc.OP_COUNT.named("update") == "update_count" and cc.column("update_count") is cc.OP_COUNT
    assert cc.column(cc.CLASS_LATENCY.named("reads")) is cc.CLASS_LATENCY
    assert cc.column("latency_p95_ms").name == "latency_p95_ms"      # a single column before any family
    assert cc.column("latency_read_p97_ms") is cc.OP_LATENCY          # readers take any percentile
    assert cc.column("latency_read_p95") is None and cc.column("colour") is None
    with pytest.raises(TypeError, match="takes the keys op, stat"):
        cc.OP_LATENCY.named("read")


def _bench_steps() -> list[dict]:
    return read_steps(GOLDEN / "bench_steps.jsonl")


@pytest.mark.parametrize("count, golden", [(2, "bench_curve_measured.csv"), (4, "bench_curve_edited.csv")])
def test_the_bench_curve_is_byte_for_byte_what_it_was(count, golden):
    assert curve_text(_bench_steps()[:count]) == (GOLDEN / golden).read_text()


def test_a_bench_curve_without_steps_has_the_required_columns():
    assert curve_text([]) == ",".join(cc.REQUIRED) + "\n"


@pytest.mark.parametrize("name", sorted(FTDC))
def test_the_observed_curve_is_byte_for_byte_what_it_was(name, tmp_path):
    observe_ftdc(FTDC[name]).write(tmp_path)
    assert (tmp_path / "curve.csv").read_bytes() == (GOLDEN / f"observe_ftdc_{name}_curve.csv").read_bytes()


YCSB_INPUTS = {"sweep": ROOT / "tests" / "fixtures" / "ycsb_sweep",
               "old_histogram": ROOT / "tests" / "fixtures" / "ycsb_other" / "old_histogram_threads-2.txt"}


@pytest.mark.parametrize("name", sorted(YCSB_INPUTS))
def test_the_ycsb_reader_gives_what_it_gave(name):
    text = read_curve(YCSB_INPUTS[name]).to_csv(index=False)
    assert text == (GOLDEN / f"ycsb_{name}_curve.csv").read_text()


def _ycsb_with_median(tmp_path) -> pd.DataFrame:
    """A YCSB run that prints medians (YCSB's HdrHistogram output can), so the reader writes latency_p50_ms."""
    text = (YCSB_INPUTS["sweep"] / "run_a.txt").read_text()
    text = text.replace("[READ], 95thPercentileLatency(us), 3455\n",
                        "[READ], 50thPercentileLatency(us), 1500\n[READ], 95thPercentileLatency(us), 3455\n")
    (tmp_path / "median_t4.txt").write_text(text)
    return read_curve(tmp_path / "median_t4.txt")


def _ycsb_with_target(tmp_path) -> pd.DataFrame:
    """A YCSB run throttled by -target that reached it, so the reader writes client_bound."""
    text = (YCSB_INPUTS["sweep"] / "run_a.txt").read_text()
    assert " -t\n" in text
    (tmp_path / "target_t4.txt").write_text(text.replace(" -t\n", " -target 10 -t\n", 1))
    return read_curve(tmp_path / "target_t4.txt")


def _combined_members_curve(tmp_path) -> pd.DataFrame:
    observation = observe_ftdc(FTDC["sample"])
    members = [Member("h1:27017", observation), Member("h2:27018", observation)]
    ReplicaSetObservation("rs0", members, "test").write(tmp_path)
    return pd.read_csv(tmp_path / "curve.csv")


def _position(name: str) -> int:
    """Where a column stands in the declared order; a family's members stand where the first family sharing its
    first key does (the writers write each operation's or class's columns together)."""
    declared = cc.column(name)
    if declared.keys:
        declared = next(c for c in cc.COLUMNS if c.keys and c.keys[0] == declared.keys[0])
    return cc.COLUMNS.index(declared)


def _check_written(table: pd.DataFrame, producer: str) -> None:
    for name in table.columns:
        declared = cc.column(name)
        assert declared is not None and producer in declared.written_by, (producer, name)
        values = table[name].dropna()
        if declared.dtype == "float":
            assert pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values), name
        elif declared.dtype == "int":
            assert pd.api.types.is_numeric_dtype(values) and (values == values.round()).all(), name
        elif declared.dtype == "bool":
            assert set(values) <= {True, False} and pd.api.types.is_bool_dtype(values), name
        elif declared.dtype == "time":
            assert pd.to_datetime(values, format="%Y-%m-%dT%H:%M:%S.%fZ", utc=True).notna().all(), name
        else:
            assert values.map(lambda v: isinstance(v, str)).all(), name
    positions = [_position(name) for name in table.columns]
    assert positions == sorted(positions), f"{producer} writes its columns out of the declared order"


def test_the_writers_write_declared_columns_in_order_with_their_declared_types(tmp_path):
    bench = [pd.read_csv(GOLDEN / name) for name in ("bench_curve_measured.csv", "bench_curve_edited.csv")]
    observed = [pd.read_csv(GOLDEN / f"observe_ftdc_{name}_curve.csv") for name in FTDC]
    observed.append(_combined_members_curve(tmp_path))
    ycsb = [pd.read_csv(GOLDEN / f"ycsb_{name}_curve.csv") for name in YCSB_INPUTS] + [_ycsb_with_median(tmp_path)]
    assert ycsb[-1]["latency_p50_ms"].tolist() == [1.5]
    ycsb.append(_ycsb_with_target(tmp_path))
    assert ycsb[-1]["client_bound"].tolist() == [True]
    for table in bench:
        _check_written(table, cc.BENCH)
    for table in observed:
        _check_written(table, cc.OBSERVE)
    for table in ycsb:
        _check_written(table, cc.YCSB)
    # and every column declared for a producer is one it writes (a family through at least one member)
    for producer, tables in ((cc.BENCH, bench), (cc.OBSERVE, observed), (cc.YCSB, ycsb)):
        written = {cc.column(name).name for table in tables for name in table.columns}
        assert written == {c.name for c in cc.COLUMNS if producer in c.written_by}, producer


def test_the_in_memory_bench_table_is_the_written_one():
    table = curve_table(_bench_steps())
    assert list(table.columns) == list(pd.read_csv(GOLDEN / "bench_curve_edited.csv").columns)


def test_the_readers_take_both_curves_and_check_every_declared_latency(tmp_path):
    bench = read_curve(GOLDEN / "bench_curve_measured.csv")
    assert bench["latency_p999_ms"].tolist() == [1.207, 8.279]
    observed = read_curve(GOLDEN / "observe_ftdc_sample_curve.csv")
    assert len(observed) == 71 and observed["source"].eq("observed").all()
    bad = (GOLDEN / "bench_curve_measured.csv").read_text().replace(",8.279,0,", ",-8.279,0,", 1)
    (tmp_path / "bad.csv").write_text(bad)
    with pytest.raises(InputError, match=r"bad.csv: column 'latency_p999_ms', row 2: -8.279 must be >= 0"):
        read_curve(tmp_path / "bad.csv")
    spelled = pd.DataFrame({"threads": [1, 2], "ops": [10.0, 19.0], "tail": [2.5, 3.0]})
    spelled.to_csv(tmp_path / "spelled.csv", index=False)
    curve = read_curve(tmp_path / "spelled.csv", "threads", "ops", latency_p999_ms="tail")
    assert curve["latency_p999_ms"].tolist() == [2.5, 3.0]
