"""Starting an embedded server: a standalone mongod or an N-member replica set on loopback, a temporary or kept dbpath,
and the with-block form that stops it however the block ends."""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from pathlib import Path

from capmodel.bench.server.binary import check_cpu, find_mongod
from capmodel.bench.server.ports import choose_ports
from capmodel.bench.server.process import (
    LIVE,
    EmbeddedServer,
    check_cpus,
    is_our_mongod,
    launch_member,
    mongod_args,
    wait_ready,
)
from capmodel.bench.server.replica_set import DEFAULT_REPLICA_SET_NAME, initiate_replica_set
from capmodel.errors import ServerError
from capmodel.extras import require

DEFAULT_CACHE_GB = 0.25
START_TIMEOUT = 60.0
TEMP_PREFIX = "capmodel-mongod-"


def start_server(
    port: int | None = None,
    dbpath: str | os.PathLike | None = None,
    replica_set: int | None = None,
    cache_gb: float = DEFAULT_CACHE_GB,
    timeout: float = START_TIMEOUT,
    detach: bool = False,
    replica_set_name: str = DEFAULT_REPLICA_SET_NAME,
    diagnostic_data: bool = False,
    cpus=None,
) -> EmbeddedServer:
    """Start a standalone mongod or a replica set from the ``mongod`` wheel and wait until it is usable.

    Parameters
    ----------
    port : int, optional
        The first port (members use port, port + 1, ...); default free ports from the OS.
    dbpath : str or path-like, optional
        Kept afterwards; default a temporary folder removed by ``stop()``.
    replica_set : int, optional
        The members of a replica set (1 to 7); None: a standalone server.
    cache_gb : float, default 0.25
        The WiredTiger cache of each member.
    timeout : float, default 60.0
        Seconds to wait for it to be usable.
    detach : bool, default False
        Leave it running after this process exits.
    replica_set_name : str, default "capmodel"
        The set's name.
    diagnostic_data : bool, default False
        Record FTDC (``diagnostic.data`` in each member's dbpath) once a second.
    cpus : str or list of int, optional
        The CPUs every member may run on (``"0"``, ``"0-1"``, ``[0]``); default no pinning. Pinning the server apart
        from the load generator makes the server, not the client, the measured bottleneck on a shared host.

    Returns
    -------
    EmbeddedServer

    Raises
    ------
    ServerError
        No mongod binary, a bad member count, cache size or CPU list, a port or dbpath in use, or the server did not
        start in time.
    """
    require("bench", "start_server")
    if replica_set is not None and not 1 <= int(replica_set) <= 7:
        raise ServerError(f"--replica-set {replica_set}: a replica set has 1 to 7 members here")
    from capmodel.constraints import CACHE_GB

    cache_gb = CACHE_GB.check(cache_gb, ServerError, "cache_gb")
    cpus = check_cpus(cpus)
    binary = find_mongod()
    check_cpu(binary)
    members = int(replica_set) if replica_set else 1
    ports = choose_ports(port, members)
    owns = dbpath is None
    if owns:
        remove_stale_temp_dbpaths()
    base = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX)) if dbpath is None else Path(dbpath).expanduser().resolve()
    if not owns:
        base.mkdir(parents=True, exist_ok=True)
        _check_dbpath_free(base if not replica_set else base / "member0")
    name = replica_set_name if replica_set else None
    server = EmbeddedServer(
        uri=_uri(ports, name), port=ports[0], ports=ports, dbpath=base, pids=[], replica_set=name,
        owns_dbpath=owns, detached=detach, binary=str(binary), cpus=cpus,
        diagnostic_data=bool(diagnostic_data),
    )
    deadline = time.monotonic() + timeout
    try:
        for member_port, member_path in zip(ports, server.member_dbpaths):
            args = mongod_args(binary, member_port, member_path, cache_gb, name, diagnostic_data)
            proc = launch_member(args, member_path, detach, cpus)
            server.attach(proc)
            if not detach:
                LIVE.add(server)
        for index in range(members):
            wait_ready(server, index, deadline)
        if name:
            initiate_replica_set(server, deadline)
        server.version = _server_version(server)
    except BaseException:  # including KeyboardInterrupt: never leave a half-started mongod behind
        with contextlib.suppress(Exception):
            server.stop(timeout=5)
        raise
    return server

def remove_stale_temp_dbpaths(min_age: float = 60.0, candidates=None) -> list[Path]:
    """Remove temporary dbpaths left by processes that died before they could (SIGKILL): every mongod.lock in them
    exists and names no live mongod. A directory whose mongod has not written its lock yet is left alone."""
    removed = []
    if candidates is None:
        candidates = Path(tempfile.gettempdir()).glob(TEMP_PREFIX + "*")
    for candidate in candidates:
        locks = list(candidate.glob("mongod.lock")) + list(candidate.glob("member*/mongod.lock"))
        try:
            if not locks or any(time.time() - lock.stat().st_mtime < min_age for lock in locks):
                continue  # a mongod may be starting or stopping there right now
            pids = [lock.read_text().strip() for lock in locks]
        except OSError:
            continue
        if all(not pid or (pid.isdigit() and not is_our_mongod(int(pid), None)) for pid in pids):
            shutil.rmtree(candidate, ignore_errors=True)
            removed.append(candidate)
    return removed

def _check_dbpath_free(dbpath: Path) -> None:
    """mongod writes its pid into mongod.lock while it runs; refuse a dbpath a live mongod is using."""
    try:
        text = (dbpath / "mongod.lock").read_text().strip()
    except OSError:
        return
    if text.isdigit() and is_our_mongod(int(text), None):
        raise ServerError(f"--dbpath {dbpath}: mongod pid {text} is already using it (stop it, or pick another dbpath)")

def _uri(ports: list[int], replica_set: str | None) -> str:
    hosts = ",".join(f"127.0.0.1:{p}" for p in ports)
    return f"mongodb://{hosts}/?replicaSet={replica_set}" if replica_set else f"mongodb://{hosts}/"

def _server_version(server: EmbeddedServer) -> str | None:
    from pymongo import MongoClient
    from pymongo.errors import PyMongoError

    client: MongoClient[dict] = MongoClient(host="127.0.0.1", port=server.port, directConnection=True,
                                            serverSelectionTimeoutMS=2000)
    try:
        return client.admin.command("buildInfo").get("version")
    except PyMongoError:
        return None
    finally:
        client.close()

@contextlib.contextmanager
def embedded_server(
    port: int | None = None,
    dbpath: str | os.PathLike | None = None,
    replica_set: int | None = None,
    cache_gb: float = DEFAULT_CACHE_GB,
    timeout: float = START_TIMEOUT,
    diagnostic_data: bool = False,
    cpus=None,
):
    """Start an embedded mongod for the duration of a with-block; it is stopped however the block ends.

    Parameters
    ----------
    port, dbpath, replica_set, cache_gb, timeout, diagnostic_data, cpus
        As for ``start_server``.

    Yields
    ------
    EmbeddedServer

    Raises
    ------
    ServerError
        As ``start_server`` raises it.
    """
    server = start_server(port=port, dbpath=dbpath, replica_set=replica_set, cache_gb=cache_gb, timeout=timeout,
                          diagnostic_data=diagnostic_data, cpus=cpus)
    try:
        yield server
    finally:
        server.stop()
