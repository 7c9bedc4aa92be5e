"""One vocabulary for what a user may pass in: declared beside the parameters, checked in one place, never mutating.

As scikit-learn declares an estimator's ``_parameter_constraints``, a configuration declares a mapping from each
parameter to its constraint, and ``checked(constraints, values, error)`` returns the checked values (coerced to
their kind) or raises ``error`` naming the parameter as the user typed it. Nothing is changed in place: the caller
builds its checked copy from the values returned.

- ``Number(kind, low, high, name=...)``: finite, from ``low`` to ``high`` (inclusive; with ``low_open`` or
  ``high_open`` that bound itself is refused); ``unit`` is shown after the bounds. ``kind`` is ``int`` (a float
  that is a whole number is taken for an ``int``; text is refused), ``float`` (an int becomes a float; with
  ``text`` on, text that reads as a number is read) or ``None`` (an int stays an int and a float a float).
  A bool is never a number; numpy's numbers are Python's.
- ``Sequence(item, name=...)``: a list, tuple, range or array (not text, not a mapping) of ``min_length`` to
  ``max_length`` values, each checked by ``item``; comes back as a new list.
- ``Choice(values, name=...)``: one of the values.
- ``Flag(name=...)``: ``True`` or ``False``.

Every constraint lets ``None`` through unless ``required``: "not given" is the caller's default to decide.
``check(value, error, name)`` shows ``name`` instead of the declared one (one declaration, several callers' words;
``with_name`` makes that a new constraint). Every refusal reads ``NAME must be WANTED, got VALUE``.
"""
from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Mapping

from capmodel.errors import CapmodelError, plain, shown
from capmodel.formatting import number

TYPED_DIGITS = 26   # longest refused value written out in full; a longer one keeps its exponent
BOUND_DIGITS = 12   # a bound is exact (0.999999, 0.000000000001), not a measured figure rounded to three digits


#: the names of 1,000 ** k a bound reads with from a billion up and a billionth down (short scale, as English writes
#: them): 0.000000000001 and 1,000,000,000,000,000 are exact but must be counted; "a trillionth" and "a quadrillion"
#: are read
LARGE_NAMES = {3: "billion", 4: "trillion", 5: "quadrillion", 6: "quintillion"}


def _named(value: float) -> str | None:
    """``value`` in words when it is 1 to 999 (three significant digits at most) of a named power of 1,000 from a
    billion up or a billionth down: 1e15 -> "a quadrillion", 2.5e15 -> "2.5 quadrillion", 5e-12 -> "5 trillionths",
    -1e15 -> "minus a quadrillion"; else None (a bound such as 1,234,567,891 keeps its digits)."""
    if value == 0 or not math.isfinite(value):
        return None
    magnitude = abs(value)
    for k, name in LARGE_NAMES.items():
        for power, word in ((10.0 ** (3 * k), name), (10.0 ** (-3 * k), name + "th")):
            count = magnitude / power
            if not 1 <= round(count, 9) < 1000 or not math.isclose(float(number(count).replace(",", "")), count,
                                                          rel_tol=1e-12):
                continue
            said = "a " + word if math.isclose(count, 1.0) else f"{number(count)} {word}" + (
                "s" if word.endswith("th") else "")
            return f"minus {said}" if value < 0 else said
    return None


def bound(value, kind: type | None = float) -> str:
    """A bound of a range in a refusal, as ``capmodel.formatting.number`` writes figures for people: 1,000,000 and
    0.000001, never 1e+06 or 1e-06; every digit kept (a bound is exact); from a billion up and a billionth down a
    round bound in words, which need no counting of zeros: "a trillionth", "a quadrillion" (``_named``)."""
    named = _named(float(value)) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if named is not None:
        return named
    if kind is int and float(value).is_integer():
        return f"{int(value):,}"
    return number(value, digits=BOUND_DIGITS)


def range_words(low, high, kind: type | None = float) -> str:
    """'from LOW to HIGH' in ``bound``'s words: the range a refusal names."""
    return f"from {bound(low, kind)} to {bound(high, kind)}"


