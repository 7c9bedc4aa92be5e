"""``capmodel fleet FOLDER...``: many servers' FTDC analysed as Dask tasks, one row per server, most urgent first.

Each FOLDER is a server's ``diagnostic.data`` or a parent of many. The tasks run on an embedded local Dask cluster
(``--workers`` processes) or on an existing one (``--scheduler ADDRESS``); a server whose files cannot be read fails
its own row. ``--growth`` (a monthly fraction) gives the months of runway.
"""
from __future__ import annotations


def register(subparsers) -> None:
    p = subparsers.add_parser("fleet", help="capacity, headroom and runway of many servers' FTDC, as Dask tasks",
                              description="One task per server: its FTDC decoded on a Dask worker, its capacity from "
                              "its own CPU per operation, only the summary row sent back. Rows sorted by urgency "
                              "(months of runway, then spare fraction). --json prints {servers, failed, copies, "
                              "answer, rows}.")
    p.add_argument("folders", nargs="+", metavar="FOLDER", help="a server's diagnostic.data, or a folder of them")
    p.add_argument("--growth", type=float, default=None, metavar="G",
                   help="monthly load growth as a fraction (0.05 = 5%% a month) for the months of runway")
    p.add_argument("--utilization-target", type=float, default=0.8, metavar="U",
                   help="CPU utilization the plan allows (default 0.8)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="an existing Dask scheduler (tcp://HOST:PORT); default an embedded local cluster")
    p.add_argument("--workers", type=int, default=None, metavar="P",
                   help="worker processes of the embedded local cluster (default 2)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args) -> int:
    from capmodel.extras import require

    require("observe", "capmodel fleet")
    from capmodel.bench.cluster.dask_logs import quiet_dask_logs
    from capmodel.constraints import MONTHLY_GROWTH, UTILIZATION_TARGET
    from capmodel.errors import InputError
    from capmodel.formatting import plural
    from capmodel.jsonable import print_json
    from capmodel.observe.fleet import fleet_table

    UTILIZATION_TARGET.check(args.utilization_target, InputError)
    MONTHLY_GROWTH.check(args.growth, InputError)
    if args.scheduler is not None and args.workers is not None:   # it was ignored: the cluster's own workers ran
        raise InputError("--workers sizes the embedded local cluster; with --scheduler the scheduler's own workers "
                         "run the tasks: give one or the other")
    if args.scheduler is not None:
        from capmodel.bench.cluster.scheduler_probe import probe_scheduler

        probe_scheduler(args.scheduler)  # a silent, garbage or wrong-scheme peer: one line within 10 s, before Dask
    quiet_dask_logs()   # Dask's own tracebacks (a lost scheduler) are not the user's: capmodel says it in one line
    fleet = fleet_table(args.folders, monthly_growth=args.growth, utilization_target=args.utilization_target,
                        scheduler=args.scheduler, workers=2 if args.workers is None else args.workers)
    none_read = bool(fleet.failed) and fleet.failed == len(fleet.rows) - fleet.copies
    if not args.json:
        print(fleet.summary())
    elif not none_read:
        print_json(fleet.to_json())
    if none_read:   # with --json capmodel.cli prints the rows and the error as one object (not two documents)
        raise InputError(f"none of the {plural(fleet.failed, 'server')} could be read (each server's row says why)",
                         json=fleet.to_json() if args.json else None)
    return 0
