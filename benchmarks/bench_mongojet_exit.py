"""Does a mongojet client crash its process at exit? A minimal script run many times, each in a fresh process.

    python benchmarks/bench_mongojet_exit.py [--runs 30] [--concurrency 1,64] [--modes close,graceful,...]
                                             [--loop asyncio|uvloop]

Starts its own embedded mongod with 1,000 small records. Each run: connect (``mongojet.create_client``), 1,000
``find_one`` by _id (by ``concurrency`` asyncio tasks), then end in one of the modes below, and exit. Counted per
mode: runs whose exit status is not 0 (a negative status is the signal that killed the process), with the first line
of their stderr (CPython's "Fatal Python error: ..." when a native thread touches the interpreter as it finalizes).
"""
from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
import time
from pathlib import Path

DATABASE, COLLECTION, RECORDS, READS = "capmodel_bench_exit", "usertable", 1_000, 1_000
MODES = {
    "close": "await client.close() (shutdown_immediate), then a normal interpreter exit",
    "graceful": "await client.close(immediate=False) (shutdown), then a normal interpreter exit",
    "no-close": "the client is never closed, a normal interpreter exit",
    "close-wait": "await client.close(), then await asyncio.sleep(0.25) before the loop ends, a normal exit",
    "os-exit": "await client.close(), flush stdout and stderr, then os._exit(0) (no interpreter finalization)",
}


def one_run(mode: str, uri: str, concurrency: int, loop: str) -> None:
    """The script under test (runs in the child process)."""
    import mongojet

    async def main() -> None:
        client = await mongojet.create_client(f"{uri.rstrip('/')}/?maxPoolSize={max(concurrency, 10)}")
        coll = client.get_database(DATABASE)[COLLECTION]

        async def reads(first: int) -> None:
            for n in range(first, READS, concurrency):
                doc = await coll.find_one({"_id": f"user{n * 7 % RECORDS}"})
                assert doc is not None

        await asyncio.gather(*(reads(i) for i in range(concurrency)))
        if mode != "no-close":
            await client.close(immediate=mode != "graceful")
        if mode == "close-wait":
            await asyncio.sleep(0.25)

    if loop == "uvloop":
        import uvloop

        uvloop.run(main())
    else:
        asyncio.run(main())
    if mode == "os-exit":
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


def count_failures(uri: str, mode: str, concurrency: int, runs: int, loop: str) -> dict:
    codes, last_lines = [], set()
    for _ in range(runs):
        out = subprocess.run([sys.executable, __file__, "--child", mode, "--uri", uri,
                              "--concurrency", str(concurrency), "--loop", loop],
                             capture_output=True, text=True, timeout=120)
        codes.append(out.returncode)
        if out.returncode != 0:
            lines = out.stderr.strip().splitlines() or ["(nothing on stderr)"]
            fatal = [line for line in lines if line.startswith("Fatal Python error")]
            last_lines.add(re.sub(r"0x[0-9a-f]+", "0x...", (fatal or lines)[0])[:200])
    failed = [c for c in codes if c != 0]
    return {"mode": mode, "concurrency": concurrency, "runs": runs, "failed": len(failed),
            "statuses": sorted(set(failed)), "stderr": sorted(last_lines)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--concurrency", default="1,64")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--loop", choices=["asyncio", "uvloop"], default="asyncio")
    parser.add_argument("--uri", help=argparse.SUPPRESS)
    parser.add_argument("--child", choices=list(MODES), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        one_run(args.child, args.uri, int(args.concurrency), args.loop)
        return 0
    modes = args.modes.split(",")
    if unknown := [m for m in modes if m not in MODES]:
        parser.error(f"--modes: unknown {unknown}; choose from {list(MODES)}")

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from pymongo import MongoClient

    from capmodel.bench.server import embedded_server

    started = time.perf_counter()
    with embedded_server() as server:
        with MongoClient(server.uri) as client:
            client[DATABASE][COLLECTION].insert_many([{"_id": f"user{n}", "field0": "x" * 100}
                                                      for n in range(RECORDS)])
        for concurrency in [int(c) for c in args.concurrency.split(",")]:
            for mode in modes:
                row = count_failures(server.uri, mode, concurrency, args.runs, args.loop)
                print(f"{args.loop}, concurrency {concurrency:3d}  {mode:10s} {row['failed']:2d}/{row['runs']} "
                      f"non-zero exits {row['statuses'] or ''}  {row['stderr'] or ''}  [{MODES[mode]}]", flush=True)
    print(f"total {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
