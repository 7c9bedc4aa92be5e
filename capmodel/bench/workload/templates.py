"""Document and query templates: YAML structures with value generators, compiled once into fast builder functions.

A template is any YAML value. A mapping with the key ``gen`` is a value generator; everything else is a literal that
is copied (so every document is a fresh object). Generators:

``{gen: int, min, max, distribution: uniform|zipfian}``  an integer in [min, max]
``{gen: float, min, max}``                                a float in [min, max)
``{gen: string, length: N}`` or ``min_length``/``max_length``  random ASCII letters and digits
``{gen: choice, values: [...], weights: [...]}``          one of the values
``{gen: date, start: 2020-01-01, end: 2024-12-31}``       a UTC datetime in [start, end)
``{gen: now}``                                            the current UTC time
``{gen: bool, p: 0.5}``                                   True with probability p
``{gen: sequence, start: 0}``                             0, 1, 2, ... shared by all workers
``{gen: key}``                                            an existing record key, by the workload's request distribution
``{gen: range, min, max, width, lower: $gte, upper: $lt}``  a range condition over the integers [min, max] that holds
                                                          ``width`` of them: ``{$gte: a, $lt: a + width}`` with a
                                                          uniform; ``lower`` ($gte or $gt) or ``upper`` ($lt or
                                                          $lte) alone: the top or the bottom ``width`` values

Builders take a ``WorkerContext`` (per-thread random state and key chooser), so no lock is taken per value.
"""
from __future__ import annotations

import datetime as dt
import itertools
import random
import string
from typing import Any, Callable

from capmodel.errors import InputError, shown

ALPHABET = (string.ascii_letters + string.digits).encode()
_POOL_SIZE = 1 << 20
GENERATORS = ("int", "float", "string", "choice", "date", "now", "bool", "sequence", "key", "range")
LOWER_BOUNDS, UPPER_BOUNDS = ("$gte", "$gt"), ("$lt", "$lte")


class WorkerContext:
    """Per-worker random state: a ``random.Random``, a block of random text, and the key chooser."""

    def __init__(self, seed: int, next_key: Callable[[], Any] | None = None):
        self.rng = random.Random(seed)
        self.pool = _text_pool()
        self.next_key = next_key or _no_keys

    def text(self, length: int) -> str:
        """``length`` random-looking ASCII characters (a slice of a per-worker random block)."""
        if length >= _POOL_SIZE:
            return (self.pool * (length // _POOL_SIZE + 1))[:length].decode()
        start = self.rng.randrange(_POOL_SIZE - length + 1)
        return self.pool[start:start + length].decode()


_POOL: list[bytes] = []


def _text_pool() -> bytes:
    """1 MiB of random letters and digits, made once (numpy, fixed seed) and shared read-only by all workers."""
    if not _POOL:
        import numpy as np

        letters = np.frombuffer(ALPHABET, dtype=np.uint8)
        _POOL.append(letters[np.random.default_rng(20240525).integers(0, len(letters), _POOL_SIZE)].tobytes())
    return _POOL[0]


def _no_keys():
    raise InputError("template uses {gen: key} but the workload has no keys (set 'keys' in the workload)")


def _date(value, where) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day, tzinfo=dt.timezone.utc)
    try:
        parsed = dt.datetime.fromisoformat(str(value))
    except ValueError:
        raise InputError(f"{where}: {value!r} is not an ISO date (YYYY-MM-DD)") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.timezone.utc)


def _number(spec, name, where, kind=float):
    if name not in spec:
        raise InputError(f"{where}: generator '{spec['gen']}' needs '{name}'")
    try:
        return kind(spec[name])
    except (TypeError, ValueError):
        raise InputError(f"{where}: '{name}' must be a number, got {spec[name]!r}") from None


