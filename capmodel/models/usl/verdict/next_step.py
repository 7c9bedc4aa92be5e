"""What to measure next so that a fit's answer becomes sound: the advice a weak or unusable verdict carries.

The most a server delivers is pinned by the points around its peak. Where the fitted peak N̂ lies against the data
(smallest N_min, largest N_max measured) says what leaves its interval wide:

- **the data start past the peak** (N̂ below N_min, the best measured level the smallest of three or more, or N̂
  within 1.5x of N_min with the low end of its interval below N_min / 1.5):
  measure ``NEW_LEVELS`` = 4 levels from a quarter of the lower of N̂ and N_min (at least one client) to two thirds
  of N_min, so that the rise to the peak is seen;
- **the data stop before the peak, or not far past it** (no N̂, or N̂ above N_max / ``PAST_FACTOR`` = 1.5): measure
  4 levels spaced geometrically from 1.3 N_max to ``EXTEND_TO`` = 3x the larger of N̂ and N_max (4x N_max without
  a peak), at most ``EXTEND_MAX`` = 8x N_max, so that the curve is seen turning (twice each where the measurements
  scatter by more than ``NOISY`` = 5% around the fitted curve);
- **the data pass the peak, but scatter**: the interval of a mean narrows with the square root of the measurements
  behind it, so repeat the measured levels from N̂/2 up as many more times as (log of the interval's width / log of
  ``TARGET_SPAN`` = 1.15, a margin under the sound 1.25)² asks, at most ``MAX_REPEATS`` = 6.

Too few points for any interval (fewer than four): measure levels spaced geometrically from the smallest measured to
twice the largest, ``ENOUGH_LEVELS`` = 8 in all. The width judged is the interval's own or, where it is larger, its
reach above the most the fitted curve shows (``capmodel.models.usl.verdict.assessment.check_reach``).
``tests/evidence/test_next_step.py`` follows the advice on synthetic servers and checks that the grade moves.
"""
from __future__ import annotations

import math

import numpy as np

from capmodel.formatting import number, plural
from capmodel.models.evidence import SOUND_SPAN, NextStep

NEW_LEVELS = 4
PAST_FACTOR = 1.5
EXTEND_TO = 3.0
EXTEND_MAX = 8.0
TARGET_SPAN = 1.15
MAX_REPEATS = 6
NOISY = 0.05
ENOUGH_LEVELS = 8


def _levels_words(levels) -> str:
    shown = [number(v) for v in levels]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def _new_levels(low: float, high: float) -> tuple[float, ...]:
    return tuple(float(v) for v in np.unique(np.round(np.geomspace(low, high, NEW_LEVELS))))


def _scatter(fit) -> float:
    """The measurements' relative scatter around the fitted curve: the root mean square of log(measured / fitted)."""
    x, f = np.asarray(fit.throughput, dtype=float), np.asarray(fit.fitted, dtype=float)
    ok = (x > 0) & (f > 0)
    return float(np.sqrt(np.mean(np.log(x[ok] / f[ok]) ** 2))) if ok.any() else 0.0


def next_step(fit, region, sound_span: float = SOUND_SPAN, reach: float = 1.1) -> NextStep | None:
    """The next measurement for a fit whose answer is not yet sound, or None.

    Parameters
    ----------
    fit : ScalabilityFit
        A fitted curve.
    region : Region
        Its likelihood region.
    sound_span : float, optional
        The widest interval (high / low) a sound answer may have (``capmodel.models.evidence.SOUND_SPAN``, 1.25).
    reach : float, default 1.1
        How far above the most the fitted curve shows over the data the interval may reach.

    Returns
    -------
    NextStep or None
        The concurrencies to measure and how many times, when the figure's interval is wider than ``sound_span``,
        unbounded, or reaches beyond ``reach``; None otherwise.
    """
    n = np.asarray(fit.concurrency, dtype=float)
    smallest, largest, levels = float(n.min()), float(n.max()), np.unique(n)
    if region.empty:
        candidates = np.setdiff1d(np.unique(np.round(np.geomspace(max(1.0, smallest), 2 * largest,
                                                                   4 * ENOUGH_LEVELS))), levels)
        wanted = max(1, min(len(candidates), ENOUGH_LEVELS - len(levels)))
        new = tuple(float(v) for v in candidates[np.round(np.linspace(0, len(candidates) - 1, wanted)).astype(int)])
        return NextStep(new, 1, f"measure {plural(len(new), 'more concurrency level')} ({_levels_words(new)}): "
                        "fewer than four points leave the scatter no degree of freedom for an interval, and "
                        f"{ENOUGH_LEVELS} give one worth reading")
    low, high = region.limit_interval()
    shown = float(np.max(fit.fitted))
    width = max(high / low if low > 0 else math.inf, high / shown if shown > 0 else math.inf)
    if width <= sound_span and high <= reach * shown:
        return None
    peak = float(fit.peak_concurrency)
    n_low, _ = region.peak_concurrency_interval()
    means = [float(np.mean(fit.throughput[n == v])) for v in levels]
    if (peak < smallest or (len(levels) > 2 and int(np.argmax(means)) == 0)
            or (n_low < smallest / PAST_FACTOR and peak < PAST_FACTOR * smallest)):
        new = _new_levels(max(1.0, min(peak, smallest) / 4), smallest / 1.5)
        return NextStep(new, 1, f"measure {plural(len(new), 'more concurrency level')} from {number(new[0])} to "
                        f"{number(new[-1])} clients ({_levels_words(new)}): the data start past the peak")
    if not math.isfinite(high) or not math.isfinite(peak) or peak > largest / PAST_FACTOR:
        far = EXTEND_TO * max(peak, largest) if math.isfinite(peak) else 4 * largest
        new = _new_levels(1.3 * largest, min(far, EXTEND_MAX * largest))
        runs = 1 + int(_scatter(fit) > NOISY)          # noisy steps: each new level twice
        each = f", {runs} times each" if runs > 1 else ""
        return NextStep(new, runs, f"measure {plural(len(new), 'more concurrency level')} from {number(new[0])} "
                        f"to {number(new[-1])} clients ({_levels_words(new)}){each} to see the curve turn")
    near = tuple(float(v) for v in levels[levels >= peak / 2])
    per_level = int(np.max(np.unique(n, return_counts=True)[1]))
    asked = (math.log(width) / math.log(TARGET_SPAN)) ** 2 if math.isfinite(width) else math.inf
    repeats = int(min(MAX_REPEATS, max(1, math.ceil(per_level * (asked - 1)))))
    return NextStep(near, repeats, f"repeat the steps at {_levels_words(near)} clients {plural(repeats, 'more time')}"
                    " each, to narrow the peak's interval")
