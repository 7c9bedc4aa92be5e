"""``capmodel server start|stop|status``: the embedded mongod as a background service.

``start`` launches mongod (or a replica set) detached, records it in a state file (``$CAPMODEL_STATE_DIR/server.json``,
default ``~/.cache/capmodel/server.json``) and prints its URI; ``start --foreground`` instead runs until Ctrl-C or
SIGTERM and then shuts it down. ``status`` and ``stop`` find the server through the state file.
``start --cpus 0`` pins every mongod to the given CPUs (so that a load generator on the other CPUs does not compete
with it); ``start --ftdc`` turns on MongoDB's diagnostic data (FTDC, one sample a second, in DBPATH/diagnostic.data,
which ``capmodel observe --ftdc`` reads).
Exit status: 0 when the command did what was asked or there was nothing to do (``stop`` with no server, ``start``
with one already running); ``status`` exits 0 when a server runs and 3 when none does (the LSB convention for "not
running"; the output says which); 2 on errors.
"""
from __future__ import annotations

import sys


def register(subparsers) -> None:
    p = subparsers.add_parser("server", help="start, stop or inspect the embedded mongod (127.0.0.1 only)")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True, parser_class=type(p))
    start = actions.add_parser("start", help="start mongod in the background and print its URI")
    start.add_argument("--port", type=int, default=None, help="first port (default: a free port from the OS)")
    start.add_argument("--dbpath", default=None, help="data directory, kept after stop (default: a temporary one)")
    start.add_argument("--replica-set", type=int, default=None, metavar="N",
                       help="start an N-member replica set on loopback (e.g. 3)")
    start.add_argument("--cache-gb", type=float, default=None, help="WiredTiger cache per mongod in GB (default 0.25)")
    start.add_argument("--cpus", default=None, metavar="LIST",
                       help="run mongod only on these CPUs, e.g. 0 or 0-1 (Linux CPU affinity; default: any CPU)")
    start.add_argument("--ftdc", "--diagnostic-data", dest="ftdc", action="store_true",
                       help="record FTDC diagnostic data once a second into DBPATH/diagnostic.data "
                            "(DBPATH/memberN/diagnostic.data for a replica set), for 'capmodel observe --ftdc'")
    start.add_argument("--foreground", action="store_true",
                       help="stay in the foreground and stop the server on Ctrl-C / SIGTERM")
    start.add_argument("--json", action="store_true", help="print the server's state as JSON")
    start.set_defaults(func=run_start)
    stop = actions.add_parser("stop", help="stop the server started by 'capmodel server start'")
    stop.set_defaults(func=run_stop)
    status = actions.add_parser("status", help="is the server running? where? (exit status 3 when none runs)")
    status.add_argument("--json", action="store_true", help="print uri, running, pids, port, dbpath, version as JSON")
    status.set_defaults(func=run_status)


def _require_bench() -> None:
    from capmodel.extras import require

    require("bench", "capmodel server")


def _status_dict(server, running: bool) -> dict:
    state = server.to_state()
    state["running"] = running
    state["pid"] = server.pids[0] if server.pids else None
    return state


def run_start(args) -> int:
    _require_bench()
    from capmodel.bench import server as srv
    from capmodel.constraints import CACHE_GB
    from capmodel.errors import ServerError
    from capmodel.jsonable import print_json

    cache_gb = CACHE_GB.check(args.cache_gb if args.cache_gb is not None else srv.DEFAULT_CACHE_GB, ServerError)
    if args.foreground:
        return _run_foreground(args, cache_gb)
    existing = srv.load_state()
    if existing is not None:
        if existing.is_running():
            if args.json:
                print_json({**_status_dict(existing, True), "already_running": True})
            else:
                print(f"a capmodel server is already running: {existing.uri}")
            return 0
        srv.clear_state()  # left behind by a server that is gone
    with srv.stop_on_signals():  # Ctrl-C / SIGTERM while starting: start_server stops what it began
        server = srv.start_server(port=args.port, dbpath=args.dbpath, replica_set=args.replica_set,
                                  cache_gb=cache_gb, detach=True, cpus=args.cpus, diagnostic_data=args.ftdc)
    try:
        srv.save_state(server)
    except BaseException:  # never leave a detached mongod that no state file knows about
        server.stop()
        raise
    if args.json:
        print_json(_status_dict(server, True))
    else:
        print(server.uri)
    return 0


