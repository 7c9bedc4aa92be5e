"""The mix what-if from production: one observed server's own telemetry -> per-class demands -> "reads +30 %, writes
x2" as per-class throughput, latency and CPU utilization, with intervals; over several members, the one that
saturates first.

Input: the per-interval samples of ``capmodel observe`` (``samples.csv``): per latency class (reads, writes, commands)
the rate ``<class>_per_s`` and the mean server-side latency ``<class>_latency_ms`` (serverStatus ``opLatencies``), and
``cpu_cores``, the mongod process's CPU seconds per second. The model, fitted per server:

- **CPU demand per operation** D_c: a regression of the process CPU on the per-class rates over the intervals,
  cpu_t = B + sum_c D_c X_c,t (non-negative least squares; B is the background CPU the server spends with no
  operations: its own threads, checkpoints). Why a regression and not ``opLatencies``: the latency window of an
  operation contains waiting (for the CPU, locks, the disk) and misses the work done around it (receiving and
  parsing the request, sending the reply: on the embedded server the CPU per read is about twice its latency), so
  latency shares are not CPU shares. The regression needs the mix or the load to vary across intervals (the rank of
  the design); where it does not, the CPU is apportioned by the classes' shares of time in the server (X_c R_c),
  and the verdict says so (``weak``). A *minor* class (under 2 % of the operations: health checks, a driver's own
  commands, a few a second and much the same in every interval) cannot be told from the background and would take
  the whole regression down with it; when it does, the other classes are regressed alone and a minor class's CPU
  per operation is its time in the server times the others' CPU per second in the server (the background gives that
  CPU up, so the total at the observed rates is unchanged).
- **The CPU as a station**: ``cores`` processors shared by the requests present, solved as the multi-class open
  network of ``capmodel.models.queueing.open_networks`` (per-class arrival rates; the M/M/c stretch S(U) = residence /
  demand, the same for every class under processor sharing; Lazowska et al., "Quantitative System Performance", 1984,
  ch. 7), the background as one more class.
- **Latency per class** R_c = A_c + L_c S(U): A_c the time that does not grow with CPU contention, L_c the CPU time
  inside the latency window, stretched as the CPU gets busier; fitted per class by non-negative least squares over
  the intervals (each weighted by its operations). Unless the class's own intervals span S by 25 % the split is not
  identified (noise would decide it): L_c is then min(D_c, R_c / S), at most its CPU time (R_c the latency with none
  of the other classes where a mix term below is fitted, else the mean), and the verdict says so.
  Two more terms where the intervals show them: M_ck times another class k's share of the operations (where that
  share spans 0.1 and explains the latency beyond chance, an F-test at 5 %: on the embedded server reads take ~10 %
  longer in YCSB A's mix than alone at the same CPU), and the server's wait for its cores per operation
  (``capmodel.models.mix.intervals``).

- **Replication** (``capmodel.models.mix.intervals.split_replication``): the oplog getMores and position reports a
  member serves to the others are taken out of its reads and commands (on the embedded set's primary they were all
  of its "reads"); where the member serves writes their CPU goes with the writes', which they follow; a member that
  serves none (a secondary) has its replication work (entries applied, operations served) as a term of the CPU
  regression, scaled in a what-if by the set's writes factor (``capmodel.models.mix.rates.writes_factor``), or in the
  background where the intervals cannot tell it, and the verdict says so.

A what-if scales each class's observed mean rate (or sets the rates) and solves the network again. Production traffic
is open (many independent application requests), so a class's throughput is its offered rate while the CPU keeps up;
at U >= 1 there is no steady state and the answer says how much of the asked load fits instead. Intervals: a
bootstrap over the intervals (refit and predict on each resample; percentiles), widened by how far the figures moved
from one window of the observation to another beyond the fit (``capmodel.models.mix.spread``): a what-if is asked of
another period than the one observed.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd
from scipy.optimize import nnls

from capmodel.constraints import Number, with_name
from capmodel.data.curve_columns import OPERATION_CLASSES
from capmodel.errors import InputError
from capmodel.formatting import number, percent, plural
from capmodel.models.block_bootstrap import circular_blocks, dependence
from capmodel.models.evidence import Evidence, Reason
from capmodel.models.mix.answer import SERVED_WORDS, MixWhatIf, mix_sentence
from capmodel.models.mix.intervals import (
    REPLICATION_RATE,
    explains,
    mix_shares,
    rate_column,
    regress_classes,
    typical,
    usable_intervals,
    wait_per_op,
    wait_slope,
)
from capmodel.models.mix.rates import scaled_rates, writes_factor
from capmodel.models.mix.served_latency import MIN_INTERVALS, SERVED
from capmodel.models.mix.spread import CPU, percentiles, widened, window_errors, window_spread
from capmodel.models.queueing.laws import SERVERS
from capmodel.models.queueing.open_networks import stretch

# the what-if's work grows with the cores (10^5 ran for minutes); 1,024: the logical CPUs of the largest hosts
SERVER_CORES = with_name(SERVERS, "cores (processors the server may use)", high=1_024)

MIN_STRETCH_SPREAD = 0.25
#: the server's wait for its cores per operation a what-if may ask (s): up to a second per operation
WAIT_PER_OP = Number(float, 0.0, 1.0, name="wait per operation", wanted_text="a number of seconds from 0 to 1",
                     text=False)
MIN_SHARE_SPREAD = 0.1   # a class's share of the mix must span this much to tell its effect on the others' latency
MINOR_SHARE = 0.02       # a class with a smaller share of the operations is "minor" (see fit_server_demands)
SHARE_SLACK = 0.005      # an asked share this far outside the fitted ones still counts as inside (shown in whole %)
#: a class's latency moving more than this from one window of the observation to another (root mean square, beyond the
#: fit) makes the what-if weak: it cannot then be trusted to the 15 % of issue 19's validation
WINDOW_SPREAD_WEAK = 0.15


def _stretch(u: np.ndarray, cores: int) -> np.ndarray:
    """The CPU's stretch S(U) at per-core utilizations ``u`` (the open network's M/M/c, ``open_networks.stretch``);
    NaN where there is no steady state (U outside [0, 1))."""
    u = np.asarray(u, float)
    steady = (u >= 0) & (u < 1)
    out = np.full(len(u), np.nan)
    out[steady] = stretch(u[steady], np.full(int(steady.sum()), float(cores)))
    return out


@dataclass(frozen=True)
class ServerDemands:
    """One server's fitted per-class figures, in seconds; everything else derives from them.

    ``fit_server_demands`` builds it; ``utilization(rates)`` and ``latency(stretch)`` give the what-if's figures.

    Attributes
    ----------
    member : str
        The server's name.
    cores : int
        The processors it may use.
    classes : tuple of str
        The classes it served (of ``reads``, ``writes``, ``commands``).
    cpu_per_op : dict
        ``{class: D_c}``, CPU seconds per operation.
    background_cores : float
        B, CPU seconds per second with no operations.
    latency_fixed, latency_cpu : dict
        ``{class: seconds}``: A_c, the part of the latency the CPU does not stretch, and L_c, the part it stretches.
    baseline : dict
        ``{class: ops/s}``, the mean observed rates.
    intervals : int
        The intervals fitted.
    reasons : tuple of Reason
        What weakens the fit (``evidence`` is their verdict).
    latency_wait, latency_mix, mix_seen, wait_per_op
        The latency's terms in the server's wait for its cores and in the other classes' shares, and the shares seen.
    replication_cpu_per_op, replication_baseline, served, served_latency
        The replication work a member does for the others and its cost.
    """

    member: str
    cores: int
    classes: tuple[str, ...]
    cpu_per_op: dict          # class -> D_c, CPU seconds per operation
    background_cores: float   # B, CPU seconds per second with no operations
    latency_fixed: dict       # class -> A_c (s)
    latency_cpu: dict         # class -> L_c (s), stretched by S(U)
    baseline: dict            # class -> mean observed ops/s
    intervals: int
    reasons: tuple = ()
    latency_wait: dict = field(default_factory=dict)  # class -> k_c, latency (s) per second of wait per operation
    wait_per_op: float = 0.0  # the server's mean wait for its cores per operation over the intervals (s)
    latency_mix: dict = field(default_factory=dict)   # class -> {other class: latency (s) from none to all of it}
    mix_seen: dict = field(default_factory=dict)      # class -> {other major class: (lowest, highest) share of the
    #                                                   operations over the intervals its latency was fitted on}
    replication_cpu_per_op: float = 0.0   # CPU seconds per unit of replication work (a member serving no writes)
    replication_baseline: float = 0.0     # its mean replication work per s: oplog entries applied + getMores and
    #                                       reports served
    served: dict = field(default_factory=dict)          # class -> mean replication operations per s it served to
    #                                                     other members, taken out of the class (SERVED_WORDS)
    served_latency: dict = field(default_factory=dict)  # class -> their mean latency (s); NaN: not told from the
    #                                                     clients' operations'

    @cached_property
    def evidence(self) -> Evidence:
        """The verdict on the fitted demands."""
        return Evidence.of(*self.reasons)

    def utilization(self, rates: Mapping[str, float], writes_factor: float = 1.0) -> float:
        """The CPU's utilization per core at these per-class rates, the replication work the observed times
        ``writes_factor``: the background's, each class's and the replication's CPU seconds a second over the cores,
        the utilization ``open_networks.open_network`` gives this CPU, whose stretch S(U) every class shares."""
        replicated = self.replication_baseline * writes_factor if self.replication_cpu_per_op > 0 else 0.0
        return (self.background_cores + sum(rates[c] * self.cpu_per_op[c] for c in self.classes)
                + replicated * self.replication_cpu_per_op) / self.cores

    def latency(self, stretch: float, wait: float | None = None, rates: Mapping[str, float] | None = None) -> dict:
        """Per-class mean server-side latency (s) at CPU stretch S, the server's wait for its cores per operation
        ``wait`` (s; default: as observed) and the mix of ``rates`` (default: as observed)."""
        wait = self.wait_per_op if wait is None else wait
        share = mix_shares(rates or self.baseline)
        return {c: self.latency_fixed[c] + self.latency_cpu[c] * stretch + self.latency_wait.get(c, 0.0) * wait
                + sum(m * share.get(k, 0.0) for k, m in self.latency_mix.get(c, {}).items()) for c in self.classes}


    def outside_mix(self, rates: Mapping[str, float]) -> list:
        """Where the mix of ``rates`` leaves what the latency fits saw: (class, other class, asked share, lowest and
        highest fitted share, term) for each class asked for whose latency was fitted only where the other class's
        share of the operations lay elsewhere. ``term``: the latency has a term in that share (``latency_mix``), so
        the prediction extrapolates it; otherwise (listed only when the share is more than MIN_SHARE_SPREAD out) the
        mix's effect was not measured there and the prediction assumes none."""
        share, out = mix_shares(rates), []
        for c in self.classes:
            if not rates.get(c):
                continue
            for k, (low, high) in self.mix_seen.get(c, {}).items():
                term = k in self.latency_mix.get(c, {})
                slack, asked = (SHARE_SLACK if term else MIN_SHARE_SPREAD), share.get(k, 0.0)
                if asked < low - slack or asked > high + slack:
                    out.append((c, k, asked, low, high, term))
        return out


