"""Node-count multipliers against the Micron 5100 ECO brief (seed 001_, "Shrink Your MongoDB Cluster").

The brief: "We divided the 5100 ECO performance by the legacy performance for each workload to calculate a
'performance multiplier.'" and "Total number of legacy nodes needed = (legacy test cluster node count) x (performance
multiplier)"; "it would take about 26 legacy nodes to equal the Workload A performance"; "We see the greatest
difference in Workload D, where about 35 legacy nodes would be needed and the smallest in Workload F, where about 24
nodes would be needed. The remaining workloads range between 26 and 29 legacy nodes".
Rounding rule: nearest whole node (3 x 8.70 = 26.1 -> 26), as the brief's "about".
"""
import math

import pandas as pd
import pytest

from capmodel import datasets
from capmodel.errors import PlanError
from capmodel.plan import node_multipliers, nodes_needed_usl


@pytest.fixture(scope="module")
def micron():
    return datasets.load("micron_ycsb_96threads")


def test_table_ratios_round_to_the_stated_multipliers(micron):
    # Table 1 ops/s vs the summary table "5100 ECO Improvement": A 8.7X, B 9.6X, C 8.5X, D 11.6X, F 7.9X
    rows = node_multipliers(micron).set_index("workload")
    stated = {"A": 8.7, "B": 9.6, "C": 8.5, "D": 11.6, "F": 7.9}
    for workload, multiplier in stated.items():
        assert round(rows.loc[workload, "multiplier"], 1) == multiplier
    assert rows.loc["A", "multiplier"] == pytest.approx(7120.1 / 818.3)


def test_linear_rule_reproduces_the_stated_node_counts(micron):
    rows = node_multipliers(micron).set_index("workload")
    assert rows.loc["A", "nodes_linear"] == 26
    assert rows.loc["D", "nodes_linear"] == 35
    assert rows.loc["F", "nodes_linear"] == 24
    for workload in ("B", "C"):
        assert 26 <= rows.loc[workload, "nodes_linear"] <= 29
    # and every row agrees with the stated range kept in the CSV
    joined = rows.join(micron.set_index("workload")[["stated_nodes_low", "stated_nodes_high"]])
    assert ((joined["nodes_linear"] >= joined["stated_nodes_low"])
            & (joined["nodes_linear"] <= joined["stated_nodes_high"])).all()
    # the worked example: "= (3) x (8.7) =~26 nodes"
    assert rows.loc["A", "nodes_linear_exact"] == pytest.approx(3 * 7120.1 / 818.3)


def test_rounding_up_gives_whole_nodes_that_reach_the_target(micron):
    rows = node_multipliers(micron, rounding="up").set_index("workload")
    assert rows["nodes_linear"].tolist() == [27, 29, 26, 35, 24]   # ceil of 26.10, 28.89, 25.51, 34.90, 23.84


def brute_force_nodes(target, measured, at, sigma, kappa, limit=10000):
    def x(n):
        return n / (1 + sigma * (n - 1) + kappa * n * (n - 1))
    scale = measured / x(at)
    for n in range(1, limit):
        if scale * x(n) >= target:
            return n
    return None


def test_usl_nodes_grow_faster_than_linear_and_match_brute_force(micron):
    rows = node_multipliers(micron, sigma=0.02, kappa=0.0).set_index("workload")
    for workload, r in rows.iterrows():
        expected = brute_force_nodes(r["reference_ops_per_s"], r["candidate_ops_per_s"], 3, 0.02, 0.0)
        assert r["nodes_usl"] == expected
        assert r["nodes_usl"] > r["nodes_linear_exact"] * 1.5      # contention makes it much more than linear
    # with more contention the count grows further: multiplier 8.7 -> 50 nodes at sigma 0.02 (brute force above)
    assert rows.loc["A", "nodes_usl"] == 50


def test_usl_reports_unreachable_beyond_the_peak(micron):
    rows = node_multipliers(micron, sigma=0.05, kappa=0.001).set_index("workload")
    # peak of n / (1 + 0.05 (n-1) + 0.001 n (n-1)) at sqrt(0.95 / 0.001) = 30.8 nodes; legacy A there:
    scale = 818.3 / (3 / (1 + 0.05 * 2 + 0.001 * 6))
    peak = max(scale * n / (1 + 0.05 * (n - 1) + 0.001 * n * (n - 1)) for n in (30, 31))
    assert peak < 7120.1
    assert rows.loc["A", "nodes_usl"] is None or math.isnan(rows.loc["A", "nodes_usl"])
    assert not rows.loc["A", "usl_reachable"]
    assert "unreachable" in rows.loc["A", "usl_note"] and f"{peak:,.0f}" in rows.loc["A", "usl_note"]


def test_usl_with_a_small_coherency_reaches_the_target_later(micron):
    n, why = nodes_needed_usl(7120.1, 818.3, 3, 0.0, 0.0001)
    assert n == brute_force_nodes(7120.1, 818.3, 3, 0.0, 0.0001) and why == ""
    assert n > 27


def test_cost_and_rack_space_comparison(micron):
    rows = node_multipliers(micron, sigma=0.02, reference_node_cost=900.0, candidate_node_cost=400.0,
                            reference_rack_units=1, candidate_rack_units=2).set_index("workload")
    a = rows.loc["A"]
    assert a["cost_reference"] == pytest.approx(3 * 900.0)
    assert a["cost_linear"] == pytest.approx(26 * 400.0)
    assert a["cost_usl"] == pytest.approx(50 * 400.0)
    assert (a["rack_units_reference"], a["rack_units_linear"], a["rack_units_usl"]) == (3, 52, 100)


def test_bootstrap_samples_give_an_interval(micron):
    samples = pd.DataFrame({"sigma": [0.0, 0.01, 0.02, 0.03], "kappa": [0.0, 0.0, 0.0, 0.0]})
    a = node_multipliers(micron.iloc[:1], sigma=0.02, usl_samples=samples, level=0.5).iloc[0]
    counts = sorted(brute_force_nodes(7120.1, 818.3, 3, s, 0.0) for s in samples["sigma"])
    assert counts[0] <= a["nodes_usl_low"] <= a["nodes_usl"] <= a["nodes_usl_high"] <= counts[-1]


def test_bad_node_tables():
    with pytest.raises(PlanError, match="candidate_ops_per_s"):
        node_multipliers(pd.DataFrame({"workload": ["A"], "reference_ops_per_s": [1.0]}))
    bad = pd.DataFrame({"workload": ["A"], "reference_ops_per_s": [1.0], "candidate_ops_per_s": [-2.0],
                        "reference_nodes": [3], "candidate_nodes": [3]})
    with pytest.raises(PlanError, match="row 1"):
        node_multipliers(bad)
    with pytest.raises(PlanError, match="sigma"):
        node_multipliers(bad.assign(candidate_ops_per_s=2.0), sigma=-0.1)
