"""Client load from several processes: one step's workers split over P processes, each with its own MongoClient.

One Python process runs about one core of Python code (the GIL), so a single client process tops out long before a
server with many cores does; the DocumentDB insert benchmark, for one, drives its clusters with up to 1,024 client
*processes*. ``ProcessPool`` starts P worker processes once per sweep and keeps their connection pools warm from
step to step. Each is a fresh interpreter (``python -m capmodel.bench.processes``: forking a process that holds
threads and a MongoClient is unsafe, and multiprocessing's ``spawn`` would re-import the caller's main script)
that connects back to the parent over an authenticated Unix socket; the URI travels over that socket, never on a
command line. For a step of N
workers, process j runs N // P workers (the first N % P processes one more) through the ordinary ``Runner``; all
processes start their warm-up at the same monotonic instant, and their results are merged into one ``StepResult``:
rates and counts add up, the HdrHistograms are added (so percentiles are those of every operation, not an average
of percentiles), errors add up by kind.

Open loop: the target rate is split in proportion to the workers of each process; the union of independent
Poisson processes is a Poisson process of the summed rate, so ``arrivals="poisson"`` stays exact; evenly spaced
schedules are shifted by a fraction of the interval per process so that arrivals interleave instead of coinciding.
Inserts with YCSB keys take strided record numbers (``KeySpace(offset=j, stride=P)``), so no two processes insert
the same key.

A process that dies or stops answering ends that step as failed (``runner_failures``) and is replaced before the
next one; the children ignore Ctrl-C (the parent handles it and stops them) and exit when the parent's end of their
pipe closes, so no client process outlives its sweep.
"""
from __future__ import annotations

import math
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from capmodel.bench.measurements import StepMeasurements
from capmodel.bench.runner import StepProgress, StepResult
from capmodel.errors import BenchError

START_LEAD_S = 0.5      # the step starts this long after the request is sent, so every process is ready
ANSWER_GRACE_S = 30.0   # beyond the step's own end and drain timeout, before a process is declared lost
CONNECT_TIMEOUT_S = 60.0
AUTHKEY_ENV = "CAPMODEL_CLIENT_AUTHKEY"


