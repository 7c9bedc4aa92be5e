"""Capacity of one VM: the usable throughput under a utilization/headroom target and a latency target, and which of
the two binds.

Usable throughput = min(a, b): (a) the throughput at the utilization target (the utilization law X = U / D, from the
measured utilization, or a fraction of the fitted USL peak) and (b) the largest throughput whose latency meets the
target. Users per VM = usable throughput / ops per user.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from capmodel.errors import PlanError
from capmodel.plan.checks import fraction
from capmodel.plan.intervals import percentile_interval
from capmodel.plan.latency import p95_to_mean_ratio
from capmodel.plan.scaling import concurrency_for_response_time, concurrency_for_throughput, peak, usl


@dataclass(frozen=True)
class Objectives:
    """What a VM must satisfy: utilization (headroom) target, fraction of the USL peak, latency target.

    ``latency_p95_ms`` is absolute; ``latency_increase`` is relative (0.05: p95 no more than 5% above the baseline's).
    """

    utilization_target: float | None = 0.8
    peak_fraction: float | None = None
    latency_p95_ms: float | None = None
    latency_increase: float | None = None

    def __post_init__(self):
        fraction(self.utilization_target, "utilization target")
        fraction(self.peak_fraction, "peak fraction")
        if self.latency_p95_ms is not None and not (math.isfinite(self.latency_p95_ms) and self.latency_p95_ms > 0):
            raise PlanError(f"latency target must be a positive number of milliseconds, got {self.latency_p95_ms!r}")
        if self.latency_increase is not None and not (math.isfinite(self.latency_increase)
                                                      and self.latency_increase >= 0):
            raise PlanError(f"latency increase must be a fraction >= 0, got {self.latency_increase!r}")
        if self.latency_p95_ms is not None and self.latency_increase is not None:
            raise PlanError("give either an absolute latency target or a relative one, not both")

    @property
    def has_latency(self) -> bool:
        return self.latency_p95_ms is not None or self.latency_increase is not None

    def describe(self) -> str:
        parts = []
        if self.utilization_target is not None:
            parts.append(f"utilization <= {self.utilization_target:.0%}")
        if self.peak_fraction is not None:
            parts.append(f"throughput <= {self.peak_fraction:.0%} of the fitted peak")
        if self.latency_p95_ms is not None:
            parts.append(f"p95 <= {self.latency_p95_ms:g} ms")
        if self.latency_increase is not None:
            parts.append(f"p95 no more than {self.latency_increase:.0%} above the baseline's")
        return ", ".join(parts) or "none"


def headroom_throughput(measured: float, utilization: float | None, objectives: Objectives) -> float:
    """Throughput at the utilization target from one measured point (utilization law: X scales with U)."""
    if objectives.utilization_target is None or utilization is None:
        return measured
    return measured * objectives.utilization_target / utilization


@dataclass
class FitCapacity:
    """Capacity of a VM read off its fitted curve; ``*_low``/``*_high`` from the bootstrap (NaN without one)."""

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

    def table(self):
        """The capacity as a two-column table (figure, value) for display."""
        import pandas as pd

        rows = {"usable throughput (ops/s)": self.usable_throughput, "binding limit": self.binding_limit,
                "operating concurrency": self.operating_concurrency,
                "throughput at the headroom target (ops/s)": self.throughput,
                "throughput at the latency target (ops/s)": self.latency_throughput,
                "peak concurrency": self.peak_concurrency, "peak throughput (ops/s)": self.peak_throughput}
        rows.update({f"limit: {k} (ops/s)": v for k, v in self.limits.items()})
        return pd.DataFrame({"value": rows}).rename_axis("figure")

    def describe(self, ops_per_user: float | None = None) -> str:
        """The capacity in words (markdown), with the users it serves at ``ops_per_user`` ops/s each."""
        under = f"Planned with {self.objectives.describe()}, " if self.objectives is not None else ""
        text = (f"{under}this server sustains **{self.usable_throughput:,.0f} ops/s** at about "
                f"{self.operating_concurrency:.0f} concurrent clients (binding limit: {self.binding_limit})")
        if ops_per_user:
            users = self.usable_throughput / ops_per_user
            text += f"; at {ops_per_user:g} ops/s per user that is **{users:,.0f} users**"
        return text + "."


def describe_capacity(fit, objectives: Objectives, latency_target_ms: float | None = None,
                      ops_per_user: float | None = None) -> str:
    """``capacity_from_fit(...).describe(ops_per_user)``, or why the curve gives no plan (e.g. no peak in sight)."""
    try:
        return capacity_from_fit(fit, objectives, latency_target_ms).describe(ops_per_user)
    except PlanError as exc:
        return f"**No plan from this curve**: {exc}."


def _service_demand(curve) -> float | None:
    """Seconds of CPU per operation, median of cpu_util / throughput over the measured points (None without)."""
    if "cpu_util" not in curve.columns:
        return None
    ok = curve[(curve["throughput"] > 0) & curve["cpu_util"].notna() & (curve["cpu_util"] > 0)]
    if ok.empty:
        return None
    return float(np.median(ok["cpu_util"] / ok["throughput"]))


def _limits(sigma, kappa, lambda_, objectives, demand, latency_seconds) -> dict[str, float]:
    """Throughput allowed by each objective for one parameter set (name -> ops/s)."""
    n_peak, x_peak = peak(sigma, kappa, lambda_)
    limits = {}
    if objectives.utilization_target is not None:
        if demand is not None:
            limits["utilization"] = min(objectives.utilization_target / demand, x_peak)
        else:
            limits["utilization"] = objectives.utilization_target * x_peak   # inf for a linear curve: refused below
    if objectives.peak_fraction is not None:
        limits["peak_fraction"] = objectives.peak_fraction * x_peak
    if latency_seconds is not None:
        n_lat = min(concurrency_for_response_time(latency_seconds, sigma, kappa, lambda_), n_peak)
        limits["latency"] = float(usl(n_lat, sigma, kappa, lambda_)) if math.isfinite(n_lat) else x_peak
    return limits


def capacity_from_fit(fit, objectives: Objectives, latency_target_ms: float | None = None, n_bootstrap: int = 0,
                      level: float = 0.95, seed: int = 0) -> FitCapacity:
    """Usable throughput of a fitted VM under the objectives; bootstrap percentile intervals when ``n_bootstrap``.

    ``latency_target_ms`` is the p95 target in milliseconds (a relative target already turned into milliseconds).
    """
    demand = _service_demand(fit.curve)
    ratio, basis = p95_to_mean_ratio(fit.curve)
    seconds = None if latency_target_ms is None else latency_target_ms / 1000.0 / ratio
    limits = _limits(fit.sigma, fit.kappa, fit.lambda_, objectives, demand, seconds)
    if not limits:
        raise PlanError("nothing to plan a fitted curve against: give a utilization target, a peak fraction or a "
                        "latency target")
    if not math.isfinite(min(limits.values())):
        raise PlanError("the fitted curve has no peak (it scales linearly) and the data carry no cpu_util: give a "
                        "latency target, or measure utilization")
    headroom = {k: v for k, v in limits.items() if k != "latency"}
    throughput = min(headroom.values()) if headroom else limits["latency"]
    binding = min(limits, key=limits.get)
    n_peak, x_peak = fit.peak_concurrency, fit.peak_throughput
    usable = limits[binding]
    result = FitCapacity(
        throughput=throughput, latency_throughput=limits.get("latency", math.nan), usable_throughput=usable,
        binding_limit=binding,
        operating_concurrency=concurrency_for_throughput(usable, fit.sigma, fit.kappa, fit.lambda_),
        peak_concurrency=n_peak, peak_throughput=x_peak, latency_basis=basis if seconds is not None else "",
        limits=limits, objectives=objectives,
    )
    if n_bootstrap:
        samples = fit.bootstrap(n_bootstrap, seed=seed).samples
        draws = [_limits(s.get("sigma", 0.0), s.get("kappa", 0.0), s["lambda"], objectives, demand, seconds)
                 for _, s in samples.iterrows()]
        heads = [min((v for k, v in d.items() if k != "latency"), default=d.get("latency", math.nan)) for d in draws]
        usables = [min(d.values()) if d else math.nan for d in draws]
        result.throughput_low, result.throughput_high = percentile_interval(heads, level)
        result.usable_throughput_low, result.usable_throughput_high = percentile_interval(usables, level)
    return result
