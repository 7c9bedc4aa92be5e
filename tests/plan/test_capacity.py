"""Capacity of a VM from a fitted USL curve and from measured points, checked against hand computations.

The synthetic curves are generated from known parameters (sigma = 0.05, kappa = 0.001, lambda = 1000), so every
expected value is computed here independently of capmodel.plan: the peak from N* = sqrt((1 - sigma) / kappa), the
latency limit by bisection on N/X(N), the utilization limit from the utilization law U = X D.
"""
import math

import numpy as np
import pandas as pd
import pytest

from capmodel.errors import PlanError
from capmodel.models.usl.fit import fit_usl
from capmodel.plan import (Objectives, calibrate_user_load, capacity_from_fit, format_estimate, plan_vms,
                           user_load_from_ops_per_user)
from capmodel.plan.capacity import throughput_at_utilization_target

SIGMA, KAPPA, LAMBDA = 0.05, 0.001, 1000.0
DEMAND = 1e-4  # CPU seconds per operation: U = X * D


def x_of(n, sigma=SIGMA, kappa=KAPPA, lam=LAMBDA):
    return lam * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))


def exact_curve(p95_factor=None, cpu=False):
    n = np.array([1, 2, 4, 8, 12, 16, 24, 32, 48, 64], dtype=float)
    x = x_of(n)
    curve = pd.DataFrame({"concurrency": n, "throughput": x})
    if p95_factor is not None:
        curve["latency_p95_ms"] = p95_factor * 1000 * n / x
    if cpu:
        curve["cpu_util"] = x * DEMAND
    return curve


def bisect(f, lo, hi, iterations=200):
    for _ in range(iterations):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) else (lo, mid)
    return lo


PEAK_N = math.sqrt((1 - SIGMA) / KAPPA)
PEAK_X = x_of(PEAK_N)


def test_utilization_target_without_cpu_is_a_fraction_of_the_peak():
    cap = capacity_from_fit(fit_usl(exact_curve()), Objectives(utilization_target=0.8))
    assert cap.peak_throughput == pytest.approx(PEAK_X, rel=1e-4)
    assert cap.usable_throughput == pytest.approx(0.8 * PEAK_X, rel=1e-4)
    assert cap.binding_limit == "utilization"


def test_utilization_target_with_cpu_uses_the_utilization_law():
    cap = capacity_from_fit(fit_usl(exact_curve(cpu=True)), Objectives(utilization_target=0.7))
    assert cap.usable_throughput == pytest.approx(0.7 / DEMAND)   # 7,000 ops/s, below the ~9,040 peak
    assert cap.binding_limit == "utilization"


def test_peak_fraction_binds_when_tighter():
    cap = capacity_from_fit(fit_usl(exact_curve(cpu=True)), Objectives(utilization_target=0.9, peak_fraction=0.6))
    assert cap.usable_throughput == pytest.approx(0.6 * PEAK_X, rel=1e-4)
    assert cap.binding_limit == "peak_fraction"


def test_absolute_latency_target_on_p95_binds_and_matches_bisection():
    # p95 = 2 x the Little's-law mean N/X; target 4 ms p95 = 2 ms mean, reached near N = 14.6 (X about 7,300),
    # below 95% of the peak (about 8,600)
    target_ms = 4.0
    fit = fit_usl(exact_curve(p95_factor=2.0))
    cap = capacity_from_fit(fit, Objectives(utilization_target=0.95, latency_p95_ms=target_ms))
    n_limit = bisect(lambda n: 2 * 1000 * n / x_of(n) <= target_ms, 1, PEAK_N)
    assert cap.binding_limit == "latency"
    assert cap.usable_throughput == pytest.approx(x_of(n_limit), rel=1e-4)
    assert cap.operating_concurrency == pytest.approx(n_limit, rel=1e-3)


def test_loose_latency_target_leaves_the_utilization_limit_binding():
    fit = fit_usl(exact_curve(p95_factor=2.0))
    cap = capacity_from_fit(fit, Objectives(utilization_target=0.5, latency_p95_ms=500))
    assert cap.binding_limit == "utilization"
    assert cap.usable_throughput == pytest.approx(0.5 * PEAK_X, rel=1e-4)


