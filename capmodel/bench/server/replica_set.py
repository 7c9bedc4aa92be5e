"""Turning N started mongods into a replica set: replSetInitiate, then wait for one PRIMARY and N - 1 SECONDARY."""
from __future__ import annotations

import contextlib
import time

from capmodel.bench.server.process import EmbeddedServer, log_tail
from capmodel.errors import ServerError

DEFAULT_REPLICA_SET_NAME = "capmodel"


def initiate_replica_set(server: EmbeddedServer, deadline: float) -> None:
    """replSetInitiate on the first member, then wait for one PRIMARY and the rest SECONDARY."""
    from pymongo import MongoClient
    from pymongo.errors import PyMongoError

    config = {
        "_id": server.replica_set,
        "members": [
            {"_id": i, "host": f"127.0.0.1:{p}", "priority": 2 if i == 0 else 1} for i, p in enumerate(server.ports)
        ],
    }
    client: MongoClient[dict] = MongoClient(host="127.0.0.1", port=server.ports[0], directConnection=True,
                                            serverSelectionTimeoutMS=5000)
    try:
        try:
            client.admin.command("replSetInitiate", config)
        except PyMongoError as exc:
            raise ServerError(f"replSetInitiate failed on port {server.ports[0]}: {exc}") from None
        states: dict = {}
        stepped_up = False
        while True:
            try:
                status = client.admin.command("replSetGetStatus")
                states = {m["name"]: m.get("stateStr") for m in status["members"]}
            except PyMongoError:
                pass
            values = list(states.values())
            if values.count("PRIMARY") == 1 and values.count("SECONDARY") == len(server.ports) - 1:
                return
            if not stepped_up and values and all(v == "SECONDARY" for v in values):
                # everyone has synced; ask the first member to run for election now rather than after the timeout
                with contextlib.suppress(PyMongoError):
                    client.admin.command("replSetStepUp")
                    stepped_up = True
            if time.monotonic() > deadline:
                raise ServerError(
                    f"replica set {server.replica_set!r} did not reach one PRIMARY and {len(server.ports) - 1} "
                    f"SECONDARY members in time (states: {states or 'unknown'}); "
                    f"last lines of {server.logpaths[0]}:\n{log_tail(server.logpaths[0])}"
                )
            time.sleep(0.1)
    finally:
        client.close()
