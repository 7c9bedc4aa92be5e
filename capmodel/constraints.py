"""One vocabulary for what a user may pass in: declared beside the parameters, checked in one place, never mutating.

As scikit-learn declares an estimator's ``_parameter_constraints``, a configuration declares a mapping from each
parameter to its constraint, and ``checked(constraints, values, error)`` returns the checked values (coerced to
their kind) or raises ``error`` naming the parameter as the user typed it. Nothing is changed in place: the caller
builds its checked copy from the values returned.

- ``Number(kind, low, high, name=...)``: an ``int`` or ``float``, finite, from ``low`` to ``high`` (inclusive; with
  ``low_open`` ``low`` itself is refused); a float that is a whole number is taken for an ``int``, and text that reads
  as a number for a ``float``; ``unit`` is shown after the bounds.
- ``Choice(values, name=...)``: one of the values.
- ``Flag(name=...)``: ``True`` or ``False``.

Every constraint lets ``None`` through unless ``required``: "not given" is the caller's default to decide.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

from capmodel.errors import CapmodelError, shown


@dataclass(frozen=True)
class Number:
    kind: type = float
    low: float = -math.inf
    high: float = math.inf
    name: str = "value"
    low_open: bool = False
    unit: str = ""
    wanted_text: str | None = None   # the range in the user's words, where the generic sentence says it worse
    required: bool = False

    def wanted(self) -> str:
        if self.wanted_text:
            return self.wanted_text
        unit = f" {self.unit}" if self.unit else ""
        if self.kind is int:
            return f"an integer from {self.low:,} to {self.high:,}{unit}"
        if self.low_open and math.isinf(self.high):
            return f"a number > {self.low:g}{unit}"
        return f"a number from {self.low:g} to {self.high:g}{unit}"

    def check(self, value, error: type[CapmodelError] = CapmodelError):
        if value is None:
            return _absent(self, error)
        refused = error(f"{self.name} must be {self.wanted()}, got {shown(value, 40)}")
        if isinstance(value, bool):
            raise refused
        if not isinstance(value, (int, float)) and self.kind is float:
            try:
                value = float(value)
            except (TypeError, ValueError, OverflowError):
                raise refused from None
        if isinstance(value, float) and self.kind is int and value.is_integer():
            value = int(value)
        if not isinstance(value, (int, float)) or (self.kind is int and not isinstance(value, int)):
            raise refused
        if isinstance(value, float) and not math.isfinite(value):
            raise refused
        if not self.low <= value <= self.high or (self.low_open and value == self.low):
            raise refused
        try:
            return self.kind(value)
        except OverflowError:   # an int too large for a float, inside an infinite bound
            raise refused from None


@dataclass(frozen=True)
class Choice:
    values: tuple
    name: str = "value"
    required: bool = False

    def check(self, value, error: type[CapmodelError] = CapmodelError):
        if value is None:
            return _absent(self, error)
        if isinstance(value, bool) or value not in self.values:
            raise error(f"{self.name} must be one of {', '.join(map(str, self.values))}, got {shown(value, 40)}")
        return value


@dataclass(frozen=True)
class Flag:
    name: str = "value"
    required: bool = False

    def check(self, value, error: type[CapmodelError] = CapmodelError):
        if value is None:
            return _absent(self, error)
        if not isinstance(value, bool):
            raise error(f"{self.name} must be True or False, got {shown(value, 40)}")
        return value


def _absent(constraint, error):
    if constraint.required:
        raise error(f"{constraint.name} must be given")
    return None


def checked(constraints: Mapping[str, Any], values: Mapping[str, Any],
            error: type[CapmodelError] = CapmodelError) -> dict:
    """``{parameter: checked value}`` for every constrained parameter of ``values``; the first that breaks its
    constraint raises ``error`` naming it. ``values`` is not changed."""
    return {key: constraint.check(values[key], error) for key, constraint in constraints.items() if key in values}
