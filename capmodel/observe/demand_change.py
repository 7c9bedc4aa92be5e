"""How far the CPU per operation may move between a window's load and saturation, and the capacity interval that
carries it (``capmodel.observe.capacity`` states it).

The bottleneck law X_max = (cores − U₀) / D extrapolates the CPU per operation D that a window measured to the
load at which every core is busy. That is exact only if D stays what it was, and it does not in general:

- it **falls** with load where a cost is paid per wake-up rather than per operation (a thread woken and scheduled, a
  CPU leaving its idle state, a network poll or a journal flush that serves one operation instead of several): an
  operation that finds the server busy shares it. The lab measured this: mongod pinned to one core spent 2.71 ms of
  CPU per operation at 18–34% of the core and 1.96 ms at saturation, +38% at light load, and the laws predicted
  369 ops/s from light load against 495 measured (``benchmarks/bench_headroom.py``, issue 26);
- it may **rise** with load where operations contend (a latch spun on, a write conflict retried).

**The assumption.** At load fraction ρ = X / X_max the CPU per operation is D(ρ) = D_sat·(1 + m·(1 − ρ)), with m
between −``CONTENTION_MAX`` and ``LIGHT_EXTRA_MAX``. The form is the share of operations that find one worker idle
(1 − ρ for Poisson arrivals: ``capmodel.observe.synthetic`` derives it); m = +0.5 gives issue 26's +38% at a quarter
of the load. ``LIGHT_EXTRA_MAX`` = 0.8 is the largest the lab's quiet runs measured: a clean-clone CI run's
light-load CPU per operation was 1.6x its saturation figure at 20–40% of the core (``benchmarks/bench_headroom.py
--record`` prints the runs; runs on a host loaded by other sessions went further, to 2x, which no assumption here
covers).
``CONTENTION_MAX`` = 0.1 is an allowance, not a measurement: no rise was measured here beyond the runs' noise. A
server whose CPU per operation changes by more lies outside the stated interval.

**Which saturations the window allows.** The laws' fit is linear in the CPU: least squares of U on X (or the ratio
ΣU / ΣX) applied to the model's CPU U₀ + D_sat·X·(1 + m) − D_sat·m·X² / X_max gives an intercept
b̂ = U₀ − D_sat·m·a₂ / X_max and a slope d̂ = D_sat·(1 + m − m·s₂ / X_max), where s₂ and a₂ are the slope and intercept
the same fit gives X² on the window's own loads (``load_moments``). With U₀ + D_sat·X_max = cores that is

    X_max² − P·(1 + m)·X_max + m·(P·s₂ + a₂) = 0,    P = (cores − b̂) / d̂ the laws' figure,

whose root near P (``saturation_if``) is the saturation the window implies if the CPU per operation changes by m; at
m = 0 it is P (the throughput at the utilization target follows the same way: ``planned_if``). The interval's high
end is the largest root over m in [−``CONTENTION_MAX``, ``LIGHT_EXTRA_MAX``] from the bootstrap's high end, its low
end the smallest from the bootstrap's low end: far from saturation the band is wide (up to +80% at no load), at
saturation it closes. Without a regression that bounds the CPU per operation (a load too even to separate the
background) the background may be any share of the CPU, and no high end can be stated: the capacity is at least the
low end of the ratio's figure.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from capmodel.formatting import number
from capmodel.models.estimate import Estimate
from capmodel.models.evidence import SOUND_SPAN, NextStep, Reason

#: the CPU per operation at no load at most this share above its saturation figure (the lab's quiet runs: up to
#: 1.6x at a quarter of the load, m ≈ 0.8)
LIGHT_EXTRA_MAX = 0.8
#: ... and at most this share below it (contention; an allowance, not a measurement)
CONTENTION_MAX = 0.1
#: the reason code of a capacity bounded below only: the background CPU cannot be told from the operations' CPU
BACKGROUND_UNKNOWN = "background_not_separable"
#: what lifts an answer whose background the load could not tell apart
EVEN_LOAD_STEP = NextStep((), 0, "observe a window whose load varies, its busiest intervals at least 1.5 times its "
                          "quietest (a whole day, say)")
#: the changes m evaluated between the two ends of the assumption (the interval's ends are the extremes over them)
CHANGE_STEPS = 9
#: a next step aims at this share of the sound span, so that a window as advised lands inside it
MARGIN = 0.95


def load_moments(x: np.ndarray, with_intercept: bool) -> tuple[float, float]:
    """(s₂, a₂): the slope and intercept the laws' fit of U on X gives the column X² of the window's loads ``x``
    (least squares with an intercept; the ratio ΣX² / ΣX and no intercept without)."""
    x = np.asarray(x, dtype=float)
    if not with_intercept:
        return float((x * x).sum() / x.sum()), 0.0
    xc = x - x.mean()
    spread = float(xc @ xc)
    if spread <= 0:
        return float((x * x).sum() / x.sum()), 0.0
    s2 = float(xc @ (x * x)) / spread
    return s2, float((x * x).mean() - s2 * x.mean())


def saturation_if(p: float, m: float, s2: float, a2: float) -> float:
    """The saturation throughput a window implies whose laws' figure is ``p`` if the CPU per operation changes by
    ``m`` up to saturation (the module's quadratic; its root near ``p``, never below it for m > 0 nor above for
    m < 0)."""
    if m == 0 or not (math.isfinite(p) and p > 0):
        return p
    c = m * (p * s2 + a2)
    disc = (p * (1 + m)) ** 2 - 4 * c
    root = 0.5 * (p * (1 + m) + math.sqrt(max(disc, 0.0)))
    return max(root, p) if m > 0 else min(root, p)


def planned_if(p: float, p_u: float, m: float, s2: float, a2: float) -> float:
    """The throughput at the utilization target the same window implies (``p_u``: the laws' figure for it), with the
    CPU per operation changing by ``m``: the root below saturation of X·(1 + m) − m·X² / X_max = β·p_u + α, where
    β = 1 + m − m·s₂ / X_max and α = −m·a₂ / X_max are what the fit made of the model's CPU."""
    if m == 0 or not (math.isfinite(p_u) and p_u > 0):
        return p_u
    x_max = saturation_if(p, m, s2, a2)
    need = (1 + m - m * s2 / x_max) * p_u - m * a2 / x_max
    if need <= 0:
        return p_u
    b = 1 + m
    disc = b * b - 4 * m / x_max * need
    return 2 * need / (b + math.sqrt(max(disc, 0.0)))


@dataclass(frozen=True)
class ChangeBand:
    """The capacity figures' intervals once the possible change of the CPU per operation is carried: ``saturation``
    and ``planned`` (``Estimate``s: the laws' figures, their ends the extremes over the changes allowed, the high
    end infinite where the background cannot be told apart), and the share of the
    saturation interval's width (in log) that the change, not the noise, makes (``band_share``)."""

    saturation: Estimate
    planned: Estimate
    band_share: float

    @property
    def span(self) -> float:
        """high / low of the saturation interval (inf when one-sided)."""
        s = self.saturation
        return s.high / s.low if s.low > 0 and math.isfinite(s.high) else math.inf


def change_band(saturation: Estimate, planned: Estimate, x: np.ndarray, with_intercept: bool,
                bounded_above: bool, above_target: bool = False) -> ChangeBand:
    """The laws' ``saturation`` and ``planned`` estimates (their intervals the bootstrap's: the noise, of the fit
    ``with_intercept`` or not) widened by the change of the CPU per operation the module's assumption allows over the
    window's loads ``x``: each end the extreme over the changes allowed. Not ``bounded_above`` (the background
    unknown: the ratio of CPU to operations states the figure), the high ends are infinite and the low ends assume no
    background: the ratio then overstates the CPU per operation, so its capacity is a lower bound, but only above the
    window's CPU: where the utilization target lies below it (``above_target``: the window's mean CPU above the
    target's), the planned throughput has no lower bound (0)."""
    s2, a2 = load_moments(x, with_intercept)
    # each end the extreme over the changes allowed (the planned figure need not move monotonically with m: a target
    # inside the window's loads is interpolated, and any change bends the line through them both ways)
    changes = np.linspace(-CONTENTION_MAX, LIGHT_EXTRA_MAX if bounded_above else 0.0, CHANGE_STEPS)
    low = min(saturation_if(saturation.low, m, s2, a2) for m in changes)
    plan_low = min(planned_if(saturation.low, planned.low, m, s2, a2) for m in changes)
    if bounded_above:
        high = max(saturation_if(saturation.high, m, s2, a2) for m in changes)
        plan_high = max(planned_if(saturation.high, planned.high, m, s2, a2) for m in changes)
    else:
        high = plan_high = math.inf
        if above_target:        # the background may be any share: below the window's CPU, no lower bound either
            plan_low = 0.0
    sat = Estimate(saturation.estimate, min(low, saturation.estimate), max(high, saturation.estimate))
    plan = Estimate(planned.estimate, min(plan_low, planned.estimate), max(plan_high, planned.estimate))
    noise = math.log(saturation.high / saturation.low) if saturation.low > 0 and saturation.high > 0 else 0.0
    total = math.log(sat.high / sat.low) if sat.low > 0 else math.inf
    share = 1.0 - noise / total if total > 0 and math.isfinite(total) else (1.0 if math.isinf(total) else 0.0)
    return ChangeBand(sat, plan, share)


def busier_utilization(noise_span: float, sound_span: float, background_share: float) -> float | None:
    """The mean CPU utilization (a share of the cores) a window must reach for the saturation interval to be at
    most ``sound_span`` wide when the noise alone makes it ``noise_span`` (None when the noise alone is too wide: a
    busier window does not help). Solves (1 + E·y)·(1 + K·y) = sound_span / noise_span for the idle share y = 1 − ρ
    (the band at a steady load ρ, which bounds that of a window spread around it), then says it as the CPU such a
    load uses whatever the change: the background's share plus ρ·(1 + E·y) of the rest, since a CPU per operation
    above its saturation figure makes a given CPU a lighter load than it looks."""
    room = sound_span / noise_span
    if room <= 1:
        return None
    e, k = LIGHT_EXTRA_MAX, CONTENTION_MAX
    y = (-(e + k) + math.sqrt((e + k) ** 2 + 4 * e * k * (room - 1))) / (2 * e * k)
    rho = max(0.0, 1.0 - y)
    return min(1.0, background_share + rho * (1 - background_share) * (1 + e * y))


def change_reasons(band: ChangeBand, noise_span: float, used: float, cores: str, background_share: float,
                   load_varied: bool) -> list[Reason]:
    """The verdict on the capacity's interval (the grade rule lives here): one-sided, the answer is only a lower
    bound (unusable, with the window that would bound it above); wider than ``SOUND_SPAN``, weak, named by what
    widens it more (the extrapolation to saturation, or the noise), each with the window that would narrow it.
    ``noise_span``: the interval's span from the bootstrap alone; ``used``: the busiest intervals' share of the
    ``cores`` (in words)."""
    sat = band.saturation
    if not math.isfinite(sat.high):
        why = ("the load varied too little to separate background CPU from CPU per operation (its busiest intervals "
               "under 1.5 times its quietest)" if not load_varied else "the server's CPU did not rise with its load")
        return [Reason(BACKGROUND_UNKNOWN, "unusable", f"{why}: the background may be any share of the CPU, so the "
                       f"capacity is bounded below only, at {number(sat.low)} ops/s", sat.low, EVEN_LOAD_STEP)]
    if band.span <= SOUND_SPAN:
        return []
    between = f"saturation lies between {number(sat.low)} and {number(sat.high)} ops/s"
    longer = _longer(noise_span, band.span / noise_span)
    if band.band_share >= 0.5:
        busier = busier_utilization(noise_span, SOUND_SPAN * MARGIN, background_share)
        advice = (f"observe a busier window, its CPU at {busier:.0%} of the cores or more on average" if busier else
                  f"observe a busier window, and {longer}" if longer else "observe a busier and longer window")
        return [Reason("extrapolated", "weak", f"the busiest intervals used {used:.0%} of the {cores}: the capacity "
                       "is extrapolated from there to full use, where the CPU per operation may be lower (costs "
                       "shared by more operations: the lab measured 38% to 60% more at light load than at saturation) "
                       f"or a little higher (contention), so {between}", used, NextStep((), 0, advice))]
    step = (EVEN_LOAD_STEP if not load_varied else NextStep((), 0, longer or "observe a longer window"))
    return [Reason("noisy_demand", "weak", f"the CPU per operation is measured too noisily for a figure within "
                   f"{SOUND_SPAN - 1:.0%}: {between}", noise_span, step)]


def _longer(noise_span: float, band_span: float) -> str:
    """'observe a window N times as long' (an interval narrows with the square root of the intervals behind it),
    so that the noise fits beside the band within the sound span; '' when it cannot (the band alone is too wide)."""
    room = SOUND_SPAN * MARGIN / band_span
    if room <= 1 or noise_span <= 1:
        return ""
    times = math.ceil((math.log(noise_span) / math.log(room)) ** 2)
    return f"observe a window {times} times as long" if times > 1 else ""
