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
the rate at least 1.5 times the 10th); where it does not, the figure is the ratio ΣU / ΣX, which includes the
background and so errs low, and the verdict says so. D's interval is a percentile bootstrap over runs of
consecutive intervals (a circular block bootstrap, its block length chosen from the data:
``capmodel.observe.service_demand``), since consecutive intervals are not independent; where the CPU per operation
trends within the window, the verdict says by how much.

The capacity's interval is not D's alone. The bottleneck law carries D from the window's load to saturation, and D
need not stay put on the way: it fell by 38% from light load to saturation in the lab (issue 26). The saturation
and planned throughputs' intervals therefore carry the change the assumption of ``capmodel.observe.demand_change``
allows (up to +80% at no load, −10% by contention), from the regression's bootstrap ends: wide when the window is
light, closing as it nears saturation. The grade follows the interval (``change_reasons``): sound only when it is at
most ``SOUND_SPAN`` wide and nothing else speaks against it; weak when wider, with the window that would narrow
it; unusable where the regression cannot bound the capacity above (the answer is then "at least" the ratio's figure,
``ServerCapacity.at_least``). ``benchmarks/calibrate_observe.py`` measures what the grades keep on synthetic servers
of known capacity.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from capmodel.constraints import CORES, UTILIZATION_TARGET, with_name
from capmodel.errors import InputError
from capmodel.formatting import number, r_squared
from capmodel.models.estimate import Estimate
from capmodel.models.evidence import Evidence, Reason
from capmodel.models.runway import check_growth, runway
from capmodel.observe import capacity_words
from capmodel.observe.capacity_words import HOST_CORES, cores_words, ops
from capmodel.observe.clients import busy_columns, replication_reason, replication_share, replication_words
from capmodel.observe.columns import as_floats, release_free_memory
from capmodel.observe.demand_change import BACKGROUND_UNKNOWN, EVEN_LOAD_STEP, ChangeBand, change_band, change_reasons
from capmodel.observe.runway_words import runway_status
from capmodel.observe.service_demand import demand_interval, drift_reason, fit_demand

LAWS, USL = "operational laws", "USL latency fit"
MIN_BUSY_INTERVALS, FEW_BUSY_INTERVALS = 3, 10
#: CPU seconds an interval must carry to resolve D well: Linux accounts process CPU in 10 ms clock ticks
COARSE_CPU_SECONDS = 0.05
#: a regression intercept below zero by less than this share of the mean CPU is noise around no background: the
#: plain ratio CPU / operations then measures the CPU per operation as well as the regression would
NEGLIGIBLE_BACKGROUND = 0.05
N_BOOTSTRAP = 400
#: on a load too even to separate the background, a regression whose CPU per operation's interval spans more than
#: this (high / low) bounds nothing: the capacity is then bounded below only, by the ratio's figure
EVEN_LOAD_MAX_SPAN = 3.0


class TooFewIntervals(InputError):
    """The samples hold too few busy intervals with a CPU figure for the operational laws (an idle server, or one
    that does not report its CPU): a finding about the data, which callers report as an unusable verdict."""


def no_capacity_evidence(exc: Exception) -> Evidence:
    """The verdict when a server's samples are read but cannot state a capacity (too few busy intervals or samples,
    ``exc`` says which): unusable, saying why; the server is not ranked, and it has not failed."""
    return Evidence.of(Reason("no_capacity", "unusable", "no capacity can be stated: "
                              + str(exc).removeprefix("samples: ")))


