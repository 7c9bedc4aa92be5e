"""Headroom at light load, checked against a measured saturation on a real mongod (issue 16, point 2).

    python benchmarks/bench_headroom.py [--server-cpu 0] [--client-cpu 1] [--light-seconds 12] [--duration 6]
    python benchmarks/bench_headroom.py --record      # the runs the test's bounds were set on

1. Starts the embedded mongod pinned to ``--server-cpu`` (``embedded_server(cpus=...)``) and pins this process (the
   load generator: mongojet clients) to ``--client-cpu``, so that the server's core is the bottleneck.
2. Loads ``data/ftdc_sample/workload.yaml`` (unindexed range scans, point finds, updates: server-heavy) and measures
   two closed-loop seconds to size the light load.
3. Light load: open-loop steps (``--rate``) sized at 18%, 26% and 34% of the server's core (20-40% as measured):
   the first on the closed-loop step's CPU per operation, each next one on the light step before it; with
   ``observe_uri`` sampling ``serverStatus`` beside them. ``server_capacity`` on those samples predicts the
   saturation throughput from the operational laws (CPU per operation, bottleneck law) with the server's one core.
4. Saturation: a closed-loop sweep (``--concurrency``); the measured saturation is its highest throughput.
5. Prints prediction, measurement and their ratio, and the server's and the client's CPU per operation (from the
   sweep's own meters), in one run; and whether the interval the answer states (the CPU per operation's possible
   change up to saturation carried: ``capmodel.observe.demand_change``) holds the measured peak, beside the
   bootstrap's interval alone (the noise), which issue 26's run missed by 31%.

On a shared host (here: 2 cores and other busy processes) the kernel's autogroup scheduler gives every session an
equal share of a CPU, so the server's core would be shared with whatever else runs there and its "saturation" would
be the neighbours' doing. Where permitted (root), the script raises the scheduling weight of the server's and its own
autogroup for the run (``/proc/PID/autogroup``, nice -10) and puts its own back afterwards; it says whether it did.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WORKLOAD = ROOT / "data" / "ftdc_sample" / "workload.yaml"
LIGHT_FRACTIONS = (0.18, 0.26, 0.34)   # of the server's core (the first sized by a closed-loop step, which reads low)


def set_autogroup_nice(pid: int, nice: int) -> bool:
    """Set the scheduling weight of ``pid``'s autogroup (Linux, root); False where not permitted or absent."""
    try:
        Path(f"/proc/{pid}/autogroup").write_text(str(nice))
        return True
    except OSError:
        return False


def cpu_per_operation(step: dict, otherwise: float | None = None) -> float:
    """The server's CPU seconds per operation in one measured step (its own meters); ``otherwise`` when the step
    did no operations."""
    if step["throughput"] > 0 and step["server"]["cpu_cores"] > 0:
        return step["server"]["cpu_cores"] / step["throughput"]
    if otherwise is None:
        raise RuntimeError(f"the sizing step measured no server CPU per operation: {step}")
    return otherwise


def _steps(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "steps.jsonl").read_text().splitlines() if line.strip()]


