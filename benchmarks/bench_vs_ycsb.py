"""capmodel's measuring client side by side with YCSB 0.17.0 (Java, its MongoDB binding) against one mongod.

    python benchmarks/bench_vs_ycsb.py [--workloads c,a] [--clients 1,4,16,64,256] [--duration 15] [--warmup 5]
                                       [--repeats 2] [--records 10000] [--keys-only] [--json]

YCSB is ``../shared/tools/ycsb-0.17/`` beside the project (or ``$CAPMODEL_YCSB_DIR``): its ``lib/*.jar`` and its
core workload files ``workloadc`` and ``workloada``. Without ``java`` on the PATH or without the jars this script says
so and exits 0: nothing in capmodel's own tests needs them.

It starts its own embedded mongod, pinned to CPU 0 when the machine has two or more (the clients run on the others),
and creates and finally drops its own database, ``capmodel_vs_ycsb``; it touches nothing else.

1. **Keys.** YCSB's ``-load`` fills ``usertable`` with ``--records`` records. Every ``_id`` YCSB wrote must be a key
   capmodel names for the same record numbers (``Workload.key_names``, ``insertorder=hashed``); then ``capmodel
   bench --allow-existing`` runs workload C over that collection, and the server's own counters say how many of its
   reads found a document (``metrics.document.returned`` over ``opLatencies.reads.ops``: 1.000 when every key exists).
2. **Cost.** For each workload, concurrency and repeat, YCSB's ``-t`` and ``capmodel bench`` (the default options: the
   default binding, one process) run one after the other, their order alternating, over the same loaded collection.
   Every 0.25 s the script samples the client's whole process tree's CPU time, the server process's CPU time and the
   server's operation count (``opLatencies`` reads + writes); each run's window starts ``--warmup`` seconds after
   its first operation reached the server (YCSB's JIT warms up in it) and ends at its last sample with operations
   still flowing. Over the window: operations per second, client CPU per operation, server CPU per operation, and
   the client's added latency at one client (the time per operation a client sees, 1/throughput, less the server's
   own mean time per operation from ``opLatencies``).
   The table shows, per workload and concurrency, the medians of capmodel ÷ YCSB.

Run it on a quiet machine: the load average at the start is printed; other work on the cores moves every figure.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DATABASE = "capmodel_vs_ycsb"
COLLECTION = "usertable"  # YCSB's table
WORKLOADS = {"c": "ycsb-c", "a": "ycsb-a"}
SAMPLE_S = 0.25


def ycsb_dir() -> Path:
    return Path(os.environ.get("CAPMODEL_YCSB_DIR") or ROOT.parent / "shared" / "tools" / "ycsb-0.17")


def missing_ycsb() -> str | None:
    """Why YCSB cannot run here, or None."""
    if shutil.which("java") is None:
        return "java is not on the PATH"
    jars = ycsb_dir() / "lib"
    if not (jars / "core-0.17.0.jar").is_file() or not (jars / "mongodb-binding-0.17.0.jar").is_file():
        return f"the YCSB 0.17.0 jars are not in {jars}"
    return None


def ycsb_command(phase: str, workload: str, uri: str, records: int, threads: int, seconds: float | None) -> list[str]:
    cmd = ["java", "-cp", str(ycsb_dir() / "lib" / "*"), "site.ycsb.Client", phase, "-db",
           "site.ycsb.db.MongoDbClient", "-P", str(ycsb_dir() / f"workload{workload}"),
           "-p", f"mongodb.url={uri.rstrip('/')}/{DATABASE}", "-p", f"recordcount={records}", "-threads", str(threads)]
    if seconds is not None:
        cmd += ["-p", f"maxexecutiontime={int(round(seconds))}"]
    return cmd


def capmodel_command(workload: str, uri: str, records: int, clients: int, seconds: float, warmup: float,
                     out: Path, binding: str | None = None) -> list[str]:
    return [str(Path(sys.executable).parent / "capmodel"), "bench", "--uri", uri, "--workload", WORKLOADS[workload],
            "--records", str(records), "--database", DATABASE, "--collection", COLLECTION, "--allow-existing",
            "--concurrency", str(clients), "--duration", str(seconds), "--warmup", str(warmup),
            "--out", str(out), "--quiet"] + (["--binding", binding] if binding else [])


def split_cpus() -> tuple[list[int] | None, list[int] | None]:
    """(server CPUs, client CPUs): CPU 0 for the server and the rest for the clients when there are two or more."""
    cpus = sorted(os.sched_getaffinity(0))
    return ([cpus[0]], cpus[1:]) if len(cpus) >= 2 else (None, None)


class Probe:
    """Samples a client process tree's CPU, the server's CPU and the server's operations every SAMPLE_S."""

    def __init__(self, client, server_pid: int):
        import psutil
        from pymongo import MongoClient

        self.server = psutil.Process(server_pid)
        self.admin = client
        self.samples: list[tuple[float, float, float, int, int, int]] = []
        self._psutil = psutil
        self._mongo = MongoClient

    def _tree_cpu(self, proc) -> float:
        total = 0.0
        for p in [proc, *proc.children(recursive=True)]:
            try:
                t = p.cpu_times()
                total += t.user + t.system + t.children_user + t.children_system
            except self._psutil.Error:
                pass
        return total

    def _server_ops(self) -> tuple[int, int, int]:
        status = self.admin.admin.command("serverStatus")
        lat = status["opLatencies"]
        ops = lat["reads"]["ops"] + lat["writes"]["ops"]
        micros = lat["reads"]["latency"] + lat["writes"]["latency"]
        returned = status["metrics"]["document"]["returned"]
        return int(ops), int(micros), int(returned)

    def run(self, cmd: list[str], cpus: list[int] | None, timeout: float) -> dict:
        """Run ``cmd``, sampling until it exits; return its samples and exit status."""
        preexec = (lambda: os.sched_setaffinity(0, cpus)) if cpus else None
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=preexec)
        ps = self._psutil.Process(proc.pid)
        samples = []
        output: dict[str, str] = {}

        def drain(name, stream):
            output[name] = stream.read()

        readers = [threading.Thread(target=drain, args=(n, s)) for n, s in (("out", proc.stdout), ("err", proc.stderr))]
        for r in readers:
            r.start()
        deadline = time.monotonic() + timeout
        last_cpu = 0.0
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                last_cpu = self._tree_cpu(ps)  # children are gone after exit: keep the last reading
            except self._psutil.Error:
                pass
            ops, micros, returned = self._server_ops()
            st = self.server.cpu_times()
            samples.append((time.monotonic(), last_cpu, st.user + st.system, ops, micros, returned))
            time.sleep(SAMPLE_S)
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for r in readers:
            r.join()
        return {"samples": samples, "exit": proc.returncode, "stdout": output.get("out", ""),
                "stderr": output.get("err", "")}


