"""Live sampling: ``serverStatus`` from a running MongoDB at a fixed interval, read-only.

The only commands sent are ``ping`` and ``hello`` (to check the connection once), ``hostInfo`` (once, for the
host's CPU count) and ``serverStatus``; nothing is written, created or changed on the server. The URI's password never
reaches a message: errors show the URI through ``redact_uri`` and the driver's text through ``redact_text``.
"""
from __future__ import annotations

import time
from typing import Callable

import pandas as pd

from capmodel.errors import InputError, ServerError
from capmodel.formatting import number
from capmodel.observe.serverstatus import CORES_COLUMN, HOSTINFO_CORES, snapshot
from capmodel.redact import redact_text, redact_uri


def connect(uri: str, timeout_ms: int = 5000, **options):
    """A pymongo client on ``uri`` (``options``: more client options, e.g. ``directConnection``), checked with
    ``ping`` and ``hello``; ``ServerError`` (password masked) if not. A timeout the URI sets itself
    (``serverSelectionTimeoutMS``, ``connectTimeoutMS``, ``socketTimeoutMS``, in any case) wins over ``timeout_ms``,
    as in ``bench``: only the ones it does not set are given here."""
    from pymongo import MongoClient
    from pymongo.errors import PyMongoError

    given = uri_timeouts_ms(uri)
    defaults = {"serverSelectionTimeoutMS": timeout_ms, "connectTimeoutMS": timeout_ms,
                "socketTimeoutMS": max(timeout_ms, 10_000)}
    timeout_ms = given.get("serverSelectionTimeoutMS", timeout_ms)
    try:
        timeouts: dict = {k: v for k, v in defaults.items() if k not in given}
        client = MongoClient(uri, **timeouts, appname="capmodel-observe", **options)
    except (PyMongoError, ValueError, TypeError) as exc:
        raise InputError(f"--uri {redact_uri(uri)}: {redact_text(str(exc))}") from None
    try:
        client.admin.command("ping")
        client.admin.command("hello")
    except PyMongoError as exc:
        client.close()
        standalone = _lone_standalone(uri, timeout_ms)
        if standalone:
            raise ServerError(f"cannot use {redact_uri(uri)}: {standalone} answered as a standalone server, and a "
                              "driver given several seeds without replicaSet uses only replica-set members or mongos "
                              f"routers; give its address alone (--uri mongodb://{standalone}/)") from None
        raise ServerError(f"cannot reach {redact_uri(uri)}: {_why_unreachable(exc, timeout_ms)}") from None
    return client


#: the timeouts ``connect`` sets unless the URI does
TIMEOUTS = ("serverSelectionTimeoutMS", "connectTimeoutMS", "socketTimeoutMS")


def uri_timeouts_ms(uri: str) -> dict:
    """The timeouts the URI sets itself (name -> milliseconds, None for pymongo's "no timeout"), read by pymongo's
    own parser (``uri_parser.parse_uri``: options in any case, ``mongodb+srv``, percent-encoded credentials). A URI
    pymongo refuses gives {} here; ``MongoClient`` then says why (with the password masked)."""
    from pymongo import uri_parser

    try:
        parsed = uri_parser.parse_uri(uri, connect_timeout=5.0)   # resolves mongodb+srv, as MongoClient would
    except Exception:  # noqa: BLE001 - InvalidURI, ConfigurationError (DNS), ValueError (a malformed value)
        return {}
    options = {k.lower(): v for k, v in parsed["options"].items()}
    return {name: None if options[name.lower()] is None else round(options[name.lower()] * 1000)
            for name in TIMEOUTS if name.lower() in options}


def _lone_standalone(uri: str, timeout_ms: int) -> str | None:
    """Among a URI's several seeds (no replicaSet, not a direct connection), the first ``host:port`` that answers
    ``hello`` on a direct connection as a standalone (neither a replica-set member nor a mongos); None otherwise.
    pymongo drops such a server from a topology of several seeds, so the connection fails though it answered."""
    from pymongo import MongoClient, uri_parser
    from pymongo.errors import PyMongoError

    try:
        parsed = uri_parser.parse_uri(uri)
    except Exception:  # noqa: BLE001 - pymongo raises InvalidURI, ConfigurationError, ValueError
        return None
    options = {k.lower(): v for k, v in parsed["options"].items()}
    seeds = parsed.get("nodelist") or []
    if len(seeds) < 2 or "replicaset" in options or options.get("directconnection") or "srv" in uri.split(":")[0]:
        return None
    credentials = {}
    if parsed.get("username") is not None:
        credentials = dict(username=parsed["username"], password=parsed.get("password"),
                           authSource=options.get("authsource") or parsed.get("database") or "admin")
    tls = {k: v for k, v in parsed["options"].items() if k.lower().startswith(("tls", "ssl"))}
    wait = min(timeout_ms, 2000)
    for host, port in seeds:
        client = MongoClient(host, port, directConnection=True, serverSelectionTimeoutMS=wait, connectTimeoutMS=wait,
                             appname="capmodel-observe", **credentials, **tls)
        try:
            hello = client.admin.command("hello")
        except PyMongoError:
            continue
        finally:
            client.close()
        if not hello.get("setName") and hello.get("msg") != "isdbgrid" and not hello.get("isreplicaset"):
            return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return None


