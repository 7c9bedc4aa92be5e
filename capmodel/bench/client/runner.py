"""Drive one benchmark step: N workers against one collection, closed loop or open loop.

Workers are threads sharing one pymongo ``MongoClient`` (its pool must hold at least N connections; ``sweep`` sizes
it), or with an asynchronous binding (mongojet) coroutines on one event loop (``capmodel.bench.client.async_workers``).
pymongo's own ``AsyncMongoClient`` cost 1.2-2.3x the client CPU per operation of threads in
``benchmarks/bench_drivers.py``, mongojet 0.3-0.5x; the per-operation path stays short either way: pick the
operation (pre-drawn in blocks), call the binding, append one integer (``capmodel.bench.client.thread_workers``).

Closed loop: each worker runs its next operation as soon as the previous one returns. The step starts with a warm-up
whose operations are discarded; an operation is measured when it completes inside the measurement window, so
throughput = measured completions / window length. A fixed operation count ends the window at the N-th attempt.

Open loop (``rate``): operations are due on a schedule drawn before the step: evenly spaced (operation k at
``start + k / rate``, wrk2's constant rate) or, with ``arrivals="poisson"``, at the points of a Poisson process of that
rate (exponential gaps, the arrival process of M/M/c and of many independent users; seeded, so reproducible). A free
worker takes the next due time, waits for it, runs it, and its latency is measured from the *intended* start, so time
spent waiting for a free worker counts (no coordinated omission; Tene, "How NOT to measure latency").

Before a step every worker opens its connection (a ``ping``, all workers at once, not measured), so that a step of
thousands of clients does not spend its window, or time out, waiting for the pool to grow. Every operation carries
the client's timeouts; a worker that hits an error records its kind and backs off briefly.
After the window the runner waits at most ``join_timeout`` seconds for in-flight operations, so a dead server ends
the step with its errors counted instead of hanging it.

What the window did not see is reported, not hidden (closed loop): operations still in flight when the window ends
are counted (``in_flight_at_end``); their latency runs until they finish (``late_operations``, ``late_max_ms``: apart
from the window's histograms and throughput) or their error is counted by kind. ``longest_silence_s`` is the longest
stretch of the window in which no operation completed (sampled every 0.25 s): a server that stopped answering shows
there even when the operations it served before look fast. A step in which every worker only sees the server
unreachable ends early.
"""
from __future__ import annotations

import datetime as dt
import itertools
import math
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from capmodel.bench.client.arrivals import RateShape, arrival_schedule, shaped_schedule
from capmodel.bench.client.measurements import Recorder, StepMeasurements, summarize_window, window_measurements
from capmodel.bench.client.operations import KeySpace, make_worker_ops, worker_seed
from capmodel.bench.client.progress import StepProgress
from capmodel.bench.workload.definition import Workload
from capmodel.errors import BenchError

STEP_POLL_S = 0.25
PRIME_TIMEOUT_S = 30.0  # at most this long for the workers to open their connections before a step (no start_at)
# errors meaning the server could not be reached at all (died, restarted, network down)
# (pymongo's names, and mongojet's ServerSelectionError)
UNREACHABLE = ("AutoReconnect", "ServerSelectionTimeoutError", "ConnectionFailure", "ServerSelectionError")


@dataclass
class StepResult:
    """What one step measured; ``as_record()`` is the line written to ``steps.jsonl``."""

    concurrency: int
    mode: str
    seconds: float
    operations: int
    documents: int
    throughput: float  # per second, in the workload's unit (operations or documents)
    ops_per_s: float
    errors: dict
    latency: dict
    histograms: dict
    started_at: str
    wall_seconds: float
    target_rate: float | None = None  # open loop: the rate asked (a shape's mean over the window)
    rate_shape: str | None = None     # open loop: the shape the rate followed, as written
    windows: list = field(default_factory=list)  # open loop cut into windows: measurements.summarize_window's rows
    error_samples: dict = field(default_factory=dict)
    runner_failures: int = 0
    stuck_workers: int = 0
    in_flight_at_end: int = 0
    late_operations: int = 0  # in flight at the window's end and completed after it (not in the throughput) ...
    late_max_ms: float = 0.0  # ... the longest of them, from its start to its completion
    longest_silence_s: float = 0.0
    late_start_s: float = 0.0
    ended_early: str | None = None
    workers: list = field(default_factory=list)  # per-worker rows (address, host, clients, ops, CPU)
    failed_attempts: int | None = None  # attempts the driver saw fail, retried ones too (None: not counted)

    @property
    def error_count(self) -> int:
        return int(sum(self.errors.values()))

    def as_record(self) -> dict:
        out = asdict(self)
        out["error_count"] = self.error_count
        return out


