"""A mongod started with ``--auth`` and one user, for the tests that check a password never leaks: the server is real
(the bundled binary), the user is created through the localhost exception."""
from __future__ import annotations

import contextlib
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on now (the system's choice)."""
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def auth_mongod(dbpath: Path, password: str, user: str = "bench") -> Iterator[tuple[int, subprocess.Popen]]:
    """``(port, process)`` of a mongod with ``--auth`` on 127.0.0.1 whose one user (root) has ``password``; stopped
    on exit."""
    from pymongo import MongoClient

    from capmodel.bench.server import find_mongod

    port = free_port()
    proc = subprocess.Popen([str(find_mongod()), "--auth", "--bind_ip", "127.0.0.1", "--port", str(port), "--dbpath",
                             str(dbpath), "--logpath", str(dbpath / "mongod.log"), "--wiredTigerCacheSizeGB", "0.25"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        with MongoClient(port=port, directConnection=True, serverSelectionTimeoutMS=30_000) as c:
            c.admin.command("createUser", user, pwd=password, roles=["root"])
        yield port, proc
    finally:
        proc.terminate()
        proc.wait(30)
