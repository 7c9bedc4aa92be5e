"""Argument checks shared by the planning modules: one message style for numbers a user passed in."""
from __future__ import annotations

import math

from capmodel.errors import PlanError


def positive(value, name: str) -> float:
    """``value`` as a float > 0, or ``PlanError`` naming ``name``."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise PlanError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(x) or x <= 0:
        raise PlanError(f"{name} must be a number > 0, got {value!r}")
    return x


def fraction(value, name: str) -> float | None:
    """``value`` as a float in (0, 1] (None passes through), or ``PlanError`` naming ``name``."""
    if value is None:
        return None
    x = positive(value, name)
    if x > 1:
        raise PlanError(f"{name} must be a fraction in (0, 1], got {value!r}")
    return x
