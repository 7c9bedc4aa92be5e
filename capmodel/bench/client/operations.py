"""A workload's operations as calls on a binding: each operation kind as a call, and how records are loaded.

``WorkerOps`` is built once per worker: it holds that worker's random state and key chooser and exposes
``calls[i]()`` for operation ``i`` of the workload (returning the number of documents it counts for, or a coroutine of
it with an asynchronous binding; ``capmodel.bench.client.bindings`` says how each call reaches the server). Nothing here
takes a lock per operation; the only shared state is ``KeySpace``'s insert counter (``itertools.count``, atomic
under the GIL).
"""
from __future__ import annotations

import itertools
from collections.abc import Callable

from capmodel.bench.workload.definition import Workload
from capmodel.bench.workload.generators import ZipfianGenerator, key_chooser
from capmodel.bench.workload.templates import WorkerContext, compile_template

BLOCK = 256  # keys and operation choices are drawn this many at a time (small numpy calls keep the GIL)
FIRST_BLOCK = 64  # the first keys of a worker, drawn when it is built


class KeySpace:
    """Record numbers 0..count-1 exist; an insert takes the next number (YCSB's transaction insert sequence).

    Several client processes share the sequence by striding: process ``offset`` of ``stride`` inserts numbers
    existing + offset, existing + offset + stride, ... so no two processes insert the same key.
    """

    def __init__(self, workload: Workload, existing: int, offset: int = 0, stride: int = 1):
        if not 0 <= offset < stride:
            raise ValueError(f"KeySpace: offset {offset} must be in [0, stride {stride})")
        self.workload = workload
        self.count = int(existing)
        self._next = itertools.count(int(existing) + offset, stride)

    def name(self, number: int) -> str:
        return self.workload.key_names([number])[0]

    def names(self, numbers) -> list[str]:
        return self.workload.key_names(numbers)

    def next_insert(self) -> int:
        number = next(self._next)
        if number >= self.count:
            self.count = number + 1
        return number


def _sort_spec(sort):
    if sort is None:
        return None
    if isinstance(sort, dict):
        return list(sort.items())
    return [tuple(item) for item in sort]


