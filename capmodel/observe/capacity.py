"""A server's capacity from its own telemetry, at whatever load it ran: the operational laws on its CPU per operation
(``capmodel.plan.production`` sets them beside a USL fit and lets the USL answer only where its verdict is sound).

A healthy production server runs far from its knee: Little's-law concurrency N = X·R is mostly below 1, and a USL
fitted to such a window locates no peak (its "peak" is wherever the noise puts it). What a light load *does* measure
well is the CPU each operation costs. Per interval the server reports its process CPU (``extra_info.user_time_us`` +
``system_time_us``, as ``cpu_cores``: CPU seconds per second) and its operations per second X. The utilization law
(Lazowska et al., *Quantitative System Performance*, 1984, ch. 3) says U = U₀ + D·X: CPU in use is the background
CPU U₀ (checkpoints, FTDC, TTL monitor, replication heartbeats: spent whatever the load) plus the service demand D
(CPU seconds per operation) times the operation rate. With ``cores`` CPUs available to the server, the bottleneck
law bounds its throughput: X_max = (cores − U₀) / D; at a utilization target u the planned throughput is
X(u) = (u·cores − U₀) / D. X is the clients' operations: the oplog getMores and position reports a replica-set
member serves to the others leave it, their CPU stays in U (``capmodel.observe.clients``).

Why a regression *with* an intercept: a regression through the origin (D = ΣU·X / ΣX²) counts the background CPU as
if every operation caused it, so at light load it overstates D, most at the lightest load, and understates capacity.
The intercept separates the two where the window's load varies enough to tell them apart (the 90th percentile of
the rate at least 1.5 times the 10th); where it does not, the ratio ΣU / ΣX is used, which includes the background
and so gives a conservative (low) capacity, and the verdict says so. D's interval is a percentile bootstrap over
runs of consecutive intervals (a circular block bootstrap, its block length chosen from the data:
``capmodel.observe.service_demand``), since consecutive intervals are not independent; where the CPU per operation
trends within the window, the verdict says by how much.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from capmodel.constraints import CORES, UTILIZATION_TARGET, with_name
from capmodel.errors import InputError
from capmodel.observe.clients import busy_columns, replication_reason, replication_share, replication_words
from capmodel.observe.columns import numbers
from capmodel.formatting import aside, fixed, number, percent, r_squared, shows_width
from capmodel.models.estimate import Estimate
from capmodel.models.evidence import Evidence, Reason
from capmodel.models.renamed import renamed_method
from capmodel.models.runway import check_growth, runway
from capmodel.observe.runway_words import HORIZON_MONTHS, HORIZON_WORDS, runway_status
from capmodel.observe.service_demand import demand_drift, demand_interval, fit_demand

LAWS, USL = "operational laws", "USL latency fit"
CLASSES = ("reads", "writes", "commands")
MIN_BUSY_INTERVALS, FEW_BUSY_INTERVALS = 3, 10
#: CPU seconds an interval must carry to resolve D well: Linux accounts process CPU in 10 ms clock ticks
COARSE_CPU_SECONDS = 0.05
#: a regression intercept below zero by less than this share of the mean CPU is noise around no background: the
#: plain ratio CPU / operations then measures the CPU per operation as well as the regression would
NEGLIGIBLE_BACKGROUND = 0.05
N_BOOTSTRAP = 400
#: a trend of the CPU per operation within the window worth telling: this share of it, this many standard errors
DRIFT_SHARE, DRIFT_T = 0.10, 3.0


class TooFewIntervals(InputError):
    """The samples hold too few busy intervals with a CPU figure for the operational laws (an idle server, or one
    that does not report its CPU): a finding about the data, which callers report as an unusable verdict."""


@dataclass(frozen=True)
class ServerCapacity:
    """What the server can carry, from the operational laws on its own CPU per operation (``method`` is always the
    laws here; ``capmodel.plan.production`` chooses between them and a USL fit whose verdict is sound).

    Holds the measured service demand (ms of CPU per operation, with interval), the background CPU, the cores and the
    observed peak load (95th percentile of the busy intervals); every capacity figure derives from them."""

    method: str
    why: str
    cores: float
    cores_source: str
    service_demand_ms: Estimate
    background_cores: float
    observed_peak_throughput: float
    utilization_target: float
    monthly_growth: float | None
    level: float
    evidence: Evidence
    busy_intervals: int
    latency_target_ms: float | None = None
    #: the interval's bootstrap: runs of this many consecutive intervals, percentiles widened by this factor
    interval_block: int = 1
    interval_widening: float = 1.0
    #: the busy intervals' mean rates: the clients' operations, and the replication operations served and applied
    clients_mean: float = 0.0
    replication_mean: float = 0.0

    @property
    def replication_share(self) -> float:
        """The replication operations' share of all the operations the server handled (0 without replication)."""
        return replication_share(self.replication_mean, self.clients_mean)

    def _laws(self, cpu: float, demand_ms: float) -> float:
        usable = cpu - self.background_cores
        return max(usable, 0.0) / (demand_ms / 1000.0) if demand_ms > 0 else math.inf

    @property
    def saturation_throughput(self) -> Estimate:
        """X_max: ops/s at which the server's cores are all busy (bottleneck law)."""
        d = self.service_demand_ms          # a larger demand gives a smaller capacity: the ends swap
        return Estimate(self._laws(self.cores, d.estimate), self._laws(self.cores, d.high),
                        self._laws(self.cores, d.low))

    @property
    def planned_throughput(self) -> Estimate:
        """X(u): ops/s at which the cores are busy to the utilization target u."""
        u = self.utilization_target
        d = self.service_demand_ms
        return Estimate(self._laws(u * self.cores, d.estimate), self._laws(u * self.cores, d.high),
                        self._laws(u * self.cores, d.low))

    @property
    def spare_fraction(self) -> Estimate:
        """1 − observed / planned: the share of the planned throughput not used at the observed peak."""
        p, now = self.planned_throughput, self.observed_peak_throughput
        spare = [1.0 - now / v if v > 0 else -math.inf for v in (p.estimate, p.low, p.high)]
        return Estimate(*spare)

    @property
    def runway_months(self) -> Estimate | None:
        """Months of compound growth at ``monthly_growth`` until the observed peak reaches the planned throughput
        (0 when it already has; None without a growth rate)."""
        if self.monthly_growth is None:
            return None
        return runway(self.planned_throughput, self.observed_peak_throughput, self.monthly_growth)

    def describe(self, with_method: bool = True) -> str:
        """The answer in words (markdown), every number from this object; ``with_method``: end with the method and
        why it was used."""
        if not self.evidence.usable:
            return self._lower_bound() + (f" Method: {self.method} {aside(self.why)}." if with_method else "")
        pct = f"{self.level:.0%}"
        d, sat, plan, spare = (self.service_demand_ms, self.saturation_throughput, self.planned_throughput,
                               self.spare_fraction)
        row = (d.estimate, d.low, d.high)   # each figure as the capacity table's row shows it (formatting.fixed)
        basis = f"Each operation costs the server **{fixed(d.estimate, row)} ms of CPU**" + (
            f" ({pct} interval {fixed(d.low, row)}–{fixed(d.high, row)} ms)"
            if shows_width(d.low, d.high) else "")
        basis += (f", on top of {fixed(self.background_cores)} cores of background CPU. " if self.background_cores
                  > 0 else ". ")
        basis += (f"With {_cores(self.cores)} ({CORES_WORDS.get(self.cores_source, self.cores_source)}), the "
                  "bottleneck law puts saturation at "
                  f"**{_ops(sat.estimate)}**{_span(sat)}.")
        text = (f"{basis} At {self.utilization_target:.0%} utilization the server carries "
                f"**{_ops(plan.estimate)}**{_span(plan)}; the observed peak "
                f"(95th percentile of {self.busy_intervals:,} busy intervals) is {_ops(self.observed_peak_throughput)}")
        spare_row = (100 * spare.estimate, 100 * spare.low, 100 * spare.high)

        def _pct(x):   # as the table's row (-17.0 / -19.1 / -15.0)
            return "unbounded" if not math.isfinite(x) else f"{fixed(100 * x, spare_row)}%"

        bounds = (f"{_pct(spare.low)} to {_pct(spare.high)}" if shows_width(spare.low, spare.high, _pct, finite=False)
                  else "")
        if spare.estimate >= 0:
            text += f", so **{_pct(spare.estimate)}** of the planned throughput is spare" + (f" ({bounds})." if bounds
                                                                                            else ".")
        else:
            text += f", already **{_pct(-spare.estimate)} above** the planned throughput" + (
                "." if not bounds else f" ({_pct(-spare.high)} to {_pct(-spare.low)} above)." if spare.high <= 0 else
                f" (spare {bounds}).")   # the interval in the sentence's own sense, while all of it is above
        months = self.runway_months
        if months is not None:
            if months.estimate == 0:
                # past the plan is said just above; at it exactly, say so once here
                text += (" No growth fits under the plan." if spare.estimate < 0 else
                         f" The {self.utilization_target:.0%} target is reached now: no growth fits under it.")
            elif math.isinf(months.estimate):
                text += (" Without growth the load never reaches it." if self.monthly_growth == 0 else
                         f" At {percent(self.monthly_growth)} growth a month (a shrinking load) it never reaches it.")
            elif months.estimate > HORIZON_MONTHS:
                text += (f" At {percent(self.monthly_growth)} growth a month the target is reached in "
                         f"**{HORIZON_WORDS}**")
            else:
                text += (f" At {percent(self.monthly_growth)} growth a month the target is reached in "
                         f"**{months.estimate:,.1f} months**")
                text += (f" ({_months_text(months.low)} to {_months_text(months.high)})." if shows_width(
                    months.low, months.high, _months_text, finite=False) else ".")
        return text + self._replication() + (f" Method: {self.method} {aside(self.why)}." if with_method else "")

    def _replication(self) -> str:
        return replication_words(self.replication_share, self.replication_mean, self.clients_mean)

    answer = renamed_method("describe", "answer")

    def _lower_bound(self) -> str:
        """What an unusable verdict leaves: the load the server carried, a lower bound on its capacity, and why no
        capacity figure can be stated."""
        why = "; ".join(r.message for r in self.evidence.reasons if r.grade == "unusable")
        return (f"The server carried **{_ops(self.observed_peak_throughput)}** at its busiest (95th percentile of "
                f"{self.busy_intervals:,} busy intervals): a lower bound on its capacity. The data cannot support a "
                f"capacity figure beyond that: {why}." + ("" if "replication_load" in self.evidence.codes() else
                                                         self._replication()))

    def to_json(self) -> dict:
        """Plain JSON: the method, every figure with its interval, the evidence."""
        months = self.runway_months
        return {
            "method": self.method, "why": self.why, "cores": self.cores, "cores_source": self.cores_source,
            "utilization_target": self.utilization_target, "level": self.level,
            "service_demand_ms": self.service_demand_ms.to_json(), "background_cores": self.background_cores,
            "saturation_throughput": self.saturation_throughput.to_json(),
            "planned_throughput": self.planned_throughput.to_json(),
            "observed_peak_throughput": self.observed_peak_throughput,
            "spare_fraction": self.spare_fraction.to_json(), "monthly_growth": self.monthly_growth,
            "runway_months": months.to_json() if months is not None else None,
            "runway_status": runway_status(None if months is None else months.estimate, self.monthly_growth),
            "busy_intervals": self.busy_intervals, "evidence": self.evidence.to_json(),
            "clients_per_s": self.clients_mean, "replication_per_s": self.replication_mean,
            "replication_share": self.replication_share,
        }