def test_the_capacity_interval_is_its_range_over_the_likelihood_region():
    rng = np.random.default_rng(7)
    curve = exact_curve()
    curve = pd.concat([curve] * 3, ignore_index=True)
    curve["throughput"] *= 1 + rng.normal(0, 0.03, len(curve))
    fit = fit_usl(curve)
    cap = capacity_from_fit(fit, Objectives(utilization_target=0.8))
    assert cap.usable_throughput_low < cap.usable_throughput < cap.usable_throughput_high
    # without CPU the utilization target is 80% of the peak, for every parameter set the data do not reject
    low, high = fit.region(0.95).only("usl").limit_interval()
    assert (cap.usable_throughput_low, cap.usable_throughput_high) == pytest.approx((0.8 * low, 0.8 * high), rel=1e-12)
    assert cap.usable_throughput_low <= 0.8 * PEAK_X <= cap.usable_throughput_high        # it holds the truth
    # 3% noise on 30 points: the interval is a few percent wide, not zero and not huge
    width = (cap.usable_throughput_high - cap.usable_throughput_low) / cap.usable_throughput
    assert 0.005 < width < 0.2
    assert cap.usable_throughput == pytest.approx(0.8 * PEAK_X, rel=0.05)


def test_plan_with_fitted_curves_and_relative_latency():
    # two VMs; the "big" one has twice lambda. Baseline: 1,000 users at 4,000 ops/s on "small".
    small = exact_curve(p95_factor=1.5)
    big = small.copy()
    big["throughput"] *= 2
    big["latency_p95_ms"] /= 2          # same p95/mean ratio, half the response time
    catalog = pd.DataFrame({"vm": ["small", "big"], "monthly_cost": [100.0, 180.0]})
    fits = {"small": fit_usl(small), "big": fit_usl(big)}
    workload = calibrate_user_load(1000, 4000)
    plan = plan_vms(catalog, workload, Objectives(utilization_target=0.8, latency_increase=0.05),
                    baseline_vm="small", fits=fits)
    vms = plan.vms.set_index("vm")
    # baseline p95 at 4,000 ops/s: N on the rising branch, then 1.5 x 1000 N / X
    n_b = bisect(lambda n: x_of(n) <= 4000, 1, PEAK_N)
    p95_target = 1.05 * 1.5 * 1000 * n_b / 4000
    n_small = bisect(lambda n: 1.5 * 1000 * n / x_of(n) <= p95_target, 1, PEAK_N)
    n_big = bisect(lambda n: 1.5 * 1000 * n / (2 * x_of(n)) <= p95_target, 1, PEAK_N)
    assert vms.loc["small", "usable_throughput"] == pytest.approx(x_of(n_small), rel=1e-3)
    assert vms.loc["small", "binding_limit"] == "latency"
    expected_big = min(2 * x_of(n_big), 0.8 * 2 * PEAK_X)
    assert vms.loc["big", "usable_throughput"] == pytest.approx(expected_big, rel=1e-3)
    assert vms.loc["big", "users"] == pytest.approx(expected_big / 4.0, rel=1e-3)
    assert vms.loc["big", "cost_per_user"] == pytest.approx(180.0 / (expected_big / 4.0), rel=1e-3)


def test_throughput_at_the_utilization_target_scales_with_utilization():
    assert throughput_at_utilization_target(6500, 0.8, Objectives(utilization_target=0.7)) == pytest.approx(6500 * 0.7 / 0.8)
    assert throughput_at_utilization_target(6500, None, Objectives(utilization_target=0.7)) == 6500


def test_absolute_latency_on_measured_points():
    catalog = pd.DataFrame({"vm": ["a", "b"], "monthly_cost": [100.0, 150.0], "throughput": [1000.0, 2000.0],
                            "latency_p95_ms": [8.0, 12.0]})
    plan = plan_vms(catalog, user_load_from_ops_per_user(0.1), Objectives(utilization_target=None, latency_p95_ms=10))
    vms = plan.vms.set_index("vm")
    assert vms.loc["a", "users"] == pytest.approx(10000)
    assert vms.loc["a", "binding_limit"] == "measured load"
    assert math.isnan(vms.loc["b", "users"]) and vms.loc["b", "binding_limit"] == "latency"