def _generator(spec: dict, where: str) -> Callable[[WorkerContext], Any]:
    kind = spec["gen"]
    if kind == "int":
        lo, hi = _number(spec, "min", where, int), _number(spec, "max", where, int)
        if hi < lo:
            raise InputError(f"{where}: max {hi} < min {lo}")
        dist = spec.get("distribution", "uniform")
        if dist == "uniform":
            return lambda ctx: ctx.rng.randint(lo, hi)
        if dist == "zipfian":
            from capmodel.bench.workload.generators import ZipfianGenerator

            return _blocked(lambda ctx: ZipfianGenerator(lo, hi, seed=ctx.rng.getrandbits(32)), where)
        raise InputError(f"{where}: distribution {dist!r} must be 'uniform' or 'zipfian'")
    if kind == "float":
        lo, hi = _number(spec, "min", where), _number(spec, "max", where)
        return lambda ctx: ctx.rng.uniform(lo, hi)
    if kind == "string":
        if "length" in spec:
            n = _number(spec, "length", where, int)
            return lambda ctx: ctx.text(n)
        lo, hi = _number(spec, "min_length", where, int), _number(spec, "max_length", where, int)
        return lambda ctx: ctx.text(ctx.rng.randint(lo, hi))
    if kind == "choice":
        values = spec.get("values")
        if not isinstance(values, list) or not values:
            raise InputError(f"{where}: 'choice' needs a non-empty list 'values'")
        weights = spec.get("weights")
        if weights is not None and len(weights) != len(values):
            raise InputError(f"{where}: 'weights' has {len(weights)} entries for {len(values)} values")
        if weights is None:
            return lambda ctx: ctx.rng.choice(values)
        if not all(isinstance(w, (int, float)) and not isinstance(w, bool) and 0 <= w <= 1e12 for w in weights) \
                or not sum(weights) > 0:   # random.choices would pick by NaN, negative or infinite weights
            raise InputError(f"{where}: 'weights' must be numbers from 0 to 1,000,000,000,000, not all 0, got "
                             f"{shown(weights, 120)}")
        cum = list(itertools.accumulate(float(w) for w in weights))
        return lambda ctx: ctx.rng.choices(values, cum_weights=cum)[0]
    if kind == "date":
        start, end = _date(spec.get("start", "2020-01-01"), where), _date(spec.get("end", "2025-01-01"), where)
        span = (end - start).total_seconds()
        if span <= 0:
            raise InputError(f"{where}: date 'end' must be after 'start'")
        return lambda ctx: start + dt.timedelta(seconds=ctx.rng.random() * span)
    if kind == "now":
        return lambda ctx: dt.datetime.now(dt.timezone.utc)
    if kind == "bool":
        p = float(spec.get("p", 0.5))
        return lambda ctx: ctx.rng.random() < p
    if kind == "sequence":
        counter = itertools.count(int(spec.get("start", 0)))
        return lambda ctx: next(counter)
    if kind == "key":
        return lambda ctx: ctx.next_key()
    if kind == "range":
        return _range(spec, where)
    raise InputError(f"{where}: unknown generator {kind!r}; choose one of {', '.join(GENERATORS)}")


def _range(spec: dict, where: str) -> Callable[[WorkerContext], Any]:
    """``{gen: range}``: a condition on an integer field that ``width`` of the integers [min, max] meet (a replay's
    range query of a chosen selectivity, ``capmodel.observe.shapes.replay``)."""
    lo, hi, width = (_number(spec, name, where, int) for name in ("min", "max", "width"))
    lower, upper = spec.get("lower"), spec.get("upper")
    if lower not in (None, *LOWER_BOUNDS) or upper not in (None, *UPPER_BOUNDS) or (lower is None and upper is None):
        raise InputError(f"{where}: range needs 'lower' ({' or '.join(LOWER_BOUNDS)}) and/or 'upper' "
                         f"({' or '.join(UPPER_BOUNDS)})")
    if hi < lo or not 1 <= width <= hi - lo + 1:
        raise InputError(f"{where}: range needs min <= max and a width from 1 to max - min + 1, got min {lo}, "
                         f"max {hi}, width {width}")

    def bounds(start: int) -> dict:        # the integers start .. start + width - 1
        out = {}
        if lower is not None:
            out[lower] = start if lower == "$gte" else start - 1
        if upper is not None:
            out[upper] = start + width if upper == "$lt" else start + width - 1
        return out

    if lower is not None and upper is not None:
        return lambda ctx: bounds(ctx.rng.randint(lo, hi - width + 1))
    fixed = bounds(hi - width + 1 if upper is None else lo)
    return lambda ctx: dict(fixed)


def _blocked(make, where):
    """A numpy block generator drawn 256 values at a time (small calls keep the GIL), one per worker context."""
    attr = f"_block_{id(make)}"

    def draw(ctx):
        state = getattr(ctx, attr, None)
        if state is None or not state[1]:
            gen = state[0] if state else make(ctx)
            state = (gen, gen.sample(256).tolist()[::-1])
            setattr(ctx, attr, state)
        return state[1].pop()

    return draw


def compile_template(template: Any, where: str = "template") -> Callable[[WorkerContext], Any]:
    """Turn a template into ``build(ctx) -> value``; raise ``InputError`` naming the path of a bad generator."""
    if isinstance(template, dict):
        if "gen" in template:
            return _generator(template, where)
        fields = [(str(k), compile_template(v, f"{where}.{k}")) for k, v in template.items()]
        return lambda ctx: {k: build(ctx) for k, build in fields}
    if isinstance(template, list):
        items = [compile_template(v, f"{where}[{i}]") for i, v in enumerate(template)]
        return lambda ctx: [build(ctx) for build in items]
    if isinstance(template, dt.date) and not isinstance(template, dt.datetime):
        value = _date(template, where)
        return lambda ctx: value
    return lambda ctx: template


def estimated_size(template: Any) -> int:
    """An upper estimate of the bytes one value built from ``template`` takes (BSON-like: strings their length,
    numbers, dates and booleans 16), computed from the template alone so that nothing is allocated first."""
    stack, total = [template], 0
    while stack:
        item = stack.pop()
        if isinstance(item, dict) and "gen" in item:
            kind = item.get("gen")
            if kind == "string":
                sizes = [item.get(k) for k in ("length", "max_length") if k in item]
                total += max((int(s) for s in sizes if isinstance(s, (int, float)) and s == s and abs(s) < 1e300),
                             default=0)
            elif kind == "choice" and isinstance(item.get("values"), list):
                total += max((estimated_size(v) for v in item["values"]), default=0)
            else:
                total += 16
        elif isinstance(item, dict):
            total += sum(len(str(k)) + 2 for k in item)
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            total += 4
            stack.extend(item)
        elif isinstance(item, str):
            total += len(item) + 5
        else:
            total += 16
    return total
