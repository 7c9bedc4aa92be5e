"""Client CPU per operation of MongoDB driver variants for point reads, each measured alone in a fresh process.

    python benchmarks/bench_drivers.py [--clients 16,64,256] [--repeats 3] [--duration 1] [--warmup 0.5]
                                       [--variants default|tricks|deadline|all|NAME,..] [--json]

Starts its own embedded mongod and loads 10,000 YCSB-like records (_id "user<n>", field0..field9 of 100 bytes each).
For every concurrency and repeat it runs, each in a FRESH subprocess, a closed loop of N clients reading random keys
by _id (every driver with maxPoolSize = maxConnecting = N; the warm-up starts once the pool holds N connections or
has stopped growing for 1 s, so no connection is opened in the window), and measures over the window after it: the
operations completed, the process CPU time (all threads, a native driver's own threads included) and, from
serverStatus opLatencies.reads, the server's mean time per read.
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

DATABASE, COLLECTION = "capmodel_bench_drivers", "usertable"
RECORDS, FIELDS, FIELD_BYTES = 10_000, 10, 100
KEYS_PER_CLIENT = 1024
BASELINE = "threads"

# name -> how the child runs it. threads: N OS threads on one pymongo MongoClient; async: N asyncio tasks.
# op: find_one(filter) | find(filter).limit(1) | db.command({"find", "filter", "limit": 1, "singleBatch": True});
# raw: documents decoded lazily as RawBSONDocument instead of dicts; loop: asyncio's own or uvloop's;
# deadline: a client-side limit of 30 s on every operation (mongojet has no socketTimeoutMS or timeoutMS), by
# ``async with asyncio.timeout()`` or by ``asyncio.wait_for()``.
VARIANTS = {
    "threads": dict(model="threads", driver="pymongo", op="find_one"),
    "threads-raw": dict(model="threads", driver="pymongo", op="find_one", raw=True),
    "threads-find-limit": dict(model="threads", driver="pymongo", op="find_limit"),
    "threads-command": dict(model="threads", driver="pymongo", op="command"),
    "threads-command-raw": dict(model="threads", driver="pymongo", op="command", raw=True),
    "async": dict(model="async", driver="pymongo", op="find_one"),
    "async-raw": dict(model="async", driver="pymongo", op="find_one", raw=True),
    "async-uvloop": dict(model="async", driver="pymongo", op="find_one", loop="uvloop"),
    "mongojet": dict(model="async", driver="mongojet", op="find_one"),
    "mongojet-raw": dict(model="async", driver="mongojet", op="find_one", raw=True),
    "mongojet-uvloop": dict(model="async", driver="mongojet", op="find_one", loop="uvloop"),
    "mongojet-timeout": dict(model="async", driver="mongojet", op="find_one", deadline="timeout"),
    "mongojet-uvloop-timeout": dict(model="async", driver="mongojet", op="find_one", loop="uvloop", deadline="timeout"),
    "mongojet-uvloop-wait-for": dict(model="async", driver="mongojet", op="find_one", loop="uvloop",
                                     deadline="wait_for"),
}
SETS = {
    "default": ["threads-command-raw", "async", "mongojet", "mongojet-uvloop"],
    "tricks": ["threads-raw", "threads-find-limit", "threads-command", "threads-command-raw", "async-raw",
               "async-uvloop", "mongojet-raw"],
    "deadline": ["mongojet-timeout", "mongojet-uvloop", "mongojet-uvloop-timeout", "mongojet-uvloop-wait-for"],
}
SETS["all"] = [v for v in VARIANTS if v != BASELINE]


# ------------------------------------------------------------------------------------------------- the measured child
def record_names() -> list[str]:
    return [f"user{n}" for n in range(RECORDS)]


def client_keys(clients: int, seed: int) -> list[list[str]]:
    """Each client's own random keys (uniform over the records), drawn before the clock starts."""
    names = record_names()
    return [random.Random(seed * 100_003 + i).choices(names, k=KEYS_PER_CLIENT) for i in range(clients)]


