"""What a workload may ask the server to do: only work on its own collection, never destroy anything.

Checked when a workload is loaded (``check_operation``), so a shared workload file that asks for more is refused
before anything connects, with the file and the operation named.

``op: command`` runs a database command in the bench database. Only the commands below are allowed (an allow-list:
any other name, ``drop``, ``dropDatabase``, ``renameCollection``, ``createUser``, ``shutdown``, ``setParameter``,
``applyOps``, ... is refused):

- read-only and about the server or database, with no namespace: ``ping``, ``hello``, ``isMaster``, ``buildInfo``,
  ``serverStatus``, ``dbStats``, ``connectionStatus``, ``listCollections``;
- on a collection, which must be the workload's own, written literally: ``find``, ``aggregate``, ``count``,
  ``distinct``, ``collStats``, ``listIndexes``, ``insert``, ``update``, ``delete``, ``findAndModify``.

Aggregation pipelines (``op: aggregate`` and ``aggregate`` commands) may not write (``$out``, ``$merge``) and may
read other collections (``$lookup``, ``$graphLookup``, ``$unionWith``) only when they name the workload's own.
A command document may not be a generator (``{gen: choice, ...}``) nor carry ``$db``.

No server-side JavaScript: ``$where``, ``$function`` and ``$accumulator`` run code on the server (a
``while(true){}`` spins it until every operation times out), so they are refused at any depth of any operation
(filters, ``$or``/``$nor``/``$elemMatch``, ``$expr``, pipelines, update pipelines, the pipelines nested in ``$lookup``,
``$facet`` and ``$unionWith``, commands) unless the user says ``--allow-server-js`` (``allow_server_js=True``).
"""
from __future__ import annotations

from typing import Any

from capmodel.errors import InputError

SERVER_COMMANDS = ("ping", "hello", "ismaster", "buildinfo", "serverstatus", "dbstats", "connectionstatus",
                   "listcollections")
COLLECTION_COMMANDS = ("find", "aggregate", "count", "distinct", "collstats", "listindexes", "insert", "update",
                       "delete", "findandmodify")
WRITING_STAGES = ("$out", "$merge")
READING_STAGES = {"$lookup": "from", "$graphlookup": "from", "$unionwith": "coll"}
SERVER_JS = ("$where", "$function", "$accumulator")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _check_stages(value: Any, collection: str, at: str, depth: int = 0) -> None:
    """Refuse writing stages anywhere in ``value`` and reads of other collections (generators' values included)."""
    if depth > 200:
        raise InputError(f"{at}: nested too deeply")
    if isinstance(value, dict):
        for key, item in value.items():
            name = str(key).lower()
            if name in WRITING_STAGES:
                raise InputError(f"{at}: the stage {key} writes to the database; a workload may not use it")
            if name in READING_STAGES:
                target = item.get(READING_STAGES[name]) if isinstance(item, dict) else item
                if target != collection:
                    raise InputError(f"{at}: {key} reads {_short(target)}; a workload may read only its own "
                                     f"collection {collection!r}")
            _check_stages(item, collection, at, depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _check_stages(item, collection, at, depth + 1)


def check_command(command: Any, collection: str, at: str) -> None:
    """Refuse a command document that is not on the allow-list or names another namespace."""
    if not isinstance(command, dict) or not command:
        raise InputError(f"{at}: command needs a 'command' mapping, e.g. {{ping: 1}}")
    if "gen" in command:
        raise InputError(f"{at}: a command must be written out, not generated (gen: ...)")
    if any(str(key).lower() == "$db" for key in command):
        raise InputError(f"{at}: a command may not choose its database ($db)")
    name = next(iter(command))
    lowered = str(name).lower()
    if lowered in SERVER_COMMANDS:
        return
    if lowered not in COLLECTION_COMMANDS:
        allowed = ", ".join(SERVER_COMMANDS + COLLECTION_COMMANDS)
        raise InputError(f"{at}: the command {_short(name)} is not allowed in a workload (allowed: {allowed})")
    target = command[name]
    if target != collection:
        raise InputError(f"{at}: the command {name} names {_short(target)}; a workload may touch only its own "
                         f"collection {collection!r}")
    _check_stages(command, collection, at)


def check_server_js(value: Any, at: str, depth: int = 0) -> None:
    """Refuse ``$where``, ``$function`` and ``$accumulator`` anywhere in ``value``, naming the operator."""
    if depth > 200:
        raise InputError(f"{at}: nested too deeply")
    if isinstance(value, dict):
        for key, item in value.items():
            if str(key).strip().lower() in SERVER_JS:
                raise InputError(f"{at}: {str(key)[:20]} runs JavaScript on the server; a workload may not use it "
                                 "unless you pass --allow-server-js")
            check_server_js(item, at, depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value:
            check_server_js(item, at, depth + 1)


def check_operation(kind: str, params: dict, collection: str, at: str, allow_server_js: bool = False) -> None:
    """Refuse an operation that would reach beyond the workload's collection, write through a pipeline, or (unless
    ``allow_server_js``) run JavaScript on the server."""
    if not allow_server_js:
        for key, value in params.items():
            check_server_js(value, f"{at}.{key}")
    if kind == "command":
        check_command(params.get("command"), collection, at)
    for key in ("pipeline", "filter", "update"):
        if key in params:
            _check_stages(params[key], collection, f"{at}.{key}")
