"""The keyword entry points of capmodel.plan (plan_study, plan_node_study, plan_shard_study), the model comparison
and capacity of a fitted curve, and the what-if widgets the notebooks use (what describe() and describe_fit write of
them is in test_plan_words.py). Expected values are recomputed here from the
bundled source tables (benchANT, Micron, DocumentDB) or taken from the studies' own statements."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from capmodel import datasets
from capmodel.errors import PlanError
from capmodel.plan import Objectives, capacity_from_fit, plan_node_study, plan_shard_study, plan_study

BASELINE_THROUGHPUT, BASELINE_USERS, BASELINE_UTIL = 6500.0, 25000.0, 0.80  # benchANT baseline (data/README.md)


def benchant_users(headroom: float = 0.8) -> pd.Series:
    """Users per VM by hand: relative throughput x 6,500 ops/s, scaled by the utilization law from the baseline's
    80% to the headroom, over 0.26 ops/s per user (VMs without a measured utilization taken at the baseline's)."""
    rel = datasets.load("benchant_throughput").set_index("vm")["relative_throughput"]
    return rel * BASELINE_THROUGHPUT * headroom / BASELINE_UTIL / (BASELINE_THROUGHPUT / BASELINE_USERS)


def test_plan_study_without_a_catalog_is_the_benchant_study():
    study = plan_study(targets=[50000, 90000], growth=0.05)
    users = study.vms.set_index("vm")["users"]
    expected = benchant_users()
    # the study: s3-2xlarge-8 "~60,000-65,000" users, c4-2xlarge-4-SSD "80,000-90,000"
    assert users["s3-2xlarge-8-SAS"] == pytest.approx(expected["s3-2xlarge-8-SAS"]) == pytest.approx(65000)
    assert users["c4-2xlarge-4-SSD"] == pytest.approx(expected["c4-2xlarge-4-SSD"]) == pytest.approx(89000)
    assert study.recommended_vms() == ["s3-2xlarge-8-SAS"]
    costs = datasets.load("benchant_vms").set_index("vm")["monthly_cost"]
    answers = study.recommendations.set_index("target_users")
    assert answers.loc[50000, "vm"] == "s3-2xlarge-8-SAS" and answers.loc[50000, "monthly_cost"] == 1180.08
    # 25,000 users today, 50,000 and 90,000 at 5% a month
    assert answers.loc[50000, "months_until_target"] == pytest.approx(math.log(2) / math.log(1.05))
    assert answers.loc[90000, "months_until_target"] == pytest.approx(math.log(90000 / 25000) / math.log(1.05))
    # 90,000 users: c4-2xlarge carries 89,000 at 80%; it would need 0.8 x 90,000 / 89,000 utilization
    assert answers.loc[90000, "vm"] is None and answers.loc[90000, "largest_vm"] == "c4-2xlarge-4-SSD"
    assert answers.loc[90000, "utilization_needed"] == pytest.approx(0.8 * 90000 / 89000)
    vms = study.vms.set_index("vm")
    assert vms["cost_per_1000_users"].idxmin() == "c4-2xlarge-4-SSD"
    assert vms.loc["c4-2xlarge-4-SSD", "cost_per_1000_users"] == pytest.approx(costs["c4-2xlarge-4-SSD"] / 89000 * 1000)
    assert sorted(vms.index[~vms["latency_ok"]]) == ["c4-xlarge-4-SAS", "s3-2xlarge-4-SAS"]


def test_plan_study_takes_the_objectives_it_is_given():
    study = plan_study(targets=[75000], objectives=Objectives(utilization_target=0.7, latency_increase=0.05))
    expected = benchant_users(0.7)
    assert study.vms.set_index("vm")["users"]["c4-2xlarge-4-SSD"] == pytest.approx(expected["c4-2xlarge-4-SSD"])
    assert study.recommended_vms() == ["c4-2xlarge-4-SSD"]     # 77,875 >= 75,000 > s3-2xlarge-8's 56,875
    assert study.plan.objectives.utilization_target == 0.7


def test_plan_study_on_user_tables_and_its_errors():
    catalog = pd.DataFrame({"vm": ["small", "big"], "monthly_cost": [100.0, 300.0]})
    measured = pd.DataFrame({"vm": ["small", "big"], "throughput": [1000.0, 4000.0], "cpu_util": [0.5, 0.8]})
    study = plan_study(catalog=catalog, measurements=measured, ops_per_user=2.0, targets=[1500],
                       objectives=Objectives(utilization_target=0.6))
    users = study.vms.set_index("vm")["users"]
    assert users["small"] == pytest.approx(1000 * 0.6 / 0.5 / 2) and users["big"] == pytest.approx(4000 * 0.6 / 0.8 / 2)
    assert study.recommended_vms() == ["big"]
    with pytest.raises(PlanError, match="baseline_users"):
        plan_study(catalog=catalog, measurements=measured)
    with pytest.raises(PlanError, match="need a catalog"):
        plan_study(measurements=measured)


def test_plan_node_study_repeats_the_micron_brief_and_counts_under_the_usl():
    study = plan_node_study(sigma=0.02, sensitivity=[0.0, 0.02])
    micron = datasets.load("micron_ycsb_96threads").set_index("workload")
    rows = study.rows.set_index("workload")
    # the brief's stated counts: A 26, D 35, F 24 (3 x X_SSD / X_HDD rounded)
    assert [rows.loc[w, "nodes_linear"] for w in "ADF"] == [26, 35, 24]
    a = micron.loc["A"]

    def x(n):
        return a.candidate_ops_per_s / 3 * (1 + 0.02 * 2) * n / (1 + 0.02 * (n - 1))

    needed = next(n for n in range(1, 2000) if x(n) >= a.reference_ops_per_s)
    assert rows.loc["A", "nodes_usl"] == needed == 50      # README: "σ = 0.02: A needs 50 nodes, not 26"
    assert rows.loc["A", "multiplier"] == pytest.approx(a.reference_ops_per_s / a.candidate_ops_per_s)
    reachable = study.sensitivity.set_index("sigma")
    # linear (sigma = 0): the smallest whole count reaching X_A, ceil(3 x 8.70) = 27, where the brief rounds to 26
    assert reachable.loc[0.0, "A"] == math.ceil(3 * a.reference_ops_per_s / a.candidate_ops_per_s) == 27
    assert reachable.loc[0.02, "A"] == needed
    assert study.unreachable_from() is None


def test_plan_shard_study_is_the_documentdb_benchmark_by_default():
    study = plan_shard_study(scenarios=[0.0, 0.02, 0.05])
    [row] = study.rows
    # AWS post: over a million inserts/s on 16 shards, 1,024 client processes (64 per shard)
    assert row["shards"] == 16 and row["clients"] == 1024
    # sigma = 0.02: smallest s with 62,500 s / (1 + 0.02 (s - 1)) >= 1,000,000
    s002 = next(s for s in range(1, 33) if 62_500 * s / (1 + 0.02 * (s - 1)) >= 1_000_000)
    scenarios = study.scenarios.set_index("sigma")
    assert scenarios.loc[0.02, "shards"] == s002 and math.isnan(scenarios.loc[0.05, "shards"])
    assert scenarios.loc[0.05, "reason"].startswith("unreachable")
    assert 62_500 * 32 / (1 + 0.05 * 31) < 1_000_000


def test_plan_shard_study_refuses_a_curve_beside_assumed_parameters():
    curve = pd.DataFrame({"concurrency": [1, 2, 4, 8], "throughput": [1.0, 2.0, 3.9, 7.5]})
    with pytest.raises(PlanError, match="do not also give"):
        plan_shard_study(curve=curve, sigma=0.01)


def test_the_comparison_recommends_amdahl_and_its_ceiling_is_the_hand_fit():
    from scipy.optimize import curve_fit

    import capmodel

    curve = datasets.load_curve("plgm_workload1")
    comparison = capmodel.compare_models(curve)
    fit = comparison.fits[comparison.recommended]
    n, x = curve["concurrency"].to_numpy(float), curve["throughput"].to_numpy(float)
    (sigma, lam), _ = curve_fit(lambda n, s, l: l * n / (1 + s * (n - 1)), n, x, p0=[0.05, 1000])
    assert comparison.recommended == "amdahl"
    assert fit.ceiling == pytest.approx(lam / sigma, rel=2e-3)
    # the ceiling's interval at the level asked, over every family compared (the model was chosen among them)
    low, high = comparison.region(0.9).limit_interval()
    assert low < lam / sigma < high


def test_capacity_from_a_fit_plans_its_peak_fraction_or_has_no_figure():
    import capmodel

    n = np.array([1, 2, 4, 8, 16, 32, 64], dtype=float)
    sigma, kappa, lam = 0.05, 0.001, 1000.0
    curve = pd.DataFrame({"concurrency": n, "throughput": lam * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))})
    fit = capmodel.fit_usl(curve)
    objectives = Objectives(utilization_target=None, peak_fraction=0.8)
    peak_n = math.sqrt((1 - sigma) / kappa)
    peak_x = lam * peak_n / (1 + sigma * (peak_n - 1) + kappa * peak_n * (peak_n - 1))
    cap = capacity_from_fit(fit, objectives)
    assert cap.usable_throughput == pytest.approx(0.8 * peak_x, rel=1e-6)
    assert cap.table.loc["binding limit", "value"] == "peak_fraction"
    # a straight line has no peak to plan a share of: the data support no capacity figure
    linear = capmodel.fit_usl(pd.DataFrame({"concurrency": n, "throughput": 100 * n}))
    assert capacity_from_fit(linear, Objectives(utilization_target=0.8)).evidence.grade == "unusable"