def window(samples: list[tuple], warmup: float) -> dict | None:
    """The figures over the window: from ``warmup`` s after the first operation to the last sample still moving."""
    moving = [i for i in range(1, len(samples)) if samples[i][3] > samples[i - 1][3]]
    if not moving:
        return None
    first_op_t = samples[moving[0] - 1][0]
    start = next((i for i in range(len(samples)) if samples[i][0] >= first_op_t + warmup), None)
    end = moving[-1] - 1  # the sample before the last increase: the run still ran through the interval after it
    if start is None or end - start < 4:
        return None
    a, b = samples[start], samples[end]
    seconds, ops = b[0] - a[0], b[3] - a[3]
    if ops <= 0:
        return None
    return {"seconds": seconds, "ops": ops, "ops_per_s": ops / seconds,
            "client_cpu_us_per_op": (b[1] - a[1]) / ops * 1e6, "server_cpu_us_per_op": (b[2] - a[2]) / ops * 1e6,
            "server_us_per_op": (b[4] - a[4]) / ops, "returned_per_op": (b[5] - a[5]) / ops}


def ycsb_load(probe: Probe, uri: str, records: int, cpus) -> None:
    run = probe.run(ycsb_command("-load", "c", uri, records, 4, None), cpus, timeout=600)
    if run["exit"] != 0:
        raise SystemExit(f"YCSB -load failed (exit {run['exit']}): {run['stderr'].strip().splitlines()[-1:]}")


def check_keys(client, records: int) -> dict:
    from capmodel.bench.workload.definition import load_workload

    written = {d["_id"] for d in client[DATABASE][COLLECTION].find({}, {"_id": 1})}
    ours = set(load_workload("ycsb-c").key_names(range(records)))
    return {"ycsb_keys": len(written), "capmodel_keys": len(ours), "in_common": len(written & ours)}


