"""The replay workload's fidelity on a real embedded mongod (issue 30, points 3 and 4): per shape, its share of the
operations and its CPU per operation in the replay against production, side by side.

    .venv/bin/python benchmarks/bench_replay.py [--alone 5] [--mix 10] [--documents 2000] [--repeat 1]
                                                [--binding pymongo|wire|mongojet]

Each run: a fresh embedded mongod with FTDC on (one sample a second) and every operation logged (slowms 0 from the
start). Production is the lab of tests/support/shapes_lab.py (a collection scan, an indexed range query with a sort,
an update by the index, an ``_id`` lookup, on ``--documents`` documents; the scan without a limit, since a limit is not
part of a shape): 3 s idle, then the four at random, equally, for ``--mix`` seconds. The workload is
``replay_workload`` of the mix's part of the log; it runs with ``capmodel bench`` (one client, its own database and
data) on the same server. Then, shape by shape, production's shape alone for ``--alone`` seconds and right after it
the replay's operation alone (a copy of the workload with that operation only; side by side in time, so that the
other jobs' load drifts less between the two); last, the whole workload for ``--mix`` seconds.

CPU per operation, on both sides alike: the process CPU (FTDC, the samples wholly inside the window, less the idle
window's) over the shape's operations per second (its entries in the log in the same window), the window being
the shape's first to last log entry of the run less half a second at each end. Mix: each shape's share of the
operations in the mix's log and the replay's (``replay_fidelity``). Printed per shape: production's and the replay's
share and their difference (points), CPU per operation on each side and the error (replay / production - 1), and the
whole mix's CPU per operation on each side.

Printed too: each side's whole mix priced at its own shapes' CPU per operation alone, which tells whether a
difference between the two mixes comes from the shapes or from running them together. Figures: docs/benchmarks.md.
"""
from __future__ import annotations

import argparse
import copy
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from capmodel.bench.server import embedded_server  # noqa: E402
from capmodel.observe import observe_ftdc, query_shapes  # noqa: E402
from capmodel.observe.shapes.entries import LoggedOperation, LogScan, read_log  # noqa: E402
from capmodel.observe.shapes.fidelity import log_window, replay_fidelity, window_cpu  # noqa: E402
from capmodel.observe.shapes.replay import replay_workload  # noqa: E402
from tests.support.cli_run import run  # noqa: E402
from tests.support.shapes_lab import SHAPES, phased_lab, run_for  # noqa: E402


def _entries(log: Path, namespace: str) -> list[LoggedOperation]:
    return [op for op in read_log(log, LogScan()) if isinstance(op, LoggedOperation) and op.namespace == namespace]


def _cpu_per_op(samples, entries, begin: float, end: float, operation: str, filter_text: str, idle: float) -> float:
    """ms of CPU per operation of one shape run alone in [begin, end] (the module's docstring)."""
    times = sorted(e.time for e in entries if begin <= e.time <= end and e.operation == operation
                   and e.filter_shape == filter_text)
    first, last = times[0] + 0.5, times[-1] - 0.5
    rate = sum(first <= t <= last for t in times) / (last - first)
    return (window_cpu(samples, first, last) - idle) / rate * 1000


