"""The seconds a shape's rate and the server's CPU are compared over are the same seconds, whatever the offset
between the log's clock and the CPU samples'.

A known server: two shapes at rates drawn afresh for each whole second of the log's clock, CPU = B + Σ D_s X_s
(no noise), sampled once a second by a sampler whose seconds start ``offset`` into the log's. With the log counted in
tenths of a second, each sample's window gets its own rates and the demands come out as the truth (within 2 %)
at any offset; counted in whole seconds, the log's seconds are the intervals and each gets the CPU of the samples in
proportion to their overlap. The known demands let the test tell the two apart from an offset-blind join, which at
half a second halves the signal each sample carries of its own second's mix.
"""
from __future__ import annotations

import datetime as dt
import json

import numpy as np
import pandas as pd
import pytest

from capmodel.observe import query_shapes
from capmodel.observe.shapes.demand import fit_shape_demands, shape_intervals

T0 = 1_790_000_000.0
SECONDS = 80
B = 0.05
TRUTH = {"scan": 0.004, "lookup": 0.0008}
FILTERS = {"scan": {"status": "zq-a"}, "lookup": {"_id": "zq-b"}}


def _line(t: float, attr: dict, msg: str = "Slow query", id_: int = 51803) -> str:
    stamp = dt.datetime.fromtimestamp(t, dt.timezone.utc).isoformat(timespec="milliseconds")
    return json.dumps({"t": {"$date": stamp}, "id": id_, "msg": msg, "attr": attr})


def _server(tmp_path, offset: float, seed: int = 3):
    """(log path, CPU samples, per-second rates) of the known server, the samples ``offset`` s after the log's
    seconds."""
    rng = np.random.default_rng(seed)
    rates = [{"scan": int(rng.integers(5, 80)), "lookup": int(rng.integers(10, 200))} for _ in range(SECONDS)]
    lines = [_line(T0, {"options": {"operationProfiling": {"slowOpThresholdMs": 0}}}, "Options set by command line",
                   21951)]
    for second, rate in enumerate(rates):
        for name, n in rate.items():
            lines += [_line(T0 + second + (i + 0.5) / n, {
                "type": "command", "ns": "db.c", "command": {"find": "c", "filter": FILTERS[name]},
                "planSummary": "COLLSCAN" if name == "scan" else "IDHACK", "durationMillis": 1, "docsExamined": 1,
                "nreturned": 1}) for i in range(n)]
    lines.append(_line(T0 + SECONDS + 1, {}, "Connection ended", 22944))
    lines.sort(key=lambda line: json.loads(line)["t"]["$date"])
    path = tmp_path / "mongod.log"
    path.write_text("\n".join(lines) + "\n")
    cpu_of = [B + sum(TRUTH[k] * v for k, v in rate.items()) for rate in rates]
    rows = []
    for second in range(SECONDS - 1):      # the sample over [second + offset, second + 1 + offset]
        cpu = (1 - offset) * cpu_of[second] + offset * cpu_of[second + 1]
        rows.append({"time": pd.Timestamp(T0 + second + 1 + offset, unit="s", tz="UTC"), "interval_s": 1.0,
                     "cpu_cores": cpu, "dropped": "", "cores": 2})
    return path, pd.DataFrame(rows), rates


def _demands(shapes, samples) -> dict:
    fit = fit_shape_demands(shapes, samples, 2)
    by_filter = dict(zip(shapes.rows["shape"], shapes.rows["filter_shape"]))
    return {"scan" if by_filter[sid] == "{status: ?}" else "lookup": d for sid, d in fit.cpu_per_op.items()}


@pytest.mark.parametrize("offset", [0.0, 0.3, 0.5, 0.8])
def test_each_cpu_sample_gets_the_rates_of_its_own_window(tmp_path, offset):
    path, samples, rates = _server(tmp_path, offset)
    shapes = query_shapes(path, interval_s=0.1)
    table = shape_intervals(shapes, samples)
    assert table["seconds"].tolist() == pytest.approx([1.0] * len(table))
    assert len(table) >= SECONDS - 3
    scan = next(sid for sid, f in zip(shapes.rows["shape"], shapes.rows["filter_shape"]) if f == "{status: ?}")
    first = table.iloc[1]      # its window straddles two of the log's seconds in the share the offset says
    second = int(round(first["start"] - T0 - offset))
    expected = (1 - offset) * rates[second]["scan"] + offset * rates[second + 1]["scan"]
    assert first[f"{scan}_per_s"] == pytest.approx(expected, abs=1.0)
    for name, demand in _demands(shapes, samples).items():
        assert demand == pytest.approx(TRUTH[name], rel=0.02), (offset, name)


def test_log_intervals_longer_than_the_samples_take_their_cpu_by_overlap(tmp_path):
    """Log intervals of 4 s over samples half a second off: each interval's CPU is the samples' mean weighted by
    overlap, the truth's mean over those 4 s but for the quarter-second a sample straddles at each end."""
    path, samples, rates = _server(tmp_path, 0.5)
    shapes = query_shapes(path, interval_s=4)
    table = shape_intervals(shapes, samples)
    assert table["seconds"].tolist() == pytest.approx([4.0] * len(table))
    cpu_of = [B + sum(TRUTH[k] * v for k, v in rate.items()) for rate in rates]
    whole = [row for _, row in table.iterrows() if 1 <= row["start"] - T0 <= SECONDS - 6]   # samples on both sides
    assert len(whole) >= 15
    for row in whole:
        first = int(round(row["start"] - T0))
        inside = sum(cpu_of[first:first + 4]) - 0.25 * (cpu_of[first] + cpu_of[first + 3])
        ends = 0.25 * (cpu_of[first - 1] + cpu_of[first + 4])
        assert row["cpu_cores"] == pytest.approx((inside + ends) / 4, rel=1e-9)
