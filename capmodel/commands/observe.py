"""``capmodel observe``: a running MongoDB's own telemetry -> ``DIR/samples.csv`` and ``DIR/curve.csv``.

``--uri URI`` samples ``serverStatus`` live (read-only) every ``--interval`` seconds for ``--duration`` seconds;
Ctrl-C stops early and keeps every complete interval. ``--ftdc PATH`` reads a ``diagnostic.data`` folder or FTDC
files instead, optionally limited by ``--since`` / ``--until`` (UTC unless the time says otherwise). The curve is
ready for ``capmodel fit DIR/curve.csv``. It then answers how much more the server can carry
(``capmodel.observe.server_capacity``: the operational laws on the server's own CPU per operation, with the cores of
``--cores`` or the host's) and prints the answer with its evidence; ``--json`` has them as ``"capacity"`` and
``"evidence"``. Several members' FTDC folders (or a parent holding one per member), or a replica-set URI, give every
member's tables under ``DIR/members/`` and name the member that limits the set.
"""
from __future__ import annotations

import sys
from pathlib import Path


def register(subparsers) -> None:
    p = subparsers.add_parser("observe", help="derive the scalability curve from a running MongoDB's telemetry "
                                              "(live serverStatus or FTDC files)")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--uri", help="MongoDB URI to sample serverStatus from (read-only)")
    source.add_argument("--ftdc", metavar="PATH", nargs="+", action="extend", help="a diagnostic.data folder or FTDC "
                        "metrics.* files; several members' folders (or a parent with one per member) for a replica set")
    p.add_argument("--interval", type=float, default=None, help="seconds between samples with --uri (default 1)")
    p.add_argument("--duration", type=float, default=None, help="seconds to sample with --uri (default 600)")
    p.add_argument("--since", default=None, help="with --ftdc: first sample time (ISO 8601, UTC by default)")
    p.add_argument("--until", default=None, help="with --ftdc: last sample time (ISO 8601, UTC by default)")
    p.add_argument("--out", default="observed", help="output folder (default ./observed)")
    p.add_argument("--cores", type=float, default=None,
                   help="CPUs the mongod may use (default: the host's, as the server reports them)")
    p.add_argument("--utilization-target", type=float, default=0.8,
                   help="CPU utilization to plan to, 0-1 (default 0.8)")
    p.add_argument("--growth", type=float, default=None, metavar="FRACTION",
                   help="monthly load growth for a runway, e.g. 0.05 for 5%% a month")
    p.add_argument("--resume", action="store_true", help="with --uri: continue the observation already in --out "
                   "(same URI and members), appending to it")
    p.add_argument("--json", action="store_true", help="print the outcome as one JSON object")
    p.set_defaults(func=run)


def _time(value, option: str):
    """A --since/--until time: ISO 8601 read directly, anything else as ``pandas.Timestamp`` reads it."""
    import datetime as dt

    from capmodel.errors import InputError

    if value is None:
        return None
    try:
        return dt.datetime.fromisoformat(value)
    except ValueError:
        pass
    import pandas as pd

    try:
        stamp = pd.Timestamp(value)
    except (ValueError, TypeError):
        stamp = pd.NaT
    if pd.isna(stamp):        # "nan", "NaT", "none" read as no time at all: the whole window was taken silently
        raise InputError(f"{option} {value!r}: expected a time such as 2024-05-01T12:00:00Z") from None
    return stamp


def _window(args) -> tuple:
    """--since and --until read, the first not after the second (naive times are UTC)."""
    import datetime as dt

    from capmodel.errors import InputError

    since, until = _time(args.since, "--since"), _time(args.until, "--until")

    def utc(moment):
        return moment.replace(tzinfo=dt.timezone.utc) if moment.tzinfo is None else moment

    if since is not None and until is not None and utc(since) > utc(until):
        raise InputError(f"--since {args.since} is after --until {args.until}")
    return since, until


