"""What to measure next so that a fit's answer becomes sound: the advice a weak or unusable verdict carries.

The most a server delivers is pinned by the points around its peak. Two things leave its interval wide:

- **the data start past the peak** (the fitted peak below the smallest measured concurrency): measure
  ``EXTEND_LEVELS`` levels from the low end of the peak's interval (at least one client, at most an eighth of the
  smallest measured) to two thirds of the smallest measured;
- **the data stop before the peak** (the peak concurrency's interval reaches past the largest measured
  concurrency, or has no upper end): measure ``EXTEND_LEVELS`` = 4 more levels, spaced geometrically from 1.5x the
  largest measured to ``EXTEND_TO`` = 2x the far end of the peak's interval (4x the largest measured when the
  interval has no end, at most ``EXTEND_MAX`` = 8x), so that the curve is seen turning;
- **the points around the peak are noisy**: the interval of a mean narrows with the square root of the measurements
  behind it, so repeat the levels from the low end of the peak's interval to the largest measured (at least the top
  ``NEAR_LEVELS`` = 3) as many times as the square of (the interval's log-width / the sound width's) asks, with a
  margin (``MARGIN`` = 0.8 of the sound width), at most ``MAX_REPEATS`` = 5.

``tests/test_next_step.py`` follows the advice on synthetic servers and checks that the grade moves.
"""
from __future__ import annotations

import math

import numpy as np

from capmodel.formatting import number, plural
from capmodel.models.evidence import SOUND_SPAN, NextStep

EXTEND_LEVELS = 4
EXTEND_TO = 2.0
EXTEND_MAX = 8.0
NEAR_LEVELS = 3
MARGIN = 0.8
MAX_REPEATS = 5


def _levels_words(levels) -> str:
    shown = [number(v) for v in levels]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def next_step(fit, region, sound_span: float = SOUND_SPAN, reach: float = 1.1) -> NextStep | None:
    """The next measurement for a fit whose figure's interval over ``region`` is too wide, unbounded, or reaches
    more than ``reach`` above the most the fitted curve shows over the data (None when none of these holds)."""
    n = np.asarray(fit.concurrency, dtype=float)
    largest, levels = float(n.max()), np.unique(n)
    if region.empty:
        return NextStep((), 0, f"measure at least {plural(4 - min(len(levels), 3), 'more concurrency level')} "
                        "(4 levels or more give the scatter one degree of freedom)")
    low, high = region.limit_interval()
    n_low, n_high = region.peak_concurrency_interval()
    shown = float(np.max(fit.fitted))
    beyond = math.isfinite(high) and high > reach * shown
    if math.isfinite(high) and low > 0 and high / low <= sound_span and not beyond:
        return None
    smallest = float(n.min())
    if float(fit.peak_concurrency) < smallest and n_low < smallest:
        bottom = max(1.0, min(n_low, smallest / 8))
        new = tuple(float(v) for v in np.unique(np.round(np.geomspace(bottom, smallest / 1.5, EXTEND_LEVELS))))
        return NextStep(new, 1, f"measure {plural(len(new), 'more concurrency level')} from {number(new[0])} to "
                        f"{number(new[-1])} clients ({_levels_words(new)}): the data start past the peak")
    if not math.isfinite(high) or beyond or not math.isfinite(n_high) or n_high > largest:
        far = EXTEND_TO * n_high if math.isfinite(n_high) else 4 * largest
        top = float(min(max(far, 2 * largest), EXTEND_MAX * largest))
        new = tuple(float(v) for v in np.unique(np.round(np.geomspace(1.5 * largest, top, EXTEND_LEVELS))))
        return NextStep(new, 1, f"measure {plural(len(new), 'more concurrency level')} from {number(new[0])} to "
                        f"{number(new[-1])} clients ({_levels_words(new)}) to see the curve turn")
    near = levels[levels >= min(n_low, levels[-NEAR_LEVELS] if len(levels) >= NEAR_LEVELS else levels[0])]
    width, target = math.log(high / low), math.log(sound_span) * MARGIN
    per_level = int(np.max(np.unique(n, return_counts=True)[1]))
    repeats = int(min(MAX_REPEATS, max(1, math.ceil(per_level * ((width / target) ** 2 - 1)))))
    chosen = tuple(float(v) for v in near)
    return NextStep(chosen, repeats, f"repeat the steps at {_levels_words(chosen)} clients "
                    f"{plural(repeats, 'more time')} each, to narrow the peak's interval")
