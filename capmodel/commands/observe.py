"""``capmodel observe``: a running MongoDB's own telemetry -> ``DIR/samples.csv`` and ``DIR/curve.csv``.

``--uri URI`` samples ``serverStatus`` live (read-only) every ``--interval`` seconds for ``--duration`` seconds;
Ctrl-C stops early and keeps every complete interval. ``--ftdc PATH`` reads a ``diagnostic.data`` folder or FTDC
files instead, optionally limited by ``--since`` / ``--until`` (UTC unless the time says otherwise). The curve is
ready for ``capmodel fit DIR/curve.csv``. It then answers how much more the server can carry
(``capmodel.observe.server_capacity``: the operational laws on the server's own CPU per operation, with the cores of
``--cores`` or the host's) and prints the answer with its evidence; ``--json`` has them as ``"capacity"`` and
``"evidence"``.
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
    p.add_argument("--cores", type=float, default=None,
                   help="CPUs the mongod may use (default: the host's, as the server reports them)")
    p.add_argument("--utilization-target", type=float, default=0.8,
                   help="CPU utilization to plan to, 0-1 (default 0.8)")
    p.add_argument("--growth", type=float, default=None, metavar="FRACTION",
                   help="monthly load growth for a runway, e.g. 0.05 for 5%% a month")
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
    from capmodel.commands import print_json
    from capmodel.errors import CapmodelError, InputError
    from capmodel.observe import observe_ftdc, observe_uri

    if args.uri is not None and (args.since or args.until):
        raise InputError("--since/--until select FTDC samples; with --uri use --duration")
    if args.ftdc is not None:
        try:
            observation = observe_ftdc(args.ftdc, _time(args.since, "--since"), _time(args.until, "--until"))
        except (CapmodelError, OSError) as exc:      # with --json the error is JSON too: {"error": ...}, exit 2
            if not args.json:
                raise
            from capmodel.redact import redact_text

            text = str(exc) if isinstance(exc, CapmodelError) else f"{exc.filename or args.ftdc}: {exc.strerror or exc}"
            print_json({"error": " ".join(redact_text(text).split())})
            return 2
    else:
        from capmodel.bench.redact import redact_uri

        print(f"sampling serverStatus of {redact_uri(args.uri)} every {args.interval:g} s for {args.duration:g} s "
              "(Ctrl-C stops and keeps every complete interval)", file=sys.stderr)
        observation = observe_uri(args.uri, interval=args.interval, duration=args.duration)
    paths = observation.write(args.out)
    capacity, evidence = _capacity(observation, args)
    if args.json:
        print_json({
            "source": observation.source, "intervals": len(observation.samples), "curve_points":
            len(observation.curve), "dropped": observation.dropped, "interrupted": observation.interrupted,
            "start": observation.start.isoformat() if observation.start is not None else None,
            "end": observation.end.isoformat() if observation.end is not None else None,
            "files": {k: str(v) for k, v in paths.items()},
            "capacity": capacity.to_json() if capacity is not None else None, "evidence": evidence.to_json(),
        })
    else:
        print(observation.summary())
        print(f"wrote {paths['samples']} and {paths['curve']}")
        if capacity is not None:
            print(capacity.answer().replace("**", ""))
        print(evidence.describe().replace("**", ""))
    return 0


def _capacity(observation, args):
    """The capacity answer and its evidence; without one (too few busy intervals, no CPU figures) None and an
    ``unusable`` verdict saying why."""
    from capmodel.errors import InputError
    from capmodel.models.evidence import Evidence, Reason
    from capmodel.observe import server_capacity
    from capmodel.observe.capacity import TooFewIntervals

    if args.cores is not None and not args.cores > 0:
        raise InputError(f"--cores must be a number of CPUs > 0, got {args.cores:g}")
    if not 0 < args.utilization_target <= 1:
        raise InputError(f"--utilization-target must be in (0, 1], got {args.utilization_target:g}")
    try:
        capacity = server_capacity(observation.samples, cores=args.cores,
                                   utilization_target=args.utilization_target, monthly_growth=args.growth)
    except TooFewIntervals as exc:
        return None, Evidence.of(Reason("no_capacity", "unusable", "no capacity can be stated: "
                                        + str(exc).removeprefix("samples: ")))
    return capacity, capacity.evidence
