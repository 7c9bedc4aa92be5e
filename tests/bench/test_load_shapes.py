"""Load shapes (``capmodel.bench.client.arrivals``): each shape's rate over the window as written, the due times that
follow it (evenly spaced and Poisson), traces read from CSV and from observe's ``samples.csv``, refusals naming the
option, file and line, and an open-loop step against the real embedded mongod measured window by window."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from capmodel.bench.client.arrivals import parse_rate_shape, shaped_schedule
from capmodel.bench.client.measurements import Recorder, combine_windows, summarize_window, window_measurements
from capmodel.errors import BenchError


@pytest.mark.parametrize("text, fractions, rates", [
    ("ramp:100:2000", [0, 0.25, 1], [100, 575, 2000]),
    ("step:500:2000", [0.1, 0.49, 0.51, 0.9], [500, 500, 2000, 2000]),
    ("step:0:1000:0.2", [0.1, 0.3], [0, 1000]),
    ("sine:1000:500", [0, 0.25, 0.5, 0.75], [1000, 1500, 1000, 500]),
    ("sine:1000:500:2", [0.125, 0.375], [1500, 500]),
    ("spike:500:5000", [0.2, 0.5, 0.56, 0.8], [500, 5000, 500, 500]),
    ("spike:500:5000:0.5", [0.3, 0.7, 0.8], [5000, 5000, 500]),
])
def test_each_shape_gives_its_written_rate_over_the_window(text, fractions, rates):
    shape = parse_rate_shape(text)
    assert shape.rate_at(fractions) == pytest.approx(rates, abs=1e-6 * max(rates))


@pytest.mark.parametrize("text, mean", [
    ("ramp:100:2000", 1050.0), ("step:500:2000", 1250.0), ("sine:1000:500", 1000.0), ("spike:500:5000", 950.0),
])
def test_the_mean_rate_is_the_shapes_integral(text, mean):
    assert parse_rate_shape(text).mean_rate() == pytest.approx(mean, rel=1e-4)


@pytest.mark.parametrize("text, says", [
    ("wave:1:2", "the shape is one of ramp, step, sine, spike, trace"),
    ("ramp:100", "write ramp:FROM:TO"),
    ("ramp:100:x", "'100', 'x' must be numbers"),
    ("ramp:-5:100", "finite and >= 0"),
    ("ramp:0:0", "the rate is 0 throughout"),
    ("step:1:2:1.5", "AT is a fraction of the window"),
    ("spike:1:2:0", "WIDTH is a fraction of the window"),
    ("sine:100:200", "the amplitude 200 is above the mean 100"),
    ("sine:100:50:1.5", "PERIODS must be a whole number"),
    ("trace:", "name the CSV file"),
])
def test_a_malformed_shape_is_refused_naming_the_option(text, says):
    with pytest.raises(BenchError, match="^--rate-shape") as caught:
        parse_rate_shape(text)
    assert says in str(caught.value)


def _counts(due, warmup, window, bins):
    return np.histogram(due[due >= warmup] - warmup, bins=bins, range=(0, window))[0]


def test_evenly_spaced_due_times_follow_the_integral_of_the_rate():
    shape = parse_rate_shape("ramp:100:2000")
    due = shaped_schedule(shape, warmup=1.0, window=10.0)
    assert np.all(np.diff(due) > 0)
    assert np.count_nonzero(due < 1.0) == 100                       # the warm-up at the first rate
    expected = [1.0 * shape.mean_rate(k / 10, (k + 1) / 10) for k in range(10)]  # 1 s windows
    assert _counts(due, 1.0, 10.0, 10) == pytest.approx(expected, abs=1.01)  # evenly spaced: within one


def test_no_operation_is_due_where_the_rate_is_zero():
    due = shaped_schedule(parse_rate_shape("step:0:1000:0.5"), warmup=0.0, window=4.0)
    assert due.min() >= 2.0 - 1e-9 and len(due) == 2000


def test_poisson_due_times_of_a_shape_are_poisson_in_each_window():
    shape = parse_rate_shape("sine:2000:1500")
    due = shaped_schedule(shape, warmup=0.0, window=20.0, arrivals="poisson", seed=5)
    counts = _counts(due, 0.0, 20.0, 40)
    expected = np.array([0.5 * shape.mean_rate(k / 40, (k + 1) / 40) for k in range(40)])  # 0.5 s windows
    # Poisson counts: the chi-square of (count - mean)^2 / mean over the 40 windows, 40 degrees of freedom
    assert stats.chi2.sf(np.sum((counts - expected) ** 2 / expected), 40) > 1e-3
    assert np.any(np.abs(counts - expected) > 1.0)   # not evenly spaced


def test_a_trace_csv_sets_the_rates_over_its_time_span(tmp_path):
    path = tmp_path / "rates.csv"
    path.write_text("time,ops_per_s\n0,100\n30,400\n60,100\n")
    shape = parse_rate_shape(f"trace:{path}")
    assert shape.rate_at([0, 0.25, 0.5, 1.0]) == pytest.approx([100, 250, 400, 100])


def test_a_trace_from_observes_samples_csv_plays_its_total_rate(tmp_path):
    from capmodel.observe.csv_out import write_csv
    from capmodel.observe.observation import TIME_FORMAT

    times = pd.date_range("2026-11-02T00:00:00Z", periods=5, freq="60s")
    reads, writes, commands = [100, 200, 300, 200, 100], [10, 20, 30, 20, 10], [1, 2, 3, 2, 1]
    samples = pd.DataFrame({"time": times, "interval_s": 60.0, "reads_per_s": reads, "writes_per_s": writes,
                            "commands_per_s": commands, "cpu_cores": 0.5, "dropped": ""})
    write_csv(samples, tmp_path / "samples.csv", TIME_FORMAT)
    shape = parse_rate_shape(f"trace:{tmp_path / 'samples.csv'}")
    assert shape.fractions == pytest.approx([0, 0.25, 0.5, 0.75, 1.0])
    assert shape.rates == pytest.approx([r + w + c for r, w, c in zip(reads, writes, commands)])


@pytest.mark.parametrize("content, says", [
    ("when,ops_per_s\n0,1\n1,2\n", "needs a 'time' column and 'ops_per_s'"),
    ("time,ops_per_s\n0,1\nlater,2\n", "line 3: 'time' and the rates must be a time and numbers"),
    ("time,ops_per_s\n0,1\n1,-2\n", "line 3: a rate must be finite and >= 0"),
    ("time,ops_per_s\n0,1\n", "at least two rows at different times"),
])
def test_a_bad_trace_is_refused_naming_the_file_and_line(tmp_path, content, says):
    path = tmp_path / "t.csv"
    path.write_text(content)
    with pytest.raises(BenchError, match="^--rate-shape") as caught:
        parse_rate_shape(f"trace:{path}")
    assert str(path) in str(caught.value) and says in str(caught.value)


def test_windows_of_several_client_processes_add_up():
    rng = np.random.default_rng(2)
    shares, union = [], [[], []]
    for _ in range(2):
        recorder = Recorder(1)
        due = np.sort(rng.uniform(0.0, 2.0, 500))
        latency = rng.integers(100, 20_000, 500)
        recorder.due[0], recorder.latencies[0] = due.tolist(), latency.tolist()
        recorder.error_due = [0.5, 1.5, 1.7]
        parts = window_measurements([recorder], [0.0, 1.0, 2.0])
        shares.append([summarize_window({**p, "start_s": k, "end_s": k + 1.0, "target_rate": 250.0})
                       for k, p in enumerate(parts)])
        for k in range(2):
            union[k] += latency[(due >= k) & (due < k + 1)].tolist()
    merged = combine_windows(shares)
    for k, window in enumerate(merged):
        assert window["operations"] == len(union[k]) and window["target_rate"] == 500.0
        assert window["errors"] == (2 if k == 0 else 4)
        # HdrHistogram keeps 3 significant digits
        assert window["p95_ms"] == pytest.approx(np.percentile(union[k], 95, method="higher") / 1000, rel=2e-3)


def test_a_shaped_step_against_the_server_follows_its_rate_window_by_window(mongod):
    from capmodel.bench.client.operations import KeySpace, load_records
    from capmodel.bench.client.runner import Runner
    from capmodel.bench.workload.definition import load_workload

    client = mongod.client()
    client.drop_database("capmodel_test_shapes")
    try:
        workload = load_workload("ycsb-c", records=300, collection="shaped")
        collection = client["capmodel_test_shapes"]["shaped"]
        load_records(collection, workload, 0, 300)
        shape = parse_rate_shape("step:100:400")
        result = Runner(collection, workload, KeySpace(workload, 300), seed=1).run(
            8, duration=2.0, warmup=0.3, shape=shape, windows=4)
    finally:
        client.drop_database("capmodel_test_shapes")
        client.close()
    assert result.rate_shape == "step:100:400" and result.target_rate == pytest.approx(250.0)
    assert [w["target_rate"] for w in result.windows] == pytest.approx([100, 100, 400, 400], rel=1e-6)
    due = [w["target_rate"] * (w["end_s"] - w["start_s"]) for w in result.windows]
    for window, expected in zip(result.windows, due):
        # every operation due in a window is measured there or failed or never served, counted with the errors
        # (evenly spaced: the count due is exact to one)
        assert abs(window["operations"] + window["errors"] - expected) <= 1
        assert math.isfinite(window["p95_ms"]) and window["p95_ms"] > 0
    assert sum(w["operations"] for w in result.windows) == result.operations


@pytest.mark.parametrize("options, says", [
    (["--rate-shape", "ramp:1:2", "--rate", "5"], "--rate-shape sets each step's rates: leave out --rate"),
    (["--rate-shape", "wave:1"], "--rate-shape 'wave:1': the shape is one of"),
    (["--windows", "4"], "--windows cuts an open-loop step: give --rate or --rate-shape too"),
])
def test_shape_options_that_cannot_work_are_refused_in_one_line(tmp_path, options, says):
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "capmodel.cli", "bench", "--out", str(tmp_path / "o"), "--uri",
                           "mongodb://127.0.0.1:1/", *options], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and says in proc.stderr and proc.stderr.count("\n") == 1
