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
  network of ``capmodel.models.open_networks`` (per-class arrival rates; the M/M/c stretch S(U) = residence / demand,
  the same for every class under processor sharing; Lazowska et al., "Quantitative System Performance", 1984, ch. 7),
  the background as one more class.
- **Latency per class** R_c = A_c + L_c S(U): A_c the time that does not grow with CPU contention, L_c the CPU time
  inside the latency window, stretched as the CPU gets busier; fitted per class by non-negative least squares over
  the intervals (each weighted by its operations). Unless the class's own intervals span S by 25 % the split is not
  identified (noise would decide it): L_c is then min(D_c, R_c / S), at most its CPU time, and the verdict says so.

A what-if scales each class's observed mean rate (or sets the rates) and solves the network again. Production traffic
is open (many independent application requests), so a class's throughput is its offered rate while the CPU keeps up;
at U >= 1 there is no steady state and the answer says how much of the asked load fits instead. Intervals: a
bootstrap over the intervals (refit and predict on each resample; percentiles).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd
from scipy.optimize import nnls

from capmodel.constraints import Number, with_name
from capmodel.errors import InputError
from capmodel.formatting import number
from capmodel.models.erlang import erlang_c
from capmodel.models.evidence import Evidence, Reason
from capmodel.models.laws import SERVERS
from capmodel.models.open_networks import open_network
from capmodel.models.renamed import table_frame

# the what-if's work grows with the cores (10^5 ran for minutes); 1,024: the logical CPUs of the largest hosts
CORES = with_name(SERVERS, "cores (processors the server may use)", high=1_024)

CLASSES = ("reads", "writes", "commands")
#: what a what-if may ask (capmodel.constraints): a factor of the observed rate, or a rate in ops/s; beyond these a
#: figure is a slip of the keyboard, and near 1e308 the utilization overflows to infinity
SCALE_FACTOR = Number(float, 0.0, 1e6, name="scale factor", wanted_text="a number from 0 to 1,000,000",
                      text=False)
RATE = Number(float, 0.0, 1e9, name="rate", wanted_text="a number from 0 to 1,000,000,000 ops/s",
              text=False)
MIN_INTERVALS = 5
MIN_STRETCH_SPREAD = 0.25
MINOR_SHARE = 0.02       # a class with a smaller share of the operations is "minor" (see fit_server_demands)
BACKGROUND = "background"


def usable_intervals(samples: pd.DataFrame, source: str = "samples") -> pd.DataFrame:
    """The intervals a fit may use: not dropped, CPU known, at least one operation; columns checked."""
    if not isinstance(samples, pd.DataFrame):
        raise InputError(f"{source}: samples must be a table (capmodel observe's samples.csv)")
    need = ["cpu_cores"] + [f"{c}_per_s" for c in CLASSES] + [f"{c}_latency_ms" for c in CLASSES]
    missing = [c for c in need if c not in samples]
    if missing:
        raise InputError(f"{source}: no column {missing[0]!r} (is this capmodel observe's samples.csv?)")
    table = samples.copy()
    for column in need:
        table[column] = pd.to_numeric(table[column], errors="coerce")
    keep = np.isfinite(table["cpu_cores"].to_numpy(float))
    if "dropped" in table:
        keep &= table["dropped"].astype(object).fillna("").astype(str).eq("").to_numpy()
    rates = table[[f"{c}_per_s" for c in CLASSES]].fillna(0.0).to_numpy(float)
    keep &= rates.sum(axis=1) > 0
    return table[keep].reset_index(drop=True)


def _stretch(u: np.ndarray, cores: int) -> np.ndarray:
    """M/M/c residence / demand at per-server utilization u: 1 + C(c, cU) / (c (1 - U)), as in the open network."""
    out = np.full(len(u), np.nan)
    for i, ui in enumerate(np.asarray(u, float)):
        if 0 <= ui < 1:
            out[i] = 1.0 + erlang_c(cores, ui * cores) / (cores * (1.0 - ui))
    return out