def _why_unreachable(exc, timeout_ms: int) -> str:
    """The driver's error in one readable clause: the first server's own error and the timeout, without pymongo's
    topology description (a repr that runs on for hundreds of characters)."""
    from pymongo.errors import OperationFailure, ServerSelectionTimeoutError

    text = redact_text(str(exc)).splitlines()[0] if str(exc) else type(exc).__name__
    if isinstance(exc, OperationFailure) and getattr(exc, "code", None) in (13, 18):
        return "authentication failed or not authorized"
    if isinstance(exc, ServerSelectionTimeoutError):
        first = text.split(", Timeout:")[0].split(" (configured timeouts")[0].split(", Topology Description")[0]
        return f"no server answered within {number(timeout_ms / 1000, 6)} s ({first.strip()})"
    return text.split(", Topology Description")[0][:300]


def host_cores(client) -> float:
    """The host's CPU count from ``hostInfo`` (NaN where the command is refused or lacks it)."""
    from pymongo.errors import PyMongoError

    try:
        value = client.admin.command("hostInfo")
    except PyMongoError:
        return float("nan")
    for part in HOSTINFO_CORES.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else float("nan")


def sample_server(uri: str, interval: float = 1.0, duration: float = 600.0,
                  on_row: Callable[[dict], None] | None = None, should_stop: Callable[[], bool] | None = None,
                  ) -> tuple[pd.DataFrame, bool]:
    """Raw rows (``time_ms`` and every serverStatus figure), one every ``interval`` seconds for ``duration`` seconds
    (``duration / interval + 1`` rows: the first is the baseline of the first interval), and whether sampling was
    interrupted (Ctrl-C, ``should_stop()``, or the server lost after the first row). Every row taken is kept."""
    check_timing(interval, duration)
    client = connect(uri)
    cores = host_cores(client)
    rows: list[dict] = []
    try:
        def keep(tick: dict) -> None:
            rows.append({**tick["server"], CORES_COLUMN: cores})
            if on_row is not None:
                on_row(tick["server"])

        interrupted = sample_ticks({"server": client}, interval, duration, keep, should_stop,
                                   where={"server": redact_uri(uri)})
    finally:
        client.close()
    return pd.DataFrame(rows), interrupted


def check_timing(interval: float, duration: float) -> None:
    """``InputError`` unless ``interval`` > 0 and ``duration`` holds at least one interval."""
    if not interval > 0:
        raise InputError(f"--interval must be > 0 seconds, got {interval}")
    if not duration >= interval:
        raise InputError(f"--duration must be at least one interval ({interval} s), got {duration}")


def sample_ticks(clients: dict, interval: float, duration: float, on_tick: Callable[[dict], None],
                 should_stop: Callable[[], bool] | None = None, where: dict | None = None,
                 notes: list | None = None) -> bool:
    """Every ``interval`` seconds for ``duration`` seconds, one ``serverStatus`` from each of ``clients`` (name ->
    pymongo client, e.g. one direct connection per replica-set member), handed to ``on_tick`` as {name: raw row}
    (a member that did not answer this tick is left out). Returns whether sampling was interrupted: Ctrl-C,
    ``should_stop()``, or no member answering after the first tick. No member answering the first tick raises
    ``ServerError``.

    Members are asked at once, each on its own thread: a member that hangs (stopped, partitioned) is left out of the
    ticks while its call is pending, and the others keep their interval (asked one after another, every tick waited
    up to the driver's timeouts for it, their intervals stretched to ~10 s). Each row carries the server's own
    ``localTime``, so an answer that comes late is still placed right. With a ``notes`` list, a member that stopped
    answering gets a sentence there."""
    from concurrent.futures import ThreadPoolExecutor, wait

    count = int(round(duration / interval)) + 1
    start = time.monotonic()
    first = True
    pool = ThreadPoolExecutor(max_workers=max(len(clients), 1), thread_name_prefix="capmodel-observe")
    pending: dict = {}
    silent: dict = {}                      # name -> when it last answered, while it does not
    try:
        for i in range(count):
            delay = start + i * interval - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            if should_stop is not None and should_stop():
                return True
            for name, client in clients.items():
                if name not in pending:
                    pending[name] = pool.submit(_status, client)
            # the first tick waits for every member (a slow first answer is not "unreachable"); later ticks until the
            # next tick is due
            wait(list(pending.values()), timeout=None if first else max(start + (i + 1) * interval
                                                                         - time.monotonic(), 0.0) * 0.9)
            tick, failures = {}, {}
            for name, future in list(pending.items()):
                if not future.done():
                    silent.setdefault(name, i)
                    continue
                del pending[name]
                row, failure = future.result()
                if failure is None:
                    tick[name] = row
                    silent.pop(name, None)
                else:
                    failures[name] = failure
                    silent.setdefault(name, i)
            if not tick and first:
                name, reason = next(iter(failures.items()))
                shown = (where or {}).get(name, name)
                raise ServerError(f"serverStatus on {shown} failed: {reason}")
            if not tick and not pending:      # every member refused (stopped, gone): nothing more to sample
                return True
            first = False
            if tick:
                on_tick(tick)
    except KeyboardInterrupt:
        return True
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
        if notes is not None:
            for name, since in silent.items():
                notes.append(f"member {name} stopped answering after {number(since * interval, 6)} s: its "
                             f"intervals up to "
                             "then are kept")
    return False


def _status(client) -> tuple:
    """(raw row, None) from one ``serverStatus``, or (None, the driver's error in one redacted line)."""
    from pymongo.errors import PyMongoError

    try:
        return snapshot(client.admin.command("serverStatus")), None
    except PyMongoError as exc:
        return None, redact_text(str(exc)).splitlines()[0][:300] if str(exc) else type(exc).__name__