def _run_foreground(args, cache_gb: float) -> int:
    import time

    from capmodel.bench import server as srv

    existing = srv.load_state()
    if existing is not None and existing.is_running():
        print(f"a capmodel server is already running: {existing.uri}")
        return 0
    with srv.stop_on_signals():
        try:
            with srv.embedded_server(port=args.port, dbpath=args.dbpath, replica_set=args.replica_set,
                                     cache_gb=cache_gb, cpus=args.cpus, diagnostic_data=args.ftdc) as server:
                srv.save_state(server)  # so that 'status' and 'stop' in another terminal find it
                try:
                    print(server.uri, flush=True)
                    print("running; press Ctrl-C to stop", file=sys.stderr, flush=True)
                    while server.is_running():
                        time.sleep(0.5)
                finally:
                    srv.clear_state()
                print("the server has stopped", file=sys.stderr)  # 'capmodel server stop', or mongod exited
                return 0
        except KeyboardInterrupt:  # Ctrl-C, or SIGTERM via stop_on_signals: the with-block has stopped the server
            print("stopped", file=sys.stderr)
            return 0


def run_stop(args) -> int:
    _require_bench()
    from capmodel.bench import server as srv

    server = srv.load_state()
    if server is None or not server.is_running():
        srv.clear_state()
        if server is not None and server.owns_dbpath:
            import shutil

            shutil.rmtree(server.dbpath, ignore_errors=True)
        print("no capmodel server is running")
        return 0
    server.stop()
    srv.clear_state()
    print(f"stopped the server at {server.uri}")
    return 0


def ftdc_where(server) -> str:
    """Where a running server's FTDC is and how to read it (and that 'stop' deletes it when the dbpath is
    temporary), or "" when FTDC is off."""
    if not server.diagnostic_data:
        return ""
    where = f"{server.dbpath}/member*/diagnostic.data" if server.replica_set else f"{server.dbpath}/diagnostic.data"
    read = f"capmodel observe --ftdc {server.dbpath}" + ("" if server.replica_set else "/diagnostic.data")
    kept = " (deleted by 'server stop': read it before, or start with --dbpath to keep it)" if server.owns_dbpath \
        else ""
    return f"FTDC in {where}: {read}{kept}"


NOT_RUNNING = 3  # 'status' when no server runs (LSB init scripts: "program is not running")


def run_status(args) -> int:
    _require_bench()
    from capmodel.bench import server as srv
    from capmodel.jsonable import print_json

    server = srv.load_state()
    running = server is not None and server.is_running()
    if args.json:
        if server is None:
            print_json({"running": False, "uri": None, "pid": None, "pids": [], "port": None, "dbpath": None,
                        "version": None, "state_file": str(srv.state_path())})
        else:
            print_json({**_status_dict(server, running), "state_file": str(srv.state_path())})
        return 0 if running else NOT_RUNNING
    if server is None:
        print("no capmodel server is running")
    elif running:
        kind = f"replica set {server.replica_set} ({len(server.pids)} members)" if server.replica_set else "standalone"
        print(f"running: {server.uri}\n  {kind}, mongod {server.version}, pids {server.pids}, dbpath {server.dbpath}")
        extras = [f"CPUs {','.join(map(str, server.cpus))}" if server.cpus else "",
                  ftdc_where(server)]
        if any(extras):
            print("  " + ", ".join(e for e in extras if e))
    else:
        print(f"not running (the state file {srv.state_path()} names a server that is gone)")
    return 0 if running else NOT_RUNNING
