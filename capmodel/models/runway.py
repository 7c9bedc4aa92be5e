"""The runway: months until a load growing by a fixed fraction a month (compound) reaches a capacity,
ln(capacity / load) / ln(1 + g); the planner's users per VM and the operational laws' throughput both use it.

0 when the load is already at or past the capacity; infinite when the load does not grow (g <= 0: a shrinking load
never gets there either); NaN where the capacity is unknown. The runway grows with the capacity, so an interval on
the capacity carries through end for end (``runway``).
"""
from __future__ import annotations

import math

import numpy as np

from capmodel.constraints import MONTHLY_GROWTH, with_name
from capmodel.errors import InputError
from capmodel.models.estimate import Estimate

# a runway of 0 (the load already at or past the capacity it runs towards), in words: the one phrase the tables and
# the figures show for it
PAST_TARGET_WORDS = "past the target now"


def check_growth(monthly_growth: float, error: type[Exception] = InputError) -> float:
    """The monthly growth as a float, by the one rule for it (``capmodel.constraints.MONTHLY_GROWTH``: -0.99 to 10,
    0.05 = 5% a month); ``error`` otherwise."""
    return float(with_name(MONTHLY_GROWTH, "monthly growth").check(monthly_growth, error))


def runway_months(capacity, load, monthly_growth: float, error: type[Exception] = InputError):
    """Months until ``load`` growing by ``monthly_growth`` a month (compound) reaches ``capacity``; vectorised over
    both. ``error`` is raised for a growth of -1 or less or a load that is not > 0."""
    g = check_growth(monthly_growth, error)
    cap = np.asarray(capacity, dtype=float)
    now = np.asarray(load, dtype=float)
    if np.any(now <= 0):
        raise error("current users must be > 0 for a runway")
    with np.errstate(divide="ignore", invalid="ignore"):
        months = np.where(cap <= now, 0.0, np.log(cap / now) / math.log1p(g) if g > 0 else math.inf)
    months = np.where(np.isnan(cap), math.nan, months)
    return float(months) if months.ndim == 0 else months


def runway(capacity: Estimate, load: float, monthly_growth: float, error: type[Exception] = InputError) -> Estimate:
    """``runway_months`` at the capacity's estimate and at each end of its interval."""
    months = runway_months([capacity.estimate, capacity.low, capacity.high], load, monthly_growth, error)
    return Estimate(*(float(m) for m in months))
