"""Economics and growth on small hand-made catalogs: every expected value is worked out by hand in the comments."""
import math

import numpy as np
import pandas as pd
import pytest

from capmodel.errors import CapmodelError

from capmodel.errors import PlanError
from capmodel.models.runway import runway_months
from capmodel.plan import (Objectives, add_economics, cheapest_for_target, growth_plan, pareto_frontier, plan_vms,
                           user_load_from_ops_per_user)


def hand_catalog():
    # cost and users: a (100, 1,000), b (150, 900) dominated by a, c (200, 3,000), d (200, 2,500) dominated by c,
    # e (400, 3,000) dominated by c, f (500, 8,000), g (50, NaN: fails latency)
    return pd.DataFrame({
        "vm": list("abcdefg"),
        "monthly_cost": [100.0, 150.0, 200.0, 200.0, 400.0, 500.0, 50.0],
        "users": [1000.0, 900.0, 3000.0, 2500.0, 3000.0, 8000.0, math.nan],
    })


def test_pareto_frontier_on_a_hand_catalog():
    assert list(pareto_frontier(hand_catalog())["vm"]) == ["a", "c", "f"]


def test_pareto_frontier_keeps_one_of_two_identical_rows():
    table = pd.DataFrame({"vm": ["x", "y"], "monthly_cost": [10.0, 10.0], "users": [5.0, 5.0]})
    assert list(pareto_frontier(table)["vm"]) == ["x"]


def test_economics_columns():
    table = pd.DataFrame({"vm": ["a", "b"], "monthly_cost": [800.0, 1200.0], "throughput": [6400.0, 18000.0],
                          "usable_throughput": [6400.0, 12000.0], "users": [25600.0, 48000.0]})
    out = add_economics(table, baseline_vm="a").set_index("vm")
    assert out.loc["a", "throughput_per_cost"] == pytest.approx(8.0)           # 6,400 / 800
    assert out.loc["b", "throughput_per_cost_vs_baseline"] == pytest.approx(15.0 / 8.0)
    assert out.loc["b", "cost_per_user"] == pytest.approx(0.025)               # 1,200 / 48,000
    assert out.loc["b", "cost_per_1000_users"] == pytest.approx(25.0)
    assert out.loc["b", "cost_per_1000_ops"] == pytest.approx(100.0)           # 1,200 / 12 (thousand ops/s)


def test_cheapest_for_target_and_shortfall():
    table = hand_catalog()
    row = cheapest_for_target(table, 2000, utilization_target=0.8)
    assert row["vm"] == "c" and row["monthly_cost"] == 200.0      # c and d cost the same; c carries more
    assert row["utilization_at_target"] == pytest.approx(0.8 * 2000 / 3000)
    assert row["cost_per_user"] == pytest.approx(0.1)
    none = cheapest_for_target(table, 10000, utilization_target=0.8)
    assert none["vm"] is None and none["largest_vm"] == "f"
    assert none["shortfall_users"] == pytest.approx(2000)
    assert none["utilization_needed"] == pytest.approx(1.0)          # 0.8 x 10,000 / 8,000
    with pytest.raises(PlanError, match="target users"):
        cheapest_for_target(table, -5)


def test_runway_by_hand():
    # compound growth: months = ln(capacity / users) / ln(1 + g)
    assert runway_months(65000, 25000, 0.05) == pytest.approx(math.log(2.6) / math.log(1.05))   # 19.58
    assert runway_months(50000, 25000, 0.10) == pytest.approx(7.2725, abs=1e-4)   # doubling at 10%: ln2/ln1.1
    assert runway_months(20000, 25000, 0.05) == 0.0                                # already out of room
    assert runway_months(30000, 25000, 0.0) == math.inf                            # no growth, never runs out
    months = runway_months(np.array([25000.0, 100000.0]), 25000, 0.05)
    assert months[0] == 0.0 and months[1] == pytest.approx(math.log(4) / math.log(1.05))
    with pytest.raises(CapmodelError, match="current users must be > 0"):
        runway_months(1000, 0, 0.05)


def test_growth_plan_with_months_until_each_target():
    plan = growth_plan(hand_catalog(), [2000, 5000], current_users=1000, monthly_growth=0.05)
    assert list(plan["vm"]) == ["c", "f"]
    assert plan["months_until_target"].tolist() == pytest.approx([math.log(2) / math.log(1.05),
                                                                  math.log(5) / math.log(1.05)])


def test_plan_vms_runway_column_uses_the_users_interval():
    catalog = pd.DataFrame({"vm": ["a"], "monthly_cost": [100.0], "throughput": [2000.0], "throughput_low": [1500.0],
                            "throughput_high": [2000.0]})
    plan = plan_vms(catalog, user_load_from_ops_per_user(0.1), Objectives(utilization_target=None),
                    current_users=10000, monthly_growth=0.05)
    row = plan.vms.iloc[0]
    assert row["users"] == pytest.approx(20000) and row["users_low"] == pytest.approx(15000)
    assert row["runway_months"] == pytest.approx(math.log(2) / math.log(1.05))
    assert row["runway_months_low"] == pytest.approx(math.log(1.5) / math.log(1.05))


def test_no_utilization_advice_when_the_largest_vm_is_latency_bound():
    table = hand_catalog().assign(binding_limit="latency")
    row = cheapest_for_target(table, 10000, utilization_target=0.8)
    assert row["vm"] is None and row["largest_vm"] == "f" and "utilization_needed" not in row
    # beyond 100% the row keeps the figure but the reason does not suggest it
    row = cheapest_for_target(hand_catalog(), 20000, utilization_target=0.8)
    assert row["utilization_needed"] == pytest.approx(2.0) and "utilization" not in row["reason"]