def _ops(x: float) -> str:
    return "unbounded" if not math.isfinite(x) else f"{number(x)} ops/s"


def _span(e: Estimate) -> str:
    """`` (low–high ops/s)`` of an estimate's interval ("" when it has none to show)."""
    if not shows_width(e.low, e.high, finite=False):
        return ""
    if not math.isfinite(e.high):
        return f" ({number(e.low)} ops/s or more)"
    return f" ({number(e.low)}–{number(e.high)} ops/s)"


def _months_text(x: float) -> str:
    return "never" if math.isinf(x) else HORIZON_WORDS if x > HORIZON_MONTHS else f"{x:,.1f}"


HOST_CORES = "the host's, as the server reports them"
# the cores' source (``cores_source``, as the JSON gives it) in the answer's words, for one core as for many
CORES_WORDS = {"given": "as given", "assumed": "assumed: the server did not report its cores",
               HOST_CORES: "the host's count, as the server reports it"}


def _cores(c: float) -> str:
    return f"{number(c)} core" + ("" if c == 1 else "s")


def busy_table(samples):
    """The intervals the laws use (a pandas DataFrame): not dropped, with clients' operations and a CPU figure;
    columns ``throughput`` (the clients' ops/s, all classes: the replication operations a member serves taken out,
    ``capmodel.observe.clients``), ``cpu_cores``, ``interval_s``, ``elapsed_s`` (seconds from the first interval's
    start to this one's end: their order in time), ``concurrency`` (Little's law over the clients' operations,
    N = Σ X·R), ``replication`` (the replication operations per second, served and applied), ``applied`` (the
    oplog entries applied per second, of those)."""
    import pandas as pd

    return pd.DataFrame(busy_columns(samples))


