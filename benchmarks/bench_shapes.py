"""The query shapes' CPU per operation against each shape measured alone, on a real embedded mongod (issue 30, point 4).

    .venv/bin/python benchmarks/bench_shapes.py [--alone 5] [--phases 30] [--repeat 1]

Each run: a fresh embedded mongod with FTDC on (one sample a second) and every operation logged (slowms 0 from the
start, so the logging's own CPU is in every figure alike); the lab of tests/support/shapes_lab.py (a collection scan,
an indexed range query, an update, an ``_id`` lookup on 2,000 documents, shared, not copied); 3 s idle, then each
shape alone for ``--alone`` seconds, then ``--phases`` phases of one second, each with its own random mix and load
(``shapes_lab.phase``: busy 20 to 100 % of it). Measured
alone: the process CPU (FTDC, the samples wholly inside the shape's window, less the idle window's) over the shape's
operations per second (the client's count). Fitted: ``query_shapes`` on the log's lines of the phased part only (cut
here at its start; ``slowms=0`` stated, as the cut log no longer shows it) and ``shapes_what_if`` with the FTDC,
intervals of one second. Printed per shape: measured alone, fitted with its 95 % interval, and the error
(fitted / alone - 1); the fit's verdict.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from capmodel.bench.server import embedded_server  # noqa: E402
from capmodel.observe import observe_ftdc, query_shapes  # noqa: E402
from capmodel.observe.shapes.what_if import shapes_what_if  # noqa: E402
from tests.support.shapes_lab import SHAPES, phase, phased_lab, run_for  # noqa: E402


def _window_cpu(samples: pd.DataFrame, start: float, end: float) -> float:
    """Mean process CPU (cores) of the FTDC samples wholly inside [start, end] (epoch seconds)."""
    stop = (pd.to_datetime(samples["time"], utc=True) - pd.Timestamp(0, tz="UTC")) / pd.Timedelta(seconds=1)
    begin = stop - samples["interval_s"]
    inside = (begin >= start) & (stop <= end)
    return float(np.average(samples.loc[inside, "cpu_cores"], weights=samples.loc[inside, "interval_s"]))


def one_run(alone_s: float, phases: int, seed: int, folder: Path) -> list[dict]:
    rng = random.Random(seed)
    windows = {}
    dbpath = folder / f"db{seed}"
    with embedded_server(dbpath=dbpath, diagnostic_data=True) as server:
        client = server.client()
        database = client["shapes_bench"]
        database.command("profile", 0, slowms=0)
        namespace, calls = phased_lab(database)
        start = time.time()
        time.sleep(3)
        windows["idle"] = (start, time.time(), {})
        for name in calls:
            begin = time.time()
            counts = run_for(calls, {name: 1.0}, alone_s, rng)
            windows[name] = (begin, time.time(), counts)
        mixed_start = time.time()
        for _ in range(phases):
            phase(calls, 1.0, rng)
        client.close()
        log = Path(server.logpaths[0])
    samples = observe_ftdc(dbpath / "diagnostic.data").samples
    cut = folder / f"mixed{seed}.log"
    with log.open() as source, cut.open("w") as out:
        for line in source:
            try:
                when = dt.datetime.fromisoformat(json.loads(line)["t"]["$date"]).timestamp()
            except (ValueError, KeyError, TypeError):
                continue
            if when >= mixed_start:
                out.write(line)
    shapes = query_shapes(cut, slowms=0, interval_s=1)
    answer = shapes_what_if(shapes, samples, 2, n_bootstrap=200)
    table = answer.table
    idle = _window_cpu(samples, *windows["idle"][:2])
    rows = []
    for name, (operation, text, _) in SHAPES.items():
        begin, end, counts = windows[name]
        alone = (_window_cpu(samples, begin + 1, end) - idle) / (counts[name] / (end - begin)) * 1000
        fitted = table[(table["namespace"] == namespace) & (table["operation"] == operation)
                       & (table["filter_shape"] == text)].iloc[0]
        rows.append({"run": seed, "shape": name, "alone_ms": alone, "fitted_ms": fitted["cpu_ms_per_op"],
                     "low_ms": fitted["cpu_ms_per_op_low"], "high_ms": fitted["cpu_ms_per_op_high"],
                     "error_pct": (fitted["cpu_ms_per_op"] / alone - 1) * 100, "grade": answer.evidence.grade,
                     "codes": ",".join(answer.evidence.codes())})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--alone", type=float, default=5.0, help="seconds of each shape alone (default 5)")
    parser.add_argument("--phases", type=int, default=30, help="phases of one second with random mixes (default 30)")
    parser.add_argument("--repeat", type=int, default=1, help="runs, each on a fresh server (default 1)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-shapes-"))
    try:
        rows = [row for seed in range(args.repeat) for row in one_run(args.alone, args.phases, seed, folder)]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    table = pd.DataFrame(rows)
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.float_format", "{:.4g}".format):
        print(table.to_string(index=False))
    print(f"median |error| {table['error_pct'].abs().median():.1f}%, largest {table['error_pct'].abs().max():.1f}%; "
          f"alone inside the fitted interval {int(((table['low_ms'] <= table['alone_ms']) & (table['alone_ms'] <= table['high_ms'])).sum())}"
          f" of {len(table)}")


if __name__ == "__main__":
    main()