def test_bad_inputs_raise_plan_errors():
    with pytest.raises(PlanError, match="baseline users"):
        calibrate_user_load(-25000, 6500)
    with pytest.raises(PlanError, match="utilization"):
        calibrate_user_load(25000, 6500, utilization=80)
    with pytest.raises(PlanError, match="utilization target"):
        Objectives(utilization_target=1.5)
    with pytest.raises(PlanError, match="not both"):
        Objectives(latency_p95_ms=10, latency_increase=0.05)
    catalog = pd.DataFrame({"vm": ["a"], "monthly_cost": [100.0], "relative_throughput": [1.0]})
    with pytest.raises(PlanError, match="baseline throughput"):
        plan_vms(catalog, user_load_from_ops_per_user(0.1))


def test_format_estimate_reads_like_a_report():
    assert format_estimate(62000, 55000, 68000) == "62,000 (55,000-68,000)"
    assert format_estimate(25000, 25000, 25000) == "25,000"
    assert format_estimate(8.147, 7.52, 8.77) == "8.15 (7.52-8.77)"


def test_relative_latency_on_measured_points():
    # baseline p95 8 ms; 5% allows 8.4 ms: 8.3 passes, 8.5 fails
    catalog = pd.DataFrame({"vm": ["base", "ok", "slow"], "monthly_cost": [100.0, 120.0, 130.0],
                            "throughput": [1000.0, 1500.0, 3000.0], "latency_p95_ms": [8.0, 8.3, 8.5]})
    plan = plan_vms(catalog, calibrate_user_load(5000, 1000), Objectives(utilization_target=None,
                                                                       latency_increase=0.05), baseline_vm="base")
    vms = plan.vms.set_index("vm")
    assert vms.loc["ok", "latency_ok"] == True and vms.loc["ok", "users"] == pytest.approx(7500)  # noqa: E712
    assert vms.loc["slow", "latency_ok"] == False and math.isnan(vms.loc["slow", "users"])  # noqa: E712
    assert "8.4 ms" in vms.loc["slow", "latency_note"]


def test_plan_users_interval_follows_the_capacity_interval():
    rng = np.random.default_rng(11)
    curve = pd.concat([exact_curve()] * 3, ignore_index=True)
    curve["throughput"] *= 1 + rng.normal(0, 0.03, len(curve))
    fit = fit_usl(curve)
    catalog = pd.DataFrame({"vm": ["v"], "monthly_cost": [500.0]})
    plan = plan_vms(catalog, user_load_from_ops_per_user(0.25), Objectives(utilization_target=0.8), fits={"v": fit})
    row = plan.vms.iloc[0]
    cap = plan.fit_capacities["v"]
    # users = usable / 0.25 at every end; cost per user = 500 / users, so its ends swap
    assert (row["users_low"], row["users"], row["users_high"]) == pytest.approx(
        (cap.usable_throughput_low / 0.25, cap.usable_throughput / 0.25, cap.usable_throughput_high / 0.25))
    assert row["cost_per_user_low"] == pytest.approx(500 / row["users_high"])
    assert row["cost_per_user_high"] == pytest.approx(500 / row["users_low"])
    assert row["users_low"] < row["users"] < row["users_high"]
    assert "(" in format_estimate(row["users"], row["users_low"], row["users_high"])


def test_fitted_curve_needs_an_objective_and_a_bound():
    with pytest.raises(PlanError, match="nothing to plan"):
        capacity_from_fit(fit_usl(exact_curve()), Objectives(utilization_target=None))
    # a straight line: 80% of no peak is no figure; the data support no capacity, and the plan says so
    linear = pd.DataFrame({"concurrency": [1.0, 2, 4, 8, 16], "throughput": [100.0, 200, 400, 800, 1600]})
    cap = capacity_from_fit(fit_usl(linear), Objectives(utilization_target=0.8))
    assert cap.usable_throughput == math.inf and cap.usable_throughput_high == math.inf
    assert cap.evidence.grade == "unusable" and "unbounded" in cap.evidence.codes() and not cap.evidence.usable