@dataclass(frozen=True)
class ServerCapacity:
    """What a server can carry, from the operational laws on its own CPU per operation (``server_capacity``).

    It holds the measured service demand (ms of CPU per operation, with its interval), the background CPU, the cores
    and the observed peak load (95th percentile of the busy intervals); every capacity figure derives from them:
    ``saturation_throughput`` (all cores busy), ``planned_throughput`` (the cores busy to the utilization target),
    ``spare_fraction``, ``runway_months`` (with a growth rate), ``describe()`` and ``to_json()``. ``method`` is always
    the operational laws here; ``capmodel.plan.production`` chooses between them and a USL fit whose verdict is sound.

    Attributes
    ----------
    method, why : str
        The method and why it was chosen.
    cores : float
        The CPUs the server may use; ``cores_source`` says where the count came from.
    service_demand_ms : Estimate
        CPU milliseconds per operation, with its interval.
    background_cores : float
        CPU the server spends with no operations, in cores.
    observed_peak_throughput : float
        The 95th percentile of the busy intervals' throughput, ops/s.
    utilization_target : float
        The planned utilization of the cores.
    monthly_growth : float or None
        The load's growth a month, for the runway.
    level : float
        The intervals' coverage.
    evidence : Evidence
        The verdict.
    busy_intervals : int
        The intervals the demand was measured on.
    latency_target_ms : float or None
        Recorded only: the laws bound throughput, not latency, and the verdict says so.
    """

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
    #: the saturation and planned intervals once the CPU per operation's possible change up to saturation is carried
    #: (``capmodel.observe.demand_change``); None: the bootstrap's alone (the noise), as ``service_demand_ms`` gives
    saturation_band: Estimate | None = None
    planned_band: Estimate | None = None

    @property
    def replication_share(self) -> float:
        """The replication operations' share of all the operations the server handled (0 without replication)."""
        return replication_share(self.replication_mean, self.clients_mean)

    def _laws(self, cpu: float, demand_ms: float) -> float:
        usable = cpu - self.background_cores
        return max(usable, 0.0) / (demand_ms / 1000.0) if demand_ms > 0 else math.inf

    def _noise(self, cpu: float) -> Estimate:
        d = self.service_demand_ms          # a larger demand gives a smaller capacity: the ends swap
        return Estimate(self._laws(cpu, d.estimate), self._laws(cpu, d.high), self._laws(cpu, d.low))

    @property
    def saturation_throughput(self) -> Estimate:
        """X_max: ops/s at which the server's cores are all busy (bottleneck law); its interval carries the noise and
        the CPU per operation's possible change up to saturation (high end infinite: a lower bound only)."""
        return self.saturation_band or self._noise(self.cores)

    @property
    def planned_throughput(self) -> Estimate:
        """X(u): ops/s at which the cores are busy to the utilization target u (its interval as saturation's)."""
        return self.planned_band or self._noise(self.utilization_target * self.cores)

    @property
    def saturation_from_noise(self) -> Estimate:
        """X_max with the interval the CPU per operation's bootstrap alone gives (the noise, not the change up to
        saturation): what the answer stated before its interval carried the change, for comparison."""
        return self._noise(self.cores)

    @property
    def change_share(self) -> float:
        """The share of the saturation interval's width (in log) that the CPU per operation's possible change makes,
        not the noise (0 without a band; 1 when the interval is one-sided)."""
        sat, noise = self.saturation_throughput, self.saturation_from_noise
        if not (sat.low > 0 and noise.low > 0):
            return 0.0
        if not math.isfinite(sat.high):
            return 1.0
        total = math.log(sat.high / sat.low)
        return 1.0 - math.log(noise.high / noise.low) / total if total > 0 else 0.0

    @property
    def at_least(self) -> float:
        """What the data support as a lower bound on the capacity: the busiest load carried, or the laws' low end
        where that is higher and the answer is one-sided only because the background cannot be told apart (no other
        finding makes the laws' figure unusable)."""
        sat = self.saturation_throughput
        unusable = {r.code for r in self.evidence.reasons if r.grade == "unusable"}
        if unusable != {BACKGROUND_UNKNOWN} or math.isfinite(sat.high):
            return self.observed_peak_throughput
        return max(self.observed_peak_throughput, sat.low)

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
        why it was used (``capmodel.observe.capacity_words``)."""
        return capacity_words.describe_server_capacity(self, with_method)

    def replication_sentence(self) -> str:
        """The answer's sentence on replication, where it made a share of the operations worth telling ("" else)."""
        return replication_words(self.replication_share, self.replication_mean, self.clients_mean)


    def to_json(self) -> dict:
        """Plain JSON: the method, every figure with its interval, the evidence; an unusable answer states no figure
        beyond ``at_least`` (its saturation and planned throughputs only as that lower bound, no spare fraction or
        runway)."""
        months = self.runway_months
        sat, plan = self.saturation_throughput.to_json(), self.planned_throughput.to_json()
        spare: dict | None = self.spare_fraction.to_json()
        if not self.evidence.usable:       # "at least": the lower bound alone (the plan's where it has one)
            one_sided = self.at_least > self.observed_peak_throughput
            sat = {"estimate": None, "low": self.at_least, "high": None}
            low = self.planned_throughput.low
            plan = {"estimate": None, "low": low if one_sided and low > 0 else None, "high": None}
            spare, months = None, None
        return {
            "method": self.method, "why": self.why, "cores": self.cores, "cores_source": self.cores_source,
            "utilization_target": self.utilization_target, "level": self.level,
            "service_demand_ms": self.service_demand_ms.to_json(), "background_cores": self.background_cores,
            "saturation_throughput": sat, "planned_throughput": plan, "at_least": self.at_least,
            "interval_carries_change": self.saturation_band is not None,
            "observed_peak_throughput": self.observed_peak_throughput,
            "spare_fraction": spare, "monthly_growth": self.monthly_growth,
            "runway_months": months.to_json() if months is not None else None,
            "runway_status": runway_status(None if months is None else months.estimate, self.monthly_growth),
            "busy_intervals": self.busy_intervals, "evidence": self.evidence.to_json(),
            "clients_per_s": self.clients_mean, "replication_per_s": self.replication_mean,
            "replication_share": self.replication_share,
        }


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
    """A server's capacity from the operational laws on its own CPU per operation.

    The CPU per operation is the slope of the process CPU against the throughput over the busy intervals (or their
    ratio when the load varied too little to separate a background); saturation is where it fills the cores (the
    bottleneck law), the planned throughput where it fills them to ``utilization_target``.

    Parameters
    ----------
    samples : pandas.DataFrame or Columns
        ``observe``'s per-interval table (``Observation.samples``, or the ``Columns`` an FTDC ``Observation`` keeps in
        ``tables``).
    cores : float, optional
        The CPUs the server may use (``hostInfo``, the container's quota, the mongod's CPU affinity); default the
        ``cores`` column of ``samples`` when it has one, else 1, with a reason saying the figures are per core.
    utilization_target : float, default 0.8
        The utilization the planned throughput is set at.
    latency_target_ms : float, optional
        Recorded in the answer; the operational laws bound throughput, not latency, and the verdict says so.
    monthly_growth : float, optional
        The load's growth a month (0.1 for 10 %), for ``runway_months``.
    level : float, default 0.95
        The intervals' coverage, strictly between 0 and 1.
    n_bootstrap : int, optional
        Resamples for the CPU per operation's interval (a block bootstrap over the busy intervals).
    seed : int, default 0
        The bootstrap's random seed.

    Returns
    -------
    ServerCapacity

    Raises
    ------
    InputError
        A parameter is out of range, or fewer busy intervals with a CPU figure than the laws need (``TooFewIntervals``,
        a subclass).

    Examples
    --------
    >>> from capmodel.observe import bundled_sample, observe_ftdc, server_capacity
    >>> sample = bundled_sample()
    >>> observation = observe_ftdc(sample["path"], since=sample["since"], until=sample["until"])
    >>> capacity = server_capacity(observation.samples)
    >>> round(capacity.service_demand_ms.estimate, 2), round(capacity.saturation_throughput.estimate, -1)
    (1.35, 740.0)
    >>> capacity.evidence.grade
    'weak'
    """
    u_target = with_name(UTILIZATION_TARGET, "utilization target").check(utilization_target, InputError)
    if not 0 < float(level) < 1:
        raise InputError(f"level must be between 0 and 1 (e.g. 0.95), got {level!r}")
    monthly_growth = None if monthly_growth is None else check_growth(monthly_growth)
    cores, cores_source = _cores_of(samples, cores)
    busy = busy_columns(samples)
    release_free_memory()               # the heap its day-long columns took, handed back before the bootstrap
    reasons: list[Reason | None] = []
    if len(busy["throughput"]) < MIN_BUSY_INTERVALS:
        with_ops = len(busy_columns(samples, any_cpu=True)["throughput"])
        hint = (" (the others carry no CPU figure: does the server report extra_info.user_time_us?)"
                if with_ops > len(busy["throughput"]) else "")
        raise TooFewIntervals(f"samples: only {len(busy['throughput'])} busy interval(s) with a CPU figure{hint}; the "
                              f"operational laws need at least {MIN_BUSY_INTERVALS}")
    x, u = busy["throughput"], busy["cpu_cores"]
    separable = with_intercept = _separable(x)
    background, demand = fit_demand(x, u, with_intercept)
    fitted = (background, demand)
    if with_intercept and not (background >= 0 and demand > 0):
        with_intercept = False              # a negative background or slope: noise, not a model; use the ratio
        background, demand = fit_demand(x, u, False)
    interval = demand_interval(x, u, with_intercept, background, demand, float(level), int(n_bootstrap), seed)
    block = interval.block
    d_ms = Estimate(demand * 1000.0, float(interval.low) * 1000.0, float(interval.high) * 1000.0)
    regression = fitted if separable else fit_demand(x, u, True) if np.ptp(x) > 0 else None
    band, noise_span = _band(x, u, cores, u_target, (background, demand), interval, regression, separable,
                             (float(level), int(n_bootstrap), seed))
    observed = float(np.percentile(x, 95))
    n = busy["concurrency"]
    light = float(np.mean(n < 1.0))
    cpu_seconds = u * busy["interval_s"]
    reasons.append(_cores_reason(cores_source))
    reasons.append(replication_reason(*(float(np.mean(v)) for v in (busy["applied"], busy["replication"], x))))
    reasons.append(drift_reason(x, u, busy["elapsed_s"], with_intercept, demand, block))
    reasons.append(Reason("few_busy_intervals", "weak", f"only {len(x)} busy intervals measured the CPU per "
                          "operation", float(len(x))) if len(x) < FEW_BUSY_INTERVALS else None)
    reasons.append(Reason("cpu_sampled_coarsely", "weak", f"the median interval carried {np.median(cpu_seconds):.3f}"
                          " CPU seconds, a few clock ticks: the CPU per operation is coarsely measured",
                          float(np.median(cpu_seconds))) if np.median(cpu_seconds) < COARSE_CPU_SECONDS else None)
    share = background / float(np.mean(u)) if with_intercept and np.mean(u) > 0 else 0.0
    reasons.append(Reason("background_cpu", "weak", f"{share:.0%} of the CPU used is background work that does "
                          "not scale with operations", share) if share > 0.5 else None)
    if separable and not with_intercept and abs(fitted[0]) > NEGLIGIBLE_BACKGROUND * float(np.mean(u)):
        reasons.append(Reason("background_negative", "weak", f"the regression of CPU on load put the background at "
                              f"{number(fitted[0], 3)} cores, below zero (noise or a CPU per operation that changes "
                              "with load): the CPU per operation is the plain ratio of CPU to operations, which "
                              "counts any background CPU as the operations' work", fitted[0]))
    r2 = _r2(x, u, background, demand)
    reasons.append(Reason("cpu_unrelated_to_load", "unusable" if r2 < 0.1 else "weak",
                          f"the server's CPU follows its operation rate poorly (R² {r_squared(r2)}): something "
                          "besides the operations uses the CPU", r2) if r2 < 0.5 and with_intercept else None)
    used = float(np.percentile(u, 95)) / cores
    reasons += change_reasons(band, noise_span, used, cores_words(cores), background / cores, separable)
    if not separable and math.isfinite(band.saturation.high):
        reasons.append(Reason(BACKGROUND_UNKNOWN, "weak", "the load varied too little to separate background CPU "
                              "from CPU per operation well (its busiest intervals under 1.5 times its quietest): the "
                              "figure is the ratio of CPU to operations, which counts the background as the "
                              "operations' work, and its interval the regression's", None, EVEN_LOAD_STEP))
    high = band.saturation.high
    reasons.append(Reason("above_saturation", "unusable", f"the observed peak {ops(observed)} exceeds the computed "
                          f"saturation {ops(high)} (the high end of its interval): the core count "
                          f"({cores_words(cores)}) is probably wrong", observed / high)
                   if observed > 1.02 * high else None)
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
                          clients_mean=float(np.mean(x)), replication_mean=float(np.mean(busy["replication"])),
                          saturation_band=band.saturation, planned_band=band.planned)