def _separable(x: np.ndarray) -> bool:
    """The load varies enough to separate background CPU from CPU per operation (busy >= 1.5 x quiet)."""
    lo, hi = np.percentile(x, [10, 90])
    return len(x) >= FEW_BUSY_INTERVALS and lo > 0 and hi >= 1.5 * lo


def server_capacity(samples, cores: float | None = None, utilization_target: float = 0.8,
                    latency_target_ms: float | None = None, monthly_growth: float | None = None,
                    level: float = 0.95, n_bootstrap: int = N_BOOTSTRAP, seed: int = 0) -> ServerCapacity:
    """The capacity of the server whose ``samples`` (observe's per-interval table: a DataFrame, or the ``Columns``
    an ``Observation`` of FTDC keeps in ``tables``) are given.

    ``cores``: CPUs the server may use (hostInfo, the container's quota, the mongod's CPU affinity); default the
    ``cores`` column of ``samples`` when it has one, else 1 with a reason saying the figures are per core.
    ``latency_target_ms`` is recorded; the operational laws bound throughput, not latency, and the verdict says so.
    """
    u_target = with_name(UTILIZATION_TARGET, "utilization target").check(utilization_target, InputError)
    if not 0 < float(level) < 1:
        raise InputError(f"level must be between 0 and 1 (e.g. 0.95), got {level!r}")
    monthly_growth = None if monthly_growth is None else check_growth(monthly_growth)
    cores, cores_source = _cores_of(samples, cores)
    busy = busy_columns(samples)
    reasons: list[Reason | None] = []
    if len(busy["throughput"]) < MIN_BUSY_INTERVALS:
        with_ops = len(busy_columns(samples, any_cpu=True)["throughput"])
        hint = (" (the others carry no CPU figure: does the server report extra_info.user_time_us?)"
                if with_ops > len(busy["throughput"]) else "")
        raise TooFewIntervals(f"samples: only {len(busy['throughput'])} busy interval(s) with a CPU figure{hint}; the operational "
                              f"laws need at least {MIN_BUSY_INTERVALS}")
    x, u = busy["throughput"], busy["cpu_cores"]
    separable = with_intercept = _separable(x)
    background, demand = fit_demand(x, u, with_intercept)
    fitted_background = background
    if with_intercept and not (background >= 0 and demand > 0):
        with_intercept = False              # a negative background or slope: noise, not a model; use the ratio
        background, demand = fit_demand(x, u, False)
    interval = demand_interval(x, u, with_intercept, background, demand, float(level), int(n_bootstrap), seed)
    block = interval.block
    lo, hi = interval.low, interval.high
    d_ms = Estimate(demand * 1000.0, float(lo) * 1000.0, float(hi) * 1000.0)
    observed = float(np.percentile(x, 95))
    n = busy["concurrency"]
    light = float(np.mean(n < 1.0))
    cpu_seconds = u * busy["interval_s"]
    reasons.append(_cores_reason(cores_source))
    reasons.append(replication_reason(*(float(np.mean(v)) for v in (busy["applied"], busy["replication"], x))))
    reasons.append(_drift_reason(x, u, busy["elapsed_s"], with_intercept, demand, block))
    reasons.append(Reason("few_busy_intervals", "weak", f"only {len(x)} busy intervals measured the CPU per "
                          "operation", float(len(x))) if len(x) < FEW_BUSY_INTERVALS else None)
    reasons.append(Reason("cpu_sampled_coarsely", "weak", f"the median interval carried {np.median(cpu_seconds):.3f}"
                          " CPU seconds, a few clock ticks: the CPU per operation is coarsely measured",
                          float(np.median(cpu_seconds))) if np.median(cpu_seconds) < COARSE_CPU_SECONDS else None)
    share = background / float(np.mean(u)) if with_intercept and np.mean(u) > 0 else 0.0
    reasons.append(Reason("background_cpu", "weak", f"{share:.0%} of the CPU used is background work that does "
                          "not scale with operations", share) if share > 0.5 else None)
    if not separable:
        reasons.append(Reason("background_not_separable", "weak", "the load varied too little to separate background"
                              " CPU from CPU per operation: the capacity counts the background as operations' work "
                              "and is a lower bound"))
    elif not with_intercept and abs(fitted_background) > NEGLIGIBLE_BACKGROUND * float(np.mean(u)):
        reasons.append(Reason("background_negative", "weak", f"the regression of CPU on load put the background at "
                              f"{number(fitted_background, 3)} cores, below zero (noise or a CPU per operation that changes "
                              "with load): the CPU per operation is the plain ratio of CPU to operations and the "
                              "capacity a lower bound", fitted_background))
    r2 = _r2(x, u, background, demand)
    reasons.append(Reason("cpu_unrelated_to_load", "unusable" if r2 < 0.1 else "weak",
                          f"the server's CPU follows its operation rate poorly (R² {r_squared(r2)}): something "
                          "besides the operations uses the CPU", r2) if r2 < 0.5 and with_intercept else None)
    used = float(np.percentile(u, 95)) / cores
    reasons.append(Reason("extrapolated", "weak", f"the busiest intervals used {used:.0%} of the "
                          f"{_cores(cores)}: the capacity is extrapolated from there to full use, assuming the CPU "
                          "per operation stays the same up to saturation", used) if used < 0.5 else None)
    saturation = _laws_capacity(cores, background, demand)
    reasons.append(Reason("above_saturation", "unusable", f"the observed peak {_ops(observed)} exceeds the computed "
                          f"saturation {_ops(saturation)}: the core count ({_cores(cores)}) is probably wrong",
                          observed / saturation) if observed > 1.02 * saturation else None)
    reasons.append(Reason("over_target", "weak", f"the observed peak is already above the {u_target:.0%} "
                          "utilization target", observed / _laws_capacity(u_target * cores, background, demand))
                   if observed > _laws_capacity(u_target * cores, background, demand) else None)
    if latency_target_ms is not None:
        reasons.append(Reason("latency_not_modelled", "weak", "the operational laws bound throughput, not latency: "
                              f"the {number(latency_target_ms)} ms target is not checked", float(latency_target_ms)))
    why = (f"the server ran fewer than one operation at a time in {light:.0%} of the intervals, too little "
           "concurrency to locate a USL peak, however busy its CPU; its CPU per operation is what the window measures "
           "well" if light >= 0.5 else
           "the CPU per operation is measured directly, so saturation follows from the bottleneck law")
    return ServerCapacity(method=LAWS, why=why, cores=cores, cores_source=cores_source, service_demand_ms=d_ms,
                          background_cores=max(background, 0.0), observed_peak_throughput=observed,
                          utilization_target=u_target, monthly_growth=None if monthly_growth is None else
                          float(monthly_growth), level=float(level), evidence=Evidence.of(*reasons),
                          busy_intervals=len(x), latency_target_ms=latency_target_ms,
                          interval_block=block, interval_widening=interval.widening,
                          clients_mean=float(np.mean(x)), replication_mean=float(np.mean(busy["replication"])))


