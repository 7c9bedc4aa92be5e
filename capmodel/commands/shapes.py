"""``capmodel shapes``: the query shapes of mongod's JSON logs (or system.profile exports) -> ``DIR/shapes.csv`` and
``DIR/shapes.json`` (``capmodel.observe.shapes``)."""
from __future__ import annotations


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "shapes", help="query shapes from mongod's JSON logs: rate, latency, plan and work per shape",
        description="Groups the operations of mongod's structured (JSON) log - its slow-operation entries - or of "
        "mongoexports of system.profile into query shapes (namespace, operation, the filter's paths and operators "
        "without values, sort, projection, queryHash) and writes one row per shape to DIR/shapes.csv and the whole "
        "answer to DIR/shapes.json. Rates are of the time every operation was eligible for the log (slowms 0), "
        "scaled by the sample rate; no value from the data reaches an output.")
    p.add_argument("logs", nargs="+", metavar="LOG_OR_FOLDER", help="mongod log files (gzip allowed) or folders of "
                   "them (*.log, *.log.*, *.json, *.gz)")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder")
    p.add_argument("--slowms", type=float, default=None, metavar="MS", help="the slowms in force where a log does "
                   "not show it (default: the server's 100, said to be assumed)")
    p.add_argument("--sample-rate", type=float, default=None, metavar="SHARE", help="the slowOpSampleRate in force "
                   "where a log does not show it (default 1)")
    p.add_argument("--interval", type=float, default=10.0, metavar="S", help="seconds per interval of the "
                   "per-interval rates (default 10)")
    p.add_argument("--json", action="store_true", help="print the answer as one JSON object")
    p.set_defaults(func=run)


def run(args) -> int:
    from capmodel.jsonable import print_json
    from capmodel.observe import query_shapes
    from capmodel.observe.shapes.files import write_shapes

    shapes = query_shapes(args.logs, slowms=args.slowms, sample_rate=args.sample_rate, interval_s=args.interval)
    paths = write_shapes(shapes, args.out)
    if args.json:
        print_json({**shapes.to_json(), "files": {k: str(v) for k, v in paths.items()}})
    else:
        print(shapes.describe())
        print(f"wrote {paths['table']} and {paths['record']}")
    return 0