def _band(x, u, cores, u_target, fit, interval, regression, separable, bootstrap) -> tuple[ChangeBand, float]:
    """The saturation and planned intervals carrying the CPU per operation's possible change
    (``capmodel.observe.demand_change``), and the saturation interval's span from the noise alone. Their ends come
    from the regression of CPU on load (``regression``: its background and CPU per operation, None when the load did
    not vary at all) with its own bootstrap, also where the ratio states the figure (a load too even, or an
    intercept below zero): the ratio counts any background as the operations' work, the regression says what the
    load shows, and its bootstrap how well. Without a regression whose CPU per operation is positive at both ends
    of its interval, or on a load too even to separate the background with one whose interval spans more than
    ``EVEN_LOAD_MAX_SPAN`` times (a flat load's regression says next to nothing), the high ends are infinite: the
    capacity is bounded below only, by the ratio's figure."""
    background, demand = fit
    estimate = (_laws_capacity(cores, background, demand), _laws_capacity(u_target * cores, background, demand))
    two_sided = regression is not None and regression[1] > 0
    if two_sided and regression != fit:
        ratio = interval
        interval = demand_interval(x, u, True, regression[0], regression[1], *bootstrap)
        if not separable and not interval.low * EVEN_LOAD_MAX_SPAN >= interval.high > 0:
            two_sided, interval = False, ratio      # the regression can say next to nothing: the ratio's lower bound
    if two_sided:
        background = regression[0]
    low_d, high_d = float(interval.low), float(interval.high)
    sat = Estimate(estimate[0], _laws_capacity(cores, background, high_d), _laws_capacity(cores, background, low_d))
    plan = Estimate(estimate[1], _laws_capacity(u_target * cores, background, high_d),
                    _laws_capacity(u_target * cores, background, low_d))
    span = sat.high / sat.low if sat.low > 0 else math.inf
    above = float(np.mean(u)) > u_target * cores
    return change_band(sat, plan, x, two_sided, two_sided and low_d > 0, above), span


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
        values = as_floats(samples["cores"])
        values = values[~np.isnan(values)]
        if len(values) and values[-1] > 0:
            return float(values[-1])
    return None


def _cores_reason(source: str) -> Reason | None:
    if source != "assumed":
        return None
    return Reason("cores_unknown", "weak", "the number of cores the server may use is unknown: the capacity is per "
                  "core (pass --cores)")
