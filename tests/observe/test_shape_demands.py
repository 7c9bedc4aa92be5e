"""CPU per operation per shape and the what-if, on a log and CPU samples of known truth, made here.

Three shapes run at rates drawn afresh every second for 60 s (the log: one "Slow query" line per operation, slowms 0
from the command line's options); the server's CPU in each second is B + sum of D_s X_s plus noise (sd 0.004 cores),
with B = 0.03 cores and D = 4, 12 and 0.8 ms. Checked: the fitted D_s against the truth (within 5 % and inside their
95 % intervals), the what-if's utilization and load factor against the closed forms U = (B + sum f_s X_s D_s) / cores
and (cores - B) / (U cores - B) with the true figures, the shape named as breaking the server, cpuNanos taken as
logged, a shape of a few operations kept in the background, and the errors a user can make.
"""
from __future__ import annotations

import datetime as dt
import json

import numpy as np
import pandas as pd
import pytest

from capmodel.errors import InputError
from capmodel.observe import query_shapes
from capmodel.observe.shapes.what_if import shapes_what_if
from tests.support.cli_run import run

T0 = 1_790_000_000.0
SECONDS = 60
B, CORES = 0.03, 2
TRUTH = {"scan": 0.004, "range": 0.012, "lookup": 0.0008}
FILTERS = {"scan": {"status": "zq-a"}, "range": {"k": {"$gt": 1234567}}, "lookup": {"_id": "zq-b"}}
PLANS = {"scan": "COLLSCAN", "range": "IXSCAN { k: 1 }", "lookup": "IDHACK"}


def _stamp(t: float) -> str:
    return dt.datetime.fromtimestamp(t, dt.timezone.utc).isoformat(timespec="milliseconds")


def _entry(t: float, name: str, extra: dict | None = None) -> str:
    return json.dumps({"t": {"$date": _stamp(t)}, "id": 51803, "msg": "Slow query", "attr": {
        "type": "command", "ns": "db.c", "command": {"find": "c", "filter": FILTERS[name]}, "planSummary": PLANS[name],
        "durationMillis": 2, "docsExamined": 1, "nreturned": 1, **(extra or {})}})


def _lab(tmp_path, cpu_nanos: bool = False, health: bool = False, seed: int = 7):
    """(log path, samples, per-second rates): the log and the CPU of the module's known server."""
    rng = np.random.default_rng(seed)
    lines = [json.dumps({"t": {"$date": _stamp(T0)}, "id": 21951, "msg": "Options set by command line",
                         "attr": {"options": {"operationProfiling": {"slowOpThresholdMs": 0}}}})]
    rates, rows = [], []
    for second in range(SECONDS):
        rate = {name: int(rng.integers(low, high)) for name, (low, high) in
                (("scan", (5, 60)), ("range", (2, 30)), ("lookup", (10, 80)))}
        rates.append(rate)
        for name, n in rate.items():
            extra = {"cpuNanos": int(TRUTH[name] * 1e9)} if cpu_nanos and name == "scan" else None
            lines += [_entry(T0 + second + (i + 0.5) / n, name, extra) for i in range(n)]
        if health and second % 20 == 0:
            lines.append(json.dumps({"t": {"$date": _stamp(T0 + second + 0.01)}, "id": 51803, "msg": "Slow query",
                                     "attr": {"type": "command", "ns": "admin.$cmd", "command": {"hello": 1},
                                              "durationMillis": 0}}))
        cpu = B + sum(TRUTH[k] * v for k, v in rate.items()) + rng.normal(0, 0.004)
        rows.append({"time": pd.Timestamp(T0 + second + 1, unit="s", tz="UTC"), "interval_s": 1.0, "cpu_cores": cpu,
                     "dropped": "", "cores": CORES})
    lines.append(json.dumps({"t": {"$date": _stamp(T0 + SECONDS)}, "id": 22944, "msg": "Connection ended"}))
    lines.sort(key=lambda line: json.loads(line)["t"]["$date"])
    path = tmp_path / "mongod.log"
    path.write_text("\n".join(lines) + "\n")
    return path, pd.DataFrame(rows), pd.DataFrame(rates)


def _ids(shapes) -> dict:
    by_filter = dict(zip(shapes.rows["filter_shape"], shapes.rows["shape"]))
    return {"scan": by_filter["{status: ?}"], "range": by_filter["{k: {$gt: ?}}"], "lookup": by_filter["{_id: ?}"]}


def test_demands_are_the_truth_within_their_intervals(tmp_path):
    """Each shape's fitted CPU per operation is within 5 % of the truth and its 95 % interval holds it; the background
    is B within 0.01 cores."""
    path, samples, _ = _lab(tmp_path)
    shapes = query_shapes(path, interval_s=1)
    answer = shapes_what_if(shapes, samples, CORES, n_bootstrap=100)
    table = answer.table.set_index("shape")
    for name, sid in _ids(shapes).items():
        row = table.loc[sid]
        assert row["cpu_ms_per_op"] == pytest.approx(TRUTH[name] * 1000, rel=0.05), name
        assert row["cpu_ms_per_op_low"] <= TRUTH[name] * 1000 <= row["cpu_ms_per_op_high"], name
        assert row["cpu_source"] == "regression"
    assert answer.demands.background_cores == pytest.approx(B, abs=0.01)
    assert answer.demands.intervals == SECONDS


