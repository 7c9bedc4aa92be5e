"""Does the measured throughput fall after its peak by more than noise? A model without a retrograde term (Amdahl,
linear, or a USL whose κ sits at 0) rises for ever, so it cannot describe such a fall: the model choice does not
recommend it (capmodel.models.usl.selection) and the verdict on it says so (capmodel.models.usl.verdict.assessment).

The rule, on the level means (replicates averaged), sorted by concurrency, from the best measured level onward
(the *tail*):

- ``FALL_TOLERANCE`` = 0.05: the last level must lie more than 5% below the best (the tolerance the verdict already
  uses for a model's peak below the data, ``PAST_PEAK_TOLERANCE``); a curve that levels off wobbles by less.
- And beyond noise, judged two ways (either suffices): by the tail itself when it has three or more levels (the
  least-squares line through them falls, its 95% Student t interval for the slope below 0, n - 2 degrees of freedom:
  a trend across several steps, not one low point); or by the scatter of the whole curve around the USL, the model
  that can rise and fall: the drop exceeds ``FALL_NOISE_RSE`` = 2 times √2 of the USL fit's residual standard errors
  (the difference of two points each with that scatter, at about 95%). A tail of one step after the best has only
  the second test.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from capmodel.formatting import number

FALL_TOLERANCE = 0.05
FALL_NOISE_RSE = 2.0
FALL_LEVEL = 0.95


@dataclass(frozen=True)
class MeasuredFall:
    """The best measured level (``best`` ops/s at ``best_n``) and the last (``last`` at ``last_n``); ``fraction`` of
    the best lost; ``beyond_noise``: the fall passes the module's rule; ``how`` says how noise was judged."""

    best: float
    best_n: float
    last: float
    last_n: float
    fraction: float
    beyond_noise: bool
    how: str

    def sentence(self) -> str:
        """The measured fall in words (no full stop)."""
        from capmodel.formatting import number

        return (f"the measured throughput falls from {self.best:,.0f} ops/s at {number(self.best_n, 4)} clients to "
                f"{self.last:,.0f} ops/s at {number(self.last_n, 4)} ({self.fraction:.0%} lower; {self.how})")


def level_means(concurrency, throughput) -> tuple[np.ndarray, np.ndarray]:
    """Distinct concurrencies (sorted) and the mean throughput at each."""
    n = np.asarray(concurrency, dtype=float)
    x = np.asarray(throughput, dtype=float)
    levels = np.unique(n)
    return levels, np.array([x[n == level].mean() for level in levels])


def _slope_upper(n: np.ndarray, x: np.ndarray) -> float:
    """Upper end of the ``FALL_LEVEL`` interval of the least-squares slope of x on n (inf when undefined)."""
    from scipy.special import stdtrit

    dof = len(n) - 2
    centred = n - n.mean()
    sxx = float(centred @ centred)
    if dof < 1 or sxx <= 0:
        return math.inf
    slope = float(centred @ (x - x.mean())) / sxx
    resid = x - x.mean() - slope * centred
    se = math.sqrt(float(resid @ resid) / dof / sxx)
    return slope + float(stdtrit(dof, 0.5 + FALL_LEVEL / 2)) * se


def measured_fall(concurrency, throughput, rse: float = math.nan) -> MeasuredFall | None:
    """The fall after the best measured level (None when the best is the last level or the data are empty).
    ``rse``: the USL fit's residual standard error on the same data (the scatter; see the module docstring)."""
    levels, means = level_means(concurrency, throughput)
    if not len(levels):
        return None
    top = int(np.argmax(means))
    tail_n, tail_x = levels[top:], means[top:]
    if len(tail_n) < 2 or not means[top] > 0:
        return None
    best, last = float(tail_x[0]), float(tail_x[-1])
    fraction = (best - last) / best
    noise = FALL_NOISE_RSE * math.sqrt(2) * rse if math.isfinite(rse) and rse >= 0 else math.inf
    trend = len(tail_n) >= 3 and _slope_upper(tail_n, tail_x) < 0
    if trend:
        how = (f"a straight line through the {len(tail_n)} steps from the best on falls, its slope's "
               f"{FALL_LEVEL:.0%} interval below 0")
    elif best - last > noise:
        how = f"more than {number(FALL_NOISE_RSE, 6)}·√2 residual standard errors of the USL fit ({noise:,.0f} ops/s)"
    else:
        how = "no falling trend beyond the scatter"
    return MeasuredFall(best, float(tail_n[0]), last, float(tail_n[-1]), fraction,
                        bool(fraction > FALL_TOLERANCE and (trend or best - last > noise)), how)


def can_fall(fit) -> bool:
    """Whether the fitted curve turns down inside or past the data (a finite peak)."""
    return math.isfinite(getattr(fit, "peak_concurrency", math.inf))