def measure(probe: Probe, tool: str, workload: str, uri: str, args, clients: int, cpus, scratch: Path) -> dict:
    if tool == "ycsb":
        cmd = ycsb_command("-t", workload, uri, args.records, clients, args.warmup + args.duration + 1)
    else:
        out = scratch / f"{workload}-{clients}-{time.monotonic_ns()}"
        cmd = capmodel_command(workload, uri, args.records, clients, args.duration + 1, args.warmup, out, args.binding)
    run = probe.run(cmd, cpus, timeout=args.warmup + args.duration + 120)
    figures = window(run["samples"], args.warmup)
    if run["exit"] != 0 or figures is None:
        tail = (run["stderr"].strip().splitlines() or ["no output"])[-1][:200]
        return {"tool": tool, "error": f"exit {run['exit']}: {tail}"}
    return {"tool": tool, **figures}


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default="c,a", help="YCSB core workloads among c and a")
    parser.add_argument("--clients", default="1,4,16,64,256")
    parser.add_argument("--duration", type=float, default=15.0, help="seconds measured per run")
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds after a run's first operation")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--keys-only", action="store_true", help="only the key check (point 1 above)")
    parser.add_argument("--binding", default=None, help="capmodel bench's --binding (default: its default)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    workloads = [w.strip() for w in args.workloads.split(",")]
    if any(w not in WORKLOADS for w in workloads):
        parser.error(f"--workloads: choose among {', '.join(WORKLOADS)}")
    levels = [int(c) for c in args.clients.split(",")]
    why = missing_ycsb()
    if why:
        print(f"skipped: {why} (YCSB 0.17.0 with its MongoDB binding, as jars, is needed for this benchmark)")
        return 0

    from pymongo import MongoClient

    from capmodel.bench.server import embedded_server

    server_cpus, cpus = split_cpus()
    print(f"load average at start {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; server on CPUs {server_cpus}, "
          f"clients on {cpus}", flush=True)
    report: dict = {"load_average_start": os.getloadavg()[0], "records": args.records, "rows": []}
    with embedded_server(cpus=server_cpus) as server, MongoClient(server.uri) as client, \
            tempfile.TemporaryDirectory(prefix="capmodel-vs-ycsb-") as scratch:
        probe = Probe(client, server.pid)
        try:
            ycsb_load(probe, server.uri, args.records, cpus)
            keys = check_keys(client, args.records)
            hits = measure(probe, "capmodel", "c", server.uri,
                           argparse.Namespace(**{**vars(args), "duration": 4.0, "warmup": 1.0}), 4, cpus, Path(scratch))
            keys["capmodel_reads_found_per_read"] = hits.get("returned_per_op")
            report["keys"] = keys
            print(f"keys: YCSB wrote {keys['ycsb_keys']:,}; {keys['in_common']:,} of them are capmodel's keys for "
                  f"the same record numbers; capmodel bench --allow-existing on workload C: "
                  f"{keys['capmodel_reads_found_per_read']:.3f} documents found per read", flush=True)
            if args.keys_only:
                return 0 if keys["in_common"] == keys["ycsb_keys"] == args.records else 1
            runs: dict[tuple[str, int, str], list[dict]] = {}
            for repeat in range(args.repeats):
                for workload in workloads:
                    for clients in levels:
                        order = ("ycsb", "capmodel") if (repeat + clients) % 2 == 0 else ("capmodel", "ycsb")
                        for tool in order:
                            row = measure(probe, tool, workload, server.uri, args, clients, cpus, Path(scratch))
                            runs.setdefault((workload, clients, tool), []).append(row)
                            shown = (f"{row['ops_per_s']:,.0f} ops/s, client {row['client_cpu_us_per_op']:.1f} us/op"
                                     if "error" not in row else row["error"])
                            print(f"  repeat {repeat + 1} workload {workload} {clients:>3} clients {tool:<8} {shown}",
                                  file=sys.stderr, flush=True)
        finally:
            client.drop_database(DATABASE)

    print(f"\n{'workload':<9}{'clients':>8}{'client CPU/op ÷ YCSB':>22}{'ops/s ÷ YCSB':>14}"
          f"{'client ÷ server CPU/op, capmodel / YCSB':>41}   added latency at 1 client ÷ YCSB's")
    for workload in workloads:
        for clients in levels:
            ours, theirs = runs.get((workload, clients, "capmodel"), []), runs.get((workload, clients, "ycsb"), [])

            def med(rows, key):
                return median([r.get(key) for r in rows])

            cpu_o, cpu_t = med(ours, "client_cpu_us_per_op"), med(theirs, "client_cpu_us_per_op")
            x_o, x_t = med(ours, "ops_per_s"), med(theirs, "ops_per_s")
            srv_o, srv_t = med(ours, "server_cpu_us_per_op"), med(theirs, "server_cpu_us_per_op")
            lat_o, lat_t = med(ours, "server_us_per_op"), med(theirs, "server_us_per_op")
            row = {"workload": workload, "clients": clients, "capmodel": ours, "ycsb": theirs}
            if None in (cpu_o, cpu_t, x_o, x_t, srv_o, srv_t):
                print(f"{workload:<9}{clients:>8}   (a run failed: see the lines above)")
                report["rows"].append(row)
                continue
            added_o = clients / x_o * 1e6 - lat_o if clients == 1 else None
            added_t = clients / x_t * 1e6 - lat_t if clients == 1 else None
            row.update({"cpu_ratio": cpu_o / cpu_t, "ops_ratio": x_o / x_t,
                        "client_over_server": [cpu_o / srv_o, cpu_t / srv_t],
                        "added_latency_us": [added_o, added_t]})
            report["rows"].append(row)
            added = f"{added_o / added_t:.2f} ({added_o:.0f} / {added_t:.0f} us)" if clients == 1 else ""
            pair = f"{cpu_o / srv_o:.2f} / {cpu_t / srv_t:.2f}"
            print(f"{workload:<9}{clients:>8}{cpu_o / cpu_t:>22.2f}{x_o / x_t:>14.2f}{pair:>41}   {added}")
    if args.json:
        print(json.dumps(report, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