def test_the_what_if_against_the_closed_forms(tmp_path):
    """Scaling the range query x3 (by its rank in the table): utilization (B + sum f_s X_s D_s) / cores and the load
    factor (cores - B) / (U cores - B) computed with the true figures, within 5 %; the range query, the largest CPU
    share at that load, is named as breaking the server, and its rate at saturation is its asked rate times the
    factor."""
    path, samples, rates = _lab(tmp_path)
    shapes = query_shapes(path, interval_s=1)
    ids = _ids(shapes)
    rank = shapes.rows["shape"].tolist().index(ids["range"]) + 1
    answer = shapes_what_if(shapes, samples, CORES, {str(rank): 3}, n_bootstrap=100)
    factor = {"scan": 1, "range": 3, "lookup": 1}
    cpu = B + sum(factor[k] * rates[k].mean() * TRUTH[k] for k in TRUTH)
    assert answer.utilization == pytest.approx(cpu / CORES, rel=0.05)
    assert answer.load_factor_that_fits == pytest.approx((CORES - B) / (cpu - B), rel=0.05)
    assert answer.low["utilization"] <= cpu / CORES <= answer.high["utilization"]
    assert answer.limiting_shape == ids["range"]
    row = answer.table.set_index("shape").loc[ids["range"]]
    assert row["asked_per_s"] == pytest.approx(3 * rates["range"].mean())
    assert row["saturation_per_s"] == pytest.approx(row["asked_per_s"] * answer.load_factor_that_fits)
    json.dumps(answer.to_json(), allow_nan=False)


def test_a_load_that_does_not_fit(tmp_path):
    """The range query x100 needs more than the two cores: the answer says how much of that load fits (the load
    factor, < 1, against its closed form with the true figures), gives no latency, and is unusable (saturated)."""
    path, samples, rates = _lab(tmp_path)
    shapes = query_shapes(path, interval_s=1)
    ids = _ids(shapes)
    answer = shapes_what_if(shapes, samples, CORES, {ids["range"]: 100}, n_bootstrap=20)
    cpu = B + sum((100 if k == "range" else 1) * rates[k].mean() * TRUTH[k] for k in TRUTH)
    assert answer.utilization > 1 and answer.load_factor_that_fits == pytest.approx((CORES - B) / (cpu - B), rel=0.05)
    assert answer.evidence.grade == "unusable"
    assert "saturated" in answer.evidence.codes()
    assert answer.table["latency_ms"].isna().all()
    json.dumps(answer.to_json(), allow_nan=False)


def test_cpunanos_is_taken_as_logged_and_a_small_shape_stays_in_the_background(tmp_path):
    """With cpuNanos on the scan's lines its CPU per operation is the logged 4 ms exactly (source cpuNanos) and the
    others are still regressed; a health check three times a minute has no figure and no place in the what-if."""
    path, samples, _ = _lab(tmp_path, cpu_nanos=True, health=True)
    shapes = query_shapes(path, interval_s=1)
    answer = shapes_what_if(shapes, samples, CORES, n_bootstrap=50)
    table = answer.shapes_table.set_index("shape")
    ids = _ids(shapes)
    assert table.loc[ids["scan"], "cpu_source"] == "cpuNanos"
    assert table.loc[ids["scan"], "cpu_ms_per_op"] == pytest.approx(4.0)
    assert table.loc[ids["range"], "cpu_ms_per_op"] == pytest.approx(12.0, rel=0.05)
    hello = shapes.rows.loc[shapes.rows["operation"] == "hello", "shape"].item()
    assert hello not in answer.demands.classes and np.isnan(table.loc[hello, "cpu_ms_per_op"])


def test_what_a_user_can_get_wrong_is_refused(tmp_path):
    """The what-if's errors a user can make: an unknown shape, a factor out of range, too few intervals, shapes read
    without per-interval counts; --what-if or --interval without --ftdc, a --what-if without its factor on the command
    line (exit 2, one line)."""
    path, samples, _ = _lab(tmp_path)
    shapes = query_shapes(path, interval_s=1)
    with pytest.raises(InputError, match="no shape 'nope'; give a shape id of the table or its rank"):
        shapes_what_if(shapes, samples, CORES, {"nope": 2}, n_bootstrap=0)
    with pytest.raises(InputError, match="what-if: 1"):
        shapes_what_if(shapes, samples, CORES, {"1": -1}, n_bootstrap=0)
    with pytest.raises(InputError, match="at least 5"):
        shapes_what_if(shapes, samples.iloc[:3], CORES, n_bootstrap=0)
    done = run("shapes", path, "--out", tmp_path / "o", "--what-if", "1=2")
    assert done.returncode == 2 and done.stderr == "capmodel: error: --what-if needs --ftdc DIR (the server's CPU " \
                                                   "over the log's time)\n"
    with pytest.raises(InputError, match="read without interval_s"):
        shapes_what_if(query_shapes(path), samples, CORES)          # no per-interval counts were kept
    done = run("shapes", path, "--out", tmp_path / "o", "--interval", "1")
    assert done.returncode == 2 and "--interval needs --ftdc DIR" in done.stderr
    done = run("shapes", path, "--out", tmp_path / "o", "--ftdc", tmp_path, "--what-if", "1")
    assert done.returncode == 2 and "expected SHAPE=FACTOR" in done.stderr and done.stderr.count("\n") == 1
