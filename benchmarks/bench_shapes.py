"""The query shapes' CPU per operation against each shape measured alone, and the what-if's saturation against a
measured one, on a real embedded mongod (issue 30, point 4).

    .venv/bin/python benchmarks/bench_shapes.py [--alone 10] [--phases 60] [--repeat 1] [--interval 0.1]
                                                [--saturate SHAPE=FACTOR] [--no-pin]

Each run: a fresh embedded mongod with FTDC on (one sample a second) and every operation logged (slowms 0 from the
start, so the logging's own CPU is in every figure alike), pinned to core 0 and this process (the clients) to core 1;
the lab of tests/support/shapes_lab.py (a collection scan, an indexed range query, an update, an ``_id`` lookup on
2,000 documents, shared, not copied); 3 s idle, then each shape alone for ``--alone`` seconds, then ``--phases``
phases of one second, each with its own random mix and load (``shapes_lab.phase``: busy 20 to 100 % of it).
Measured alone: the process CPU (FTDC, the samples wholly inside the shape's window, less the idle window's) over the
shape's operations per second (the client's count). Fitted: ``query_shapes`` on the log's lines of the phased part
only (cut here at its start; ``slowms=0`` stated, as the cut log no longer shows it), counted in ``--interval``
seconds (0.1: each FTDC sample is a point of the fit with the rates of its own window), and ``shapes_what_if`` with
the FTDC. Printed per shape: measured alone, fitted with its 95 % interval, and the error (fitted / alone - 1); the
fit's verdict.

``--saturate scan=3`` (a lab shape's name and a factor): after the phases, the what-if's mix (the phases' operations
per shape, that shape's times the factor) runs closed-loop on 8 client threads for 10 s with the mongod held to half
a core (a CPU quota, tests/support/cpu_quota.py: root and cgroup v1's cpu controller), which clients on one core can
saturate; the row sets the throughput measured against the what-if's saturation held to that quota,
(0.5 - B) / CPU asked, with B the fitted background, and says how much of the quota the server used and in what
share of the quota's periods it was throttled (near all: saturated).
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
from tests.support.cpu_quota import quota, throttled_share  # noqa: E402
from tests.support.shapes_lab import SHAPES, phase, phased_lab, run_for  # noqa: E402

QUOTA = 0.5     # the server's cores in the saturation run (a CPU quota): what clients on one core can saturate


def window_cpu(samples: pd.DataFrame, start: float, end: float) -> float:
    """Mean process CPU (cores) of the FTDC samples wholly inside [start, end] (epoch seconds)."""
    stop = (pd.to_datetime(samples["time"], utc=True) - pd.Timestamp(0, tz="UTC")) / pd.Timedelta(seconds=1)
    begin = stop - samples["interval_s"]
    inside = (begin >= start) & (stop <= end)
    return float(np.average(samples.loc[inside, "cpu_cores"], weights=samples.loc[inside, "interval_s"]))


def cut_log(log: Path, out: Path, begin: float, end: float) -> Path:
    """The lines of ``log`` whose time is in [begin, end] (epoch seconds), written to ``out``."""
    with log.open() as source, out.open("w") as kept:
        for line in source:
            try:
                when = dt.datetime.fromisoformat(json.loads(line)["t"]["$date"]).timestamp()
            except (ValueError, KeyError, TypeError):
                continue
            if begin <= when <= end:
                kept.write(line)
    return out


def _saturate(server, database_name: str, collection: str, weights: dict, seconds: float, threads: int = 8) -> int:
    """Operations the lab's shapes, drawn by ``weights``, complete on ``threads`` closed-loop clients in ``seconds``."""
    import threading

    client = server.client(maxPoolSize=threads + 2)
    _, calls = phased_lab(client[database_name], collection=collection, load=False)
    done = [0] * threads

    def work(i):
        done[i] = sum(run_for(calls, weights, seconds, random.Random(i)).values())

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    client.close()
    return sum(done)


