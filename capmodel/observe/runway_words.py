"""What a runway in months is said as, and which kind of runway it is (``runway_status``), for observe's answer, the
fleet's table and its JSON.

A compound growth of a tenth of a percent a month takes ~2,000 years to double a load; a months figure past a
horizon says nothing a planner can use, and printed in full ("2,417,219,425.4 months") reads as a bug. Beyond
HORIZON_MONTHS the text says HORIZON_WORDS; the JSON keeps the figure and says which kind it is, since a null
runway alone cannot tell "never" from "no growth rate given".
"""
from __future__ import annotations

import math

from capmodel.models.runway import PAST_TARGET_WORDS

HORIZON_MONTHS = 1200.0
HORIZON_WORDS = "over 100 years"
#: ``runway_status``: a figure within the horizon; already past the target (0); never reached (no growth or a
#: shrinking load: the figure is infinite, null in JSON); reached beyond the horizon; no ``--growth`` given (null);
#: no capacity to run towards (the server's files could not be read, or too little in them: null)
MONTHS, PAST_TARGET, NEVER, BEYOND, NO_GROWTH, NO_CAPACITY = (
    "months", "past_target", "never", "beyond_horizon", "no_growth_given", "no_capacity")


def runway_status(months, monthly_growth) -> str:
    """Which kind of runway ``months`` (a float, None or NaN) is, at ``monthly_growth`` (None: not given)."""
    if monthly_growth is None:
        return NO_GROWTH
    if months is None or (isinstance(months, float) and math.isnan(months)):
        return NO_CAPACITY
    if months == 0:
        return PAST_TARGET
    if math.isinf(months):
        return NEVER
    return BEYOND if months > HORIZON_MONTHS else MONTHS


def months_words(months: float) -> str:
    """A runway for people: "never", the past-target phrase, HORIZON_WORDS, or the months with one decimal."""
    if math.isinf(months):
        return "never"
    if months == 0:
        return PAST_TARGET_WORDS
    return HORIZON_WORDS if months > HORIZON_MONTHS else f"{months:,.1f}"


def shown_runway(months):
    """A table cell's runway: the figure where it is one, else its words (past the target, beyond the horizon);
    None and infinity stay as they are (the table says "—" and "never")."""
    if months is None or (isinstance(months, float) and (math.isnan(months) or math.isinf(months))):
        return months
    return months_words(months) if months == 0 or months > HORIZON_MONTHS else months


def runway_phrase(capacity) -> str:
    """A server capacity's runway as a clause: ", 14.0 months of runway at 5% growth a month" (or ", past its target
    now", ", never reaches its target at ..."); "" without a growth rate."""
    from capmodel.formatting import percent

    runway = capacity.runway_months
    if runway is None or capacity.monthly_growth is None:
        return ""
    growth = percent(capacity.monthly_growth)
    if not math.isfinite(runway.estimate):
        return f", never reaches its target at {growth} a month"
    if runway.estimate <= 0:
        return ", past its target now"
    if runway.estimate > HORIZON_MONTHS:
        return f", {HORIZON_WORDS} of runway at {growth} growth a month"
    return f", {runway.estimate:,.1f} months of runway at {growth} growth a month"
