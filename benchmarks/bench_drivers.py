"""Client CPU per operation of MongoDB driver variants for point reads, each measured alone in a fresh process.

    python benchmarks/bench_drivers.py [--clients 16,64,256] [--repeats 3] [--duration 1] [--warmup 0.5]
                                       [--variants default|tricks|deadline|all|NAME,..] [--json]

Starts its own embedded mongod and loads 10,000 YCSB-like records (_id "user<n>", field0..field9 of 100 bytes each).
For every concurrency and repeat it runs, each in a FRESH subprocess (benchmarks/driver_loops.py), a closed loop of
N clients reading random keys by _id (every driver with maxPoolSize = maxConnecting = N; the warm-up starts once the
pool holds N connections or has stopped growing for 1 s, so no connection is opened in the window), and measures
over the window after it: the operations completed, the process CPU time (all threads, a native driver's own
threads included) and, from serverStatus opLatencies (reads + writes), the server's mean time per operation.
``--variants updates`` times update_one by _id instead, against pymongo threads updating.
Runs are interleaved A V1 V2 A V3 V4 A ... with A = bare pymongo threads, so every variant runs next to a baseline;
a variant's ratio is its CPU/op over the mean of the two baselines around its pair, and the table shows the median
over the repeats. The order of the variants flips every repeat.
Absolute ops/s are noisy on a shared machine; CPU us/op and the paired ratios are the figures to read.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import statistics
import string
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from driver_loops import COLLECTION, DATABASE, FIELD_BYTES, FIELDS, RECORDS, VARIANTS, record_names  # noqa: E402

LOOPS = Path(__file__).resolve().parent / "driver_loops.py"
BASELINE, UPDATE_BASELINE = "threads", "threads-update"  # updates are compared with pymongo threads updating
SETS = {
    "default": ["threads-command-raw", "async", "mongojet", "mongojet-uvloop"],
    "tricks": ["threads-raw", "threads-find-limit", "threads-command", "threads-command-raw", "async-raw",
               "async-uvloop", "mongojet-raw"],
    "deadline": ["mongojet-timeout", "mongojet-uvloop", "mongojet-uvloop-timeout", "mongojet-uvloop-wait-for"],
    "updates": ["async-update", "mongojet-update", "mongojet-uvloop-update"],
}
SETS["all"] = [v for v in VARIANTS if v not in (BASELINE, UPDATE_BASELINE) and VARIANTS[v]["op"] != "update"]


def load(uri: str) -> None:
    from pymongo import MongoClient

    rng = random.Random(7)
    letters = string.ascii_letters + string.digits
    docs = [{"_id": name, **{f"field{j}": "".join(rng.choices(letters, k=FIELD_BYTES)) for j in range(FIELDS)}}
            for name in record_names()]
    with MongoClient(uri, serverSelectionTimeoutMS=10_000) as client:
        client.drop_database(DATABASE)
        client[DATABASE][COLLECTION].insert_many(docs, ordered=False)
        assert client[DATABASE][COLLECTION].count_documents({}) == RECORDS


def run_child(uri: str, variant: str, clients: int, args, seed: int) -> dict:
    cmd = [sys.executable, str(LOOPS), variant, "--uri", uri, "--clients", str(clients),
           "--warmup", str(args.warmup), "--duration", str(args.duration), "--seed", str(seed)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=args.warmup + args.duration + 90)
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    row = json.loads(lines[-1]) if lines else {"variant": variant, "clients": clients, "cpu_us_per_op": None,
                                               "error": (out.stderr.strip().splitlines() or ["?"])[-1][:200]}
    row["exit"] = out.returncode
    return row


def schedule(variants: list[str], flip: bool, baseline: str) -> list[tuple[str, int]]:
    """A V1 V2 A V3 V4 A ...: (variant, index of its pair group); every variant sits next to a baseline run."""
    order = list(reversed(variants)) if flip else list(variants)
    plan = []
    for g in range(0, len(order), 2):
        plan.append((baseline, g // 2))
        plan += [(v, g // 2) for v in order[g:g + 2]]
    plan.append((baseline, (len(order) + 1) // 2))
    return plan


def paired_ratios(runs: list[tuple[str, int, dict]], baseline: str) -> dict[str, float]:
    """Variant CPU/op over the mean CPU/op of the baseline runs either side of its pair group."""
    base = {g: r["cpu_us_per_op"] for v, g, r in runs if v == baseline and r.get("cpu_us_per_op")}
    out = {}
    for v, g, r in runs:
        sides = [base[k] for k in (g, g + 1) if k in base]
        if v != baseline and r.get("cpu_us_per_op") and sides:
            out[v] = r["cpu_us_per_op"] / statistics.fmean(sides)
    return out


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", default="16,64,256")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--duration", type=float, default=1.0, help="seconds measured per run")
    parser.add_argument("--warmup", type=float, default=0.5, help="seconds after the pool is filled")
    parser.add_argument("--variants", default="default",
                        help="default | tricks | deadline | all | comma-separated names")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    variants = SETS.get(args.variants) or [v.strip() for v in args.variants.split(",")]
    unknown = [v for v in variants if v not in VARIANTS or v in (BASELINE, UPDATE_BASELINE)]
    if unknown:
        parser.error(f"--variants: unknown or baseline name(s) {unknown}; choose from {sorted(VARIANTS)}")
    updates = {VARIANTS[v]["op"] == "update" for v in variants}
    if len(updates) > 1:
        parser.error("--variants: updates and reads are measured in separate runs (each against its own baseline)")
    baseline = UPDATE_BASELINE if updates == {True} else BASELINE
    for module in ("mongojet", "uvloop"):  # optional: not capmodel dependencies
        uses = [v for v in variants if module in (VARIANTS[v]["driver"], VARIANTS[v].get("loop"))]
        if uses and importlib.util.find_spec(module) is None:
            print(f"{module} is not installed: skipping {', '.join(uses)}", file=sys.stderr)
            variants = [v for v in variants if v not in uses]
    levels = [int(c) for c in args.clients.split(",")]

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from capmodel.bench.server import embedded_server

    started = time.perf_counter()
    print(f"load average at start {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", file=sys.stderr, flush=True)
    with embedded_server() as server:
        load(server.uri)
        cells: dict[tuple[str, int], list[dict]] = {}
        ratios: dict[tuple[str, int], list[float]] = {}
        for repeat in range(args.repeats):
            for clients in levels:
                runs = []
                for variant, group in schedule(variants, flip=repeat % 2 == 1, baseline=baseline):
                    row = run_child(server.uri, variant, clients, args, seed=repeat + 1)
                    runs.append((variant, group, row))
                    cells.setdefault((variant, clients), []).append(row)
                for variant, ratio in paired_ratios(runs, baseline).items():
                    ratios.setdefault((variant, clients), []).append(ratio)
            print(f"repeat {repeat + 1}/{args.repeats} done at {time.perf_counter() - started:.0f} s, "
                  f"load average {os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)
        table = []
        for clients in levels:
            for variant in [baseline, *variants]:
                rows = cells[(variant, clients)]
                entry = {"clients": clients, "variant": variant,
                         "ops_per_s": median([r.get("ops_per_s") for r in rows]),
                         "cpu_us_per_op": median([r.get("cpu_us_per_op") for r in rows]),
                         "cpu_ratio_to_baseline": median(ratios.get((variant, clients), [])) if variant != baseline
                         else 1.0,
                         "ratio_range": [min(ratios[(variant, clients)]), max(ratios[(variant, clients)])]
                         if ratios.get((variant, clients)) else None,
                         "switches_per_op": median([r.get("switches_per_op") for r in rows]),
                         "server_us_per_op": median([r.get("server_us_per_op") for r in rows]),
                         # the server's own count of reads in the window over the client's: a check on the counting
                         "server_over_client_ops": median([r["server_ops"] / r["ops"] for r in rows
                                                           if r.get("ops")]),
                         "runs": len(rows), "nonzero_exits": sum(1 for r in rows if r["exit"] != 0),
                         "errors": sum(r.get("error_count", 0) for r in rows) + sum("error" in r for r in rows),
                         "first_error": next((r.get("error") or r["errors"][0] for r in rows
                                              if r.get("error") or r.get("errors")), None)}
                table.append(entry)
    if args.json:
        print(json.dumps(table, indent=2))
        return 0
    fmt = "{:>7} {:<24} {:>9} {:>10} {:>16} {:>7} {:>9} {:>7} {:>6} {:>6}"
    print(fmt.format("clients", "variant", "ops/s", "CPU us/op", "CPU vs base", "csw/op", "server us",
                     "srv/cli", "exits", "errors"))
    for e in table:
        rng = f"{e['cpu_ratio_to_baseline']:.2f} ({e['ratio_range'][0]:.2f}-{e['ratio_range'][1]:.2f})" \
            if e["ratio_range"] else ("1.00 (baseline)" if e["variant"] == baseline else "-")
        print(fmt.format(e["clients"], e["variant"], f"{e['ops_per_s']:,.0f}" if e["ops_per_s"] else "-",
                         f"{e['cpu_us_per_op']:.0f}" if e["cpu_us_per_op"] else "-", rng,
                         f"{e['switches_per_op']:.2f}" if e["switches_per_op"] is not None else "-",
                         f"{e['server_us_per_op']:.0f}" if e["server_us_per_op"] else "-",
                         f"{e['server_over_client_ops']:.3f}" if e["server_over_client_ops"] else "-",
                         f"{e['nonzero_exits']}/{e['runs']}", e["errors"]))
        if e["first_error"]:
            print(f"{'':8}first error: {e['first_error']}")
    print(f"total {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