class _State:
    __slots__ = ("stop", "window_start", "window_end", "t0", "tickets", "attempts", "limit", "last_completion",
                 "schedule")

    def __init__(self):
        self.stop = False
        self.window_start = math.inf
        self.window_end = math.inf
        self.t0 = 0.0
        self.tickets = itertools.count()
        self.attempts = itertools.count(1)
        self.limit = 0     # a counted step's attempts (operations=N): read by the counted loop alone
        self.last_completion = 0.0
        self.schedule: list[float] = []

    def next_due(self) -> float | None:
        """Open loop: the intended start of the next operation, None once the schedule or the window is over."""
        k = next(self.tickets)
        if k >= len(self.schedule):
            return None
        intended = self.t0 + self.schedule[k]
        return None if intended >= self.window_end else intended

    def count_attempt(self, t1, failed, rec, lat, docs, i, t0, n) -> bool:
        """Counted loop: record one attempt that ended at ``t1`` inside the window; True when the worker must stop
        (the count is reached, or another worker took the last attempt)."""
        if t1 > self.window_end:
            return True
        k = next(self.attempts)
        if k > self.limit:
            return True
        if failed is not None:
            rec.error(failed)
        else:
            lat[i].append(int((t1 - t0) * 1e6))
            docs[i] += n
        if k >= self.limit:
            self.window_end = t1
            self.stop = True
            return True
        return False


class _Watch:
    """What the main thread sees of a running step every ``STEP_POLL_S``: completions (for the longest silence) and
    whether every worker only meets an unreachable server (then the step ends early instead of running its full
    length)."""

    def __init__(self, recorders, state, unreachable_after: float | None):
        self.recorders, self.state, self.unreachable_after = recorders, state, unreachable_after
        self.count, self.errors, self.silence = 0, 0, 0.0
        self.last_change: float | None = None
        self.unreachable_since: float | None = None
        self.ended_early: str | None = None

    def poll(self, now: float) -> int:
        count = sum(r.count() for r in self.recorders)
        progressed = count != self.count
        self.count = count
        if now >= self.state.window_start:
            if self.last_change is None:
                self.last_change = self.state.window_start
            if progressed:
                self.silence = max(self.silence, now - self.last_change)
                self.last_change = now
        if self.unreachable_after is not None:
            errors = sum(r.errors.get(kind, 0) for r in self.recorders for kind in UNREACHABLE)
            if progressed:
                self.unreachable_since = None
            elif errors > self.errors and self.unreachable_since is None:
                self.unreachable_since = now
            self.errors = errors
            if self.unreachable_since is not None and now - self.unreachable_since >= self.unreachable_after:
                self.ended_early = (f"the server was unreachable for {now - self.unreachable_since:.1f} s "
                                    "with no operation completing")
        return count

    def longest_silence(self, window_end: float) -> float:
        """The longest stretch of the window without a completion, the stretch up to the window's end included."""
        if self.last_change is None:
            return 0.0
        return max(self.silence, min(window_end, time.perf_counter()) - self.last_change)


