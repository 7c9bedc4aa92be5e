"""``capmodel observe``: a running MongoDB's own telemetry -> ``DIR/samples.csv`` and ``DIR/curve.csv``.

``--uri URI`` samples ``serverStatus`` live (read-only) every ``--interval`` seconds for ``--duration`` seconds;
Ctrl-C stops early and keeps every complete interval. ``--ftdc PATH`` reads a ``diagnostic.data`` folder or FTDC
files instead, optionally limited by ``--since`` / ``--until`` (UTC unless the time says otherwise). The curve is
ready for ``capmodel fit DIR/curve.csv``.
"""
from __future__ import annotations

import sys


def register(subparsers) -> None:
    p = subparsers.add_parser("observe", help="derive the scalability curve from a running MongoDB's telemetry "
                                              "(live serverStatus or FTDC files)")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--uri", help="MongoDB URI to sample serverStatus from (read-only)")
    source.add_argument("--ftdc", metavar="PATH", help="a diagnostic.data folder or FTDC metrics.* files")
    p.add_argument("--interval", type=float, default=1.0, help="seconds between samples with --uri (default 1)")
    p.add_argument("--duration", type=float, default=600.0, help="seconds to sample with --uri (default 600)")
    p.add_argument("--since", default=None, help="with --ftdc: first sample time (ISO 8601, UTC by default)")
    p.add_argument("--until", default=None, help="with --ftdc: last sample time (ISO 8601, UTC by default)")
    p.add_argument("--out", default="observed", help="output folder (default ./observed)")
    p.add_argument("--json", action="store_true", help="print the outcome as one JSON object")
    p.set_defaults(func=run)


def _time(value, option: str):
    import pandas as pd

    from capmodel.errors import InputError

    if value is None:
        return None
    try:
        return pd.Timestamp(value)
    except (ValueError, TypeError):
        raise InputError(f"{option} {value!r}: expected a time such as 2024-05-01T12:00:00Z") from None


def run(args) -> int:
    from capmodel.jsonable import print_json
    from capmodel.errors import InputError
    from capmodel.observe import observe_ftdc, observe_uri

    if args.uri is not None and (args.since or args.until):
        raise InputError("--since/--until select FTDC samples; with --uri use --duration")
    if args.ftdc is not None:
        observation = observe_ftdc(args.ftdc, _time(args.since, "--since"), _time(args.until, "--until"))
    else:
        from capmodel.redact import redact_uri

        print(f"sampling serverStatus of {redact_uri(args.uri)} every {args.interval:g} s for {args.duration:g} s "
              "(Ctrl-C stops and keeps every complete interval)", file=sys.stderr)
        observation = observe_uri(args.uri, interval=args.interval, duration=args.duration)
    paths = observation.write(args.out)
    if args.json:
        print_json({
            "source": observation.source, "intervals": len(observation.samples), "curve_points":
            len(observation.curve), "dropped": observation.dropped, "interrupted": observation.interrupted,
            "start": observation.start.isoformat() if observation.start is not None else None,
            "end": observation.end.isoformat() if observation.end is not None else None,
            "files": {k: str(v) for k, v in paths.items()},
        })
    else:
        print(observation.summary())
        print(f"wrote {paths['samples']} and {paths['curve']}")
    return 0
