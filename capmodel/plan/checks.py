"""Argument checks shared by the planning modules: one message style for numbers a user passed in."""
from __future__ import annotations

import math

from capmodel.errors import PlanError, shown

# The smallest and largest positive figures a plan takes: below or above them ratios of them leave the range of a
# float (1e-320 is subnormal, and 1 / it is infinite) and the answers would be inf or NaN.
SMALLEST, LARGEST = 1e-12, 1e15


def positive(value, name: str) -> float:
    """``value`` as a float > 0 (from SMALLEST to LARGEST), or ``PlanError`` naming ``name``."""
    try:
        x = float(value)
    except OverflowError:
        raise PlanError(f"{name} must be a number > 0 that a float can hold, got {shown(value)}") from None
    except (TypeError, ValueError):
        raise PlanError(f"{name} must be a number, got {shown(value)}") from None
    if not math.isfinite(x) or x <= 0:
        raise PlanError(f"{name} must be a number > 0, got {shown(value)}")
    if not SMALLEST <= x <= LARGEST:
        raise PlanError(f"{name} must be from {SMALLEST:g} to {LARGEST:g}, got {shown(value)}")
    return x


def fraction(value, name: str) -> float | None:
    """``value`` as a float in (0, 1] (None passes through), or ``PlanError`` naming ``name``."""
    if value is None:
        return None
    x = positive(value, name)
    if x > 1:
        raise PlanError(f"{name} must be a fraction in (0, 1], got {shown(value)}")
    return x