def run(args) -> int:
    from capmodel.extras import require

    require("observe", "capmodel observe")
    from capmodel.errors import InputError
    from capmodel.jsonable import print_json
    from capmodel.observe.observation import Observation

    if args.uri is not None and (args.since or args.until):
        raise InputError("--since/--until select FTDC samples; with --uri use --duration")
    if args.resume and args.uri is None:
        raise InputError("--resume continues a live observation: it goes with --uri")
    _check_sampling(args)
    _check_targets(args)
    from capmodel.output_folder import check_folder

    check_folder(args.out)  # a file named like --out: said before the FTDC is read or the server sampled
    _check_earlier(args)
    if args.ftdc is not None:
        observed = _read_ftdc(args)      # an error: a line, and with --json {"error": ...} too (capmodel.cli)
        if not isinstance(observed, Observation):
            return _members(observed, args, write=True)
        observation = observed
    else:
        from capmodel.formatting import number
        from capmodel.observe.recording import record_uri
        from capmodel.redact import redact_uri

        print(f"sampling serverStatus of {redact_uri(args.uri)} every {number(args.interval)} s for "
              f"{number(args.duration)} s, "
              f"each interval appended to {args.out} as it completes (Ctrl-C stops and keeps them)", file=sys.stderr)
        observed = record_uri(args.uri, args.out, interval=args.interval, duration=args.duration,
                              resume=args.resume, utilization_target=args.utilization_target)
        if observed.replica_set:
            return _members(observed, args, write=False)
        standalone = observed.members[0].observation
        assert standalone is not None, "a standalone's recording holds its observation"
        observation = standalone
    paths = observation.files if args.ftdc is not None else \
        {"samples": Path(args.out) / "samples.csv", "curve": Path(args.out) / "curve.csv"}
    capacity, evidence = _capacity(observation, args)
    notes = getattr(observation, "notes", [])
    if not args.json:
        from capmodel.formatting import printable

        for note in notes:
            print(printable(f"note: {note}"), file=sys.stderr)
    if args.json:
        print_json({"notes": notes,
            "source": observation.source, "intervals": len(observation.tables["samples"]), "curve_points":
            len(observation.tables["curve"]), "dropped": observation.dropped, "interrupted": observation.interrupted,
            "start": observation.start.isoformat() if observation.start is not None else None,
            "end": observation.end.isoformat() if observation.end is not None else None,
            "files": {k: str(v) for k, v in paths.items()},
            "capacity": capacity.to_json() if capacity is not None else None, "evidence": evidence.to_json(),
        })
    else:
        print(observation.summary())
        print(printable(f"wrote {paths['samples']} and {paths['curve']}"))
        if capacity is not None:
            print(capacity.describe().replace("**", ""))
        print(evidence.describe().replace("**", ""))
    return 0


def _read_ftdc(args):
    """One server's ``Observation``, its tables written into --out as they are read, or every member's
    ``ReplicaSetObservation`` when several servers' folders are given (or one parent holding them)."""
    from capmodel.observe.folders import server_folders
    from capmodel.observe.observation import observe_ftdc_into

    since, until = _window(args)
    args.ftdc = _files_as_folder(args.ftdc)
    folders = server_folders(args.ftdc) if all(Path(p).expanduser().is_dir() for p in args.ftdc) else None
    if len(args.ftdc) > 1 and folders is None or (folders and len(folders) > 1):
        from capmodel.observe.members import observe_ftdc_members

        return observe_ftdc_members(args.ftdc, since, until, utilization_target=args.utilization_target)
    # one server: a folder, a file, a parent of one folder, or one folder named several times (read once)
    server = folders[0] if folders else args.ftdc[0]
    observation = observe_ftdc_into(server, args.out, since, until)
    if len(args.ftdc) > 1:
        observation.notes.append(f"--ftdc names one server's folder {len(args.ftdc):,} times ({server}): "
                                 "read once, as one server")
    return observation


def _files_as_folder(paths: list) -> list:
    """``--ftdc DIR/metrics.*`` (the shell's list of one server's files): that folder, when the files are all of its
    FTDC files; several files that are not one folder's whole set are refused (give their folder, or one file)."""
    from capmodel.errors import InputError
    from capmodel.observe.ftdc import ftdc_files

    files = [Path(p).expanduser() for p in paths]
    if len(files) < 2 or not all(f.is_file() for f in files):
        if len(files) > 1 and any(f.is_file() for f in files):
            raise InputError(f"--ftdc {next(f for f in files if f.is_file())}: a file among folders; give each "
                             "member's diagnostic.data folder")
        return paths
    parents = {f.resolve().parent for f in files}
    if len(parents) == 1:
        folder = parents.pop()
        whole = {f.resolve() for f in ftdc_files(folder)}
        if whole <= {f.resolve() for f in files}:
            return [str(folder)]
    raise InputError(f"--ftdc {files[0]} ...: {len(files):,} FTDC files that are not one folder's whole set; give "
                     "the diagnostic.data folder (or one file)")