def typed(value) -> str:
    """The refused value as the user would have typed it: a whole float without its '.0' (0, not 0.0; argparse's
    float() made '0' a 0.0), a float Python writes with an exponent in full where that is short (1e16 ->
    10,000,000,000,000,000, 1e-13 -> 0.0000000000001; 1e-320 and 1e+308 stay so), anything else as ``shown``."""
    value = plain(value)
    if type(value) is float and math.isfinite(value) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    if type(value) is float and math.isfinite(value) and "e" in repr(value):   # 1e16 typed, 1e+16 in repr
        positional = f"{Decimal(repr(value)):,f}"
        return positional if len(positional) <= TYPED_DIGITS else repr(value)   # 1e-320 stays as it was typed
    return shown(value, 40)


def _is_bool(value) -> bool:
    """A Python or numpy bool (numpy's is no ``bool`` subclass)."""
    return isinstance(value, bool) or getattr(getattr(value, "dtype", None), "kind", None) == "b"


@dataclass(frozen=True)
class Number:
    kind: type[int] | type[float] | None = float
    low: float = -math.inf
    high: float = math.inf
    name: str = "value"
    low_open: bool = False
    unit: str = ""
    wanted_text: str | None = None   # the range in the user's words, where the generic sentence says it worse
    required: bool = False
    high_open: bool = False
    text: bool = True                # a float may be given as text that reads as a number

    def wanted(self) -> str:
        if self.wanted_text:
            return self.wanted_text
        what = "an integer" if self.kind is int else "a number"
        low, high = math.isfinite(self.low), math.isfinite(self.high)
        if self.kind is not int and not (low and high):
            what = "a finite number"
        above = f"{'>' if self.low_open else '>='} {bound(self.low, self.kind)}"
        below = f"{'<' if self.high_open else '<='} {bound(self.high, self.kind)}"
        if low and high and not (self.low_open or self.high_open):
            bounds = f" {range_words(self.low, self.high, self.kind)}"
        elif low and high:
            bounds = f" {above} and {below}"
        else:
            bounds = f" {above}" if low else f" {below}" if high else ""
        return f"{what}{bounds}{f' {self.unit}' if self.unit else ''}"

    def check(self, value, error: type[CapmodelError] = CapmodelError, name: str | None = None):
        if type(value) is self.kind and self.low < value < self.high:   # the common case: nothing to convert
            return value
        if value is None:
            return _absent(self, error, name)
        number = self._number(value)
        if number is None:
            raise error(f"{name or self.name} must be {self.wanted()}, got {typed(value)}")
        return number

    def _number(self, value):
        """``value`` as this constraint's kind, or None when it is refused."""
        if type(value) is float or type(value) is int:   # the common case, first (a bool's type is bool)
            pass
        elif _is_bool(value):
            return None
        elif isinstance(value, numbers.Integral):
            value = int(value)
        elif isinstance(value, numbers.Real):
            value = float(value)
        elif self.kind is float and (self.text or not isinstance(value, (str, bytes))):
            try:
                value = float(value)
            except (TypeError, ValueError, OverflowError):
                return None
        if isinstance(value, float) and self.kind is int and value.is_integer():
            value = int(value)
        if not isinstance(value, (int, float)) or (self.kind is int and not isinstance(value, int)):
            return None
        if isinstance(value, float) and not math.isfinite(value):
            return None
        if not self.low <= value <= self.high or (self.low_open and value == self.low) or (
                self.high_open and value == self.high):
            return None
        try:
            return self.kind(value) if self.kind is not None else value
        except OverflowError:   # an int too large for a float, inside an infinite bound
            return None


@dataclass(frozen=True)
class Sequence:
    item: Any
    name: str = "value"
    min_length: int = 0
    max_length: float = math.inf
    required: bool = False

    def wanted(self) -> str:
        if self.min_length == 1 and math.isinf(self.max_length):
            return "a list of one or more values"
        if self.min_length == self.max_length:
            return f"a list of exactly {self.min_length:,} values"
        many = ("" if self.min_length <= 0 else f"at least {self.min_length:,} " if math.isinf(self.max_length)
                else f"{self.min_length:,} to {self.max_length:,} ")
        return f"a list of {many}values"

    def check(self, value, error: type[CapmodelError] = CapmodelError, name: str | None = None):
        name = name or self.name
        if value is None:
            return _absent(self, error, name)
        if not (isinstance(value, (list, tuple, range)) or hasattr(value, "__array__")):
            raise error(f"{name} must be {self.wanted()}, each {self.item.wanted()}, got {shown(value, 40)}")
        if not self.min_length <= len(value) <= self.max_length:
            raise error(f"{name} must be {self.wanted()}, got {len(value):,} value(s)" if len(value) else
                        f"{name} must be {self.wanted()}, got none")
        every = f"{name}: every value"
        if any(v is None for v in value):      # an item's "not given" is no item of a list
            raise error(f"{every} must be {self.item.wanted()}, got an empty one (None)")
        return [self.item.check(v, error, every) for v in value]