def _drift_reason(x, u, elapsed, with_intercept, demand, block) -> Reason | None:
    """A weak reason when the CPU per operation trends within the window by DRIFT_SHARE or more of it, clearly
    beyond noise (the trend's t-statistic DRIFT_T or more), with its figures at the window's two ends."""
    first, last, tstat = demand_drift(x, u, elapsed, with_intercept)
    change = (last - first) / demand if demand > 0 and math.isfinite(first) else 0.0
    if abs(change) < DRIFT_SHARE or abs(tstat) < DRIFT_T or not (first > 0 and last > 0):
        return None
    runs = (f"; consecutive intervals move together, so its interval comes from runs of {block} consecutive "
            "intervals resampled together" if block > 1 else "")
    return Reason("demand_drift", "weak", f"the CPU each operation costs {'rose' if change > 0 else 'fell'} from "
                  f"{number(first * 1000)} ms at the start of the window to {number(last * 1000)} ms at its end "
                  f"({change:+.0%} of the {number(demand * 1000)} ms measured): the capacity is the window's "
                  f"average, not a settled figure{runs}", change)


def _laws_capacity(cpu: float, background: float, demand: float) -> float:
    return max(cpu - background, 0.0) / demand if demand > 0 else math.inf


def _r2(x, u, background, demand) -> float:
    resid = u - (background + demand * x)
    total = float(((u - u.mean()) ** 2).sum())
    return 1.0 - float((resid ** 2).sum()) / total if total > 0 else 1.0


def _cores_of(samples, cores) -> tuple[float, str]:
    if cores is not None:
        return CORES.check(cores, InputError), "given"
    recorded = recorded_cores(samples)
    return (recorded, HOST_CORES) if recorded is not None else (1.0, "assumed")


def recorded_cores(samples) -> float | None:
    """The host's cores as the samples record them (their ``cores`` column's last figure), None without one."""
    if "cores" in samples:
        values = numbers(samples["cores"])
        values = values[~np.isnan(values)]
        if len(values) and values[-1] > 0:
            return float(values[-1])
    return None


def _cores_reason(source: str) -> Reason | None:
    if source != "assumed":
        return None
    return Reason("cores_unknown", "weak", "the number of cores the server may use is unknown: the capacity is per "
                  "core (pass --cores)")