def test_a_curve_that_falls_from_the_first_client_plans_at_one_client():
    # A client-bound sweep: throughput falls as clients are added, so the fit puts sigma at 1 and the peak at N = 1.
    curve = pd.DataFrame({"concurrency": [1, 2, 4, 8, 16, 32],
                          "throughput": [3500, 3000, 2500, 2100, 1900, 1700]})
    fit = fit_usl(curve)
    assert fit.peak_concurrency == 1.0
    cap = capacity_from_fit(fit, Objectives(utilization_target=0.8))
    # 80% of the throughput at one client, X(1) = lambda: the only operating point the fit supports.
    assert cap.peak_concurrency == 1.0
    assert cap.usable_throughput == pytest.approx(0.8 * fit.lambda_, rel=1e-12)
    assert cap.binding_limit == "utilization"


# --- the latency target travels in Objectives; the plan carries its evidence ---------------------------------------

def test_objectives_latency_target_is_applied_on_plgm_workload1():
    # Objectives(0.8, latency_p95_ms=1.0) must bind on the latency, and the capacity record what it was held against:
    # p95 at most 1 ms. No p95 is measured in this study, so the target is held against the mean N/X itself.
    from capmodel.data import datasets

    fit = fit_usl(datasets.load_curve("plgm_workload1"))
    cap = capacity_from_fit(fit, Objectives(utilization_target=0.8, latency_p95_ms=1.0))

    def x_fit(n):
        return x_of(n, fit.sigma, fit.kappa, fit.lambda_)

    n_limit = bisect(lambda n: n / x_fit(n) <= 0.001, 1, 60)
    assert cap.binding_limit == "latency"
    assert cap.usable_throughput == pytest.approx(x_fit(n_limit), rel=1e-7)     # about 3,548 ops/s
    assert cap.limits["utilization"] == pytest.approx(0.8 * fit.peak_throughput)
    assert cap.latency_target_ms == 1.0 and cap.latency.reachable
    assert cap.latency.throughput == pytest.approx(x_fit(n_limit), rel=1e-7)
    assert cap.latency_p95_ratio == 1.0 and cap.latency_basis == "mean response time N/X (no p95 measured)"
    # the region holds curves whose one client alone takes more than 1 ms (λ below 1,000 ops/s per client): no load
    # meets the target on them, so the capacity's interval reaches down to 0 and the answer is weak, not sound
    assert fit.conf_int(0.95, method="profile").loc["lambda", "low"] < 1000.0
    assert cap.usable_throughput_low == 0.0 and cap.usable_throughput_high > cap.usable_throughput
    assert cap.evidence.codes() == ["wide_interval", "p95_not_measured"] and cap.evidence.grade == "weak"


def test_relative_latency_target_needs_and_uses_a_baseline():
    fit = fit_usl(exact_curve(p95_factor=2.0))
    relative = capacity_from_fit(fit, Objectives(utilization_target=None, latency_increase=0.25),
                                 baseline_p95_ms=3.2)
    absolute = capacity_from_fit(fit, Objectives(utilization_target=None, latency_p95_ms=4.0))
    assert relative.latency_target_ms == pytest.approx(4.0)
    assert relative.usable_throughput == pytest.approx(absolute.usable_throughput, rel=1e-12)
    with pytest.raises(PlanError, match="needs the baseline's p95"):
        capacity_from_fit(fit, Objectives(utilization_target=None, latency_increase=0.25))


def test_an_unreachable_latency_target_states_no_throughput():
    # p95 = 2 x N/X; one client's N/X is 1/lambda = 1 ms, so no load has a p95 below 2 ms
    fit = fit_usl(exact_curve(p95_factor=2.0))
    cap = capacity_from_fit(fit, Objectives(utilization_target=0.8, latency_p95_ms=1.5))
    assert not cap.latency.reachable and cap.latency.reason == "below_zero_load"
    assert cap.usable_throughput == 0.0 and cap.binding_limit == "latency"
    assert cap.evidence.grade == "unusable" and cap.evidence.codes() == ["latency_unreachable"]
    # held to p95 at most 1.5 ms; the fastest fitted p95 (one client) is 2 x 1 / lambda = 2 ms
    assert cap.latency_target_ms == 1.5
    assert cap.latency.zero_load_seconds * cap.latency_p95_ratio * 1000 == pytest.approx(2 * 1000 / LAMBDA)