class Window:
    """Snapshots at the edges of the measured window: ops done, process CPU, context switches, server reads."""

    def __init__(self, uri: str, counts: list[int]):
        from pymongo import MongoClient

        self.counts = counts
        self.status = MongoClient(uri, maxPoolSize=1, serverSelectionTimeoutMS=10_000).admin
        self.base_connections = self._server()["connections"]  # before the measured client connects
        self.edges: list[dict] = []

    def wait_for_pool(self, clients: int, timeout: float = 10.0, settle: float = 1.0) -> float:
        """Wait until the client holds its N pooled connections, or their number has not grown for ``settle`` s,
        so that (almost) no connection is opened inside the window; returns the seconds waited."""
        start = last_change = time.perf_counter()
        seen = -1
        while time.perf_counter() - start < timeout:
            now, current = time.perf_counter(), self._server()["connections"]
            if current >= self.base_connections + clients or now - last_change >= settle:
                break
            if current != seen:
                seen, last_change = current, now
            time.sleep(0.05)
        return time.perf_counter() - start

    def _server(self) -> dict:
        s = self.status.command({"serverStatus": 1, "repl": 0, "metrics": 0, "locks": 0, "wiredTiger": 0})
        reads = s["opLatencies"]["reads"]
        return {"latency_us": reads["latency"], "reads": reads["ops"], "connections": s["connections"]["current"]}

    def mark(self) -> None:
        import resource

        if not self.edges:  # opening edge: server first, then the client's own counters
            server = self._server()
        ru = resource.getrusage(resource.RUSAGE_SELF)
        edge = {"t": time.perf_counter(), "ops": sum(self.counts), "cpu": time.process_time(),
                "switches": ru.ru_nvcsw + ru.ru_nivcsw}
        edge.update(self._server() if self.edges else server)  # closing edge: the client's counters first
        self.edges.append(edge)

    def result(self) -> dict:
        a, b = self.edges
        ops, reads = b["ops"] - a["ops"], b["reads"] - a["reads"]
        return {"ops": ops, "seconds": b["t"] - a["t"], "ops_per_s": ops / (b["t"] - a["t"]),
                "cpu_us_per_op": 1e6 * (b["cpu"] - a["cpu"]) / ops if ops else None,
                "switches_per_op": (b["switches"] - a["switches"]) / ops if ops else None,
                "server_reads": reads,
                "server_us_per_read": (b["latency_us"] - a["latency_us"]) / reads if reads else None,
                "connections": [a["connections"], b["connections"]]}


def sync_op(spec: dict, uri: str, clients: int):
    from bson import CodecOptions
    from bson.raw_bson import RawBSONDocument
    from pymongo import MongoClient

    client = MongoClient(uri, maxPoolSize=clients, maxConnecting=clients, serverSelectionTimeoutMS=10_000)
    options = CodecOptions(document_class=RawBSONDocument) if spec.get("raw") else CodecOptions()
    db = client.get_database(DATABASE, codec_options=options)
    coll = db[COLLECTION]
    if spec["op"] == "find_one":
        return client, lambda key: coll.find_one({"_id": key})
    if spec["op"] == "find_limit":
        return client, lambda key: next(coll.find({"_id": key}).limit(1), None)
    command = db.command
    return client, lambda key: command({"find": COLLECTION, "filter": {"_id": key}, "limit": 1, "singleBatch": True},
                                       codec_options=options)


def run_threads(spec: dict, uri: str, clients: int, warmup: float, duration: float, seed: int) -> dict:
    import threading

    keys, counts, errors = client_keys(clients, seed), [0] * clients, []
    window = Window(uri, counts)
    client, op = sync_op(spec, uri, clients)
    go, stop = threading.Event(), [False]

    def work(i: int) -> None:
        mine, n, size = keys[i], 0, KEYS_PER_CLIENT
        go.wait()
        try:
            while not stop[0]:
                op(mine[n % size])
                n += 1
                counts[i] = n
        except Exception as exc:  # noqa: BLE001 - a failed client is reported, not hidden
            errors.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(clients)]
    for t in threads:
        t.start()
    go.set()
    filled = window.wait_for_pool(clients)
    time.sleep(warmup)
    window.mark()
    time.sleep(duration)
    window.mark()
    stop[0] = True
    for t in threads:
        t.join(timeout=30)
    client.close()
    return {**window.result(), "pool_fill_s": filled, "errors": errors[:3], "error_count": len(errors)}


