"""Make the bundled query-shapes sample: the JSON log (every operation logged, slowms 0) and the FTDC that
capmodel's own embedded mongod wrote while a known four-shape application mix ran on it, for report 09.

    python scripts/make_shapes_sample.py [--out data/shapes_sample] [--phases 30] [--phase-seconds 2]

The embedded ``mongod`` (FTDC on, one sample a second) is pinned to CPU 0 and this process, the load, to CPU 1. A
collection ``shopdemo.orders`` of 20,000 synthetic documents is loaded with an index on ``(customer, placed)``; then
the four shapes run in phases of ``--phase-seconds``, each phase with its own random rate per shape, paced (open
loop): a collection scan on the unindexed ``status`` (the heaviest), an indexed range query with a sort, an update
by the index and an ``_id`` lookup. The load itself is not logged (slowms 60 s while it runs): it is the lab's
setup, not the application.

Then, on the same server, the replay (report 09's "A workload that replays production"): the workload
``replay_workload`` writes from the shapes of the log so far (the namespace ``shopdemo.orders``) runs with
``capmodel bench --workload`` (pymongo binding, one client, its own database ``shopdemo_replay``) at production's rate
for ``--replay-seconds``, every operation logged; then each of its operations alone (a copy of the workload with that
operation only, as ``benchmarks/bench_replay.py`` runs them) at ``--alone-rate`` for ``--alone-seconds``. Before it,
``IDLE_S`` seconds with nothing running: the server's idle CPU.

The server is stopped cleanly; its log is cut where the replay begins: the production part gzipped to
``OUT/mongod.log.gz``, the replay's to ``OUT/replay.log.gz``; ``diagnostic.data`` is copied. ``OUT/sample.json`` gets
the window, the shapes' rate ranges, the CPUs and the version, and under ``replay`` the replay's namespace, how it ran,
and its windows (ISO 8601, UTC): the idle one, the mix's and each operation's alone (keyed by the workload's operation
name), each its operations' first to last entry in the log less half a second at each end (the client's start and
stop). Every value sent is synthetic (strings starting ``zq``); no production data is involved.
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
REPLAY_DATABASE = "shopdemo_replay"
IDLE_S = 4.0
#: cut from each replay window at both ends: the client's start and stop
EDGE_S = 0.5


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


def _moment(line: str) -> float | None:
    try:
        return datetime.fromisoformat(json.loads(line)["t"]["$date"]).timestamp()
    except (ValueError, KeyError, TypeError):
        return None


def split_log(log: Path, cut: float) -> tuple[list, list]:
    """The log's lines before ``cut`` (epoch seconds) and from it on (a line without a time goes with the one
    before it)."""
    before, after = [], []
    with log.open() as lines:
        for line in lines:
            when = _moment(line)
            (after if after or (when is not None and when >= cut) else before).append(line)
    return before, after


def _bench(uri: str, workload: Path, out: Path, seconds: float, rate: float) -> tuple[float, float]:
    """``capmodel bench --workload`` on one pymongo client in its own database, paced at ``rate``; its start and end
    (epoch seconds)."""
    from capmodel.cli import main as capmodel

    begin = time.time()
    code = capmodel(["bench", "--uri", uri, "--workload", str(workload), "--database", REPLAY_DATABASE,
                     "--concurrency", "1", "--binding", "pymongo", "--warmup", "1", "--duration", str(seconds),
                     "--rate", f"{rate:.3f}", "--quiet", "--out", str(out)])
    if code:
        raise SystemExit(f"capmodel bench {workload.name} failed ({code})")
    return begin, time.time()


def replay(server, client, log: Path, cut: float, work: Path, args) -> dict:
    """The replay on the running server (the module's docstring): the workload of the log's shapes so far, idle, the
    mix at production's rate, each operation alone. Returns the workload and each run's start and end."""
    import copy

    import yaml

    from capmodel.observe import query_shapes
    from capmodel.observe.shapes.replay import replay_workload

    so_far = work / "mongod.log"                         # the production part, as the report reads it
    so_far.write_text("".join(split_log(log, cut)[0]))
    workload = replay_workload(query_shapes(so_far), namespace="shopdemo.orders")
    path = work / "replay.yaml"
    path.write_text(workload.to_yaml())
    client["shopdemo"].command("profile", 0, slowms=0)    # slowms is the server's: every replayed operation logged
    runs: dict = {}
    begin = time.time()
    time.sleep(IDLE_S)
    runs["idle"] = (begin, time.time())
    runs["mix"] = _bench(server.uri, path, work / "out-mix", args.replay_seconds, workload.spec["rate"])
    for op in workload.spec["operations"]:
        alone = copy.deepcopy(workload.spec)
        alone["operations"] = [{**op, "weight": 1.0}]
        alone_path = work / f"{op['name']}.yaml"
        alone_path.write_text(yaml.safe_dump(alone, sort_keys=False))
        runs[op["name"]] = _bench(server.uri, alone_path, work / f"out-{op['name']}", args.alone_seconds,
                                  args.alone_rate)
    client["shopdemo"].command("profile", 0, slowms=100)
    return {"workload": workload, "runs": runs, "args": args}


def _iso(moment: float) -> str:
    return datetime.fromtimestamp(moment, timezone.utc).isoformat(timespec="milliseconds")


def windows(replay_log: Path, replayed: dict) -> dict:
    """What ``sample.json`` says of the replay: its namespace, how it ran and its windows (the module's docstring)."""
    from capmodel.observe.shapes.entries import LoggedOperation, LogScan, read_log

    workload, runs, args = replayed["workload"], replayed["runs"], replayed["args"]
    namespace = f"{REPLAY_DATABASE}.{workload.spec['collection']}"
    kinds = {(row["operation"], row["filter_shape"]): row["name"] for row in workload.replayed}
    entries = [(op.time, kinds[(op.operation, op.filter_shape)]) for op in read_log(replay_log, LogScan())
               if isinstance(op, LoggedOperation) and op.namespace == namespace
               and (op.operation, op.filter_shape) in kinds]
    out: dict = {"namespace": namespace, "workload_operations": [op["name"] for op in workload.spec["operations"]],
                 "records": workload.spec["records"], "binding": "pymongo", "clients": 1,
                 "mix_rate_per_s": workload.spec["rate"], "mix_seconds": args.replay_seconds,
                 "alone_rate_per_s": args.alone_rate, "alone_seconds": args.alone_seconds, "warmup_seconds": 1.0,
                 "idle": {"start": _iso(runs["idle"][0]), "end": _iso(runs["idle"][1])}, "alone": {}}
    for run, (begin, end) in runs.items():
        if run == "idle":
            continue
        times = [t for t, name in entries if begin <= t <= end and (run == "mix" or name == run)]
        window = {"start": _iso(min(times) + EDGE_S), "end": _iso(max(times) - EDGE_S)}
        if run == "mix":
            out["mix"] = window
        else:
            out["alone"][run] = window
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "data" / "shapes_sample"))
    parser.add_argument("--phases", type=int, default=30)
    parser.add_argument("--phase-seconds", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument("--replay-seconds", type=float, default=10.0, help="the replay's mix, at production's rate")
    parser.add_argument("--alone-seconds", type=float, default=5.0, help="each replayed operation alone")
    parser.add_argument("--alone-rate", type=float, default=150.0, help="ops/s of each operation alone")
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
                database.command("profile", 0, slowms=60_000)     # the load is the lab's setup: not logged
                calls = load(database["orders"])
                database.command("profile", 0, slowms=100)
                time.sleep(2)                      # the load's own CPU settles before the window opens
                database.command("profile", 0, slowms=0)
                since = datetime.now(timezone.utc)
                done = []
                for _ in range(args.phases):
                    rates = {name: rng.uniform(0, top) for name, top in MAX_RATE.items()}
                    done.append(paced_phase(calls, rates, args.phase_seconds, rng))
                until = datetime.now(timezone.utc)
                database.command("profile", 0, slowms=100)
                time.sleep(0.5)
                cut = time.time()                  # the log's production part ends here, the replay's begins
                time.sleep(0.5)
                log = Path(server.logpaths[0])
                replayed = replay(server, client, log, cut, Path(work), args)
            finally:
                client.close()
        out.mkdir(parents=True, exist_ok=True)
        production_lines, replay_lines = split_log(log, cut)
        for name, lines in (("mongod.log.gz", production_lines), ("replay.log.gz", replay_lines)):
            with gzip.open(out / name, "wt", compresslevel=9) as target:
                target.writelines(lines)
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
        "replay": {"log": "replay.log.gz", "slowms": 0, **windows(out / "replay.log.gz", replayed)},
        "made_by": "scripts/make_shapes_sample.py",
    }, indent=2) + "\n")
    size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    print(f"wrote {out} ({size:,} bytes): {operations}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