def _check_earlier(args) -> None:
    """An --out that holds another kind of observation is refused saying which: a live one (its ``observe.json``
    has sessions) is not overwritten by FTDC tables (before: "samples.csv was not written by capmodel", though it
    was), and an FTDC one cannot be resumed or appended to by live sampling (before: "pass --resume" to a folder
    that --resume then refused)."""
    import json

    from capmodel.errors import InputError
    from capmodel.redact import redact_text

    record = Path(args.out) / "observe.json"
    try:
        earlier = json.loads(record.read_text())
    except (OSError, ValueError):
        return                          # none, or not ours: the writers refuse it naming the file
    if not isinstance(earlier, dict):
        return
    source = redact_text(str(earlier.get("source") or "another source"))
    live = "sessions" in earlier
    if args.ftdc is not None and live:
        raise InputError(f"--out {args.out}: holds a live observation of {source}; FTDC tables would mix with its "
                         "intervals: choose another folder")
    if args.uri is not None and not live:
        raise InputError(f"--out {args.out}: holds the observation of {source}, which live sampling cannot continue: "
                         "choose another folder")


def _check_sampling(args) -> None:
    """--uri not empty; --interval and --duration with --uri only (FTDC's samples are the server's own), in their
    ranges, the duration at least one interval; the defaults (1 s, 600 s) filled in. Before the first line is
    printed: it says them."""
    from capmodel.constraints import SAMPLE_DURATION, SAMPLE_INTERVAL
    from capmodel.errors import InputError

    if args.uri is None:
        given = [o for o, v in (("--interval", args.interval), ("--duration", args.duration)) if v is not None]
        if given:       # they were ignored in silence: FTDC holds what the server sampled, every second
            raise InputError(f"{' and '.join(given)} set the live sampling of --uri; with --ftdc choose the samples "
                             "with --since/--until")
        return
    if not args.uri.strip():
        raise InputError("--uri is empty: give a MongoDB URI such as mongodb://localhost:27017/")
    args.interval = SAMPLE_INTERVAL.check(1.0 if args.interval is None else args.interval, InputError)
    args.duration = SAMPLE_DURATION.check(600.0 if args.duration is None else args.duration, InputError)
    if args.duration < args.interval:
        from capmodel.formatting import number

        raise InputError(f"--duration must be at least one interval ({number(args.interval)} s), got "
                         f"{number(args.duration)}")


def _check_targets(args) -> None:
    """--cores, --utilization-target and --growth within their declared ranges, before any file is read or server
    sampled (several members' figures would otherwise each fail alone, and the run exit 0)."""
    from capmodel.constraints import CORES, MONTHLY_GROWTH, UTILIZATION_TARGET
    from capmodel.errors import InputError

    for constraint, value in ((CORES, args.cores), (UTILIZATION_TARGET, args.utilization_target),
                              (MONTHLY_GROWTH, args.growth)):
        constraint.check(value, InputError)


def _capacity(observation, args):
    """The capacity answer and its evidence; without one (too few busy intervals, no CPU figures) None and an
    ``unusable`` verdict saying why."""
    from capmodel.observe import server_capacity
    from capmodel.observe.capacity import TooFewIntervals, no_capacity_evidence

    try:
        capacity = server_capacity(observation.tables["samples"], cores=args.cores,
                                   utilization_target=args.utilization_target, monthly_growth=args.growth)
    except TooFewIntervals as exc:
        return None, no_capacity_evidence(exc)
    return capacity, capacity.evidence


def _members(observed, args, write: bool) -> int:
    """Every member of a replica set: per-member tables, the combined table and the limiting member."""
    from capmodel.formatting import printable
    from capmodel.jsonable import print_json
    from capmodel.observe.members import assess

    if args.cores is not None or args.growth is not None:    # --cores stands for what each member's host reports
        for member in observed.members:
            if member.observation is not None and not member.error:
                member.cores = args.cores if args.cores is not None else member.cores
                assess(member, args.utilization_target, args.growth)

    def say(text: str) -> None:        # a member named with a newline (its folder) stays one line
        print(printable(text))

    unread = sum(m.observation is None for m in observed.members)
    none_read = unread == len(observed.members)
    # nothing read, nothing written: --out is left as it was found (the error below says why, member by member)
    paths = {} if none_read else \
        observed.write(args.out) if write else {"table": Path(args.out) / "members.csv"}
    if args.json:
        if none_read:         # one JSON object, the members' rows and the error: capmodel.cli prints it
            raise _none_read(len(observed.members), json={**observed.to_json(), "files": None})
        print_json({**observed.to_json(), "files": {"out": str(args.out), "members_table": str(paths["table"])}})
        return 0
    print(observed.summary())
    if none_read:        # every member's files unreadable: each row says why; one line and exit 2 after them
        raise _none_read(len(observed.members))
    say(f"wrote {Path(args.out) / 'members'}/<host_port>/samples.csv and curve.csv, and {paths['table']}")
    return 0


def _none_read(members: int, json: dict | None = None):
    from capmodel.errors import InputError

    return InputError(f"none of the {members:,} members' FTDC could be read (each member's row says why); nothing "
                      "was written", json=json)