def run_async(spec: dict, uri: str, clients: int, warmup: float, duration: float, seed: int) -> dict:
    import asyncio

    from bson import CodecOptions
    from bson.raw_bson import RawBSONDocument

    options = CodecOptions(document_class=RawBSONDocument) if spec.get("raw") else CodecOptions()
    keys, counts, errors, stop = client_keys(clients, seed), [0] * clients, [], [False]

    async def main() -> dict:
        window = Window(uri, counts)
        if spec["driver"] == "mongojet":
            import mongojet

            client = await mongojet.create_client(f"{uri.rstrip('/')}/?maxPoolSize={clients}&maxConnecting={clients}")
            coll = client.get_database(DATABASE, codec_options=options)[COLLECTION]
        else:
            from pymongo import AsyncMongoClient

            client = AsyncMongoClient(uri, maxPoolSize=clients, maxConnecting=clients, serverSelectionTimeoutMS=10_000)
            coll = client.get_database(DATABASE, codec_options=options)[COLLECTION]
        find_one = coll.find_one
        if spec.get("deadline") == "wait_for":
            def read(key):
                return asyncio.wait_for(find_one({"_id": key}), 30)
        elif spec.get("deadline") == "timeout":
            async def read(key):
                async with asyncio.timeout(30):
                    return await find_one({"_id": key})
        else:
            def read(key):
                return find_one({"_id": key})

        async def work(i: int) -> None:
            mine, n, size = keys[i], 0, KEYS_PER_CLIENT
            try:
                while not stop[0]:
                    await read(mine[n % size])
                    n += 1
                    counts[i] = n
            except Exception as exc:  # noqa: BLE001
                errors.append(f"{type(exc).__name__}: {exc}")

        tasks = [asyncio.ensure_future(work(i)) for i in range(clients)]
        filled = await asyncio.to_thread(window.wait_for_pool, clients)
        await asyncio.sleep(warmup)
        window.mark()
        await asyncio.sleep(duration)
        window.mark()
        stop[0] = True
        await asyncio.wait(tasks, timeout=30)
        await client.close()
        return {**window.result(), "pool_fill_s": filled}

    if spec.get("loop") == "uvloop":
        import uvloop

        result = uvloop.run(main())
    else:
        result = asyncio.run(main())
    return {**result, "errors": errors[:3], "error_count": len(errors)}


def child(args) -> int:
    spec = VARIANTS[args.child]
    run = run_threads if spec["model"] == "threads" else run_async
    result = run(spec, args.uri, args.clients_one, args.warmup, args.duration, args.seed)
    print(json.dumps({"variant": args.child, "clients": args.clients_one, **result}), flush=True)
    return 0


# ---------------------------------------------------------------------------------------------------------- the parent
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
    cmd = [sys.executable, __file__, "--child", variant, "--uri", uri, "--clients", str(clients),
           "--warmup", str(args.warmup), "--duration", str(args.duration), "--seed", str(seed)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=args.warmup + args.duration + 90)
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    row = json.loads(lines[-1]) if lines else {"variant": variant, "clients": clients, "cpu_us_per_op": None,
                                               "error": (out.stderr.strip().splitlines() or ["?"])[-1][:200]}
    row["exit"] = out.returncode
    return row