def one_run(alone_s: float, phases: int, seed: int, folder: Path, saturate: tuple | None = None,
            interval_s: float = 0.1, pin: bool = True) -> list[dict]:
    import os

    rng = random.Random(seed)
    windows = {}
    dbpath = folder / f"db{seed}"
    if pin:
        os.sched_setaffinity(0, {1})
    with embedded_server(dbpath=dbpath, diagnostic_data=True, cpus="0" if pin else None) as server:
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
        phase_counts = [phase(calls, 1.0, rng) for _ in range(phases)]
        mixed_end = time.time()
        if saturate:
            name, factor = saturate
            totals = {n: sum(c[n] for c in phase_counts) * (factor if n == name else 1.0) for n in calls}
            with quota(server.pid, QUOTA) as group:
                begin = time.time()
                measured = _saturate(server, database.name, namespace.split(".", 1)[1], totals, 10.0)
                windows["saturated"] = (begin, time.time(), measured)
                throttled = throttled_share(group)
        client.close()
        log = Path(server.logpaths[0])
    samples = observe_ftdc(dbpath / "diagnostic.data").samples
    shapes = query_shapes(cut_log(log, folder / f"mixed{seed}.log", mixed_start, mixed_end), slowms=0,
                          interval_s=interval_s)
    factors = {}
    if saturate:
        operation, text, _ = SHAPES[saturate[0]]
        rows = shapes.rows
        factors = {rows[(rows["namespace"] == namespace) & (rows["operation"] == operation)
                        & (rows["filter_shape"] == text)].iloc[0]["shape"]: saturate[1]}
    answer = shapes_what_if(shapes, samples, 1 if pin else 2, factors, n_bootstrap=200)
    table = answer.table
    idle = window_cpu(samples, *windows["idle"][:2])
    rows = []
    for name, (operation, text, _) in SHAPES.items():
        begin, end, counts = windows[name]
        alone = (window_cpu(samples, begin + 1, end) - idle) / (counts[name] / (end - begin)) * 1000
        fitted = table[(table["namespace"] == namespace) & (table["operation"] == operation)
                       & (table["filter_shape"] == text)].iloc[0]
        rows.append({"run": seed, "shape": name, "alone_ms": alone, "fitted_ms": fitted["cpu_ms_per_op"],
                     "low_ms": fitted["cpu_ms_per_op_low"], "high_ms": fitted["cpu_ms_per_op_high"],
                     "error_pct": (fitted["cpu_ms_per_op"] / alone - 1) * 100, "grade": answer.evidence.grade,
                     "codes": ",".join(answer.evidence.codes())})
    if saturate:
        begin, end, measured = windows["saturated"]
        # the what-if's saturation on a whole core, (1 - B) / CPU asked, held to the quota: (QUOTA - B) / CPU asked
        asked, held = sum(answer.rates.values()), (QUOTA - answer.demands.background_cores) / (
            1 - answer.demands.background_cores)
        predicted = answer.load_factor_that_fits * asked * held
        rows.append({"run": seed, "shape": f"saturation {saturate[0]} x{saturate[1]:g}",
                     "alone_ms": measured / (end - begin), "fitted_ms": predicted,
                     "low_ms": answer.low["load_factor_that_fits"] * asked * held,
                     "high_ms": answer.high["load_factor_that_fits"] * asked * held,
                     "error_pct": (predicted / (measured / (end - begin)) - 1) * 100,
                     "grade": answer.evidence.grade,
                     "codes": f"server CPU {window_cpu(samples, begin + 1, end):.2f} of its {QUOTA:g} cores, "
                              f"quota used up in {throttled:.0%} of periods"})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--alone", type=float, default=10.0, help="seconds of each shape alone (default 10)")
    parser.add_argument("--phases", type=int, default=60, help="phases of one second with random mixes (default 60)")
    parser.add_argument("--interval", type=float, default=0.1, help="seconds per interval the log is counted in "
                        "(default 0.1: each FTDC sample is a point of the fit, with the rates of its own window)")
    parser.add_argument("--no-pin", action="store_true", help="leave the server and the clients on any core")
    parser.add_argument("--repeat", type=int, default=1, help="runs, each on a fresh server (default 1)")
    parser.add_argument("--saturate", metavar="SHAPE=FACTOR", help="also measure the saturation throughput at the "
                        "what-if's mix (shapes: scan, range, update, lookup), the server on core 0 alone")
    args = parser.parse_args()
    saturate = None
    if args.saturate:
        name, _, factor = args.saturate.partition("=")
        saturate = (name, float(factor))
    folder = Path(tempfile.mkdtemp(prefix="bench-shapes-"))
    try:
        rows = [row for seed in range(args.repeat)
                for row in one_run(args.alone, args.phases, seed, folder, saturate, args.interval, not args.no_pin)]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    table = pd.DataFrame(rows)
    print("rows: a shape's CPU per operation (ms), measured alone and fitted; a saturation row: ops/s measured and "
          "predicted")
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.float_format", "{:.4g}".format):
        print(table.to_string(index=False))
    demands = table[~table["shape"].str.startswith("saturation")]
    inside = int(((demands["low_ms"] <= demands["alone_ms"]) & (demands["alone_ms"] <= demands["high_ms"])).sum())
    print(f"CPU per operation: median |error| {demands['error_pct'].abs().median():.1f}%, largest "
          f"{demands['error_pct'].abs().max():.1f}%; alone inside the fitted interval {inside} of {len(demands)}")


if __name__ == "__main__":
    main()
