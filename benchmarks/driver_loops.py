"""One closed loop of N clients on one driver variant, measured in this process (the child of bench_drivers.py).

    python benchmarks/driver_loops.py VARIANT --uri URI --clients N [--warmup 0.5] [--duration 1] [--seed 1]

prints one JSON object: ops and ops/s in the window, process CPU us per op (all threads, a native driver's own
threads included), context switches per op, and from serverStatus opLatencies (reads + writes) the operations the
server counted in the same window and their mean latency. bench_drivers.py runs it in a fresh process per variant.
"""
from __future__ import annotations

import argparse
import itertools
import json
import random
import sys
import time

DATABASE, COLLECTION = "capmodel_bench_drivers", "usertable"
RECORDS, FIELDS, FIELD_BYTES = 10_000, 10, 100
KEYS_PER_CLIENT = 1024

# name -> how the child runs it. threads: N OS threads on one pymongo MongoClient; async: N asyncio tasks.
# op: find_one(filter) | find(filter).limit(1) | db.command({"find", "filter", "limit": 1, "singleBatch": True})
# | update: update_one({"_id": key}, {"$set": {"field0": <a new 100-byte value>}});
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
    "threads-update": dict(model="threads", driver="pymongo", op="update"),
    "async-update": dict(model="async", driver="pymongo", op="update"),
    "mongojet-update": dict(model="async", driver="mongojet", op="update"),
    "mongojet-uvloop-update": dict(model="async", driver="mongojet", op="update", loop="uvloop"),
}


def new_value(counter=itertools.count()) -> str:
    """A value no record has had yet (an update that changes nothing is not written), 100 bytes."""
    return f"{next(counter):0{FIELD_BYTES}d}"


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
        ops = s["opLatencies"]["reads"], s["opLatencies"]["writes"]
        return {"latency_us": sum(o["latency"] for o in ops), "server_ops": sum(o["ops"] for o in ops),
                "connections": s["connections"]["current"]}

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
        ops, served = b["ops"] - a["ops"], b["server_ops"] - a["server_ops"]
        return {"ops": ops, "seconds": b["t"] - a["t"], "ops_per_s": ops / (b["t"] - a["t"]),
                "cpu_us_per_op": 1e6 * (b["cpu"] - a["cpu"]) / ops if ops else None,
                "switches_per_op": (b["switches"] - a["switches"]) / ops if ops else None,
                "server_ops": served,
                "server_us_per_op": (b["latency_us"] - a["latency_us"]) / served if served else None,
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
    if spec["op"] == "update":
        return client, lambda key: coll.update_one({"_id": key}, {"$set": {"field0": new_value()}})
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
        if spec["op"] == "update":
            def read(key):
                return coll.update_one({"_id": key}, {"$set": {"field0": new_value()}})
        elif spec.get("deadline") == "wait_for":
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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variant", choices=list(VARIANTS))
    parser.add_argument("--uri", required=True)
    parser.add_argument("--clients", type=int, required=True)
    parser.add_argument("--warmup", type=float, default=0.5)
    parser.add_argument("--duration", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    spec = VARIANTS[args.variant]
    run = run_threads if spec["model"] == "threads" else run_async
    result = run(spec, args.uri, args.clients, args.warmup, args.duration, args.seed)
    print(json.dumps({"variant": args.variant, "clients": args.clients, **result}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