def split(total: int, parts: int) -> list[int]:
    """``total`` workers over at most ``parts`` processes, as evenly as possible, no process with zero."""
    parts = max(1, min(int(parts), int(total)))
    return [total // parts + (1 if j < total % parts else 0) for j in range(parts)]


def merge(records: list[dict], op_names: list[str], throughput_unit: str, rate: float | None = None) -> StepResult:
    """One ``StepResult`` from the ``as_record()`` dicts of the processes of one step (none: nothing measured)."""
    import datetime as dt

    m = StepMeasurements.combine(op_names, records)
    ops_per_s = sum(r["ops_per_s"] for r in records)  # the processes ran side by side: their rates add up
    return StepResult(
        concurrency=sum(r["concurrency"] for r in records), mode="closed" if rate is None else "open",
        seconds=max((r["seconds"] for r in records), default=0.0), operations=m.operations,
        documents=sum(r["documents"] for r in records),
        throughput=sum(r["throughput"] for r in records) if throughput_unit == "documents" else ops_per_s,
        ops_per_s=ops_per_s, errors=dict(m.errors), latency=m.latency(), histograms=m.encoded(),
        started_at=min((r["started_at"] for r in records),
                       default=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")),
        wall_seconds=max((r["wall_seconds"] for r in records), default=0.0), target_rate=rate,
        error_samples=m.error_samples, runner_failures=sum(r["runner_failures"] for r in records),
        stuck_workers=sum(r["stuck_workers"] for r in records),
    )


def _child(conn) -> None:
    """A client process: set up from the first message, then answer step requests until None or the parent leaves."""
    from capmodel.bench.binding import KeySpace
    from capmodel.bench.runner import Runner
    from capmodel.bench.sweep import make_client

    setup = conn.recv()
    index, processes = setup["index"], setup["processes"]
    client = make_client(setup["uri"], setup["config"], pool=setup["pool"])
    keyspaces: dict = {}
    try:
        while True:
            try:
                request = conn.recv()
            except (EOFError, OSError):
                return
            if request is None:
                return
            try:
                workload, existing = request["workload"], request["existing"]
                keyspace = None
                if existing is not None:
                    key = (request["database"], request["collection"])
                    if key not in keyspaces:
                        keyspaces[key] = KeySpace(workload, existing, offset=index, stride=processes)
                    keyspace = keyspaces[key]
                collection = client[request["database"]][request["collection"]]
                runner = Runner(collection, workload, keyspace, seed=request["seed"],
                                join_timeout=request["join_timeout"])
                time.sleep(max(0.0, request["start_at"] - time.monotonic()))
                result = runner.run(**request["step"], tick=lambda n: conn.send(("tick", n)))
                conn.send(("ok", result.as_record()))
            except (EOFError, OSError, BrokenPipeError):
                return
            except BaseException as exc:  # noqa: BLE001 - report to the parent; it decides what the step is worth
                conn.send(("error", f"{type(exc).__name__}: {exc}"[:300]))
    finally:
        client.close()


def main(argv: list[str] | None = None) -> int:
    """``python -m capmodel.bench.processes SOCKET``: a client process of a ``ProcessPool``."""
    from multiprocessing.connection import Client

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle; it stops us
    address = (argv if argv is not None else sys.argv[1:])[0]
    authkey = bytes.fromhex(os.environ.pop(AUTHKEY_ENV))
    with Client(address, family="AF_UNIX", authkey=authkey) as conn:
        _child(conn)
    return 0


class ProcessPool:
    """P client processes for a sweep; ``pool.runner(...)`` gives an object with ``Runner.run``'s signature."""

    def __init__(self, uri: str, config, processes: int, max_concurrency: int):
        if processes < 1:
            raise BenchError(f"--processes must be >= 1, got {processes}")
        self.uri, self.config, self.size = uri, config, int(processes)
        self.max_pool_size = max(split(max_concurrency, processes)) + 8  # each process's MongoClient
        self._children: list = [None] * self.size
        self._listener = None
        self._folder = None

    def _listen(self):
        if self._listener is None:
            from multiprocessing.connection import Listener

            self._folder = tempfile.TemporaryDirectory(prefix="capmodel-clients-")
            self._authkey = secrets.token_bytes(32)
            self._listener = Listener(str(Path(self._folder.name) / "socket"), family="AF_UNIX",
                                      authkey=self._authkey)
        return self._listener

    def _start(self, index: int):
        listener = self._listen()
        # the child imports this same capmodel, installed or not (a script may have put it on sys.path by hand)
        here = str(Path(__file__).resolve().parents[2])
        path = os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH")) if p)
        env = {**os.environ, AUTHKEY_ENV: self._authkey.hex(), "PYTHONPATH": path}
        process = subprocess.Popen([sys.executable, "-m", "capmodel.bench.processes", listener.address],
                                   env=env, stdin=subprocess.DEVNULL, start_new_session=False)
        try:
            conn = _accept(listener, process, CONNECT_TIMEOUT_S)
        except BaseException:
            process.kill()
            process.wait()
            self._close_listener()  # its pending accept() must not take the next process's connection
            raise
        conn.send({"uri": self.uri, "config": self.config, "pool": self.max_pool_size, "index": index,
                   "processes": self.size})
        self._children[index] = (process, conn)
        return self._children[index]

    def _get(self, index: int):
        entry = self._children[index]
        if entry is None or entry[0].poll() is not None:
            if entry is not None:
                self._stop(index)
            entry = self._start(index)
        return entry

    @property
    def pids(self) -> list[int]:
        """The client processes running now (for their CPU use)."""
        return [entry[0].pid for entry in self._children if entry is not None and entry[0].poll() is None]

    def ensure_started(self) -> list[int]:
        for index in range(self.size):
            self._get(index)
        return self.pids

    def runner(self, database: str, collection: str, workload, existing: int | None, seed: int = 0,
               join_timeout: float = 15.0) -> "PooledRunner":
        return PooledRunner(self, database, collection, workload, existing, seed, join_timeout)

    def _stop(self, index: int, wait: float = 5.0) -> None:
        entry, self._children[index] = self._children[index], None
        if entry is None:
            return
        process, conn = entry
        try:
            conn.send(None)
        except (OSError, ValueError):
            pass
        try:
            process.wait(wait)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        conn.close()

    def close(self) -> None:
        for index in range(self.size):
            self._stop(index)
        self._close_listener()

    def _close_listener(self) -> None:
        if self._listener is not None:
            self._listener.close()
            self._folder.cleanup()
            self._listener = None

    def __enter__(self) -> "ProcessPool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _accept(listener, process, timeout: float):
    """The connection of ``process``; a clear error when it exits or never calls back."""
    import threading

    box: list = []
    thread = threading.Thread(target=lambda: box.append(listener.accept()), daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while not box:
        if process.poll() is not None:
            raise BenchError(f"a client process exited at start (exit code {process.returncode})")
        if time.monotonic() > deadline:
            raise BenchError(f"a client process did not connect back within {timeout:.0f} s")
        thread.join(0.05)
    return box[0]


class PooledRunner:
    """One workload's steps, run by the processes of a ``ProcessPool``."""

    def __init__(self, pool: ProcessPool, database, collection, workload, existing, seed, join_timeout):
        self.pool, self.database, self.collection = pool, database, collection
        self.workload, self.existing, self.seed, self.join_timeout = workload, existing, seed, join_timeout

    def run(self, concurrency: int, duration: float | None = 10.0, warmup: float = 1.0,
            operations: int | None = None, rate: float | None = None, progress: bool = False,
            max_seconds: float | None = None, label: str = "", arrivals: str = "uniform") -> StepResult:
        if concurrency < 1:
            raise BenchError(f"concurrency must be >= 1, got {concurrency}")
        shares = split(concurrency, self.pool.size)
        children = [self.pool._get(j) for j in range(len(shares))]
        start_at = time.monotonic() + START_LEAD_S
        first = 0
        for j, (share, (_, conn)) in enumerate(zip(shares, children)):
            step = {"concurrency": share, "duration": duration, "warmup": warmup, "max_seconds": max_seconds,
                    "label": label, "arrivals": arrivals, "first_worker": first, "progress": False,
                    "operations": None if operations is None else _portion(operations, share, concurrency, j, shares),
                    "rate": None if rate is None else rate * share / concurrency}
            lead = 0.0
            if rate is not None and arrivals == "uniform":  # interleave the evenly spaced schedules
                lead = j / rate
            conn.send({"workload": self.workload, "existing": self.existing, "database": self.database,
                       "collection": self.collection, "seed": self.seed, "join_timeout": self.join_timeout,
                       "start_at": start_at + lead, "step": step})
            first += share
        length = (warmup + duration) if operations is None else (max_seconds or 3600.0)
        deadline = start_at + length + self.join_timeout * (2 if rate is not None else 1) + ANSWER_GRACE_S
        answers = self._collect(children, deadline, progress, label or f"c={concurrency}", warmup, duration,
                                start_at)
        records, failures = [], []
        for j, answer in enumerate(answers):
            if answer is not None and answer[0] == "ok":
                records.append(answer[1])
            else:
                failures.append(f"client process {j}: "
                                + (answer[1] if answer is not None else "died or did not answer in time"))
                self.pool._stop(j, wait=0.5)  # replaced before the next step
        result = merge(records, [op.name for op in self.workload.operations], self.workload.throughput_unit, rate)
        if not records:  # nothing measured: a failed step (the sweep's --on-error decides), not a crash
            result.wall_seconds = time.monotonic() - start_at
        if failures:
            result.runner_failures += len(failures)
            result.errors["RunnerFailure"] = result.errors.get("RunnerFailure", 0) + len(failures)
            result.error_samples.setdefault("RunnerFailure", failures[0])
        result.concurrency = int(concurrency)
        return result

    def _collect(self, children, deadline, progress, label, warmup, duration, start_at):
        """Each process's answer (None: none came), showing progress from their ticks meanwhile."""
        from multiprocessing.connection import wait

        answers: list = [None] * len(children)
        counts = [0] * len(children)
        waiting = {conn: j for j, (_, conn) in enumerate(children)}
        bar = StepProgress(progress, warmup, duration, label)
        try:
            while waiting and time.monotonic() < deadline:
                for conn in wait(list(waiting), timeout=min(0.25, max(0.0, deadline - time.monotonic()))):
                    j = waiting[conn]
                    try:
                        message = conn.recv()
                    except (EOFError, OSError):
                        message = ("error", f"the process died during the step (exit {children[j][0].poll()})")
                    if message[0] == "tick":
                        counts[j] = message[1]
                        continue
                    answers[j] = message
                    del waiting[conn]
                bar.update(max(0.0, time.monotonic() - start_at), sum(counts))
        finally:
            bar.close()
        return answers


def _portion(operations: int, share: int, concurrency: int, j: int, shares: list[int]) -> int:
    """Process j's part of an operation count, in proportion to its workers; the parts add up exactly."""
    done = sum(shares[:j])
    return math.floor(operations * (done + share) / concurrency) - math.floor(operations * done / concurrency)


if __name__ == "__main__":
    sys.exit(main())
