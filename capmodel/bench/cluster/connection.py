"""Talking to the server under test from the coordinator or a worker: the MongoClient a sweep uses, the first
``ping``, versions, and which host the server runs on (a client that shares the server's host competes with it for
CPU, and a verdict about the client must know)."""
from __future__ import annotations

import hashlib
import os
import platform
import socket
import sys

from capmodel.errors import BenchError
from capmodel.redact import redact_text, redact_uri

# options a flag of ``capmodel bench`` sets: the flag wins over the URI (its help says "default: the URI's")
FLAG_OPTIONS = {"readPreference": "read_preference", "w": "write_concern"}


def _query_pairs(uri: str) -> tuple[str, list[str]]:
    """(the URI before its query, the query's ``key=value`` parts as written)."""
    base, _, query = uri.partition("?")
    return base, [part for part in query.split("&") if part]


def _key(part: str) -> str:
    return part.split("=", 1)[0].lower()


def client_options(uri: str, config, pool: int, binding: str = "pymongo") -> tuple[str, dict]:
    """The URI's options resolved once, for either driver: (the URI to connect with, the options to add to it).

    Precedence, the same under both bindings: an explicit flag (``config.read_preference``, ``config.write_concern``)
    and the pool capmodel sizes for the step win over the URI, whose option of that name is dropped; the URI's own
    timeouts win over capmodel's defaults; every other URI option is kept as written. No option is given twice (the
    Rust driver refuses that). ``config``: a BenchConfig or anything with its ``timeout_ms``,
    ``server_selection_timeout_ms``, ``read_preference`` and ``write_concern``. The Rust driver has no ``timeoutMS``
    (mongojet's calls are timed out by ``MongojetBinding``), so ``binding="mongojet"`` leaves it out.
    """
    base, parts = _query_pairs(uri)
    explicit = {"maxPoolSize": pool}
    for option, attribute in FLAG_OPTIONS.items():
        value = getattr(config, attribute, None)
        if value:
            explicit[option] = int(value) if option == "w" and str(value).isdigit() else value
    dropped = {k.lower() for k in explicit}
    parts = [p for p in parts if _key(p) not in dropped]
    given = {_key(p) for p in parts}
    timeout_ms = getattr(config, "timeout_ms", None) or 10_000
    defaults = {"maxConnecting": 32, "appName": "capmodel-bench",
                "serverSelectionTimeoutMS": getattr(config, "server_selection_timeout_ms", None),
                "connectTimeoutMS": min(timeout_ms, 10_000)}
    if binding != "mongojet":
        defaults["timeoutMS"] = timeout_ms
    options = {k: v for k, v in defaults.items() if v is not None and k.lower() not in given}
    options.update(explicit)
    return (f"{base}?{'&'.join(parts)}" if parts else base), options


def make_client(uri: str, config, pool: int):
    """One pymongo client sized for ``pool`` workers, with a timeout on every operation (``config``: a BenchConfig);
    its options from ``client_options``, as mongojet's."""
    import pymongo

    # maxConnecting: connections opened at once (pymongo's default, 2, takes tens of seconds to fill a pool of 1,000)
    target, options = client_options(uri, config, max(pool, 100), "pymongo")
    try:
        return pymongo.MongoClient(target, **options)
    except (pymongo.errors.ConfigurationError, pymongo.errors.InvalidURI, ValueError, TypeError) as exc:
        raise BenchError(f"cannot use the MongoDB URI {redact_uri(uri)}: {redact_text(str(exc))}") from None


def close_soon(client, wait: float = 1.0) -> None:
    """Close a pymongo client, waiting at most ``wait`` seconds: closing ends the server sessions, which waits a
    whole server selection timeout when the server is gone; the rest finishes in the background."""
    import threading

    thread = threading.Thread(target=client.close, daemon=True, name="capmodel-close")
    thread.start()
    thread.join(wait)


def ping(client, uri: str, where: str = "") -> None:
    """Raise a BenchError (URI redacted) when the server does not answer ``ping`` within the client's server
    selection timeout (5 s by default, as the README states: pymongo's ``timeoutMS`` would otherwise stretch server
    selection to the operation timeout, 10 s)."""
    import pymongo

    from capmodel.bench.client.mongo_errors import describe_error, is_password_refused, password_refused

    try:
        with pymongo.timeout(client.options.server_selection_timeout):
            client.admin.command("ping")
    except pymongo.errors.PyMongoError as exc:
        raise BenchError(f"{where}cannot reach MongoDB at {redact_uri(uri)}: {describe_error(exc)}") from None
    except ValueError as exc:  # SASLprep refuses the password before anything is sent
        if not is_password_refused(exc):
            raise
        raise BenchError(f"{where}{password_refused(exc)}") from None


def versions(client) -> dict:
    import hdrh
    import pymongo

    import capmodel

    out = {"capmodel": capmodel.__version__, "pymongo": pymongo.version,
           "hdrhistogram": getattr(hdrh, "__version__", None), "python": sys.version.split()[0]}
    try:
        import distributed

        out["distributed"] = distributed.__version__
    except ImportError:
        pass
    try:
        out["mongodb"] = client.admin.command("buildInfo").get("version")
    except Exception:  # noqa: BLE001 - a missing version is not worth stopping for
        out["mongodb"] = None
    return out


def host_fingerprint() -> dict:
    """This machine, without its name (a hash of it: enough to tell two hosts apart)."""
    import psutil

    return {
        "hostname_sha256": hashlib.sha256(platform.node().encode()).hexdigest()[:12],
        "os": platform.platform(), "machine": platform.machine(), "python": platform.python_version(),
        "cpu_count": os.cpu_count(), "memory_gb": round(psutil.virtual_memory().total / 2**30, 1),
    }


def server_hosts(uri: str) -> list[str]:
    """The host names of a mongodb:// URI's seed list (an SRV URI's single name; nothing for what does not parse)."""
    scheme, sep, rest = uri.partition("://")
    if not sep or not scheme.lower().startswith("mongodb"):
        return []
    authority = rest.split("/", 1)[0].split("?", 1)[0]
    authority = authority.rpartition("@")[2]
    hosts = []
    for part in authority.split(","):
        part = part.strip()
        if part.startswith("["):
            hosts.append(part[1:part.find("]")])
        elif part:
            hosts.append(part.rsplit(":", 1)[0] if part.count(":") == 1 else part)
    return hosts


def local_addresses() -> set[str]:
    """Every IP address of this machine's interfaces, loopback included."""
    import psutil

    found = {"127.0.0.1", "::1"}
    for addresses in psutil.net_if_addrs().values():
        for a in addresses:
            if a.family in (socket.AF_INET, socket.AF_INET6):
                found.add(a.address.split("%")[0])
    return found


def server_on_this_host(uri: str) -> bool:
    """True when a host of ``uri`` is this machine (loopback, or one of its interface addresses)."""
    mine = local_addresses()
    for host in server_hosts(uri):
        if host.endswith(".sock") or host.startswith("/") or host.lower() == "localhost":
            return True
        try:
            infos = socket.getaddrinfo(host, None)
        except (socket.gaierror, UnicodeError):
            continue
        for info in infos:
            address = str(info[4][0]).split("%")[0]
            if address in mine or address.startswith("127."):
                return True
    return False
