"""Capacity of one VM: the usable throughput under a utilization target and a latency target, and which of
the two binds.

Usable throughput = min(a, b): (a) the throughput at the utilization target (the utilization law X = U / D, from the
measured utilization, or a fraction of the fitted USL peak) and (b) the largest throughput whose latency meets the
target (``capmodel.models.usl.closed_form.latency_limit`` on the rising side, capped at the peak). Users per VM = usable
throughput / ops per user.

The latency target is a p95; the USL gives the mean (Little's-law) response time N/X. The target is held against the
mean scaled by the p95/mean ratio the measured points show (median of measured p95 / N/X), or, with no p95 measured,
against the mean itself; the result's description says which, and its evidence flags the second case.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import numpy as np

from capmodel.constraints import UTILIZATION_TARGET, Number, checked, range_words, with_name
from capmodel.errors import PlanError
from capmodel.formatting import number
from capmodel.models.evidence import Evidence, NextStep, Reason
from capmodel.models.usl.closed_form import (
    LatencyLimit,
    concurrency_for_throughput,
    latency_limit,
    latency_throughput,
    usl_peak,
)
from capmodel.plan.checks import FRACTION, LARGEST, POSITIVE, SMALLEST
from capmodel.plan.latency import p95_ratio_interval, p95_ratio_reason, p95_to_mean_ratio

# What each objective may be: plan/checks.py's fraction and positive figure, named as the messages and the command
# line say it (capmodel.constraints).
OBJECTIVE_CONSTRAINTS = {
    "utilization_target": with_name(UTILIZATION_TARGET, "utilization target"),   # one range in every command
    "peak_fraction": with_name(FRACTION, "peak fraction"),
    "latency_p95_ms": with_name(POSITIVE, "latency target",
                                wanted_text=f"a positive number of milliseconds ({range_words(SMALLEST, LARGEST)})"),
    "latency_increase": Number(float, 0.0, LARGEST, name="latency increase", wanted_text="a fraction >= 0"),
}


@dataclass(frozen=True)
class Objectives:
    """What a VM must satisfy under a plan: a utilization target, a fraction of the USL peak, a latency target.

    Parameters
    ----------
    utilization_target : float or None, default 0.8
        The CPU utilization to plan at (0–1).
    peak_fraction : float, optional
        The throughput at most this fraction of the fitted peak (or ceiling); fitted VMs only.
    latency_p95_ms : float, optional
        An absolute p95 target, in ms.
    latency_increase : float, optional
        A relative one: 0.05 for a p95 no more than 5 % above the baseline's (``plan_vms`` takes the baseline's p95
        from its baseline VM). Not with ``latency_p95_ms``.

    Raises
    ------
    PlanError
        A value is out of range, or both latency targets are given.
    """

    utilization_target: float | None = 0.8
    peak_fraction: float | None = None
    latency_p95_ms: float | None = None
    latency_increase: float | None = None

    def __post_init__(self):
        checked(OBJECTIVE_CONSTRAINTS, vars(self), PlanError)
        if self.latency_p95_ms is not None and self.latency_increase is not None:
            raise PlanError("give either an absolute latency target or a relative one, not both")

    @property
    def has_latency(self) -> bool:
        return self.latency_p95_ms is not None or self.latency_increase is not None

    def latency_target_ms(self, baseline_p95_ms: float | None = None) -> float | None:
        """The p95 target in milliseconds: the absolute one, or the baseline's p95 raised by the allowed increase
        (None without a latency objective)."""
        if self.latency_p95_ms is not None:
            return float(self.latency_p95_ms)
        if self.latency_increase is None:
            return None
        if baseline_p95_ms is None or not (math.isfinite(baseline_p95_ms) and baseline_p95_ms > 0):
            raise PlanError(f"a relative latency target (p95 no more than {self.latency_increase:.0%} above the "
                            f"baseline's) needs the baseline's p95 in milliseconds, got {baseline_p95_ms!r}")
        return float(baseline_p95_ms) * (1 + self.latency_increase)

    def describe(self, on_peak=False) -> str:
        """The objectives in words. ``on_peak``: the utilization target was applied to the fitted peak because no CPU
        utilization was measured, for every VM (True) or for the VMs named (a list)."""
        parts = []
        if self.utilization_target is not None:
            share = f"{self.utilization_target:.0%}"
            if on_peak is True:
                parts.append(f"throughput at most {share} of the fitted peak (the utilization target, with no CPU "
                             "utilization measured)")
            elif on_peak:
                parts.append(f"utilization at most {share} ({share} of the fitted peak for {', '.join(on_peak)}: no "
                             "CPU utilization measured)")
            else:
                parts.append(f"utilization at most {share}")
        if self.peak_fraction is not None:
            parts.append(f"throughput at most {self.peak_fraction:.0%} of the fitted peak (or ceiling)")
        if self.latency_p95_ms is not None:
            parts.append(f"p95 at most {number(self.latency_p95_ms, 6)} ms")
        if self.latency_increase is not None:
            parts.append(f"p95 no more than {self.latency_increase:.0%} above the baseline's")
        return ", ".join(parts) or "none"


def throughput_at_utilization_target(measured: float, utilization: float | None, objectives: Objectives) -> float:
    """Throughput at the utilization target from one measured point (utilization law: X scales with U)."""
    if objectives.utilization_target is None or utilization is None:
        return measured
    return measured * objectives.utilization_target / utilization




@dataclass
class FitCapacity:
    """The capacity of a VM read off its fitted curve, as ``capacity_from_fit`` returns it.

    ``*_low`` and ``*_high`` are the ``level`` interval over the fit's likelihood region (infinite where the data do
    not bound it). ``table`` and ``describe()`` show it.

    Attributes
    ----------
    throughput : float
        Throughput at the binding objective, ops/s.
    latency_throughput : float
        Throughput at the latency target (NaN without one).
    usable_throughput : float
        The throughput planned on, ops/s.
    binding_limit : str
        The objective that binds (``utilization``, ``peak_fraction``, ``latency``).
    operating_concurrency : float
        The concurrency at the usable throughput.
    peak_concurrency, peak_throughput : float
        The fitted peak.
    limits : dict
        ``{objective: ops/s}``, every objective's limit.
    latency : LatencyLimit or None
        The solver's answer for the latency target.
    latency_target_ms : float or None
        The p95 target it was held to.
    latency_basis : str
        How p95 was mapped to the model's mean response time (p95 = ``latency_p95_ratio`` × N/X).
    evidence : Evidence
        The verdict on the plan.
    """

    throughput: float
    latency_throughput: float
    usable_throughput: float
    binding_limit: str
    operating_concurrency: float
    peak_concurrency: float
    peak_throughput: float
    latency_basis: str = ""
    throughput_low: float = math.nan
    throughput_high: float = math.nan
    usable_throughput_low: float = math.nan
    usable_throughput_high: float = math.nan
    limits: dict = field(default_factory=dict)
    objectives: Objectives | None = None
    latency: LatencyLimit | None = None
    latency_target_ms: float | None = None
    latency_p95_ratio: float = 1.0
    level: float = 0.95
    evidence: Evidence = field(default_factory=Evidence)
    #: the utilization target was applied to the fitted peak: the curve has no CPU utilization (cpu_util)
    utilization_on_peak: bool = False

    @property
    def table(self):
        """The capacity as a table (figure, value), for display."""
        import pandas as pd

        rows = {"usable throughput (ops/s)": self.usable_throughput, "binding limit": self.binding_limit,
                "operating concurrency": self.operating_concurrency,
                "throughput at the utilization target (ops/s)": self.throughput,
                "throughput at the latency target (ops/s)": self.latency_throughput,
                "peak concurrency": self.peak_concurrency, "peak throughput (ops/s)": self.peak_throughput,
                "evidence": self.evidence.grade}
        rows.update({f"limit: {k} (ops/s)": v for k, v in self.limits.items()})
        return pd.DataFrame({"value": rows}).rename_axis("figure")

    def limit_words(self, name: str | None = None, peak: str = "peak") -> str:
        """An objective's limit in plain words, the binding one unless ``name`` is given: "p95 at most 12 ms",
        "utilization at most 80% of the fitted peak" (``peak``: "ceiling" for a curve with none)."""
        from capmodel.formatting import percent

        name = self.binding_limit if name is None else name
        objectives = self.objectives
        if name == "latency" and self.latency_target_ms is not None:
            return f"p95 at most {number(self.latency_target_ms, 6)} ms"
        if name == "peak_fraction" and objectives is not None and objectives.peak_fraction is not None:
            return f"throughput at most {percent(objectives.peak_fraction)} of the fitted {peak}"
        if name == "utilization" and objectives is not None and objectives.utilization_target is not None:
            of = f" of the fitted {peak}" if self.utilization_on_peak else " CPU"
            return f"utilization at most {percent(objectives.utilization_target)}{of}"
        return name.replace("_", " ")

    def _unreachable_text(self) -> str:
        """Why no load meets the latency target, in p95 terms (the solver works on the mean response time)."""
        assert self.latency is not None, "a latency target was asked"
        fastest = self.latency.zero_load_seconds * self.latency_p95_ratio * 1000.0
        return (f"no load meets p95 at most {number(self.latency_target_ms, 4)} ms: even at the lightest load (one "
                f"client) the fitted p95 is {number(fastest, 4)} ms")

    def _latency_sentence(self) -> str:
        if self.latency is None or not self.latency.reachable:
            return ""
        target = f"p95 at most {number(self.latency_target_ms, 4)} ms"
        if self.latency.reason == "unbounded":
            return f" The latency target ({target}) never binds: the fitted response time does not grow with load."
        if self.latency.reason == "capped_at_peak":
            return (f" The latency target ({target}) is met all the way to the fitted peak "
                    f"({self.peak_throughput:,.0f} ops/s); p95 taken as {self.latency_basis}.")
        return (f" The latency target ({target}) is reached at {self.latency.throughput:,.0f} ops/s; p95 taken as "
                f"{self.latency_basis}.")

    def describe(self, ops_per_user: float | None = None) -> str:
        """The capacity in words (markdown) with its interval and its evidence, with the users it serves at
        ``ops_per_user`` ops/s each; no throughput is stated when the latency target cannot be met at all, and only
        the lower end of its interval when the evidence is unusable."""
        from capmodel.formatting import shows_width

        under = (f"Planned with {self.objectives.describe(on_peak=self.utilization_on_peak)}"
                 if self.objectives is not None else "Planned")
        if self.latency is not None and not self.latency.reachable:
            return (f"{under}: **{self._unreachable_text()}** (p95 taken as {self.latency_basis}). "
                    + self.evidence.describe())
        if not self.evidence.usable:
            low = self.usable_throughput_low
            floor = (f"; they support at least {number(low)} ops/s (the lower end of its {self.level:.0%} interval)"
                     if math.isfinite(low) and low > 0 else "")
            return f"{under}: **the data cannot support a capacity figure**{floor}. " + self.evidence.describe()
        low, high = self.usable_throughput_low, self.usable_throughput_high
        range_words = (f" ({self.level:.0%} interval {number(low)} to {number(high)})"
                if shows_width(low, high) else "")
        text = (f"{under}, this server sustains **{number(self.usable_throughput)} ops/s**{range_words} at about "
                f"{number(self.operating_concurrency)} concurrent clients (binding limit: {self.binding_limit})")
        if ops_per_user:
            users = self.usable_throughput / ops_per_user
            text += f"; at {number(ops_per_user, 6)} ops/s per user that is **{number(users)} users**"
        return text + "." + self._latency_sentence() + " " + self.evidence.describe()


def describe_capacity(fit, objectives: Objectives, ops_per_user: float | None = None,
                      baseline_p95_ms: float | None = None) -> str:
    """``capacity_from_fit(...).describe(ops_per_user)``, or why the curve gives no plan (nothing to plan against)."""
    try:
        return capacity_from_fit(fit, objectives, baseline_p95_ms=baseline_p95_ms).describe(ops_per_user)
    except PlanError as exc:
        return f"**No plan from this curve**: {exc}."


def curve_service_demand(curve) -> float | None:
    """Seconds of CPU per operation, median of cpu_util / throughput over the measured points (None without)."""
    if "cpu_util" not in curve.columns:
        return None
    ok = curve[(curve["throughput"] > 0) & curve["cpu_util"].notna() & (curve["cpu_util"] > 0)]
    if ok.empty:
        return None
    return float(np.median(ok["cpu_util"] / ok["throughput"]))


def _latency(sigma, kappa, lambda_, latency_seconds) -> LatencyLimit:
    """The most throughput whose mean response time meets the target: the rising side, capped at the peak."""
    return latency_limit(latency_seconds, sigma, kappa, lambda_, branch="normal", cap_at_peak=True)


def _limits(sigma, kappa, lambda_, objectives, demand, latency_seconds) -> dict:
    """Throughput allowed by each objective (name -> ops/s; 0 when no load meets the latency target), for one
    parameter set or for arrays of them at once (a likelihood region's)."""
    _, x_peak = usl_peak(sigma, kappa, lambda_)
    limits = {}
    if objectives.utilization_target is not None:
        if demand is not None:
            limits["utilization"] = np.minimum(objectives.utilization_target / demand, x_peak)
        else:
            limits["utilization"] = objectives.utilization_target * x_peak   # inf for a linear curve
    if objectives.peak_fraction is not None:
        limits["peak_fraction"] = objectives.peak_fraction * x_peak
    if latency_seconds is not None:
        limits["latency"] = latency_throughput(latency_seconds, sigma, kappa, lambda_)
    return limits


def _headroom(limits: dict):
    """The throughput at the utilization objectives (the latency target's when it is the only objective)."""
    headroom = [v for k, v in limits.items() if k != "latency"]
    return np.minimum.reduce(headroom) if headroom else limits["latency"]


def _evidence(fit, result: FitCapacity, p95_measured: bool, comparison=None, from_peak: bool = False) -> Evidence:
    """The verdict on a capacity plan: what the curve and the fit say against any answer, the planned capacity's
    own interval (``check_interval``: unbounded unusable, wider than a sound answer holds weak), the fit's verdict
    on its peak when the capacity is read off the peak (``from_peak``: a share of it, or a latency target met up to
    it), and the latency target's fate."""
    from capmodel.models.usl.verdict.assessment import answer_region, check_interval, data_reasons, limit_reasons
    from capmodel.models.usl.verdict.next_step import next_step

    region = answer_region(fit, comparison, result.level)
    reasons: list[Reason | None] = list(data_reasons(fit, comparison))
    if from_peak:
        said = {(r.code, r.message) for r in reasons if r is not None}
        reasons += [r for r in limit_reasons(fit, region) if (r.code, r.message) not in said
                    and r.code != "wide_interval"]
        reasons.append(_below_best(fit))
    latency = result.latency
    if latency is not None and not latency.reachable:
        reasons.append(Reason("latency_unreachable", "unusable", f"the latency target is unreachable: "
                              f"{result._unreachable_text()}", result.latency_target_ms))
    else:
        reasons.append(check_interval(result.usable_throughput_low, result.usable_throughput_high,
                                      "the planned capacity", result.level,
                                      advice=None if region.empty else next_step(fit, region, sound_span=1.0)))
    if latency is not None and latency.reachable and result.binding_limit == "latency" and \
            latency.reason == "capped_at_peak":
        reasons.append(Reason("latency_past_peak", "weak", "the latency target is crossed only past the peak, "
                              "on the retrograde branch, so the plan runs the server at its fitted peak, where "
                              "throughput is flat and latency climbs fastest", result.peak_concurrency))
    if latency is not None:
        reasons.append(p95_ratio_reason(result.latency_p95_ratio, result.latency_basis))
    target = result.objectives.utilization_target if result.objectives is not None else None
    if result.utilization_on_peak and result.binding_limit == "utilization" and target is not None:
        reasons.append(utilization_on_peak_reason(target))
    if latency is not None and not p95_measured:
        reasons.append(Reason("p95_not_measured", "weak", "no p95 latency was measured: the p95 target is held "
                              "against the mean response time N/X, which understates the tail", None))
    evidence = Evidence.of(*reasons)
    if not evidence.usable:       # said of a plan the answer states, not of one it withholds
        evidence = Evidence(tuple(r for r in evidence.reasons if r.code not in ("below_best", "utilization_assumed")))
    return evidence


def utilization_on_peak_reason(target: float) -> Reason:
    """A utilization target applied to the fitted peak, no CPU utilization having been measured: an assumption (that
    the CPU is saturated at the peak), graded as a plan's assumed utilization is (``assess_measured_vm``)."""
    return Reason("utilization_assumed", "weak", f"no CPU utilization (cpu_util) was measured: the {target:.0%} "
                  f"utilization target is taken as {target:.0%} of the fitted peak, as if the CPU were saturated at "
                  "the peak", float(target),
                  NextStep((), 0, "measure the server's CPU utilization (cpu_util) at each step of the curve"))


def _below_best(fit) -> Reason | None:
    """A plan read off a fitted peak or ceiling below the best measured throughput (by more than the 5% the past-peak
    check allows, but within the scatter, where that check leaves it): weak, so the page says why its plan is below
    what the server measured."""
    from capmodel.models.usl.verdict.limits import PAST_PEAK_TOLERANCE, best_measured, model_limit

    kind, limit = model_limit(fit)
    best, at = best_measured(fit)
    if not (math.isfinite(limit) and best > limit * (1 + PAST_PEAK_TOLERANCE)):
        return None
    return Reason("below_best", "weak", f"the plan is read off the fitted {kind} ({number(limit)} ops/s), "
                  f"{best / limit - 1:.0%} below the best measured ({number(best)} ops/s at {number(at)} clients): the "
                  "server delivered more than the fitted curve allows, within the measurements' scatter",
                  best / limit)


def capacity_from_fit(fit, objectives: Objectives, level: float = 0.95, *, baseline_p95_ms: float | None = None,
                      comparison=None) -> FitCapacity:
    """The usable throughput of a fitted VM under the objectives, with its interval.

    Each objective gives a throughput limit (the utilization target, a fraction of the peak, the latency target); the
    lowest binds. The interval is the range the usable throughput takes over the fit's likelihood region (over the
    compared models' families when ``comparison`` chose the fit), the p95/mean ratio's interval included for a latency
    target.

    Parameters
    ----------
    fit : USLFit or ScalabilityFit
        A fitted curve (``capmodel.fit_usl``).
    objectives : Objectives
        What the VM must satisfy.
    level : float, default 0.95
        The interval's coverage, strictly between 0 and 1.
    baseline_p95_ms : float, optional
        The baseline's p95, needed by a relative latency target (``Objectives.latency_increase``).
    comparison : ModelComparison, optional
        The comparison that chose ``fit`` (``compare_models``).

    Returns
    -------
    FitCapacity

    Raises
    ------
    PlanError
        ``level`` is out of range, no objective is given, or a relative latency target lacks the baseline's p95.

    Examples
    --------
    >>> import capmodel
    >>> from capmodel.plan import Objectives, capacity_from_fit
    >>> fit = capmodel.fit_usl(capmodel.datasets.load_curve("usl_specsdm91"))
    >>> capacity = capacity_from_fit(fit, Objectives(utilization_target=0.8))
    >>> round(capacity.usable_throughput), capacity.binding_limit
    (1507, 'utilization')
    >>> round(capacity.usable_throughput_low), round(capacity.usable_throughput_high)
    (1308, 1962)
    """
    from capmodel.models.usl.verdict.assessment import answer_region

    if isinstance(level, bool) or not isinstance(level, numbers.Real) or not 0 < level < 1:
        raise PlanError(f"level must be a confidence level between 0 and 1, got {level!r}")
    target_ms = objectives.latency_target_ms(baseline_p95_ms)
    demand = curve_service_demand(fit.curve)
    ratio, basis = p95_to_mean_ratio(fit.curve)
    seconds = None if target_ms is None else target_ms / 1000.0 / ratio
    limits = {k: float(v) for k, v in _limits(fit.sigma, fit.kappa, fit.lambda_, objectives, demand, seconds).items()}
    if not limits:
        raise PlanError("nothing to plan a fitted curve against: give a utilization target, a peak fraction or a "
                        "latency target")
    throughput = float(_headroom(limits))
    binding = min(limits, key=limits.get)
    usable = limits[binding]
    latency = None if seconds is None else _latency(fit.sigma, fit.kappa, fit.lambda_, seconds)
    region = answer_region(fit, comparison, level).only("usl")     # the USL family's closed forms read it
    ratio_low, ratio_high = p95_ratio_interval(fit.curve, level) if seconds is not None else (ratio, ratio)
    heads, usables = [], []
    for r in (ratio_low, ratio_high):
        at = None if target_ms is None else target_ms / 1000.0 / r
        heads.append(region.interval(lambda s, k, lam, f: _headroom(_limits(s, k, lam, objectives, demand, at))))
        usables.append(region.interval(
            lambda s, k, lam, f: np.minimum.reduce(list(_limits(s, k, lam, objectives, demand, at).values()))))
    result = FitCapacity(
        throughput=throughput, latency_throughput=limits.get("latency", math.nan), usable_throughput=usable,
        binding_limit=binding,
        operating_concurrency=(concurrency_for_throughput(usable, fit.sigma, fit.kappa, fit.lambda_)
                               if 0 < usable < math.inf else (0.0 if usable == 0 else math.inf)),
        peak_concurrency=fit.peak_concurrency, peak_throughput=fit.peak_throughput,
        latency_basis=basis if seconds is not None else "", limits=limits, objectives=objectives,
        latency=latency, latency_target_ms=target_ms, latency_p95_ratio=ratio,
        throughput_low=min(h[0] for h in heads), throughput_high=max(h[1] for h in heads),
        usable_throughput_low=min(u[0] for u in usables), usable_throughput_high=max(u[1] for u in usables),
        level=level, utilization_on_peak=demand is None and objectives.utilization_target is not None,
    )
    from_peak = (binding == "peak_fraction" or (binding == "utilization" and demand is None)
                 or (binding == "latency" and latency is not None and latency.reason == "capped_at_peak"))
    result.evidence = _evidence(fit, result, p95_measured=basis.startswith("p95"), comparison=comparison,
                                from_peak=from_peak)
    return result