class Runner:
    """Runs steps of one workload against one pymongo collection."""

    def __init__(self, collection, workload: Workload, keyspace: KeySpace | None = None, seed: int = 0,
                 join_timeout: float = 15.0, stop_unreachable_after: float | None = None):
        """``collection``: a pymongo collection (worker threads), or a binding of ``capmodel.bench.client.bindings`` (an
        asynchronous one runs its workers as coroutines). ``stop_unreachable_after``: end a step early once the
        server has been unreachable for that many seconds (only unreachable errors, nothing completing); None runs
        every step its full length."""
        from capmodel.bench.client.bindings import MongojetBinding, PymongoBinding
        from capmodel.bench.client.wire import WireBinding

        is_binding = isinstance(collection, (MongojetBinding, PymongoBinding, WireBinding))
        self.binding = collection if is_binding else PymongoBinding(collection)
        self.workload, self.keyspace = workload, keyspace
        self.seed, self.join_timeout = seed, join_timeout
        self.stop_unreachable_after = stop_unreachable_after

    def run(self, concurrency: int, duration: float | None = 10.0, warmup: float = 1.0,
            operations: int | None = None, rate: float | None = None, progress: bool = False,
            max_seconds: float | None = None, label: str = "", arrivals: str = "uniform", first_worker: int = 0,
            start_at: float | None = None, shape: RateShape | dict | None = None,
            windows: int | None = None) -> StepResult:
        """Run ``concurrency`` workers for ``duration`` seconds (or ``operations`` attempts) after ``warmup``.

        ``rate``: open loop at that many operations per second, due ``arrivals`` ("uniform" or "poisson").
        ``shape``: open loop at a rate that follows this shape over the window (``capmodel.bench.client.arrivals``;
        its ``to_json()`` form too), instead of ``rate``.
        ``windows``: an open loop's window cut into this many equal windows, each with its own figures (default 10
        with a shape, none at one rate).
        ``first_worker``: number of the first worker (seeds its keys; processes of one step use disjoint numbers).
        ``start_at``: the instant (``time.time()`` of this host) at which the warm-up starts, so that the workers of
        several processes start together; ``late_start_s`` says by how much this runner missed it.
        """
        if concurrency < 1:
            raise BenchError(f"concurrency must be >= 1, got {concurrency}")
        if operations is None and (duration is None or duration <= 0):
            raise BenchError("give a duration > 0 seconds or an operation count")
        if rate is not None and rate <= 0:
            raise BenchError(f"target rate must be > 0 ops/s, got {rate}")
        if isinstance(shape, dict):
            shape = RateShape.from_json(shape)
        if shape is not None:
            if rate is not None:
                raise BenchError("an open-loop step follows one rate or a rate shape, not both")
            rate = shape.mean_rate()
            windows = 10 if windows is None else windows
        if operations is not None and rate is not None:
            raise BenchError("an open-loop step (rate) runs for a duration, not an operation count")
        if windows is not None and rate is None:
            raise BenchError("windows cut an open-loop step: give a rate or a rate shape")
        from capmodel.bench.client.bindings import PymongoBinding

        if isinstance(self.binding, PymongoBinding):
            options = self.binding.database.client.options
            pool = getattr(getattr(options, "pool_options", None), "max_pool_size", None)
            if pool is not None and pool < concurrency:
                raise BenchError(f"the client's maxPoolSize {pool} is below the concurrency {concurrency}; "
                                 "workers would queue for connections")
        ops = [make_worker_ops(self.workload, self.binding, self.keyspace, first_worker + i, self.seed)
               for i in range(concurrency)]
        recorders = [Recorder(len(ops[0].calls)) for _ in range(concurrency)]
        state = _State()
        if operations is not None:
            state.limit = int(operations)
        failures: list[BaseException] = []
        if rate is not None:
            assert duration is not None   # an open-loop step runs for a duration (checked above)
            # drawn before the clock starts; a list, so a worker's lookup is one C-level index
            seed = worker_seed(self.seed, first_worker)
            schedule = (arrival_schedule(rate, warmup + duration, arrivals, seed=seed) if shape is None else
                        shaped_schedule(shape, warmup, duration, arrivals, seed=seed))
            state.schedule = schedule.tolist()
        loop = "open" if rate is not None else "counted" if operations is not None else "closed"
        workers_type: type
        if self.binding.asynchronous:
            from capmodel.bench.client.async_workers import AsyncWorkers
            workers_type = AsyncWorkers
        else:
            from capmodel.bench.client.thread_workers import ThreadWorkers
            workers_type = ThreadWorkers
        workers = workers_type(self.binding, loop, state, ops, recorders, failures)
        workers.start()
        prime_until = start_at if start_at is not None else time.time() + PRIME_TIMEOUT_S
        while len(workers.primed) < concurrency and time.time() < prime_until:
            time.sleep(0.01)
        late_start = 0.0
        if start_at is not None:
            wait = start_at - time.time()
            if wait > 0:
                time.sleep(wait)
            late_start = max(0.0, time.time() - start_at)
        started_at = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        clock = time.perf_counter
        state.t0 = clock()
        state.window_start = state.t0 + warmup
        if operations is None:
            assert duration is not None   # a timed step has its duration (checked above)
            state.window_end = state.window_start + duration
        workers.go()
        deadline = state.window_start + (max_seconds if max_seconds is not None else
                                         (duration if operations is None and duration is not None else 3600.0))
        watch = _Watch(recorders, state, self.stop_unreachable_after)
        try:
            self._wait(state, recorders, deadline, warmup, duration, progress, label, concurrency, watch)
            in_flight = sum(1 for r in recorders if r.busy_since) if rate is None else 0
            if rate is not None:  # open loop: let the workers serve every operation due inside the window
                workers.join(self.join_timeout)
        finally:
            if state.window_end == math.inf:
                state.window_end = clock()
            state.stop = True
            workers.join(self.join_timeout)
        stuck = workers.alive()
        workers.close()
        window = max(min(state.window_end, clock()) - state.window_start, 1e-9)
        m = StepMeasurements(ops[0].names, recorders)
        late = [v for r in recorders for v in r.late]
        if rate is not None:
            # every operation due in the window was either measured, failed, or never served in time (the due
            # times computed exactly as the workers compute them)
            due_at = state.t0 + schedule
            due = int(np.count_nonzero((due_at >= state.window_start) & (due_at < state.window_end)))
            unserved = due - m.operations - m.error_count
            if unserved > 0:
                m.errors["Unserved"] += unserved
                m.error_samples.setdefault("Unserved", "operations due in the window that no worker started "
                                                       "before the step's drain timeout")
            window = max(window, state.last_completion - state.window_start)
        cut = []
        if windows and rate is not None and duration is not None:
            edges = state.window_start + duration * np.arange(windows + 1) / windows
            due_per_window = np.histogram(state.t0 + schedule, bins=edges)[0]
            for k, part in enumerate(window_measurements(recorders, edges)):
                a, b = k / windows, (k + 1) / windows
                asked = rate if shape is None else shape.mean_rate(a, b)
                row = summarize_window({**part, "start_s": a * duration, "end_s": b * duration, "target_rate": asked})
                # due in the window and never started before the drain timeout: counted with the errors
                row["errors"] += max(0, int(due_per_window[k]) - row["operations"] - row["errors"])
                cut.append(row)
        documents = sum(m.documents.values())
        per_s = m.operations / window
        throughput = documents / window if self.workload.throughput_unit == "documents" else per_s
        if failures:
            m.errors["RunnerFailure"] += len(failures)
            m.error_samples.setdefault("RunnerFailure", repr(failures[0])[:300])
        return StepResult(
            concurrency=int(concurrency), mode="open" if rate is not None else "closed", seconds=window,
            operations=m.operations, documents=int(documents), throughput=throughput, ops_per_s=per_s,
            errors=dict(m.errors), latency=m.latency(), histograms=m.encoded(), started_at=started_at,
            wall_seconds=clock() - state.t0, target_rate=rate, rate_shape=None if shape is None else shape.text,
            windows=cut, error_samples=m.error_samples,
            runner_failures=len(failures), stuck_workers=int(stuck), in_flight_at_end=int(in_flight),
            late_operations=len(late), late_max_ms=max(late, default=0) / 1000.0,
            longest_silence_s=watch.longest_silence(state.window_end),
            late_start_s=late_start, ended_early=watch.ended_early,
        )

    @staticmethod
    def _wait(state, recorders, deadline, warmup, duration, progress, label, concurrency, watch):
        clock = time.perf_counter
        bar = StepProgress(progress, warmup, duration, label or f"c={concurrency}")
        try:
            while not state.stop:
                now = clock()
                if now >= deadline or now >= state.window_end:
                    break
                time.sleep(min(STEP_POLL_S, max(0.0, min(deadline, state.window_end) - now)))
                n = watch.poll(clock())
                if watch.ended_early:
                    state.window_end = clock()
                    break
                bar.update(clock() - state.t0, n)
        finally:
            bar.close()
