"""The planning layer's vocabulary for numbers a user passes in (``capmodel.constraints``), declared once: a positive
figure, a fraction, the USL's contention and coherency. Every refusal is one ``PlanError`` naming the figure, the
value and the range.
"""
from __future__ import annotations

from capmodel.constraints import Number, range_words, with_name
from capmodel.errors import PlanError

# The smallest and largest positive figures a plan takes: below or above them ratios of them leave the range of a
# float (1e-320 is subnormal, and 1 / it is infinite) and the answers would be inf or NaN.
SMALLEST, LARGEST = 1e-12, 1e15

POSITIVE = Number(float, SMALLEST, LARGEST, wanted_text=f"a number > 0 ({range_words(SMALLEST, LARGEST)})")
REQUIRED_POSITIVE = with_name(POSITIVE, "value", required=True)
FRACTION = Number(float, SMALLEST, 1.0, wanted_text="a fraction in (0, 1]")
SIGMA = Number(float, 0.0, 1.0, high_open=True, name="sigma",
               wanted_text="a number >= 0 and below 1 (contention of 1 means no scaling at all)")
KAPPA = Number(float, 0.0, 1.0, name="kappa")


def positive(value, name: str) -> float:
    """``value`` as a float > 0 (from SMALLEST to LARGEST), or ``PlanError`` naming ``name``."""
    return REQUIRED_POSITIVE.check(value, PlanError, name)


def fraction(value, name: str) -> float | None:
    """``value`` as a float in (0, 1] (None passes through), or ``PlanError`` naming ``name``."""
    return FRACTION.check(value, PlanError, name)