def _nnls(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return nnls(a, b)[0]


def cpu_demands(x: np.ndarray, cpu: np.ndarray, r: np.ndarray, minor: np.ndarray, classes, member: str,
                reasons: list, follows: np.ndarray | None = None) -> tuple[float, np.ndarray, float]:
    """The classes' CPU per operation from per-interval rates ``x`` (intervals x classes), the process CPU ``cpu``
    (cores) and the classes' latencies ``r`` (s): (background cores, D per class, D of ``follows``, 0 without it).

    A non-negative regression (``regress_classes``; ``minor`` marks the classes too small to tell from the background,
    ``follows`` a rate that is not a class: the replication work); where it cannot give every class CPU of its own,
    the CPU is apportioned to the classes by their shares of time in the server. What weakens the figures is appended
    to ``reasons``, each naming ``member``.
    """
    regression, replication_cpu = regress_classes(x, cpu, r, minor, follows)
    if follows is not None and (regression is None or replication_cpu <= 0):
        regression, replication_cpu = regress_classes(x, cpu, r, minor)
    if follows is not None and replication_cpu <= 0:
        reasons.append(Reason("replication_in_background", "weak", f"{member}: the CPU of its replication work "
                              f"({number(follows.mean())} oplog entries applied and getMores and position reports "
                              "served a second) could not be told from the rest, so it is counted as background: a "
                              "what-if with more writes understates this member's CPU"))
    regressed = regression is not None
    if regressed:
        background, d, r2 = regression
        if r2 < 0.8:
            reasons.append(Reason("cpu_fit_poor", "weak", f"{member}: the CPU regression on the per-class rates "
                                  f"explains {r2:.0%} of the CPU's variation across intervals", float(r2)))
        unidentified = [c for c, v in zip(classes, d) if v <= 0]
        if unidentified:
            # every operation costs CPU: a class given none would grow for free in the what-if
            reasons.append(Reason("cpu_demand_zero", "weak", f"{member}: the regression gives {unidentified[0]} no CPU "
                                  "of its own (its rate hardly varies apart from the others'), so it is not used"))
            regressed = False
    if not regressed:
        replication_cpu = 0.0          # apportioned: every CPU second goes to a class, the replication's too
        share = np.nan_to_num(x * r).sum(axis=0)
        share = share / share.sum() if share.sum() > 0 else np.full(len(classes), 1 / len(classes))
        background = 0.0
        d = share * cpu.sum() / np.maximum(x.sum(axis=0), 1e-300)
        why = ("the regression cannot split it" if reasons and reasons[-1].code == "cpu_demand_zero" else
               "the mix and load hardly vary across the intervals")
        reasons.append(Reason("cpu_apportioned", "weak", f"{member}: {why}, so the CPU is apportioned to the classes "
                              "by their shares of time in the server"))
    return background, d, replication_cpu


def fit_server_demands(samples: pd.DataFrame, cores, member: str = "server") -> ServerDemands:
    """Per-class CPU demands and the split of their latency from one server's ``observe`` samples.

    The module docstring gives the model: a non-negative regression of the process CPU on the per-class rates, the
    CPU as an M/M/c station, each class's latency split into a part the CPU stretches and a part it does not.

    Parameters
    ----------
    samples : pandas.DataFrame
        The per-interval table of ``capmodel observe`` (per class ``<class>_per_s`` and ``<class>_latency_ms``, and
        ``cpu_cores``).
    cores : int
        The processors the mongod may use (its host's cores, or its CPU affinity).
    member : str, default "server"
        The name messages and the answer give the server.

    Returns
    -------
    ServerDemands

    Raises
    ------
    InputError
        ``cores`` is out of range, or fewer usable intervals (with operations and CPU figures) than the model needs.
    """
    cores = SERVER_CORES.check(cores, InputError)
    table = usable_intervals(samples, member)
    if len(table) < MIN_INTERVALS:
        raise InputError(f"{member}: {plural(len(table), 'usable interval')} with operations and CPU figures; the mix "
                         f"model needs at least {MIN_INTERVALS}")
    x_all = table[[f"{c}_per_s" for c in OPERATION_CLASSES]].fillna(0.0).to_numpy(float)
    present = [i for i, c in enumerate(OPERATION_CLASSES) if x_all[:, i].mean() > 0]
    classes = tuple(OPERATION_CLASSES[i] for i in present)
    x = x_all[:, present]
    cpu = table["cpu_cores"].to_numpy(float)
    r = np.column_stack([table[f"{c}_latency_ms"].to_numpy(float) / 1000.0 for c in classes])
    reasons = []
    replication = table[REPLICATION_RATE].to_numpy(float)
    served_latency = dict(table.attrs.get("replication_latency_s", {}))
    served = {c: float(rate_column(table, SERVED[c]).mean()) for c in served_latency}
    for c, latency in served_latency.items():
        if not np.isfinite(latency):
            reasons.append(Reason("latency_mixed_with_replication", "weak", f"{member}: its {c} include the "
                                  f"{SERVED_WORDS[c]} it served to other members, whose latency could not be told from "
                                  f"the clients' (no intervals without the clients' {c}, nor enough change in their "
                                  f"shares): the {c}' latency is the mean over both"))
    # the replication work follows the writes: where the member serves writes, its cost is theirs (a regressor of its
    # own would be their copy); where it serves none (a secondary), it is a term of its own, scaled with the writes
    follows = replication if "writes" not in classes and replication.mean() > 0 else None
    mean_x = x.mean(axis=0)
    minor = mean_x < MINOR_SHARE * mean_x.sum()
    background, d, replication_cpu = cpu_demands(x, cpu, r, minor, classes, member, reasons, follows)
    cpu_per_op = {c: float(v) for c, v in zip(classes, d)}
    u = cpu / cores
    stretch = _stretch(np.clip(u, 0, 0.999), cores)
    fixed, inside, assumed, slopes, mixed, seen = {}, {}, [], {}, {}, {}
    wait = wait_per_op(table)
    total = x.sum(axis=1)[:, None]
    share = np.divide(x, total, out=np.zeros_like(x), where=total > 0)
    for j, c in enumerate(classes):
        ok = np.isfinite(r[:, j]) & (x[:, j] > 0) & np.isfinite(stretch)
        spread = ok.sum() >= MIN_INTERVALS and np.ptp(stretch[ok]) >= MIN_STRETCH_SPREAD * np.min(stretch[ok])
        k, w = 0.0, np.zeros(len(table))
        if wait is not None:   # the latency the server's wait for its cores adds, taken out before the split
            ok &= np.isfinite(wait)
            w = np.nan_to_num(wait)
            k = wait_slope(r[ok, j], w[ok], stretch[ok] if spread else None, np.sqrt(x[ok, j]))
            slopes[c] = k
        ok &= typical(r[:, j] - k * w, ok)
        weight = np.sqrt(x[ok, j])
        rj, sj = r[ok, j] - k * w[ok], stretch[ok]
        mean_r = float(np.average(rj, weights=x[ok, j])) if ok.any() else 0.0
        # the others' share of the mix (major classes, where it varies and explains the latency beyond chance: an
        # F-test) takes what it explains of the fixed part
        others = [i for i in range(len(classes)) if i != j and not minor[i] and ok.sum() >= MIN_INTERVALS
                  and np.ptp(share[ok, i]) >= MIN_SHARE_SPREAD]
        mix, ones = share[ok][:, others], np.ones((ok.sum(), 1))
        seen[c] = {classes[i]: (float(share[ok, i].min()), float(share[ok, i].max()))
                   for i in range(len(classes)) if i != j and not minor[i] and ok.any()}
        # the class's own intervals must span the stretch by MIN_STRETCH_SPREAD (relative) to separate A_c and L_c
        if ok.sum() >= MIN_INTERVALS and np.ptp(sj) >= MIN_STRETCH_SPREAD * np.min(sj):
            base = np.column_stack([ones, sj])
            mix = mix if explains(base, mix, rj, weight) else mix[:, :0]
            a, b, *m = _nnls(np.column_stack([base, mix]) * weight[:, None], rj * weight)
        else:
            s_mean = float(np.average(sj, weights=x[ok, j])) if ok.any() else 1.0
            b = min(cpu_per_op[c], mean_r / s_mean)
            a, m = mean_r - b * s_mean, []
            if others and explains(np.column_stack([ones, sj]), mix, rj, weight):
                # the part stretched is at most the latency with none of the others (the intercept of the latency on
                # their shares), not the mean latency: where the mean is all stretched (b = mean / S), nothing is
                # left for the mix to explain, and its term could not be fitted however clearly it shows
                alone = _nnls(np.column_stack([ones, mix]) * weight[:, None], rj * weight)[0]
                b = min(cpu_per_op[c], alone / s_mean)
                a, *m = _nnls(np.column_stack([ones, mix]) * weight[:, None], (rj - b * sj) * weight)
            assumed.append(c)
        mixed[c] = {classes[i]: float(v) for i, v in zip(others, m) if v > 1e-9}   # a nanosecond: none
        fixed[c], inside[c] = float(a), float(b)
    if assumed:
        reasons.append(Reason("latency_split_assumed", "weak", f"{member}: the CPU utilization hardly varies while "
                              f"{', '.join(assumed)} run, so the share of their latency that grows with CPU "
                              "contention is assumed (at most their CPU time), not measured"))
    baseline = {c: float(x[:, j].mean()) for j, c in enumerate(classes)}
    mean_wait = float(np.average(np.nan_to_num(wait), weights=x.sum(axis=1))) if wait is not None else 0.0
    return ServerDemands(member, cores, classes, cpu_per_op, background, fixed, inside, baseline, len(table),
                         tuple(reasons), slopes, mean_wait, {c: m for c, m in mixed.items() if m},
                         {c: v for c, v in seen.items() if v}, replication_cpu,
                         float(follows.mean()) if follows is not None else 0.0, served, served_latency)


def predict_demands(demands: ServerDemands, rates: dict, wait: float | None = None, writes_factor: float = 1.0) -> dict:
    """The server's figures at per-class ``rates``: CPU utilization per core and cores used, the factor of the asked
    load that fits before the CPU saturates, and per class the throughput and mean latency (ms; NaN at U >= 1)."""
    u = demands.utilization(rates, writes_factor)
    stretch = float(_stretch(np.array([u]), demands.cores)[0]) if u < 1 else float("nan")
    asked = u * demands.cores - demands.background_cores      # 0 when no operation is asked: any factor of it fits
    fits = (demands.cores - demands.background_cores) / asked if asked > 0 else np.inf
    row = {"utilization": u, "load_factor_that_fits": fits}
    latency = demands.latency(stretch, wait, rates) if np.isfinite(stretch) else {c: np.nan for c in demands.classes}
    for c in demands.classes:
        row[f"{c}_throughput"] = rates[c] if u < 1 else np.nan
        row[f"{c}_latency_ms"] = latency[c] * 1000.0
    row["cpu_cores"] = u * demands.cores
    row["replication_per_s"] = demands.replication_baseline * writes_factor
    return row


def cpu_residuals(fit: ServerDemands, table: pd.DataFrame) -> np.ndarray:
    """Per interval, the process CPU less what the fitted demands give for its rates (cores)."""
    fitted = fit.background_cores + fit.replication_cpu_per_op * table[REPLICATION_RATE].to_numpy(float)
    for c in fit.classes:
        fitted = fitted + fit.cpu_per_op[c] * table[f"{c}_per_s"].fillna(0.0).to_numpy(float)
    return table["cpu_cores"].to_numpy(float) - fitted


def mix_what_if(observations: Mapping[str, pd.DataFrame], cores, scale=None, rates=None,
                n_bootstrap: int = 200, level: float = 0.95, seed: int = 0, wait_per_op=None) -> MixWhatIf:
    """The mix what-if from production: each member's throughput, latency and CPU at another load, with intervals.

    Per member the per-class demands are fitted from its own samples (``fit_server_demands``), the asked rates are set,
    and the CPU is solved again as an open network; over several members the answer names the one that saturates first.

    Parameters
    ----------
    observations : mapping
        ``{member: samples}``, each the per-interval table ``capmodel observe`` writes (``samples.csv``).
    cores : int or mapping
        The processors each mongod may use: one count for every member or ``{member: count}``.
    scale : mapping, optional
        ``{class: factor}`` of the observed mean rates (classes ``reads``, ``writes``, ``commands``; a class not
        named keeps its rate), e.g. ``{"reads": 1.3, "writes": 2}``.
    rates : mapping, optional
        ``{class: ops/s}`` instead of ``scale`` (a class not named is 0). Give one of the two at most; neither asks
        for the observed load.
    n_bootstrap : int, default 200
        Refits on resampled intervals for the intervals (0 to 10,000; 0: none). The intervals are resampled in runs of
        consecutive intervals where the CPU regression's residuals show that neighbours move together (a circular
        block bootstrap), then widened by the window-to-window spread (``capmodel.models.mix.spread``).
    level : float, default 0.95
        The intervals' coverage, strictly between 0 and 1.
    seed : int, default 0
        The bootstrap's random seed.
    wait_per_op : float or mapping, optional
        Where the samples carry the server's wait for its cores (``cpu_wait_per_s``), that wait per operation in
        seconds during the what-if, one figure or ``{member: figure}``; default as observed.

    Returns
    -------
    MixWhatIf
        Per member and class the asked rate, the predicted throughput and latency with their interval and the CPU
        utilization (``table``), the limiting member, the verdict (``evidence``) and ``describe()``.

    Raises
    ------
    InputError
        ``observations`` is empty or not a mapping, a member has too few usable intervals, both ``scale`` and ``rates``
        are given, a class is unknown, or a number is out of range.
    """
    if not isinstance(observations, Mapping) or not observations:
        raise InputError("observations must map each member's name to its samples")
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, int) or not 0 <= n_bootstrap <= 10_000:
        raise InputError(f"n_bootstrap must be a whole number from 0 to 10,000, got {n_bootstrap!r}")
    if not 0 < level < 1:
        raise InputError(f"level must be between 0 and 1, got {level!r}")
    rng = np.random.default_rng(seed)
    members, asked, rows, lows, highs, waits, blocks, spread = [], {}, {}, {}, {}, {}, {}, {}
    fits = {name: fit_server_demands(samples, cores[name] if isinstance(cores, Mapping) else cores, str(name))
            for name, samples in observations.items()}
    factor, reasons = writes_factor(list(fits.values()), scale, rates)
    for name, samples in observations.items():
        c, fit = (cores[name] if isinstance(cores, Mapping) else cores), fits[name]
        members.append(fit)
        asked[fit.member] = scaled_rates(fit, scale, rates)
        wait = WAIT_PER_OP.check(wait_per_op[name] if isinstance(wait_per_op, Mapping) else wait_per_op, InputError,
                                 "wait_per_op") if wait_per_op is not None else None
        waits[fit.member] = fit.wait_per_op if wait is None else wait
        rows[fit.member] = predict_demands(fit, asked[fit.member], wait, factor)
        table = usable_intervals(samples, str(name))
        found = dependence(cpu_residuals(fit, table))
        blocks[fit.member] = (found.block, found.widening(found.block, level))
        draws = []
        for _ in range(n_bootstrap):
            resample = table.iloc[circular_blocks(rng, len(table), found.block)]
            try:
                refit = fit_server_demands(resample, c, str(name))
            except InputError:
                continue
            draws.append(predict_demands(
                refit, scaled_rates(refit, scale, rates) if rates is None else asked[fit.member], wait, factor))
        lows[fit.member], highs[fit.member] = percentiles(draws or [rows[fit.member]], level)
        widen = blocks[fit.member][1]
        if widen > 1:                            # their distance from the estimate; an infinite end stays one
            estimate = pd.Series(rows[fit.member])
            lows[fit.member] = (estimate - widen * (estimate - lows[fit.member])).clip(lower=0.0)
            highs[fit.member] = estimate + widen * (highs[fit.member] - estimate)
        spread[fit.member] = window_spread(window_errors(table, fit.classes, lambda rates, replicated: predict_demands(
            fit, rates, None, replicated / fit.replication_baseline if fit.replication_baseline > 0 else 1.0),
            table[REPLICATION_RATE].to_numpy(float)))
        lows[fit.member], highs[fit.member] = widened(pd.Series(rows[fit.member]), lows[fit.member],
                                                      highs[fit.member], spread[fit.member], fit.classes, level)
    predicted = pd.DataFrame(rows).T
    unseen = [(m.member, c) for m in members for c, v in (rates or {}).items() if c not in m.classes and v]
    reasons += [Reason("class_not_observed", "unusable", f"{member} was not observed serving {c}: the rate asked for "
                      "them has no demand to apply to (observe a period with some)") for member, c in unseen]
    reasons += [Reason("saturated", "unusable", f"{m}: the asked load needs "
                       f"{percent(predicted.loc[m, 'utilization'])} of the CPU: no steady state",
                       float(predicted.loc[m, "utilization"]))
               for m in predicted.index if predicted.loc[m, "utilization"] >= 1]
    reasons += [Reason("window_variation", "weak", f"{m}: its {key} latency moved by {percent(np.expm1(s))} (root mean "
                       f"square) from one window of the observation to another, beyond what the fit explains: a "
                       "what-if for another period is no surer than that", float(np.expm1(s)))
                for m, by in spread.items() for key, (s, _) in by.items()
                if key != CPU and np.expm1(s) > WINDOW_SPREAD_WEAK   # a minor class's noise does not weaken it
                and asked[m].get(key, 0) >= MINOR_SHARE * sum(asked[m].values()) > 0]
    outside = {m.member: m.outside_mix(asked[m.member]) for m in members}
    reasons += [Reason("mix_extrapolated", "weak", f"{member}: {mix_sentence(*row)}", float(row[2]))
                for member, rows in outside.items() for row in rows]
    return MixWhatIf(tuple(members), asked, predicted, pd.DataFrame(lows).T, pd.DataFrame(highs).T, level,
                     tuple(reasons), tuple(unseen), waits, wait_per_op is not None, outside, factor, blocks,
                     spread)
