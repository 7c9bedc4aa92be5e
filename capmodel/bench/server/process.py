"""One embedded server's mongod processes: the ``EmbeddedServer`` record, launching a member in its own session,
waiting until it answers, telling our mongod from a reused pid, and stopping it (shutdown command, SIGTERM, SIGKILL).

Servers started in-process (not detached) are kept in ``LIVE`` and stopped at interpreter exit; on Linux a member
also gets SIGTERM if the thread that started it dies.
"""
from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from capmodel.errors import ServerError

STOP_TIMEOUT = 15.0
LOG_NAME = "mongod.log"

LIVE: set["EmbeddedServer"] = set()  # servers started by this process and not yet stopped (stopped at exit)


@dataclass(eq=False)
class EmbeddedServer:
    """A running embedded mongod (or replica set); ``stop()`` shuts it down and removes a temporary dbpath.

    Attributes
    ----------
    uri : str
        Its connection string.
    port : int
        The first member's port; ``ports`` has every member's.
    dbpath : pathlib.Path
        Its data folder (a replica set's members are in ``member0``, ``member1`` ...).
    pids : list of int
        The members' process ids (``pid`` is the first).
    replica_set : str or None
        The set's name.
    version : str or None
        The server's version.
    owns_dbpath : bool
        The dbpath is a temporary folder ``stop()`` removes.
    detached : bool
        It outlives this process.
    cpus : list of int or None
        The CPUs it is pinned to.
    diagnostic_data : bool
        It records FTDC.
    """

    uri: str
    port: int
    ports: list[int]
    dbpath: Path
    pids: list[int]
    replica_set: str | None = None
    version: str | None = None
    owns_dbpath: bool = False
    detached: bool = False
    create_times: list[float | None] = field(default_factory=list)
    binary: str | None = None
    cpus: list[int] | None = None
    diagnostic_data: bool = False
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

    def attach(self, proc: subprocess.Popen) -> None:
        """Record a member process this server has just launched (its pid and start time)."""
        self._processes.append(proc)
        self.pids.append(proc.pid)
        self.create_times.append(process_create_time(proc.pid))

    def alive_pids(self) -> list[int]:
        """The pids of this server's mongod processes that still run (pid reuse is checked by start time)."""
        return [pid for i, pid in enumerate(self.pids) if is_our_mongod(pid, item_or_none(self.create_times, i))]

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
            LIVE.discard(self)
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

def item_or_none(values: list, index: int):
    return values[index] if index < len(values) else None

def is_our_mongod(pid: int, create_time: float | None) -> bool:
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

def process_create_time(pid: int) -> float | None:
    import psutil

    with contextlib.suppress(psutil.Error):
        return psutil.Process(pid).create_time()
    return None

def _wait_gone(server: EmbeddedServer, index: int, timeout: float) -> bool:
    """Wait for member ``index`` to exit (reaping it if it is our child); True when it is gone."""
    proc = item_or_none(server._processes, index)
    if proc is not None:
        try:
            proc.wait(timeout=timeout)
            return True
        except subprocess.TimeoutExpired:
            return False
    deadline = time.monotonic() + timeout
    pid, created = server.pids[index], item_or_none(server.create_times, index)
    while time.monotonic() < deadline:
        if not is_our_mongod(pid, created):
            return True
        time.sleep(0.05)
    return not is_our_mongod(pid, created)

def _send_shutdown(port: int) -> None:
    from pymongo import MongoClient
    from pymongo.errors import PyMongoError

    client: MongoClient[dict] = MongoClient(
        host="127.0.0.1", port=port, directConnection=True, serverSelectionTimeoutMS=2000, connectTimeoutMS=2000
    )
    try:
        client.admin.command("shutdown", force=True, timeoutSecs=0)
    except PyMongoError:
        pass  # the connection drops as the server goes down; the wait below tells whether it worked
    finally:
        client.close()

def _stop_member(server: EmbeddedServer, index: int, timeout: float) -> None:
    pid, created = server.pids[index], item_or_none(server.create_times, index)
    if not is_our_mongod(pid, created):
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

def mongod_args(binary: Path, port: int, dbpath: Path, cache_gb: float, replica_set: str | None,
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

def check_cpus(cpus) -> list[int] | None:
    """The CPU numbers a mongod may run on, sorted; ``ServerError`` naming ``--cpus`` unless each is a CPU of this
    machine (0 .. cpu_count - 1; the calling process may itself be pinned elsewhere, e.g. to leave these CPUs to the
    server). ``None`` (no pinning) passes through; "0-2,5" and [0, 1] are read."""
    if cpus is None:
        return None
    if not hasattr(os, "sched_setaffinity"):
        raise ServerError("--cpus: CPU affinity is not available on this platform (Linux only)")
    if isinstance(cpus, str):
        chosen: set[int] = set()
        try:
            for part in filter(None, (p.strip() for p in cpus.split(","))):
                lo, _, hi = part.partition("-")
                chosen.update(range(int(lo), int(hi or lo) + 1))
        except ValueError:
            raise ServerError(f"--cpus {cpus!r}: expected CPU numbers such as 0 or 0,1 or 0-3") from None
    else:
        try:
            chosen = {int(c) for c in cpus}
        except (TypeError, ValueError):
            raise ServerError(f"--cpus {cpus!r}: expected CPU numbers such as [0] or [0, 1]") from None
    allowed = set(range(os.cpu_count() or 1))
    if not chosen or not chosen <= allowed:
        raise ServerError(f"--cpus {cpus!r}: this machine has CPUs {_cpu_list(allowed)}; pick among them")
    return sorted(chosen)

def _cpu_list(cpus) -> str:
    return ",".join(str(c) for c in sorted(cpus))

def _preexec(detach: bool, cpus: list[int] | None):
    """What the child does before exec: pin itself to ``cpus`` (inherited by every thread mongod starts) and, unless
    detached, ask for SIGTERM when its starter dies."""
    death = None if detach else _parent_death_signal()
    if cpus is None:
        return death
    chosen = set(cpus)

    def pin_then_tie():
        os.sched_setaffinity(0, chosen)
        if death is not None:
            death()

    return pin_then_tie

def launch_member(args: list[str], dbpath: Path, detach: bool, cpus: list[int] | None = None) -> subprocess.Popen:
    """mongod in its own session (a terminal's Ctrl-C does not reach it); tied to our life unless detached; run only
    on ``cpus`` when given (CPU affinity, set before exec so that all its threads inherit it)."""
    dbpath.mkdir(parents=True, exist_ok=True)
    with open(dbpath / "mongod.stdout", "ab") as out:
        try:
            return subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                    close_fds=True, start_new_session=True, preexec_fn=_preexec(detach, cpus))
        except subprocess.SubprocessError:     # the pin failed in the child: a CPU outside this container's cpuset
            raise ServerError(f"--cpus {_cpu_list(cpus or [])}: the system refused to run mongod on these CPUs "
                              "(outside this container's CPU set?)") from None

def wait_ready(server: EmbeddedServer, index: int, deadline: float) -> None:
    """Ping member ``index`` until it answers; a clear error with the log tail if it exits or the time runs out."""
    from pymongo import MongoClient
    from pymongo.errors import PyMongoError

    proc = server._processes[index]
    port = server.ports[index]
    logpath = server.logpaths[index]
    client: MongoClient[dict] = MongoClient(host="127.0.0.1", port=port, directConnection=True,
                                            serverSelectionTimeoutMS=250, connectTimeoutMS=250)
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

@atexit.register
def _stop_live_servers() -> None:
    for server in list(LIVE):
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