@dataclass(frozen=True)
class ServerDemands:
    """One server's fitted per-class figures (seconds); everything else derives from them."""

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

    @cached_property
    def evidence(self) -> Evidence:
        """The verdict on the fitted demands."""
        return Evidence.of(*self.reasons)

    def solve(self, rates: Mapping[str, float]):
        """The open network at these per-class rates: (utilization per core, stretch S, result or None if U >= 1)."""
        d = {c: self.cpu_per_op[c] for c in self.classes}
        u = (self.background_cores + sum(rates[c] * d[c] for c in self.classes)) / self.cores
        if u >= 1:
            return u, float("nan"), None
        arrivals = {**{c: rates[c] for c in self.classes}, BACKGROUND: 1.0}
        result = open_network(arrivals, {"cpu": {**d, BACKGROUND: self.background_cores}}, {"cpu": self.cores})
        return u, float(_stretch(np.array([u]), self.cores)[0]), result

    def latency(self, stretch: float) -> dict:
        """Per-class mean server-side latency (s) at CPU stretch S."""
        return {c: self.latency_fixed[c] + self.latency_cpu[c] * stretch for c in self.classes}


def typical(values: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """Of the intervals ``ok``, those whose latency is within 4 scaled MADs above their median (Hampel's rule): a
    disturbed interval (a checkpoint, a neighbour on the core) is a spike that does not scale with the mix and would
    decide a small fit, or a measured mean."""
    ok = np.asarray(ok, bool)
    if ok.sum() < MIN_INTERVALS:
        return ok
    median = np.median(values[ok])
    mad = 1.4826 * np.median(np.abs(values[ok] - median))
    return ok & ~(values > median + 4 * max(mad, 1e-12))


def _nnls(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return nnls(a, b)[0]


def _regress(x: np.ndarray, cpu: np.ndarray):
    """cpu_t = B + sum_c D_c X_c,t by non-negative least squares: (B, D, R^2), or None where the intervals cannot
    separate the terms (rank) or are too few for them."""
    design = np.column_stack([np.ones(len(x)), x])
    scale = np.maximum(np.abs(design).max(axis=0), 1e-12)
    if np.linalg.matrix_rank(design / scale, tol=1e-6) < design.shape[1] or len(x) < design.shape[1] + 2:
        return None
    coef = _nnls(design / scale, cpu) / scale
    fitted = design @ coef
    r2 = 1 - np.sum((cpu - fitted) ** 2) / max(np.sum((cpu - cpu.mean()) ** 2), 1e-300)
    return float(coef[0]), coef[1:], float(r2)


def fit_server_demands(samples: pd.DataFrame, cores, member: str = "server") -> ServerDemands:
    """Per-class CPU demands and latency split from one server's observe samples (see the module doc).

    ``cores``: the processors the mongod may use (its host's cores, or its CPU affinity).
    """
    cores = CORES.check(cores, InputError)
    table = usable_intervals(samples, member)
    if len(table) < MIN_INTERVALS:
        raise InputError(f"{member}: {len(table)} usable interval(s) with operations and CPU figures; the mix model "
                         f"needs at least {MIN_INTERVALS}")
    x_all = table[[f"{c}_per_s" for c in CLASSES]].fillna(0.0).to_numpy(float)
    present = [i for i, c in enumerate(CLASSES) if x_all[:, i].mean() > 0]
    classes = tuple(CLASSES[i] for i in present)
    x = x_all[:, present]
    cpu = table["cpu_cores"].to_numpy(float)
    r = np.column_stack([table[f"{c}_latency_ms"].to_numpy(float) / 1000.0 for c in classes])
    reasons = []
    regression = _regress(x, cpu)
    mean_x = x.mean(axis=0)
    minor = mean_x < MINOR_SHARE * mean_x.sum()
    if (regression is None or min(regression[1]) <= 0) and minor.any() and not minor.all():
        # a class with a few operations a second (health checks, the driver's own commands) cannot be told from the
        # background by the regression, and would take the others' fit down with it: the others are regressed, and
        # its CPU per operation is its time in the server times the CPU per second in the server of the others
        major = _regress(x[:, ~minor], cpu)
        if major is not None and min(major[1]) > 0:
            r_mean = np.array([np.nanmean(r[:, j]) if np.isfinite(r[:, j]).any() else 0.0 for j in range(len(classes))])
            ratio = float(mean_x[~minor] @ major[1]) / max(float(mean_x[~minor] @ r_mean[~minor]), 1e-300)
            d = np.where(minor, r_mean * ratio, 0.0)
            d[~minor] = major[1]
            background = max(major[0] - float(mean_x[minor] @ d[minor]), 0.0)
            regression = (background, d, major[2])
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
        share = np.nan_to_num(x * r).sum(axis=0)
        share = share / share.sum() if share.sum() > 0 else np.full(len(classes), 1 / len(classes))
        background = 0.0
        d = share * cpu.sum() / np.maximum(x.sum(axis=0), 1e-300)
        why = ("the regression cannot split it" if reasons and reasons[-1].code == "cpu_demand_zero" else
               "the mix and load hardly vary across the intervals")
        reasons.append(Reason("cpu_apportioned", "weak", f"{member}: {why}, so the CPU is apportioned to the classes "
                              "by their shares of time in the server"))
    cpu_per_op = {c: float(v) for c, v in zip(classes, d)}
    u = cpu / cores
    stretch = _stretch(np.clip(u, 0, 0.999), cores)
    fixed, inside, assumed = {}, {}, []
    for j, c in enumerate(classes):
        ok = np.isfinite(r[:, j]) & (x[:, j] > 0) & np.isfinite(stretch)
        ok &= typical(r[:, j], ok)
        weight = np.sqrt(x[ok, j])
        rj, sj = r[ok, j], stretch[ok]
        mean_r = float(np.average(rj, weights=x[ok, j])) if ok.any() else 0.0
        # the class's own intervals must span the stretch by MIN_STRETCH_SPREAD (relative) to separate A_c and L_c
        if ok.sum() >= MIN_INTERVALS and np.ptp(sj) >= MIN_STRETCH_SPREAD * np.min(sj):
            a, b = _nnls(np.column_stack([np.ones(ok.sum()), sj]) * weight[:, None], rj * weight)
        else:
            s_mean = float(np.average(sj, weights=x[ok, j])) if ok.any() else 1.0
            b = min(cpu_per_op[c], mean_r / s_mean)
            a = mean_r - b * s_mean
            assumed.append(c)
        fixed[c], inside[c] = float(a), float(b)
    if assumed:
        reasons.append(Reason("latency_split_assumed", "weak", f"{member}: the CPU utilization hardly varies while "
                              f"{', '.join(assumed)} run, so the share of their latency that grows with CPU "
                              "contention is assumed (at most their CPU time), not measured"))
    baseline = {c: float(x[:, j].mean()) for j, c in enumerate(classes)}
    return ServerDemands(member, cores, classes, cpu_per_op, background, fixed, inside, baseline, len(table),
                         tuple(reasons))


def scaled_rates(demands: ServerDemands, scale: Mapping[str, float] | None = None,
                 rates: Mapping[str, float] | None = None) -> dict:
    """Per-class rates of the what-if: ``rates`` as given, or the observed means times ``scale`` (default 1)."""
    if rates is not None and scale is not None:
        raise InputError("give either scale (factors of the observed rates) or rates (ops/s), not both")
    given = dict(rates if rates is not None else (scale or {}))
    unknown = sorted(set(map(str, given)) - set(CLASSES))
    if unknown:
        raise InputError(f"{'rates' if rates is not None else 'scale'} names {unknown[0]!r}; classes are "
                         f"{', '.join(CLASSES)}")
    out = {}
    for c in demands.classes:
        value = given.get(c, None if rates is not None else 1.0)
        if value is None:
            value = 0.0
        value = (RATE if rates is not None else SCALE_FACTOR).check(
            value, InputError, f"{'rates' if rates is not None else 'scale'}: {c}")
        out[c] = float(value) if rates is not None else float(value) * demands.baseline[c]
    return out


def _predict(demands: ServerDemands, rates: dict) -> dict:
    u, stretch, _ = demands.solve(rates)
    asked = u * demands.cores - demands.background_cores      # 0 when no operation is asked: any factor of it fits
    fits = (demands.cores - demands.background_cores) / asked if asked > 0 else np.inf
    row = {"utilization": u, "load_factor_that_fits": fits}
    latency = demands.latency(stretch) if np.isfinite(stretch) else {c: np.nan for c in demands.classes}
    for c in demands.classes:
        row[f"{c}_throughput"] = rates[c] if u < 1 else np.nan
        row[f"{c}_latency_ms"] = latency[c] * 1000.0
    row["cpu_cores"] = u * demands.cores
    return row


@dataclass(frozen=True)
class MixWhatIf:
    """The what-if over one or more members: per member the predicted figures and their intervals."""

    members: tuple[ServerDemands, ...]
    rates: dict                       # member -> {class: ops/s asked}
    predicted: pd.DataFrame           # one row per member
    low: pd.DataFrame
    high: pd.DataFrame
    level: float
    reasons: tuple = field(default=())
    unseen: tuple = ()                # (member, class) pairs asked for but never observed there

    @cached_property
    def limiting_member(self) -> str:
        """The member with the least room: the smallest factor of the asked load that still fits."""
        return str(self.predicted["load_factor_that_fits"].idxmin())

    @cached_property
    def evidence(self) -> Evidence:
        """The members' fits, plus saturation where the asked load does not fit."""
        return Evidence.of(*[r for m in self.members for r in m.reasons], *self.reasons)

    @property
    def table(self) -> pd.DataFrame:
        """One row per member and class: rate asked, predicted throughput and latency with the interval."""
        rows = []
        for m in self.members:
            p, lo, hi = self.predicted.loc[m.member], self.low.loc[m.member], self.high.loc[m.member]
            for c in m.classes:
                rows.append({"member": m.member, "class": c, "observed_per_s": m.baseline[c],
                             "asked_per_s": self.rates[m.member][c], "throughput": p[f"{c}_throughput"],
                             "latency_ms": p[f"{c}_latency_ms"], "latency_ms_low": lo[f"{c}_latency_ms"],
                             "latency_ms_high": hi[f"{c}_latency_ms"], "utilization": p["utilization"]})
        return table_frame(pd.DataFrame(rows), "MixWhatIf")

    def describe(self) -> str:
        """The answer in sentences (only those whose condition holds)."""
        lines = []
        for m in self.members:
            p = self.predicted.loc[m.member]
            missing = [c for member, c in self.unseen if member == m.member]
            if missing:
                lines.append(f"{m.member}: not observed serving {', '.join(missing)}: no prediction for this load.")
                continue
            if p["utilization"] >= 1:
                lines.append(f"{m.member}: the asked load needs {_percent(p['utilization'])} of {_cores(m.cores)}: it "
                             f"does not fit; {_percent(p['load_factor_that_fits'])} of it does.")
                continue
            low, high = self.low.loc[m.member], self.high.loc[m.member]
            parts = [f"{c} {number(p[f'{c}_throughput'])} ops/s at {p[f'{c}_latency_ms']:.3g} ms "
                     f"({low[f'{c}_latency_ms']:.3g}-{high[f'{c}_latency_ms']:.3g})" for c in m.classes
                     if self.rates[m.member][c] > 0]
            room = (f", room for {number(p['load_factor_that_fits'])}x this load before the CPU saturates" if parts
                    else " (its background work alone)")   # no load asked: no factor of it means anything
            lines.append(f"{m.member}: " + "; ".join(parts or ["no operations asked"])
                         + f"; CPU {p['utilization']:.0%} of {_cores(m.cores)}{room}.")
        if len(self.members) > 1:
            lines.append(f"Saturates first: {self.limiting_member}.")
        answered = [m.member for m in self.members if m.member not in {member for member, _ in self.unseen}]
        if any(self.predicted.loc[answered, "utilization"] < 1):
            lines.append(f"Latency ranges: {self.level:.0%} bootstrap intervals over the observed intervals.")
        return "\n".join(lines)


def _percent(fraction: float) -> str:
    """A fraction as a percentage for people: 1,250,000% for a large one, 0.0042% for a small one."""
    return f"{fraction:,.0%}" if fraction >= 0.01 else f"{fraction * 100:.2g}%"


def _cores(cores) -> str:
    return f"{number(cores)} core" + ("" if cores == 1 else "s")


def mix_what_if(observations: Mapping[str, pd.DataFrame], cores, scale=None, rates=None,
                n_bootstrap: int = 200, level: float = 0.95, seed: int = 0) -> MixWhatIf:
    """The what-if for each member: ``observations`` = {member: samples}; ``cores`` one count or {member: count};
    ``scale`` = {class: factor of the observed mean rate} or ``rates`` = {class: ops/s}. Intervals: ``level``
    percentiles of ``n_bootstrap`` refits on intervals resampled with replacement."""
    if not isinstance(observations, Mapping) or not observations:
        raise InputError("observations must map each member's name to its samples")
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, int) or not 0 <= n_bootstrap <= 10_000:
        raise InputError(f"n_bootstrap must be a whole number from 0 to 10,000, got {n_bootstrap!r}")
    if not 0 < level < 1:
        raise InputError(f"level must be between 0 and 1, got {level!r}")
    rng = np.random.default_rng(seed)
    members, asked, rows, lows, highs = [], {}, {}, {}, {}
    for name, samples in observations.items():
        c = cores[name] if isinstance(cores, Mapping) else cores
        fit = fit_server_demands(samples, c, str(name))
        members.append(fit)
        asked[fit.member] = scaled_rates(fit, scale, rates)
        rows[fit.member] = _predict(fit, asked[fit.member])
        table = usable_intervals(samples, str(name))
        draws = []
        for _ in range(n_bootstrap):
            resample = table.iloc[rng.integers(0, len(table), len(table))]
            try:
                refit = fit_server_demands(resample, c, str(name))
            except InputError:
                continue
            draws.append(_predict(refit, scaled_rates(refit, scale, rates) if rates is None else asked[fit.member]))
        boot = pd.DataFrame(draws) if draws else pd.DataFrame([rows[fit.member]])
        lows[fit.member] = boot.quantile((1 - level) / 2)
        highs[fit.member] = boot.quantile((1 + level) / 2)
    predicted = pd.DataFrame(rows).T
    unseen = [(m.member, c) for m in members for c, v in (rates or {}).items() if c not in m.classes and v]
    reasons = [Reason("class_not_observed", "unusable", f"{member} was not observed serving {c}: the rate asked for "
                      "them has no demand to apply to (observe a period with some)") for member, c in unseen]
    reasons += [Reason("saturated", "unusable", f"{m}: the asked load needs {predicted.loc[m, 'utilization']:.0%} of "
                      "the CPU: no steady state", float(predicted.loc[m, "utilization"]))
               for m in predicted.index if predicted.loc[m, "utilization"] >= 1]
    return MixWhatIf(tuple(members), asked, predicted, pd.DataFrame(lows).T, pd.DataFrame(highs).T, level,
                     tuple(reasons), tuple(unseen))