def schedule(variants: list[str], flip: bool) -> list[tuple[str, int]]:
    """A V1 V2 A V3 V4 A ...: (variant, index of its pair group); every variant sits next to a baseline run."""
    order = list(reversed(variants)) if flip else list(variants)
    plan = []
    for g in range(0, len(order), 2):
        plan.append((BASELINE, g // 2))
        plan += [(v, g // 2) for v in order[g:g + 2]]
    plan.append((BASELINE, (len(order) + 1) // 2))
    return plan


def paired_ratios(runs: list[tuple[str, int, dict]]) -> dict[str, float]:
    """Variant CPU/op over the mean CPU/op of the baseline runs either side of its pair group."""
    base = {g: r["cpu_us_per_op"] for v, g, r in runs if v == BASELINE and r.get("cpu_us_per_op")}
    out = {}
    for v, g, r in runs:
        sides = [base[k] for k in (g, g + 1) if k in base]
        if v != BASELINE and r.get("cpu_us_per_op") and sides:
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
    parser.add_argument("--uri", help=argparse.SUPPRESS)
    parser.add_argument("--child", choices=list(VARIANTS), help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        args.clients_one = int(args.clients)
        return child(args)
    variants = SETS.get(args.variants) or [v.strip() for v in args.variants.split(",")]
    unknown = [v for v in variants if v not in VARIANTS or v == BASELINE]
    if unknown:
        parser.error(f"--variants: unknown or baseline name(s) {unknown}; choose from {sorted(VARIANTS)}")
    if any(VARIANTS[v].get("loop") == "uvloop" for v in variants):
        if importlib.util.find_spec("uvloop") is None:
            print("uvloop is not installed: its variants are skipped", file=sys.stderr)
            variants = [v for v in variants if VARIANTS[v].get("loop") != "uvloop"]
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
                for variant, group in schedule(variants, flip=repeat % 2 == 1):
                    row = run_child(server.uri, variant, clients, args, seed=repeat + 1)
                    runs.append((variant, group, row))
                    cells.setdefault((variant, clients), []).append(row)
                for variant, ratio in paired_ratios(runs).items():
                    ratios.setdefault((variant, clients), []).append(ratio)
            print(f"repeat {repeat + 1}/{args.repeats} done at {time.perf_counter() - started:.0f} s, "
                  f"load average {os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)
        table = []
        for clients in levels:
            for variant in [BASELINE, *variants]:
                rows = cells[(variant, clients)]
                entry = {"clients": clients, "variant": variant,
                         "ops_per_s": median([r.get("ops_per_s") for r in rows]),
                         "cpu_us_per_op": median([r.get("cpu_us_per_op") for r in rows]),
                         "cpu_ratio_to_threads": median(ratios.get((variant, clients), [])) if variant != BASELINE
                         else 1.0,
                         "ratio_range": [min(ratios[(variant, clients)]), max(ratios[(variant, clients)])]
                         if ratios.get((variant, clients)) else None,
                         "switches_per_op": median([r.get("switches_per_op") for r in rows]),
                         "server_us_per_read": median([r.get("server_us_per_read") for r in rows]),
                         # the server's own count of reads in the window over the client's: a check on the counting
                         "server_over_client_ops": median([r["server_reads"] / r["ops"] for r in rows
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
    print(fmt.format("clients", "variant", "ops/s", "CPU us/op", "CPU vs threads", "csw/op", "server us",
                     "srv/cli", "exits", "errors"))
    for e in table:
        rng = f"{e['cpu_ratio_to_threads']:.2f} ({e['ratio_range'][0]:.2f}-{e['ratio_range'][1]:.2f})" \
            if e["ratio_range"] else ("1.00 (baseline)" if e["variant"] == BASELINE else "-")
        print(fmt.format(e["clients"], e["variant"], f"{e['ops_per_s']:,.0f}" if e["ops_per_s"] else "-",
                         f"{e['cpu_us_per_op']:.0f}" if e["cpu_us_per_op"] else "-", rng,
                         f"{e['switches_per_op']:.2f}" if e["switches_per_op"] is not None else "-",
                         f"{e['server_us_per_read']:.0f}" if e["server_us_per_read"] else "-",
                         f"{e['server_over_client_ops']:.3f}" if e["server_over_client_ops"] else "-",
                         f"{e['nonzero_exits']}/{e['runs']}", e["errors"]))
        if e["first_error"]:
            print(f"{'':8}first error: {e['first_error']}")
    print(f"total {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
