"""``capmodel bench``: a concurrency sweep against a live MongoDB, written as a curve table.

    capmodel bench [--uri URI] --workload ycsb-b --records N --concurrency 1,2,4,8 --duration 10 --out DIR
                   [--repeat K] [--adaptive] [--processes P | --scheduler ADDRESS [--workers K]]
                   [--rate R | --rate-shape SHAPE] [--arrivals poisson] [--windows K] [--slo 'p95<=5ms' ...]
                   [--resume] [--json]

Without ``--uri`` (or ``$CAPMODEL_BENCH_URI``) an embedded mongod is started for the sweep and stopped after it.
Writes ``DIR/curve.csv`` (read by ``capmodel fit DIR/curve.csv``), ``DIR/steps.jsonl`` and ``DIR/run.json``; with
``--slo``, the highest open-loop rate that meets every objective in ``DIR/slo.json`` (``capmodel.bench.sweep.slo``).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

from capmodel.commands import whole_number

URI_ENV = "CAPMODEL_BENCH_URI"


def register(subparsers) -> None:
    p = subparsers.add_parser("bench", help="run a live concurrency sweep against MongoDB and write a curve table")
    p.add_argument("--uri", default=None,
                   help=f"MongoDB URI (default ${URI_ENV}; without either an embedded mongod is started). "
                        "Credentials are never written to any file or log.")
    p.add_argument("--workload", default=None,
                   help="bundled workload (ycsb-a..ycsb-f, docdb-insert, orders-mix) or a YAML file (default ycsb-b)")
    p.add_argument("--records", type=whole_number, default=None, help="records to load (default: the workload's)")
    p.add_argument("--concurrency", default=None,
                   help="comma-separated client counts, e.g. 1,2,4,8,16,32,64 (with --adaptive: the range)")
    p.add_argument("--duration", type=float, default=None, help="measured seconds per step (default 10)")
    p.add_argument("--warmup", type=float, default=None, help="discarded seconds before each step (default 2)")
    p.add_argument("--operations", type=whole_number, default=None,
                   help="measure this many operations per step instead")
    p.add_argument("--rate", type=float, default=None,
                   help="open loop: target ops/s per step; latency counts from the intended start")
    p.add_argument("--rate-shape", default=None, metavar="SHAPE",
                   help="open loop at a rate that follows a shape over each step's window: ramp:FROM:TO, "
                        "step:BEFORE:AFTER[:AT], sine:MEAN:AMPLITUDE[:PERIODS], spike:BASE:PEAK[:WIDTH] (ops/s; AT "
                        "and WIDTH fractions of the window) or trace:FILE.csv (time and ops_per_s, or observe's "
                        "samples.csv, over its time span); latencies per window in steps.jsonl")
    p.add_argument("--windows", type=int, default=None,
                   help="open loop: cut each step into this many windows with their own latencies (default 10 with "
                        "--rate-shape)")
    p.add_argument("--arrivals", choices=("uniform", "poisson"), default=None,
                   help="open loop: evenly spaced operations (default) or a Poisson process of that rate")
    p.add_argument("--processes", type=process_count, default=None,
                   help="client processes the clients of each step are split over, on a local Dask cluster started "
                        "for the sweep: a number or 'auto' (one per CPU core); default 1 (no cluster). One Python "
                        "process drives about one core")
    p.add_argument("--scheduler", default=None,
                   help="run the clients on the workers of an existing Dask cluster (started with 'dask scheduler' "
                        "and 'dask worker ADDRESS' on the load hosts); default $CAPMODEL_DASK_SCHEDULER")
    p.add_argument("--workers", type=int, default=None,
                   help="with --scheduler: use at most this many of the cluster's workers (spread over its hosts)")
    p.add_argument("--binding", choices=("wire", "mongojet", "pymongo"), default=None,
                   help="how the clients reach the server: wire (the default: MongoDB's wire protocol on one "
                        "blocking socket per client thread, pymongo selecting the servers; mongojet when the URI "
                        "needs what it does not do), mongojet (coroutines on a Rust driver) or pymongo (threads)")
    p.add_argument("--repeat", type=int, default=None, help="repeats of every concurrency (default 1)")
    p.add_argument("--adaptive", action="store_true", default=None,
                   help="choose concurrencies from the running USL fit until the peak is located")
    p.add_argument("--slo", action="append", default=None, metavar="OBJECTIVE",
                   help="search the highest open-loop rate that meets this objective (repeatable): a latency "
                        "percentile or mean, 'p95<=5ms', 'p99<=20ms', 'mean<=2ms'; a failed share, 'errors<=0.1%%'; "
                        "or relative to a light-load baseline step, 'p95<=+5%%'. The steps run at the largest "
                        "--concurrency (the most operations in flight); writes DIR/slo.json")
    p.add_argument("--tolerance", type=float, default=None,
                   help="adaptive: relative tolerance on the peak; --slo: the final bracket's width (0.1)")
    p.add_argument("--max-steps", type=int, default=None,
                   help="adaptive: most concurrencies to measure; --slo: most rates (12)")
    p.add_argument("--out", required=True, help="output folder for curve.csv, steps.jsonl, run.json")
    p.add_argument("--resume", action="store_true", help="continue the sweep recorded in --out")
    p.add_argument("--database", default=None, help="the benchmark's own database (default capmodel_bench)")
    p.add_argument("--collection", default=None, help="collection name (default: the workload's)")
    p.add_argument("--allow-existing", action="store_true", default=None,
                   help="benchmark a non-empty collection capmodel did not create, as it is (no load, no drop)")
    p.add_argument("--allow-server-js", action="store_true", default=None,
                   help="accept a workload's $where, $function and $accumulator, which run JavaScript on the server "
                        "(refused otherwise)")
    p.add_argument("--read-preference", default=None,
                   help="primary, primaryPreferred, secondary, secondaryPreferred, nearest; wins over the URI's "
                        "readPreference, under either binding (default: the URI's)")
    p.add_argument("--write-concern", default=None,
                   help="w: a number or 'majority'; wins over the URI's w, under either binding (default: the URI's)")
    p.add_argument("--timeout-ms", type=int, default=None, help="timeout of every operation (default 10000)")
    p.add_argument("--on-error", choices=("stop", "retry", "continue"), default=None,
                   help="when a step fails: stop the sweep (default), retry it, or continue")
    p.add_argument("--seed", type=int, default=None, help="random seed of keys and values (default 0)")
    p.add_argument("--quiet", action="store_true",
                   help="no progress bars or step lines (progress bars are shown only on a terminal)")
    p.add_argument("--json", action="store_true", help="print a JSON summary (implies --quiet)")
    p.set_defaults(func=run)


def process_count(text: str):
    """--processes: 'auto' or a whole number ('4', '4.0', '1e1'); anything else refused in the words BenchConfig uses
    for a number out of range (argparse would say "invalid process_count value")."""
    import argparse

    from capmodel.constraints import number_in

    if text == "auto":
        return text
    value = number_in(text, int)
    if type(value) is not int:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1 or 'auto', got {text!r}")
    return value


OPTION_FIELDS = ("workload", "records", "duration", "warmup", "operations", "rate", "rate_shape", "windows", "arrivals",
                 "processes", "repeat", "adaptive", "tolerance", "max_steps", "database", "collection",
                 "allow_existing", "read_preference", "write_concern", "timeout_ms", "on_error", "seed", "scheduler",
                 "workers", "binding", "allow_server_js", "slo")


def build_config(args):
    """The BenchConfig from the options; with --resume, the stored configuration is the base."""
    from dataclasses import fields

    from capmodel.bench.sweep.config import SCHEDULER_ENV, BenchConfig
    from capmodel.bench.sweep.files import read_run
    from capmodel.commands import parse_number_list

    given = {name: getattr(args, name) for name in OPTION_FIELDS if getattr(args, name) is not None}
    if "scheduler" not in given and os.environ.get(SCHEDULER_ENV) and "processes" not in given:
        given["scheduler"] = os.environ[SCHEDULER_ENV]
    if args.concurrency is not None:
        given["concurrency"] = parse_number_list(args.concurrency, "--concurrency", int)
    base = {}
    adaptive_only = [o for o, k in (("--tolerance", "tolerance"), ("--max-steps", "max_steps")) if k in given]
    if adaptive_only and not (args.adaptive or args.slo) and not args.resume:   # a resumed sweep keeps its mode
        from capmodel.errors import BenchError

        raise BenchError(f"{' and '.join(adaptive_only)} steer a search: give --adaptive or --slo too (without "
                         "either every --concurrency value is measured and they do nothing)")
    if args.resume:
        stored = read_run(Path(args.out))["config"]
        known = {f.name for f in fields(BenchConfig)}
        base = {k: v for k, v in stored.items() if k in known}
        # a value given now that differs from the stored one is caught by the sweep's resume check
        return BenchConfig(**{**base, **given}), base
    return BenchConfig(**given), base


def run(args) -> int:
    from capmodel.extras import require

    require("bench", "capmodel bench")
    from capmodel.bench.sweep.sweep import Sweep
    from capmodel.redact import redact_text

    config, _ = build_config(args)
    if config.distributed:   # Dask's own tracebacks (a lost scheduler) are not the user's: capmodel says it in one line
        from capmodel.bench.cluster.dask_logs import quiet_dask_logs

        quiet_dask_logs()
    quiet = args.quiet or args.json
    bars = not quiet and sys.stderr.isatty()  # a redirected log gets the step lines, never '\r' progress bars
    log = (lambda message: None) if quiet else (lambda message: print(redact_text(message), file=sys.stderr))
    uri = args.uri or os.environ.get(URI_ENV)
    from capmodel.bench import server as srv

    try:
        if uri:
            # SIGTERM becomes an exception, so the sweep's finally-blocks stop a local cluster's client processes too
            with srv.stop_on_signals():
                result = Sweep(uri, config, args.out, resume=args.resume, progress=bars, log=log).run()
        else:
            with srv.stop_on_signals():
                log("starting an embedded mongod ...")
                with srv.embedded_server() as server:
                    log(f"embedded mongod {server.version or ''} at {server.uri}")
                    result = Sweep(server.uri, config, args.out, resume=args.resume, progress=bars, log=log,
                                   server_pids=server.pids).run()
    except (KeyboardInterrupt, srv.Terminated) as exc:
        print(f"capmodel: {_kept(args.out, exc)}", file=sys.stderr)
        return 130
    if args.json:
        from capmodel.jsonable import print_json

        print_json({"out": str(result.out), "status": result.run["status"], "steps": len(result.steps),
                    "curve": result.curve, "client_ceiling_ops_per_s": result.run.get("client_ceiling_ops_per_s"),
                    "adaptive": result.run.get("adaptive"), "uri": result.run["uri"],
                    "slo": None if result.slo is None else result.slo.to_json()})
    elif result.slo is not None:
        print(result.slo.summary())
        print(f"wrote {Path(args.out) / 'slo.json'}")
    else:
        print(f"wrote {Path(args.out) / 'curve.csv'} ({len(result.curve)} steps); "
              f"fit it with: capmodel fit {Path(args.out) / 'curve.csv'}")
    return 0


def _kept(out, exc) -> str:
    """What an interrupted run leaves: the completed steps in --out (each fsync'ed as it ended) and how to go on."""
    import json

    from capmodel.bench.server import Terminated

    how = f"interrupted ({exc})" if isinstance(exc, Terminated) else "interrupted"
    steps = Path(out) / "steps.jsonl"
    try:
        lines = steps.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return f"{how}; no step had completed, nothing was kept in {out}"
    done = 0
    for line in lines:
        try:
            done += json.loads(line).get("status") == "ok"
        except (ValueError, AttributeError):
            pass
    if not done:
        return f"{how}; no step had completed, nothing was kept in {out}"
    return (f"{how}; kept {done} completed step{'' if done == 1 else 's'} in {steps} and {Path(out) / 'curve.csv'}: "
            "run the same command with --resume to go on")
