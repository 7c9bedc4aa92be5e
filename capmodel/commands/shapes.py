"""``capmodel shapes``: the query shapes of mongod's JSON logs (or system.profile exports) -> ``DIR/shapes.csv`` and
``DIR/shapes.json`` (``capmodel.observe.shapes``)."""
from __future__ import annotations

from pathlib import Path

from capmodel.commands import whole_number


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "shapes", help="query shapes from mongod's JSON logs: rate, latency, plan and work per shape",
        description="Groups the operations of mongod's structured (JSON) log - its slow-operation entries - or of "
        "mongoexports of system.profile into query shapes (namespace, operation, the filter's paths and operators "
        "without values, sort, projection, queryHash) and writes one row per shape to DIR/shapes.csv and the whole "
        "answer to DIR/shapes.json. Rates are of the time every operation was eligible for the log (slowms 0), "
        "scaled by the sample rate; no value from the data reaches an output.")
    p.add_argument("logs", nargs="*", metavar="LOG_OR_FOLDER", help="mongod log files (gzip allowed) or folders of "
                   "them (*.log, *.log.*, *.json, *.gz)")
    p.add_argument("--profile", metavar="URI", help="instead of logs: the system.profile of the database the URI "
                   "names (mongodb://host/DATABASE), read-only, with the profiler's settings as the server says them")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder")
    p.add_argument("--slowms", type=float, default=None, metavar="MS", help="the slowms in force where a log does "
                   "not show it (default: the server's 100, said to be assumed)")
    p.add_argument("--sample-rate", type=float, default=None, metavar="SHARE", help="the slowOpSampleRate in force "
                   "where a log does not show it (default 1)")
    cpu = p.add_argument_group("CPU per shape and the what-if (needs the server's CPU over the log's time)")
    cpu.add_argument("--ftdc", metavar="DIR", help="the server's diagnostic.data folder (or FTDC files) over the "
                     "log's window: each shape's CPU per operation by regression on the server's CPU")
    cpu.add_argument("--interval", type=float, default=None, metavar="S", help="seconds per interval of the "
                     "shapes' rates regressed on the CPU (default 10)")
    cpu.add_argument("--cores", type=float, default=None, help="CPUs the mongod may use (default: the host's, as "
                     "the FTDC reports them)")
    cpu.add_argument("--what-if", action="append", default=[], metavar="SHAPE=FACTOR", help="scale a shape's rate "
                     "(its id or its rank in shapes.csv, e.g. 3=3 for the third shape x3); repeatable")
    cpu.add_argument("--bootstrap", type=int, default=200, metavar="N", help="refits for the intervals (default 200)")
    replay = p.add_argument_group("a workload that replays the shapes (capmodel bench --workload FILE runs it)")
    replay.add_argument("--workload", metavar="FILE", help="write a capmodel bench workload (YAML) replaying one "
                        "namespace's shapes: their filters, mix and rate, values sized to each shape's observed "
                        "selectivity (none from the log)")
    replay.add_argument("--namespace", metavar="DB.COLLECTION", help="the namespace the workload replays (default: "
                        "the one with the most operations)")
    replay.add_argument("--records", type=whole_number, default=None, metavar="N", help="documents the workload "
                        "loads (default: what a collection scan of the namespace examined)")
    replay.add_argument("--replay-log", nargs="+", metavar="LOG", help="the log of a server that ran the workload: "
                        "print each replayed shape's share of the operations (and CPU per operation where the logs "
                        "have cpuNanos) in the replay against the shapes read here")
    p.add_argument("--json", action="store_true", help="print the answer as one JSON object")
    p.set_defaults(func=run)


def run(args) -> int:
    from capmodel.errors import CapmodelError
    from capmodel.jsonable import print_json
    from capmodel.observe import query_shapes
    from capmodel.observe.shapes.files import write_shapes
    from capmodel.observe.shapes.grouping import INTERVAL_S, SAMPLE_RATE, SLOWMS
    from capmodel.observe.shapes.what_if import ftdc_cores, parse_factors

    if args.interval is not None:       # the API's constraints, named as options
        INTERVAL_S.check(args.interval, CapmodelError, "--interval")
    for option, value, constraint in (("--slowms", args.slowms, SLOWMS), ("--sample-rate", args.sample_rate,
                                                                         SAMPLE_RATE)):
        if value is not None:
            constraint.check(value, CapmodelError, option)
    factors = parse_factors(args.what_if)
    if args.ftdc is None and (factors or args.cores is not None or args.interval is not None):
        given = "--what-if" if factors else "--cores" if args.cores is not None else "--interval"
        raise CapmodelError(f"{given} needs --ftdc DIR (the server's CPU over the log's time)")
    interval = None if args.ftdc is None else (args.interval or 10.0)
    if bool(args.logs) == bool(args.profile):
        raise CapmodelError("give log files or folders, or --profile URI (one of the two)")
    if args.profile:
        if args.slowms is not None or args.sample_rate is not None:
            raise CapmodelError("--slowms and --sample-rate state a log's settings; with --profile the server says "
                                "them")
        from capmodel.observe.shapes.profiler import shapes_from_server

        shapes = shapes_from_server(args.profile, interval_s=interval)
    else:
        shapes = query_shapes(args.logs, slowms=args.slowms, sample_rate=args.sample_rate, interval_s=interval)
    what_if = None
    if args.ftdc is not None:
        from capmodel.observe import observe_ftdc
        from capmodel.observe.shapes.what_if import shapes_what_if

        samples = observe_ftdc(args.ftdc).samples
        cores = args.cores if args.cores is not None else ftdc_cores(samples, args.ftdc)
        what_if = shapes_what_if(shapes, samples, cores, factors, n_bootstrap=args.bootstrap)
    paths = write_shapes(shapes, args.out, what_if)
    replay, fidelity = _replay(args, shapes, what_if)
    if args.workload:
        paths["workload"] = Path(args.workload)
    if args.json:
        print_json({**shapes.to_json(), "what_if": what_if.to_json() if what_if is not None else None,
                    "workload": None if replay is None else {"namespace": replay.namespace,
                                                             "operations": list(replay.replayed),
                                                             "left_out": replay.left_out},
                    "fidelity": None if fidelity is None else fidelity.to_json(),
                    "files": {k: str(v) for k, v in paths.items()}})
    else:
        print(shapes.describe())
        if what_if is not None:
            print(what_if.describe())
        if fidelity is not None:
            print(fidelity.describe())
        print("\n".join((what_if or shapes).evidence.lines()))
        print(f"wrote {', '.join(str(p) for p in paths.values())}")
    return 0


def _replay(args, shapes, what_if):
    """The replay workload (written to --workload) and its fidelity (with --replay-log), where asked; production's
    CPU per operation is the what-if's fit where there is one (with --ftdc)."""
    from capmodel.errors import CapmodelError

    if not (args.workload or args.replay_log):
        if args.namespace is not None or args.records is not None:
            raise CapmodelError(f"{'--namespace' if args.namespace is not None else '--records'} sets the replay "
                                "workload: give --workload FILE or --replay-log LOG")
        return None, None
    from capmodel.observe import query_shapes
    from capmodel.observe.shapes.fidelity import replay_fidelity
    from capmodel.observe.shapes.replay import replay_workload, write_replay

    replay = replay_workload(shapes, namespace=args.namespace, records=args.records)
    if args.workload:
        write_replay(replay, args.workload)
    fidelity = None
    if args.replay_log:
        fidelity = replay_fidelity(shapes, query_shapes(args.replay_log), replay, production_cpu=what_if)
    return replay, fidelity