@dataclass(frozen=True)
class Choice:
    values: tuple
    name: str = "value"
    required: bool = False

    def wanted(self) -> str:
        return f"one of {', '.join(map(str, self.values))}"

    def check(self, value, error: type[CapmodelError] = CapmodelError, name: str | None = None):
        if value is None:
            return _absent(self, error, name)
        if isinstance(value, bool) or value not in self.values:
            raise error(f"{name or self.name} must be {self.wanted()}, got {shown(value, 40)}")
        return value


@dataclass(frozen=True)
class Flag:
    name: str = "value"
    required: bool = False

    def wanted(self) -> str:
        return "True or False"

    def check(self, value, error: type[CapmodelError] = CapmodelError, name: str | None = None):
        if value is None:
            return _absent(self, error, name)
        if not isinstance(value, bool):
            raise error(f"{name or self.name} must be {self.wanted()}, got {shown(value, 40)}")
        return value


def _absent(constraint, error, name=None):
    if constraint.required:
        raise error(f"{name or constraint.name} must be given")
    return None


def number_in(text: str, kind: type):
    """``text`` read as a ``kind`` number where it reads as one (for ``int``: ``8.0``, ``1e3`` and ``1_000`` are
    integers), else ``text`` unchanged, for a constraint or a caller to refuse showing what was typed."""
    if kind is int:
        try:
            return int(text)
        except ValueError:
            pass
    try:
        value = float(text)
    except ValueError:
        return text
    return int(value) if kind is int and value.is_integer() else value


def with_name(constraint, name: str, **changes):
    """``constraint`` under another name (and ``changes``): one declaration, each caller's word for it."""
    return dataclasses.replace(constraint, name=name, **changes)


def checked(constraints: Mapping[str, Any], values: Mapping[str, Any],
            error: type[CapmodelError] = CapmodelError) -> dict:
    """``{parameter: checked value}`` for every constrained parameter of ``values``; the first that breaks its
    constraint raises ``error`` naming it. ``values`` is not changed."""
    return {key: constraint.check(values[key], error) for key, constraint in constraints.items() if key in values}


# Options that mean one thing wherever they appear (commands, reports' parameters, the package's functions), declared
# once here; each caller names them in its own words (``with_name``). A planning target below 1% or a growth past
# 1,000% a month is a typo, not a plan: every figure derived from one is nonsense (-6e300% spare, inf% a month).
UTILIZATION_TARGET = Number(float, 0.01, 1.0, name="--utilization-target", wanted_text="a fraction from 0.01 to 1")
MONTHLY_GROWTH = Number(float, -0.99, 10.0, name="--growth",
                        wanted_text="a finite monthly fraction from -0.99 to 10 (0.05 = 5% a month)")
CORES = Number(float, 0.01, 1024.0, name="--cores", wanted_text="a number of CPUs from 0.01 to 1,024")
#: observe --uri: seconds between samples (serverStatus answers in milliseconds; below 0.1 s the intervals are its
#: noise) and seconds to sample (a month at most: a longer watch is FTDC's job)
SAMPLE_INTERVAL = Number(float, 0.1, 3600.0, name="--interval", wanted_text="a number of seconds from 0.1 to 3,600")
SAMPLE_DURATION = Number(float, 0.1, 31 * 86400.0, name="--duration",
                         wanted_text="a number of seconds from 0.1 to 2,678,400 (31 days)")
#: the embedded mongod's WiredTiger cache per member, in GB: mongod's own range (below or above it mongod exits at
#: start with a log line, which is all a user saw)
CACHE_GB = Number(float, 0.25, 10_000.0, name="--cache-gb",
                  wanted_text="a number of GB from 0.25 to 10,000 (mongod's range for its WiredTiger cache)")
#: a random generator's seed (numpy's ``default_rng`` takes a whole number >= 0 of any size, or None; a negative one
#: raised numpy's ValueError from deep inside a bootstrap)
SEED = Number(int, 0, math.inf, name="seed", wanted_text="a whole number >= 0")
