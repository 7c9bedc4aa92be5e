"""Make the bundled query-shapes sample: the JSON log (every operation logged, slowms 0) and the FTDC that
capmodel's own embedded mongod wrote while a known four-shape application mix ran on it, for report 09.

    python scripts/make_shapes_sample.py [--out data/shapes_sample] [--phases 30] [--phase-seconds 2]

The embedded ``mongod`` (FTDC on, one sample a second) is pinned to CPU 0 and this process, the load, to CPU 1. A
collection ``shopdemo.orders`` of 20,000 synthetic documents is loaded with an index on ``(customer, placed)``; then
the four shapes run in phases of ``--phase-seconds``, each phase with its own random rate per shape, paced (open
loop): a collection scan on the unindexed ``status`` (the heaviest), an indexed range query with a sort, an update
by the index and an ``_id`` lookup. The server is stopped cleanly, its log gzipped to ``OUT/mongod.log.gz`` and
``diagnostic.data`` copied; ``OUT/sample.json`` gets the window, the shapes' rate ranges, the CPUs and the version.
Every value sent is synthetic (strings starting ``zq``); no production data is involved.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import shutil
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DOCUMENTS = 20_000
#: per shape: the most operations per second a phase draws (each phase draws uniformly from 0 to it)
MAX_RATE = {"scan": 12.0, "range": 40.0, "update": 30.0, "lookup": 60.0}


def load(coll) -> dict:
    """The collection loaded, and the four shapes as calls ``{name: f(r)}`` (``r`` picks the values)."""
    coll.create_index([("customer", 1), ("placed", 1)])
    coll.insert_many([{"_id": f"zq-id-{i}", "customer": f"zq-cust-{i % 50}", "placed": 1_000_000 + i * 7,
                       "status": f"zq-status-{i % 2000}"} for i in range(DOCUMENTS)])
    return {
        "scan": lambda r: list(coll.find({"status": f"zq-status-{r % 2000}"})),
        "range": lambda r: list(coll.find({"customer": f"zq-cust-{r % 50}",
                                           "placed": {"$gte": 1_000_000, "$lt": 1_002_000}}).sort("placed", -1)),
        "update": lambda r: coll.update_one({"customer": f"zq-cust-{r % 50}",
                                             "placed": 1_000_000 + (r % DOCUMENTS) * 7},
                                            {"$set": {"status": f"zq-status-{r % 2000}"}}),
        "lookup": lambda r: coll.find_one({"_id": f"zq-id-{(r * 7919) % DOCUMENTS}"}),
    }


def paced_phase(calls: dict, rates: dict, seconds: float, rng) -> dict:
    """One phase: each shape's operations at its rate (Poisson arrivals, merged, run one after another)."""
    total = sum(rates.values())
    counts = dict.fromkeys(calls, 0)
    end = time.monotonic() + seconds
    if total <= 0:
        time.sleep(seconds)
        return counts
    names, weights = list(rates), [rates[n] for n in rates]
    due, r = time.monotonic(), 0
    while True:
        due += rng.expovariate(total)
        if due >= end:
            break
        pause = due - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        name = rng.choices(names, weights)[0]
        calls[name](r)
        counts[name] += 1
        r += 1
    time.sleep(max(end - time.monotonic(), 0.0))
    return counts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "data" / "shapes_sample"))
    parser.add_argument("--phases", type=int, default=30)
    parser.add_argument("--phase-seconds", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=9)
    args = parser.parse_args(argv)
    from capmodel.bench.server import embedded_server

    out = Path(args.out)
    rng = random.Random(args.seed)
    try:
        os.sched_setaffinity(0, {1})
    except (AttributeError, OSError):
        pass
    with tempfile.TemporaryDirectory(prefix="capmodel-shapes-") as work:
        dbpath = Path(work) / "db"
        with embedded_server(dbpath=dbpath, diagnostic_data=True, cpus=[0]) as server:
            client = server.client()
            try:
                version = client.server_info()["version"]
                database = client["shopdemo"]
                calls = load(database["orders"])
                time.sleep(2)                      # the load's own CPU settles before the window opens
                database.command("profile", 0, slowms=0)
                since = datetime.now(timezone.utc)
                done = []
                for _ in range(args.phases):
                    rates = {name: rng.uniform(0, top) for name, top in MAX_RATE.items()}
                    done.append(paced_phase(calls, rates, args.phase_seconds, rng))
                until = datetime.now(timezone.utc)
                database.command("profile", 0, slowms=100)
            finally:
                client.close()
            log = Path(server.logpaths[0])
        out.mkdir(parents=True, exist_ok=True)
        with open(log, "rb") as source, gzip.open(out / "mongod.log.gz", "wb", compresslevel=9) as target:
            shutil.copyfileobj(source, target)
        target_dir = out / "diagnostic.data"
        if target_dir.exists():
            shutil.rmtree(target_dir)
        target_dir.mkdir()
        for file in sorted((dbpath / "diagnostic.data").iterdir()):
            if file.stat().st_size and not file.name.endswith(".interim"):
                shutil.copy2(file, target_dir / file.name)
    operations = {name: sum(phase[name] for phase in done) for name in MAX_RATE}
    (out / "sample.json").write_text(json.dumps({
        "since": (since - timedelta(seconds=1)).isoformat(timespec="seconds"),
        "until": (until + timedelta(seconds=1)).isoformat(timespec="seconds"),
        "log": "mongod.log.gz", "namespace": "shopdemo.orders", "documents": DOCUMENTS,
        "phases": args.phases, "phase_seconds": args.phase_seconds, "max_rate_per_s": MAX_RATE,
        "operations": operations, "server_cpus": [0], "client_cpus": [1], "cores": 1, "mongod": version,
        "made_by": "scripts/make_shapes_sample.py",
    }, indent=2) + "\n")
    size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    print(f"wrote {out} ({size:,} bytes): {operations}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
