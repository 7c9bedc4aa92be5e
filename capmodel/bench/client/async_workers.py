"""The workers of a step as coroutines on an asynchronous binding (mongojet), on one event loop per process.

The event loop (uvloop's when installed, else asyncio's) runs in a thread of its own for the life of the process, so
the coordinating thread (``capmodel.bench.client.runner``) watches the step exactly as it watches worker threads, and
the mongojet clients (one per URI and pool size) stay connected from step to step. The measuring loops are those of
``capmodel.bench.client.thread_workers`` with ``await`` where the binding is called.

mongojet aborts now and then at interpreter exit while its Rust threads still run (about one run in ten on
asyncio's loop in our measurements; ``benchmarks/bench_drivers.py``): ``close_all()`` closes every client and lets
them wind down before the process ends, and an ``atexit`` hook calls it.
"""
from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import threading
import time

from capmodel.bench.client.thread_workers import ERROR_BACKOFF_S

_HOST: dict = {}
_LOCK = threading.Lock()
WIND_DOWN_S = 0.25


def available() -> bool:
    """True when mongojet can be imported."""
    import importlib.util

    return importlib.util.find_spec("mongojet") is not None


def _loop() -> asyncio.AbstractEventLoop:
    with _LOCK:
        if "loop" not in _HOST:
            try:
                import uvloop

                loop: asyncio.AbstractEventLoop = uvloop.new_event_loop()
            except ImportError:
                loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, daemon=True, name="capmodel-event-loop")
            thread.start()
            _HOST.update(loop=loop, thread=thread, clients={})
        return _HOST["loop"]


def call(coroutine, timeout: float | None = None):
    """Run ``coroutine`` on the process's event loop and wait for its result."""
    return asyncio.run_coroutine_threadsafe(coroutine, _loop()).result(timeout)


def client(uri: str, options: dict):
    """A mongojet client for ``uri`` with ``options`` (as ``capmodel.bench.cluster.connection.client_options`` resolves
    them; cached: one per URI and options)."""
    import mongojet

    key = (uri, tuple(sorted((k, str(v)) for k, v in options.items())))
    _loop()
    clients = _HOST["clients"]
    if key not in clients:
        clients[key] = call(mongojet.create_client(with_options(uri, options)))
    return clients[key]


def with_options(uri: str, options: dict) -> str:
    """``uri`` with ``options`` added to its query. The options are resolved already (``client_options``): one the
    URI sets too is refused, as the Rust driver refuses an option given twice."""
    from capmodel.errors import BenchError

    base, _, query = uri.partition("?")
    given = {part.split("=", 1)[0].lower() for part in query.split("&") if part}
    twice = sorted(k for k, v in options.items() if v is not None and k.lower() in given)
    if twice:
        raise BenchError(f"option {', '.join(twice)} given both in the URI and as an option")
    extra = [f"{k}={v}" for k, v in options.items() if v is not None]
    joined = "&".join(p for p in (query, *extra) if p)
    if "/" not in base.split("://", 1)[-1]:
        base += "/"
    return f"{base}?{joined}" if joined else base


def close_all() -> None:
    """Close every mongojet client of this process and let their threads wind down."""
    with _LOCK:
        clients = _HOST.get("clients") or {}
        loop = _HOST.get("loop")
        if loop is None or not clients:
            return
        for c in list(clients.values()):
            try:
                asyncio.run_coroutine_threadsafe(c.close(), loop).result(10)
            except Exception:  # noqa: BLE001 - closing is best effort at the end
                pass
        clients.clear()
    time.sleep(WIND_DOWN_S)


atexit.register(close_all)