class WorkerOps:
    """One worker's operations: ``calls[i]()`` runs operation ``i`` through ``binding``
    (``capmodel.bench.client.bindings``) and returns its document count (a coroutine of it with an asynchronous
    binding); ``next_op()`` picks one by proportion."""

    def __init__(self, workload: Workload, binding, keyspace: KeySpace | None, seed: int):
        self.workload, self.binding, self.keyspace = workload, binding, keyspace
        self.ctx = WorkerContext(seed, next_key=self.next_key if keyspace is not None else None)
        self.rng = self.ctx.rng
        self._keys: list = []
        self._chooser = None
        if keyspace is not None:
            self._chooser = key_chooser(workload.distribution, lambda: keyspace.count, seed=seed,
                                        **workload.distribution_options)
        self.names = [op.name for op in workload.operations]
        self.calls = [self._make(op) for op in workload.operations]
        if keyspace is not None and self._chooser is not None:  # the first keys now, before the workers start together
            self._keys = keyspace.names(self._chooser.sample(FIRST_BLOCK))
        self._cum = list(itertools.accumulate(op.proportion for op in workload.operations))
        self._ops: list[int] = []
        # one operation type: a C-level constant instead of a Python call
        self.next_op: Callable[[], int] = (itertools.repeat(0).__next__ if len(self.calls) == 1
                                           else self._next_of_several)

    def _next_of_several(self) -> int:
        if not self._ops:
            self._ops = self.rng.choices(range(len(self.calls)), cum_weights=self._cum, k=BLOCK)
        return self._ops.pop()

    def next_key(self) -> str:
        if not self._keys:
            assert self.keyspace is not None and self._chooser is not None   # next_key is given only with keys
            self._keys = self.keyspace.names(self._chooser.sample(BLOCK))
        return self._keys.pop()

    # --- operation factories -------------------------------------------------------------------------------
    def _make(self, op):
        w, binding, ctx = self.workload, self.binding, self.ctx
        where = f"workload '{w.name}': operation '{op.name}'"
        p = op.params
        if op.kind in ("read", "scan", "readmodifywrite") or (op.kind == "update" and "filter" not in p):
            return getattr(self, f"_ycsb_{op.kind}")()
        if op.kind == "insert":
            return self._insert(compile_template(p.get("document", w.document_template()), where), p.get("batch", 1))
        if op.kind == "command":
            command_of, command = compile_template(p["command"], f"{where}.command"), binding.command
            return lambda: command(command_of(ctx))
        filter_of = compile_template(p.get("filter", {}), f"{where}.filter")
        if op.kind == "find":
            projection, sort, limit = p.get("projection"), _sort_spec(p.get("sort")), int(p.get("limit", 0))
            find = binding.find
            return lambda: find(filter_of(ctx), projection, sort, limit)
        if op.kind == "update":
            update_of, update, many = compile_template(p["update"], f"{where}.update"), binding.update, p.get("many")
            return lambda: update(filter_of(ctx), update_of(ctx), many)
        if op.kind == "delete":
            delete, many = binding.delete, p.get("many")
            return lambda: delete(filter_of(ctx), many)
        pipeline_of, aggregate = compile_template(p["pipeline"], f"{where}.pipeline"), binding.aggregate
        return lambda: aggregate(pipeline_of(ctx))

    def _projection(self):
        if self.workload.readallfields:
            return None
        return {self.rng.choice(self.workload.field_names): 1}

    def _ycsb_read(self):
        read, key, projection = self.binding.read, self.next_key, self._projection
        if self.workload.readallfields:  # the common case, kept to one call
            return lambda: read({"_id": key()})
        return lambda: read({"_id": key()}, projection())

    def _new_values(self):
        w, ctx = self.workload, self.ctx
        if w.writeallfields:
            return {name: ctx.text(w.field_length) for name in w.field_names}
        return {self.rng.choice(w.field_names): ctx.text(w.field_length)}

    def _ycsb_update(self):
        update, key, values = self.binding.ycsb_update, self.next_key, self._new_values
        return lambda: update({"_id": key()}, {"$set": values()})

    def _ycsb_readmodifywrite(self):
        rmw, key, projection, values = self.binding.read_modify_write, self.next_key, self._projection, self._new_values
        return lambda: rmw({"_id": key()}, projection(), {"$set": values()})

    def _ycsb_scan(self):
        w, scan, key, projection, rng = self.workload, self.binding.scan, self.next_key, self._projection, self.rng
        if w.scan_length_distribution == "zipfian":
            lengths = ZipfianGenerator(1, w.scan_max_length, seed=rng.getrandbits(32))
            pool: list[int] = []

            def length():
                if not pool:
                    pool.extend(lengths.sample(BLOCK).tolist())
                return pool.pop()
        else:
            top = w.scan_max_length

            def length():
                return rng.randint(1, top)

        by_id = [("_id", 1)]
        return lambda: scan({"_id": {"$gte": key()}}, projection(), by_id, length())

    def _insert(self, build, batch: int):
        ctx, keyspace = self.ctx, self.keyspace

        def make_doc():
            doc = build(ctx)
            if keyspace is not None:
                doc["_id"] = keyspace.name(keyspace.next_insert())
            return doc

        if batch == 1:
            insert_one = self.binding.insert_one
            return lambda: insert_one(make_doc())
        insert_many = self.binding.insert_many
        return lambda: insert_many([make_doc() for _ in range(batch)])


def worker_seed(seed: int, worker: int) -> int:
    """The random seed of worker number ``worker`` of a run seeded ``seed`` (differs per worker, reproducibly)."""
    return (seed * 1_000_003 + worker) % (2**32)


def make_worker_ops(workload: Workload, binding, keyspace, worker: int, seed: int) -> WorkerOps:
    """The operations of worker number ``worker`` through ``binding`` (``capmodel.bench.client.bindings``)."""
    return WorkerOps(workload, binding, keyspace, seed=worker_seed(seed, worker))


def create_indexes(collection, workload: Workload) -> None:
    for index in workload.indexes:
        collection.create_index(list(index["keys"].items()), name=index.get("name"))


def load_records(collection, workload: Workload, start: int, stop: int, batch: int = 1000, seed: int = 0,
                 progress=None) -> int:
    """Insert records number ``start``..``stop-1`` (YCSB's load phase); returns how many were inserted."""
    ctx = WorkerContext(seed)
    build = compile_template(workload.document_template(), f"workload '{workload.name}': document")
    keyspace = KeySpace(workload, start) if workload.has_keys else None
    done = 0
    for lo in range(start, stop, batch):
        hi = min(stop, lo + batch)
        docs = [build(ctx) for _ in range(hi - lo)]
        if keyspace is not None:
            for doc, name in zip(docs, keyspace.names(list(range(lo, hi)))):
                doc["_id"] = name
        collection.insert_many(docs, ordered=False)
        done += hi - lo
        if progress is not None:
            progress(hi - lo)
    return done