def one_run(alone_s: float, mix_s: float, documents: int, seed: int, folder: Path,
            binding: str) -> tuple[pd.DataFrame, dict]:
    rng = random.Random(seed)
    dbpath = folder / f"db{seed}"
    windows: dict = {}
    with embedded_server(dbpath=dbpath, diagnostic_data=True) as server:
        client = server.client()
        database = client["replay_bench"]
        database.command("profile", 0, slowms=0)
        namespace, calls = phased_lab(database, documents, scan_limit=0)
        start = time.time()
        time.sleep(3)
        windows["idle"] = (start, time.time())
        begin = time.time()
        run_for(calls, dict.fromkeys(calls, 1.0), mix_s, rng)
        windows["mix"] = (begin, time.time())
        log = Path(server.logpaths[0])
        production = query_shapes(log_window(log, *windows["mix"], folder / f"mix{seed}.log"), slowms=0)
        workload = replay_workload(production, namespace=namespace)
        spec = workload.spec
        bench = ("--uri", server.uri, "--database", "replay_bench_run", "--concurrency", "1", "--warmup", "1",
                 "--binding", binding, "--quiet", "--duration")
        path = folder / "replay.yaml"
        path.write_text(workload.to_yaml())
        ids = {(r["operation"], r["filter_shape"]): r["shape"] for _, r in production.rows.iterrows()
               if r["namespace"] == namespace}
        for name, (operation, text, _) in SHAPES.items():     # each shape alone, production's then the replay's
            begin = time.time()
            run_for(calls, {name: 1.0}, alone_s, rng)
            windows[name] = (begin, time.time())
            op_name = f"shape_{ids[(operation, text)]}"
            alone = copy.deepcopy(spec)
            alone["operations"] = [op for op in spec["operations"] if op["name"] == op_name]
            alone_path = folder / f"{op_name}.yaml"
            alone_path.write_text(yaml.safe_dump(alone, sort_keys=False))
            begin = time.time()
            done = run("bench", "--workload", alone_path, *bench, alone_s, "--out", folder / f"out-{op_name}")
            assert done.returncode == 0, done.stderr
            windows[op_name] = (begin, time.time())
        begin = time.time()
        done = run("bench", "--workload", path, *bench, mix_s, "--out", folder / f"out-replay{seed}")
        assert done.returncode == 0, done.stderr
        windows["replay"] = (begin, time.time())
        client.close()
    samples = observe_ftdc(dbpath / "diagnostic.data").samples
    idle = window_cpu(samples, *windows["idle"])
    ours, theirs = _entries(log, namespace), _entries(log, f"replay_bench_run.{spec['collection']}")
    production_cpu, replay_cpu = {}, {}
    for name, (operation, text, _) in SHAPES.items():
        sid = ids[(operation, text)]
        production_cpu[sid] = _cpu_per_op(samples, ours, *windows[name], operation, text, idle)
        replay_cpu[sid] = _cpu_per_op(samples, theirs, *windows[f"shape_{sid}"], operation, text, idle)
    replay = query_shapes(log_window(log, *windows["replay"], folder / f"replay{seed}.log"), slowms=0)
    fidelity = replay_fidelity(production, replay, workload, production_cpu, replay_cpu)
    table = fidelity.table.assign(run=seed, shape_name=fidelity.table["filter_shape"].map(
        {text: name for name, (_, text, _) in SHAPES.items()}))
    whole, lab = {}, {(operation, text) for operation, text, _ in SHAPES.values()}   # not the load's inserts
    alone_cpu = {"production": production_cpu, "replay": replay_cpu}
    for side, entries, key in (("production", ours, "mix"), ("replay", theirs, "replay")):
        begin, end = windows[key]
        kept = [e for e in entries if begin <= e.time <= end and (e.operation, e.filter_shape) in lab]
        first, last = min(e.time for e in kept) + 0.5, max(e.time for e in kept) - 0.5
        inside = [e for e in kept if first <= e.time <= last]
        rate = len(inside) / (last - first)
        whole[side] = (window_cpu(samples, first, last) - idle) / rate * 1000
        # the same mix priced at each shape's CPU per operation alone: what the mix would cost without interaction
        shares = pd.Series([ids[(e.operation, e.filter_shape)] for e in inside]).value_counts(normalize=True)
        whole[f"{side}_from_alone"] = float(sum(share * alone_cpu[side][sid] for sid, share in shares.items()))
        whole[f"{side}_rate"] = rate
    return table, whole


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--alone", type=float, default=5.0, help="seconds of each shape alone (default 5)")
    parser.add_argument("--mix", type=float, default=10.0, help="seconds of the mix, each side (default 10)")
    parser.add_argument("--documents", type=int, default=2000, help="the lab's documents (default 2000)")
    parser.add_argument("--binding", default="pymongo", help="capmodel bench's binding for the replay (default "
                        "pymongo, as the lab's production client: a session per operation, as the server sees it)")
    parser.add_argument("--repeat", type=int, default=1, help="runs, each on a fresh server (default 1)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-replay-"))
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    try:
        results = [one_run(args.alone, args.mix, args.documents, seed, folder, args.binding)
                   for seed in range(args.repeat)]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    table = pd.concat([t for t, _ in results])
    shown = table[["run", "shape_name", "shape", "production_share", "replay_share", "mix_error",
                   "production_cpu_ms_per_op", "replay_cpu_ms_per_op", "cpu_error"]]
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.float_format", "{:.4g}".format):
        print(shown.to_string(index=False))
    for seed, (_, whole) in enumerate(results):
        print(f"run {seed}: the whole mix's CPU per operation: production {whole['production']:.4g} ms, replay "
              f"{whole['replay']:.4g} ms ({whole['replay'] / whole['production'] - 1:+.1%}); priced at each shape's "
              f"CPU alone, production {whole['production_from_alone']:.4g} ms, replay "
              f"{whole['replay_from_alone']:.4g} ms; the mixes ran at {whole['production_rate']:,.0f} and "
              f"{whole['replay_rate']:,.0f} operations a second")
    print(f"mix: largest |error| {100 * table['mix_error'].abs().max():.2f} points; CPU per operation: median |error| "
          f"{table['cpu_error'].abs().median():.1%}, largest {table['cpu_error'].abs().max():.1%}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
