"""The workers of a step as OS threads on a synchronous binding (pymongo), and their measuring loops.

Every worker first opens its connection (a ``ping``, all at once, not measured), then waits for the common start;
``go()`` releases them together. The loops keep the measured path short: pick the operation (pre-drawn in blocks),
call the binding, append one integer. Their rules (what is measured, what counts as in flight at the window's end)
are written in ``capmodel.bench.client.runner``; ``capmodel.bench.client.async_workers`` runs the same loops as
coroutines.
"""
from __future__ import annotations

import threading
import time

from capmodel.errors import BenchError

ERROR_BACKOFF_S = 0.01


class ThreadWorkers:
    """One thread per worker."""

    def __init__(self, binding, loop: str, state, ops, recorders, failures: list):
        self.binding, self.state, self.failures = binding, state, failures
        self.primed: list[bool] = []
        self._go = threading.Event()
        target = LOOPS[loop]

        def work(worker_ops, recorder):
            try:  # open this worker's connection now, all workers at once, so the pool is full when the step starts
                binding.ping()
            except Exception:  # noqa: BLE001 - a server that cannot be reached shows in the step's own errors
                pass
            self.primed.append(True)
            self._go.wait()  # start together: threads started one by one would fight the starter for the GIL
            try:
                target(state, worker_ops, recorder)
            except BaseException as exc:  # a runner bug, not an operation error: report it, never hide it
                failures.append(exc)

        self.threads = [threading.Thread(target=work, args=(o, r), daemon=True, name=f"capmodel-worker-{i}")
                        for i, (o, r) in enumerate(zip(ops, recorders))]

    def start(self) -> None:
        try:
            for t in self.threads:
                t.start()
        except RuntimeError as exc:  # the OS refused another thread
            self.state.stop = True
            self._go.set()
            raise BenchError(f"could not start {len(self.threads)} worker threads ({exc}); lower the concurrency") \
                from None

    def go(self) -> None:
        self._go.set()

    def join(self, seconds: float) -> None:
        end = time.perf_counter() + seconds
        for t in self.threads:
            t.join(max(0.0, end - time.perf_counter()))

    def alive(self) -> int:
        return sum(t.is_alive() for t in self.threads)

    def close(self) -> None:
        pass


def closed_loop(state, ops, rec):
    calls, next_op, lat, docs = ops.calls, ops.next_op, rec.latencies, rec.documents
    clock, sleep = time.perf_counter, time.sleep
    while not state.stop:
        i = next_op()
        t0 = rec.busy_since = clock()
        try:
            n = calls[i]()
        except Exception as exc:  # an operation error: count it by kind, back off, go on
            rec.busy_since = 0.0
            if state.window_start <= clock() and t0 <= state.window_end:  # failed in, or started in, the window
                rec.error(exc)
            sleep(ERROR_BACKOFF_S)
            continue
        t1 = clock()
        rec.busy_since = 0.0
        if state.window_start <= t1:
            if t1 <= state.window_end:
                lat[i].append(int((t1 - t0) * 1e6))
                docs[i] += n
            elif t0 <= state.window_end:  # in flight when the window closed: how long it still took
                rec.late.append(int((t1 - t0) * 1e6))


def counted_loop(state, ops, rec):
    calls, next_op, lat, docs = ops.calls, ops.next_op, rec.latencies, rec.documents
    clock, sleep = time.perf_counter, time.sleep
    while not state.stop:
        i = next_op()
        t0 = clock()
        try:
            n = calls[i]()
            t1, failed = clock(), None
        except Exception as exc:
            t1, failed = clock(), exc
        if t1 < state.window_start:
            if failed is not None:
                sleep(ERROR_BACKOFF_S)
            continue
        if state.count_attempt(t1, failed, rec, lat, docs, i, t0, n if failed is None else 0):
            return
        if failed is not None:
            sleep(ERROR_BACKOFF_S)


def open_loop(state, ops, rec):
    calls, next_op, lat, docs, due = ops.calls, ops.next_op, rec.latencies, rec.documents, rec.due
    clock, sleep = time.perf_counter, time.sleep
    while not state.stop:
        intended = state.next_due()
        if intended is None:
            return
        delay = intended - clock()
        while delay > 0 and not state.stop:
            sleep(min(delay, 0.25))
            delay = intended - clock()
        if state.stop:
            return
        i = next_op()
        try:
            n = calls[i]()
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
