"""Speed check of the benchmark runner: its ops/s against a bare pymongo loop, side by side, same server and data.

    python benchmarks/bench_runner.py [--uri URI] [--concurrency 1,4,16,64,256,1024] [--duration 3] [--rounds 3]

Without --uri an embedded mongod is started. For every concurrency it alternates, ``rounds`` times each:
- ``bare``: N threads on one MongoClient, each ``find_one({"_id": key})`` in a ``while`` loop, keys from a
  pre-drawn list, counting completions; nothing else;
- ``runner``: capmodel's closed-loop runner on YCSB C (100% reads by _id, same records), measuring every operation,
  on its default binding (pymongo threads);
- ``mongojet`` (with --mongojet): the same runner on the mongojet binding (coroutines on a Rust core), its client
  CPU per operation as a ratio to bare pymongo threads (target <= 0.75 at 16-256 clients);
- ``async`` (with --async): N asyncio tasks on pymongo's AsyncMongoClient doing the bare loop, to compare the
  concurrency models;
- ``dask`` (with --workers 2,4): the runner over a local Dask cluster of that many single-threaded worker processes
  (``capmodel bench --processes P``), reported as ops/s, its ratio to the one-process runner, and the client CPU per
  operation summed over the worker processes;
- the server's own mean latency per read over the same windows (serverStatus opLatencies.reads), the reference the
  client's figures are read against.
Reported: median ops/s of each, and the median over rounds of the paired ratio runner/bare (target >= 0.90 at every
concurrency) with its range, and the client CPU time per operation of each (approximate: it includes the warm-up,
counted at the measured rate) - steadier than ops/s on a shared machine, and the cost the runner adds per operation.
Run it on a quiet machine: other load moves both throughputs far more than the runner does.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from capmodel.bench.client.operations import KeySpace, create_indexes, load_records  # noqa: E402
from capmodel.bench.sweep.config import BenchConfig  # noqa: E402
from capmodel.bench.cluster.executor import DaskExecutor  # noqa: E402
from capmodel.bench.client.runner import Runner  # noqa: E402
from capmodel.bench.workload.definition import load_workload  # noqa: E402

DATABASE = "capmodel_bench_speed"


def bare_loop(collection, keys: list[str], concurrency: int, duration: float, warmup: float) -> float:
    """Plain pymongo: N threads reading by _id as fast as they can; completions inside the window are counted."""
    stop = False
    counts = [0] * concurrency
    window = [0.0, 0.0]

    def work(i):
        n, k, local, clock = 0, i, keys, time.perf_counter
        find_one = collection.find_one
        while not stop:
            find_one({"_id": local[k % len(local)]})
            k += 7
            if window[0] <= clock() <= window[1]:
                n += 1
        counts[i] = n

    go = threading.Event()
    threads = [threading.Thread(target=lambda i=i: (go.wait(), work(i)), daemon=True) for i in range(concurrency)]
    for t in threads:
        t.start()
    window[0] = time.perf_counter() + warmup
    window[1] = window[0] + duration
    go.set()
    time.sleep(max(0.0, window[1] - time.perf_counter()))
    stop = True
    for t in threads:
        t.join()
    return sum(counts) / duration


def async_loop(uri: str, database: str, collection: str, keys: list[str], concurrency: int, duration: float,
               warmup: float) -> float:
    from pymongo import AsyncMongoClient

    async def main():
        client = AsyncMongoClient(uri, maxPoolSize=max(concurrency, 100))
        coll = client[database][collection]
        start = time.perf_counter() + warmup
        end = start + duration
        counts = [0] * concurrency

        async def work(i):
            k = i
            while True:
                await coll.find_one({"_id": keys[k % len(keys)]})
                k += 7
                now = time.perf_counter()
                if now >= end:
                    return
                if now >= start:
                    counts[i] += 1

        await asyncio.gather(*(work(i) for i in range(concurrency)))
        await client.close()
        return sum(counts) / duration

    return asyncio.run(main())


def server_reads(client) -> tuple[int, int]:
    """(reads, microseconds spent on them) from serverStatus: the server's own cumulative latency counters."""
    reads = client.admin.command("serverStatus")["opLatencies"]["reads"]
    return int(reads["ops"]), int(reads["latency"])


def server_mean_us(before, after) -> float:
    ops = after[0] - before[0]
    return (after[1] - before[1]) / ops if ops else float("nan")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uri")
    parser.add_argument("--concurrency", default="1,4,16,64,256,1024")
    parser.add_argument("--duration", type=float, default=3.0)
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--async", dest="use_async", action="store_true", help="also time an AsyncMongoClient loop")
    parser.add_argument("--mongojet", action="store_true", help="also time the runner on the mongojet binding")
    parser.add_argument("--workers", default="", help="also time the runner over local Dask clusters of these sizes")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    levels = [int(c) for c in args.concurrency.split(",")]
    if args.uri:
        return measure(args.uri, levels, args)
    from capmodel.bench.server import embedded_server

    with embedded_server() as server:
        return measure(server.uri, levels, args)