def test_a_plan_read_off_a_peak_past_the_measured_range_says_by_how_much():
    # exact points up to 8 clients: the peak (30.8 clients) is pinned, but 1.59x above anything the data show
    curve = exact_curve()
    fit = fit_usl(curve[curve["concurrency"] <= 8])
    cap = capacity_from_fit(fit, Objectives(utilization_target=None, peak_fraction=0.95))
    assert cap.usable_throughput == pytest.approx(0.95 * PEAK_X, rel=1e-6)
    reason = {r.code: r for r in cap.evidence.reasons}["beyond_data"]
    assert reason.grade == "weak" and cap.evidence.grade == "weak"
    assert reason.value == pytest.approx(PEAK_X / x_of(8), rel=1e-4)
    assert max(cap.evidence.next_step.levels) > 8                      # measure past the data
    inside = capacity_from_fit(fit_usl(curve), Objectives(utilization_target=None, peak_fraction=0.95))
    assert inside.evidence.grade == "sound" and "beyond_data" not in inside.evidence.codes()


def test_a_plan_from_three_points_states_no_capacity():
    # up to 4 clients: three points for three parameters, nothing left to measure the scatter: no interval
    curve = exact_curve()
    cap = capacity_from_fit(fit_usl(curve[curve["concurrency"] <= 4]),
                            Objectives(utilization_target=None, peak_fraction=0.95))
    assert math.isnan(cap.usable_throughput_low) and math.isnan(cap.usable_throughput_high)
    assert cap.evidence.grade == "unusable"
    assert {"exactly_determined", "no_interval"} <= set(cap.evidence.codes())


def test_the_fits_own_verdict_joins_the_plans():
    curve = exact_curve()
    curve["client_bound"] = curve["concurrency"] >= 48          # the two largest steps: the bench flagged them
    cap = capacity_from_fit(fit_usl(curve), Objectives(utilization_target=0.8))
    reason = {r.code: r for r in cap.evidence.reasons}["client_bound"]
    assert reason.grade == "weak" and cap.evidence.grade == "weak"
    assert reason.value == 2                                          # the two steps flagged


def test_a_plan_inside_the_measured_range_is_not_condemned_by_the_peaks_extrapolation():
    # measured up to N = 8 with CPU: the utilization law plans 0.3 / D = 3,000 ops/s, reached near N = 3.4, inside
    # the data; the peak lies beyond them (beyond_data), which grades a plan read off the peak but not this one
    curve = exact_curve(cpu=True)
    fit = fit_usl(curve[curve["concurrency"] <= 8])
    from_cpu = capacity_from_fit(fit, Objectives(utilization_target=0.3))
    assert from_cpu.usable_throughput == pytest.approx(0.3 / DEMAND) and from_cpu.binding_limit == "utilization"
    assert from_cpu.operating_concurrency == pytest.approx(bisect(lambda n: x_of(n) <= 0.3 / DEMAND, 1, 8), rel=1e-3)
    assert from_cpu.evidence.grade == "sound" and "beyond_data" not in from_cpu.evidence.codes()
    from_peak = capacity_from_fit(fit, Objectives(utilization_target=None, peak_fraction=0.25))
    assert from_peak.usable_throughput == pytest.approx(0.25 * PEAK_X, rel=1e-6)
    assert from_peak.usable_throughput < x_of(8)                      # a quarter of the peak lies inside the data
    assert [r.grade for r in from_peak.evidence.reasons if r.code == "beyond_data"] == ["weak"]


def test_a_latency_target_every_curve_of_the_region_meets_keeps_the_capacity_above_zero():
    # one client alone takes 1/λ; the region's smallest λ (its profile interval's low end) leaves 1/λ below 5 ms, so
    # every curve the data allow meets the target at some load, and no end of the capacity's interval is 0
    from capmodel.data import datasets

    fit = fit_usl(datasets.load_curve("plgm_workload1"))
    assert 1000.0 / fit.conf_int(0.95, method="profile").loc["lambda", "low"] < 5.0
    cap = capacity_from_fit(fit, Objectives(utilization_target=None, peak_fraction=0.8, latency_p95_ms=5.0))
    assert cap.usable_throughput_low > 0
