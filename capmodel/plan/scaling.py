"""The questions planning asks of a USL curve X(N) = lambda*N / (1 + sigma*(N-1) + kappa*N*(N-1)), answered in closed
form from the parameters (so that every bootstrap sample can be asked too): where is the peak, which N gives a
throughput, which N keeps the Little's-law response time N/X(N) under a target (those three solved once, in
capmodel.models.usl.closed_form), how many whole units reach a target."""
from __future__ import annotations

import math

import numpy as np

from capmodel.constraints import with_name
from capmodel.errors import PlanError
from capmodel.formatting import number, plural
from capmodel.models.usl.closed_form import concurrency_for_throughput, usl_peak, usl_throughput, whole_peak
from capmodel.plan.checks import KAPPA, SIGMA

_SIGMA, _KAPPA = with_name(SIGMA, "sigma", required=True), with_name(KAPPA, "kappa", required=True)


def check_usl_parameters(sigma: float, kappa: float, what: str = "USL") -> None:
    """``sigma`` and ``kappa`` as capmodel.plan.checks declares them (SIGMA, KAPPA); ``PlanError`` naming ``what``."""
    _SIGMA.check(sigma, PlanError, f"{what}: sigma")
    _KAPPA.check(kappa, PlanError, f"{what}: kappa")


def refuse_no_scaling(fit, source: str, unit: str) -> None:
    """A curve over ``unit`` count whose USL fit has sigma at 1 (the throughput does not grow with the count) gives
    no count to plan: ``PlanError`` saying so, naming the curve (not "sigma must be below 1, got 1.0", a figure the
    user never gave)."""
    if fit.sigma >= 1.0 - 1e-9:
        raise PlanError(f"{source}: the throughput does not grow with the {unit} count (the USL fit's sigma is 1: no "
                        f"scaling at all), so no {unit} count can be planned from this curve")


def units_for_throughput(target: float, measured: float, measured_units: float, sigma: float, kappa: float,
                         max_units: float = math.inf, unit: str = "units",
                         rate_unit: str = "ops/s") -> tuple[int | None, str]:
    """Smallest whole count n with X(n) >= target, where X(n) = measured * usl(n) / usl(measured_units).

    Returns (n, "") or (None, reason) when the curve's peak (or ``max_units``) is below the target; ``unit`` names
    the count (nodes, shards) and ``rate_unit`` the curve's throughput (ops/s, inserts/s) in the reason.
    """
    check_usl_parameters(sigma, kappa)
    if target <= 0:
        return 0, ""
    lambda_ = measured / float(usl_throughput(measured_units, sigma, kappa, 1.0))
    root = concurrency_for_throughput(target, sigma, kappa, lambda_)
    if math.isfinite(root):
        n = max(1, math.ceil(root - 1e-9))
        if float(usl_throughput(n, sigma, kappa, lambda_)) < target * (1 - 1e-12):
            n += 1
        if float(usl_throughput(n, sigma, kappa, lambda_)) >= target * (1 - 1e-12):
            if n > max_units:
                return None, (f"unreachable: needs {_count(n, unit)}, more than the limit of "
                              f"{number(max_units, 6)}")
            return n, ""
    n_peak, x_peak = usl_peak(sigma, kappa, lambda_)
    if math.isfinite(n_peak):
        n_best = whole_peak(n_peak, lambda k: usl_throughput(k, sigma, kappa, lambda_))
        x_best = float(usl_throughput(n_best, sigma, kappa, lambda_))
        return None, (f"unreachable: throughput peaks at {number(x_best)} {rate_unit} with {_count(n_best, unit)}, "
                      f"below {number(target)} {rate_unit}")
    return None, (f"unreachable: the throughput ceiling {number(x_peak)} {rate_unit} is below {number(target)} "
                  f"{rate_unit}")


def _count(n: int, unit: str) -> str:
    """``1 shard``, ``16,000,000,000 shards``: a count and its plural ``unit`` (nodes, shards, units)."""
    return plural(n, unit[:-1] if unit.endswith("s") else unit, unit)


def units_interval(target: float, measured: float, measured_units: float, samples, max_units: float = math.inf,
                   level: float = 0.95) -> tuple[float, float, float]:
    """Percentile interval of the whole count over USL parameter samples (DataFrame with sigma, kappa; e.g. a
    bootstrap), an unreachable sample counting as infinitely many units. Returns (low, high, unreachable share)."""
    found: list[float] = []
    for _, s in samples.iterrows():
        n, _ = units_for_throughput(target, measured, measured_units, max(float(s.get("sigma", 0.0)), 0.0),
                                    max(float(s.get("kappa", 0.0)), 0.0), max_units)
        found.append(math.inf if n is None else n)
    counts = np.asarray(found, dtype=float)
    tail = (1 - level) / 2
    return (float(np.quantile(counts, tail, method="lower")), float(np.quantile(counts, 1 - tail, method="higher")),
            float(np.mean(~np.isfinite(counts))))