class AsyncWorkers:
    """One task per worker on the process's event loop."""

    def __init__(self, binding, loop: str, state, ops, recorders, failures: list):
        self.binding, self.state, self.failures = binding, state, failures
        self.ops, self.recorders, self.target = ops, recorders, LOOPS[loop]
        self.primed: list[bool] = []
        self._future: concurrent.futures.Future | None = None

    def start(self) -> None:
        async def prime_all():
            async def prime():
                try:
                    await self.binding.ping()
                except Exception:  # noqa: BLE001 - a server that cannot be reached shows in the step's own errors
                    pass
                self.primed.append(True)

            await asyncio.gather(*(prime() for _ in self.ops))

        self._prime = asyncio.run_coroutine_threadsafe(prime_all(), _loop())

    def go(self) -> None:
        async def run_all():
            async def work(worker_ops, recorder):
                try:
                    await self.target(self.state, worker_ops, recorder)
                except asyncio.CancelledError:  # close(): the step is over and its result already taken
                    return
                except BaseException as exc:  # noqa: BLE001 - a runner bug, not an operation error: report it
                    self.failures.append(exc)

            await asyncio.gather(*(work(o, r) for o, r in zip(self.ops, self.recorders)))

        self._future = asyncio.run_coroutine_threadsafe(run_all(), _loop())

    def join(self, seconds: float) -> None:
        if self._future is None:
            return
        try:
            self._future.result(max(0.0, seconds))
        except Exception:  # noqa: BLE001 - TimeoutError: workers still waiting on the server; counted as stuck
            pass

    def alive(self) -> int:
        if self._future is None or self._future.done():
            return 0
        return sum(1 for r in self.recorders if r.busy_since) or 1

    def close(self) -> None:
        if self._future is not None and not self._future.done():
            self._future.cancel()


async def closed_loop(state, ops, rec):
    calls, next_op, lat, docs = ops.calls, ops.next_op, rec.latencies, rec.documents
    clock, sleep = time.perf_counter, asyncio.sleep
    while not state.stop:
        i = next_op()
        t0 = rec.busy_since = clock()
        try:
            n = await calls[i]()
        except Exception as exc:  # an operation error: count it by kind, back off, go on
            rec.busy_since = 0.0
            if state.window_start <= clock() and t0 <= state.window_end:  # failed in, or started in, the window
                rec.error(exc)
            await sleep(ERROR_BACKOFF_S)
            continue
        t1 = clock()
        rec.busy_since = 0.0
        if state.window_start <= t1:
            if t1 <= state.window_end:
                lat[i].append(int((t1 - t0) * 1e6))
                docs[i] += n
            elif t0 <= state.window_end:  # in flight when the window closed: how long it still took
                rec.late.append(int((t1 - t0) * 1e6))


async def counted_loop(state, ops, rec):
    calls, next_op, lat, docs = ops.calls, ops.next_op, rec.latencies, rec.documents
    clock, sleep = time.perf_counter, asyncio.sleep
    while not state.stop:
        i = next_op()
        t0 = clock()
        try:
            n = await calls[i]()
            t1, failed = clock(), None
        except Exception as exc:
            t1, failed = clock(), exc
        if t1 < state.window_start:
            if failed is not None:
                await sleep(ERROR_BACKOFF_S)
            continue
        if state.count_attempt(t1, failed, rec, lat, docs, i, t0, n if failed is None else 0):
            return
        if failed is not None:
            await sleep(ERROR_BACKOFF_S)


async def open_loop(state, ops, rec):
    calls, next_op, lat, docs, due = ops.calls, ops.next_op, rec.latencies, rec.documents, rec.due
    clock, sleep = time.perf_counter, asyncio.sleep
    while not state.stop:
        intended = state.next_due()
        if intended is None:
            return
        delay = intended - clock()
        while delay > 0 and not state.stop:
            await sleep(min(delay, 0.25))
            delay = intended - clock()
        if state.stop:
            return
        i = next_op()
        try:
            n = await calls[i]()
        except Exception as exc:
            if intended >= state.window_start:
                rec.error(exc)
                rec.error_due.append(intended)
            continue
        t1 = clock()
        if intended >= state.window_start:
            lat[i].append(int((t1 - intended) * 1e6))
            due[i].append(intended)
            docs[i] += n
            state.last_completion = t1


LOOPS = {"closed": closed_loop, "counted": counted_loop, "open": open_loop}