def measure(uri: str, levels: list[int], args) -> int:
    from pymongo import MongoClient

    client = MongoClient(uri, maxPoolSize=max(max(levels) + 8, 100), timeoutMS=30_000)
    workload = load_workload("ycsb-c", records=args.records)
    client.drop_database(DATABASE)
    coll = client[DATABASE][workload.collection]
    create_indexes(coll, workload)
    load_records(coll, workload, 0, workload.records)
    keyspace = KeySpace(workload, workload.records)
    keys = keyspace.names(list(range(workload.records)))
    runner = Runner(coll, workload, keyspace, seed=1)
    jet = None
    if args.mongojet:
        from capmodel.bench.client import async_workers
        from capmodel.bench.client.bindings import MongojetBinding

        jet_client = async_workers.client(uri, {"maxPoolSize": max(levels) + 8})
        jet = Runner(MongojetBinding(jet_client.get_database(DATABASE)[workload.collection], 30.0), workload,
                     keyspace, seed=1)
    clusters = {}
    for p in [int(w) for w in args.workers.split(",") if w.strip()]:
        executor = DaskExecutor(uri, BenchConfig(timeout_ms=30_000, processes=p).check()).start()
        clusters[p] = (executor, executor.runner(DATABASE, workload.collection, workload, workload.records, seed=1))
    rows = []
    for n in levels:
        bare, ours, asyn = [], [], []
        bare_cpu, ours_cpu, server_us, jet_ops, jet_cpu = [], [], [], [], []
        multi = {p: [] for p in clusters}
        multi_cpu = {p: [] for p in clusters}

        def timed_bare():
            cpu = time.process_time()
            bare.append(bare_loop(coll, keys, n, args.duration, args.warmup))
            bare_cpu.append((time.process_time() - cpu) / (bare[-1] * (args.duration + args.warmup)))

        for i in range(args.rounds):  # paired rounds, the order alternating, so drifting load hits both alike
            if i % 2 == 0:
                timed_bare()
            cpu, before = time.process_time(), server_reads(client)
            step = runner.run(n, duration=args.duration, warmup=args.warmup)
            server_us.append(server_mean_us(before, server_reads(client)))
            ours.append(step.ops_per_s)
            ours_cpu.append((time.process_time() - cpu) / (step.ops_per_s * step.wall_seconds))
            if i % 2 == 1:
                timed_bare()
            if jet is not None:
                cpu = time.process_time()
                step = jet.run(n, duration=args.duration, warmup=args.warmup)
                jet_ops.append(step.ops_per_s)
                jet_cpu.append((time.process_time() - cpu) / (step.ops_per_s * step.wall_seconds))
            for p, (_, pooled) in clusters.items():
                result = pooled.run(n, duration=args.duration, warmup=args.warmup)
                multi[p].append(result.ops_per_s)
                # the workers' CPU over the step (warm-up included), per operation at the measured rate
                cpu_seconds = sum(w["cpu_cores"] for w in result.workers) * result.wall_seconds
                multi_cpu[p].append(cpu_seconds / max(result.ops_per_s * result.wall_seconds, 1e-9))
            if args.use_async:
                asyn.append(async_loop(uri, DATABASE, workload.collection, keys, n, args.duration, args.warmup))
        row = {"concurrency": n, "bare_ops_per_s": statistics.median(bare),
               "runner_ops_per_s": statistics.median(ours)}
        row["bare_cpu_us_per_op"] = 1e6 * statistics.median(bare_cpu)
        row["runner_cpu_us_per_op"] = 1e6 * statistics.median(ours_cpu)
        ratios = [o / b for o, b in zip(ours, bare)]
        row["runner_over_bare"] = statistics.median(ratios)  # median of the paired rounds' ratios
        row["ratio_range"] = [min(ratios), max(ratios)]
        if asyn:
            row["async_bare_ops_per_s"] = statistics.median(asyn)
        row["server_us_per_read"] = statistics.median(server_us)
        if jet_ops:
            row["mongojet_ops_per_s"] = statistics.median(jet_ops)
            row["mongojet_cpu_us_per_op"] = 1e6 * statistics.median(jet_cpu)
            row["mongojet_cpu_over_bare"] = statistics.median([j / b for j, b in zip(jet_cpu, bare_cpu)])
        for p in clusters:
            row[f"dask{p}_ops_per_s"] = statistics.median(multi[p])
            row[f"dask{p}_over_runner"] = statistics.median([m / o for m, o in zip(multi[p], ours)])
            row[f"dask{p}_cpu_us_per_op"] = 1e6 * statistics.median(multi_cpu[p])
        rows.append(row)
        if not args.json:
            extra = f"  async bare {row['async_bare_ops_per_s']:10,.0f}" if asyn else ""
            if jet_ops:
                extra += (f"  mongojet runner {row['mongojet_ops_per_s']:10,.0f} ops/s, "
                          f"{row['mongojet_cpu_us_per_op']:.0f} us CPU/op ({row['mongojet_cpu_over_bare']:.2f}x bare)")
            for p in clusters:
                extra += (f"  {p} Dask workers {row[f'dask{p}_ops_per_s']:10,.0f} ops/s "
                          f"({row[f'dask{p}_over_runner']:.2f}x the runner, {row[f'dask{p}_cpu_us_per_op']:.0f} us "
                          "CPU/op)")
            extra += f"  server {row['server_us_per_read']:.0f} us/read"
            print(f"c={n:5d}  bare {row['bare_ops_per_s']:10,.0f} ops/s  runner {row['runner_ops_per_s']:10,.0f} "
                  f"ops/s  runner/bare {row['runner_over_bare']:.3f} "
                  f"(rounds {row['ratio_range'][0]:.2f}-{row['ratio_range'][1]:.2f})  client CPU per op: bare "
                  f"{row['bare_cpu_us_per_op']:.0f} us, runner {row['runner_cpu_us_per_op']:.0f} us{extra}", flush=True)
    for executor, _ in clusters.values():
        executor.close()
    client.drop_database(DATABASE)
    client.close()
    if args.json:
        print(json.dumps(rows, indent=2))
    worst = min(r["runner_over_bare"] for r in rows)
    print(f"worst runner/bare: {worst:.3f} (target >= 0.90)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