def measure(server_cpu: int = 0, client_cpu: int = 1, light_seconds: float = 12.0, duration: float = 6.0,
            concurrency=(1, 2, 4, 8, 16), workload=WORKLOAD, records: int | None = None, log=print,
            dbpath=None, warmup: float = 1.0) -> dict:
    """Predict the saturation throughput from light load, then measure it; the figures as a dict (also ``loaded_at``
    and ``finished_at``, UTC, around the light and saturation phases). With ``dbpath`` the server keeps its data
    there and records FTDC (one sample a second) into ``dbpath/diagnostic.data``. ``warmup``: seconds before each
    step's measurement."""
    from datetime import datetime, timezone

    from capmodel.bench.server import embedded_server
    from capmodel.bench.sweep.config import BenchConfig
    from capmodel.bench.sweep.sweep import run_sweep
    from capmodel.observe import observe_uri, server_capacity

    allowed = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {client_cpu})         # before any client thread starts: they all inherit it
    boosted = set_autogroup_nice(os.getpid(), -10)
    quiet = {"progress": False, "log": lambda message: None}
    try:
        with tempfile.TemporaryDirectory(prefix="capmodel-headroom-") as work, \
                embedded_server(cpus=[server_cpu], dbpath=dbpath, diagnostic_data=dbpath is not None) as server:
            boosted = set_autogroup_nice(server.pid, -10) and boosted
            work = Path(work)

            def sweep(name: str, **options):
                config = BenchConfig(workload=str(workload), records=records, warmup=warmup, processes=1,
                                     calibrate=False, **options)
                run_sweep(server.uri, config, work / name, server_pids=server.pids, **quiet)
                return _steps(work / name)

            first = sweep("size", concurrency=[1], duration=2.0)[0]          # loads the records, sizes the load
            loaded_at = datetime.now(timezone.utc)
            demand_s = cpu_per_operation(first)
            stop, seen = threading.Event(), {}
            sampler = threading.Thread(target=lambda: seen.setdefault("obs", observe_uri(
                server.uri, interval=1.0, duration=3600.0, should_stop=stop.is_set)))
            sampler.start()
            light, rates = [], []
            try:
                for i, fraction in enumerate(LIGHT_FRACTIONS):
                    rates.append(fraction / demand_s)
                    log(f"light load {i + 1}: open loop at {rates[-1]:,.0f} ops/s ({fraction:.0%} of the server's "
                        f"core at {1000 * demand_s:.2f} ms of CPU per operation)")
                    light.append(sweep(f"light{i}", rate=rates[-1], concurrency=[8], duration=light_seconds)[0])
                    # the next step sized on this one: open loop at light load, the very regime being sized (the
                    # closed-loop sizing step reads the CPU per operation up to 2x low right after the load)
                    demand_s = cpu_per_operation(light[-1], demand_s)
            finally:
                stop.set()
                sampler.join()
            samples = seen["obs"].samples
            capacity = server_capacity(samples, cores=1)
            log(capacity.describe())
            log(capacity.evidence.describe())
            saturation = sweep("saturation", concurrency=list(concurrency), duration=duration)
            finished_at = datetime.now(timezone.utc)
            version = server.version
    finally:
        os.sched_setaffinity(0, allowed)
        if boosted:
            set_autogroup_nice(os.getpid(), 0)
    best = max(saturation, key=lambda s: s["throughput"])
    predicted = capacity.saturation_throughput
    noise = capacity.saturation_from_noise            # the bootstrap's interval alone, as the answer stated it before
    return {
        "predicted": predicted.estimate, "predicted_low": predicted.low, "predicted_high": predicted.high,
        "noise_low": noise.low, "noise_high": noise.high, "at_least": capacity.at_least,
        "next_step": None if capacity.evidence.next_step is None else capacity.evidence.next_step.text,
        "measured": best["throughput"], "measured_at_concurrency": best["concurrency"],
        "ratio": predicted.estimate / best["throughput"],
        "light_server_cores": [s["server"]["cpu_cores"] for s in light],
        "light_throughput": [s["throughput"] for s in light],
        "server_ms_per_op": 1000 * best["server"]["cpu_cores"] / best["throughput"],
        "client_ms_per_op": 1000 * best["client_cpu"] / best["throughput"],
        "server_cores_at_saturation": best["server"]["cpu_cores"],
        "service_demand_ms": capacity.service_demand_ms.estimate, "evidence": capacity.evidence.grade,
        "service_demand_interval_ms": (capacity.service_demand_ms.low, capacity.service_demand_ms.high),
        "interval_block": capacity.interval_block, "interval_widening": capacity.interval_widening,
        "reasons": [r.message for r in capacity.evidence.reasons],
        "sweep": [(s["concurrency"], s["throughput"], s["server"]["cpu_cores"]) for s in saturation],
        "boosted": boosted, "capacity": capacity, "loaded_at": loaded_at, "finished_at": finished_at,
        "rates": rates, "mongod": version,
        "client_curve": [{"concurrency": s["concurrency"], "throughput": s["throughput"],
                          "latency_mean_ms": s["latency"]["all"]["mean_ms"],
                          "server_cpu_cores": s["server"]["cpu_cores"], "client_cpu_cores": s["client_cpu"]}
                         for s in saturation],
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server-cpu", type=int, default=0)
    parser.add_argument("--client-cpu", type=int, default=1)
    parser.add_argument("--light-seconds", type=float, default=12.0, help="seconds of each light-load step")
    parser.add_argument("--duration", type=float, default=6.0, help="seconds of each saturation step")
    parser.add_argument("--concurrency", default="1,2,4,8,16")
    parser.add_argument("--record", action="store_true",
                        help="print the recorded runs the test's bounds were set on (records/headroom.md)")
    args = parser.parse_args(argv)
    if args.record:
        print((Path(__file__).resolve().parent / "records" / "headroom.md").read_text(encoding="utf-8"), end="")
        return 0
    r = measure(args.server_cpu, args.client_cpu, args.light_seconds, args.duration,
                [int(c) for c in args.concurrency.split(",")])
    print(f"scheduling weight raised for the run: {'yes' if r['boosted'] else 'no (not permitted)'}")
    print("light load: " + ", ".join(f"{x:,.0f} ops/s at {c:.0%} of the core"
                                     for x, c in zip(r["light_throughput"], r["light_server_cores"])))
    print("saturation sweep: " + ", ".join(f"{c}: {x:,.0f} ops/s ({u:.0%} CPU)" for c, x, u in r["sweep"]))
    print(f"CPU per operation at saturation: server {r['server_ms_per_op']:.3f} ms, client {r['client_ms_per_op']:.3f}"
          f" ms (server / client {r['server_ms_per_op'] / r['client_ms_per_op']:.1f}x)")
    usable = r["evidence"] != "unusable"
    low, high = r["predicted_low"], r["predicted_high"]
    if usable:
        stated = f"{low:,.0f}-{high:,.0f}" if high < float("inf") else f"{low:,.0f} or more"
        print(f"{'predicted (light load, laws)':32s} {r['predicted']:>9,.0f} ops/s  (stated interval {stated}, allowing "
              f"for the CPU per operation to change up to saturation; the noise alone {r['noise_low']:,.0f}-"
              f"{r['noise_high']:,.0f})")
    else:
        print(f"{'predicted (light load, laws)':32s} at least {r['at_least']:,.0f} ops/s (verdict unusable: no "
              "figure, a lower bound)")
    print(f"{'measured (closed-loop peak)':32s} {r['measured']:>9,.0f} ops/s  at {r['measured_at_concurrency']} "
          f"clients, server at {r['server_cores_at_saturation']:.0%} of its core")
    print(f"{'ratio predicted / measured':32s} {r['ratio']:>9.3f}")
    measured = r["measured"]
    if usable:
        print(f"the measured peak lies {'inside' if low <= measured <= high else 'OUTSIDE'} the stated interval "
              f"(measured / low {measured / low:.3f}, measured / high {measured / high:.3f}); "
              f"{'inside' if r['noise_low'] <= measured <= r['noise_high'] else 'outside'} the noise's alone; "
              f"interval from runs of {r['interval_block']} consecutive intervals, widened "
              f"{r['interval_widening']:.2f}x")
    else:
        print(f"the measured peak lies {'above' if measured >= r['at_least'] else 'BELOW'} the stated lower bound "
              f"(measured / bound {measured / r['at_least']:.3f})")
    print(f"light-load CPU per operation {r['service_demand_ms']:.3f} ms ({r['service_demand_interval_ms'][0]:.3f}-"
          f"{r['service_demand_interval_ms'][1]:.3f}), {r['service_demand_ms'] / r['server_ms_per_op']:.2f}x the "
          f"saturation's; verdict {r['evidence']}: " + "; ".join(r["reasons"])
          + (f"; next: {r['next_step']}" if r["next_step"] else ""))
    return 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
