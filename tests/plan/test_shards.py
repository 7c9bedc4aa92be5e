"""Shard scale-out against the AWS DocumentDB elastic-cluster insert benchmark (seed 004_, "Scale write performance on
Amazon DocumentDB elastic clusters") and hand computations.

The post gives the configuration (1, 2, 4, 8, 16 shards driven by 128, 128, 256, 512, 1,024 client processes, batch
1,000) and one figure: "We scaled the writes to over a million inserts per second on the 16-shard elastic cluster."
"""
import math

import pytest

from capmodel import datasets
from capmodel.errors import PlanError
from capmodel.plan import clients_needed, plan_shards, shards_needed


def test_client_rule_reproduces_the_benchmark_configuration():
    config = datasets.load("documentdb_insert_config")
    elastic = config[config["cluster"] == "elastic"]
    for _, row in elastic.iterrows():
        assert clients_needed(int(row["shards"])) == row["client_processes"]


def test_a_million_inserts_on_16_shards_when_scaling_is_linear():
    # over 1,000,000 inserts/s on 16 shards means at least 62,500 per shard under linear scaling
    plan = plan_shards(1_000_000, 62_500)
    assert plan["shards"] == 16 and plan["throughput"] == pytest.approx(1_000_000)
    assert plan["clients"] == 1024 and plan["efficiency"] == pytest.approx(1.0)


def test_router_contention_needs_more_shards_hand_computed():
    # X(s) = 62,500 s / (1 + 0.01 (s - 1)); X(s) >= 1e6  <=>  s (62,500 - 10,000) >= 990,000  <=>  s >= 18.86
    n, why = shards_needed(1_000_000, 62_500, sigma=0.01)
    assert (n, why) == (19, "")
    plan = plan_shards(1_000_000, 62_500, sigma=0.01)
    assert plan["throughput"] == pytest.approx(62_500 * 19 / 1.18)
    assert plan["linear_shards"] == 16
    assert plan["efficiency"] == pytest.approx(1 / 1.18)


def test_beyond_the_32_shard_limit_is_unreachable():
    # sigma = 0.05: s (62,500 - 50,000) >= 950,000 -> s >= 76, more than the 32 shards an elastic cluster allows
    n, why = shards_needed(1_000_000, 62_500, sigma=0.05)
    assert n is None and "76 shards" in why and "32" in why
    # and the ceiling lambda / sigma = 1.25 M: 1.3 M is unreachable at any count
    n, why = shards_needed(1_300_000, 62_500, sigma=0.05, max_shards=math.inf)
    assert n is None and "ceiling" in why


def test_clients_by_littles_law():
    # 1,000,000 inserts/s in batches of 1,000 = 1,000 batches/s; 0.25 s per batch -> 250 batches in flight
    assert clients_needed(16, throughput=1_000_000, batch_size=1000, batch_latency_s=0.25) == 250
    assert clients_needed(16, throughput=1_000_001, batch_size=1000, batch_latency_s=0.25) == 251


def test_bad_shard_inputs():
    with pytest.raises(PlanError, match="per-shard throughput"):
        shards_needed(1000, 0)
    with pytest.raises(PlanError, match="target rate"):
        shards_needed(-1, 100)


def test_shard_interval_from_parameter_samples():
    import pandas as pd

    # sigma 0, 0.01, 0.02: 16, 19 (above), and s (62,500 - 20,000) >= 980,000 -> 23.06 -> 24 shards
    samples = pd.DataFrame({"sigma": [0.0, 0.01, 0.02], "kappa": [0.0, 0.0, 0.0]})
    plan = plan_shards(1_000_000, 62_500, sigma=0.01, usl_samples=samples, level=0.99)
    assert (plan["shards_low"], plan["shards"], plan["shards_high"]) == (16, 19, 24)
    assert plan["unreachable_share"] == 0.0
    samples = pd.DataFrame({"sigma": [0.0, 0.05], "kappa": [0.0, 0.0]})      # 0.05: needs 76 > 32 shards
    plan = plan_shards(1_000_000, 62_500, usl_samples=samples, level=0.99)
    assert plan["shards_high"] == math.inf and plan["unreachable_share"] == 0.5


@pytest.mark.parametrize("sigma, kappa, max_shards", [(0.05, 0.0, 32), (0.01, 0.0005, 100), (0.2, 0.0, 1000),
                                                      (0.0, 0.0, 8)])
def test_an_unreachable_row_still_carries_its_linear_estimate(sigma, kappa, max_shards):
    # every way a target is missed (the shard limit, the peak, the ceiling λ/σ, a linear curve capped): the count at
    # perfect scaling does not depend on σ or κ, so the layer gives it (report 05 and `capmodel shards` take it)
    for target in (1_000_000, 1_300_000, 2_000_000):
        plan = plan_shards(target, 62_500, sigma=sigma, kappa=kappa, max_shards=max_shards)
        assert plan["linear_shards"] == math.ceil(target / 62_500)
        if plan["shards"] is None:
            assert "throughput" not in plan


@pytest.mark.parametrize("sigma, kappa, unit", [(0.01, 0.0005, "inserts/s"), (0.2, 0.0, "inserts/s")])
def test_the_unreachable_reason_states_the_curves_unit(sigma, kappa, unit):
    # peak (κ > 0) and ceiling (κ = 0, σ > 0) cases: each figure in the reason is followed by its unit
    n, why = shards_needed(2_000_000, 62_500, sigma=sigma, kappa=kappa, max_shards=10_000)
    assert n is None
    assert why.count(unit) == 2 and "2,000,000 inserts/s" in why


def test_nodes_unreachable_reason_names_ops_per_second():
    from capmodel.plan.nodes import nodes_needed_usl

    # X(n) = 1,000 n / (1 + 0.01 (n - 1) + 1e-4 n (n - 1)) peaks near n = sqrt(0.99 / 1e-4) = 99.5
    n, why = nodes_needed_usl(1e6, 1000.0, 1.0, 0.01, 1e-4)
    best = max(1000.0 * k / (1 + 0.01 * (k - 1) + 1e-4 * k * (k - 1)) for k in range(1, 200))
    assert n is None and f"peaks at {best:,.0f} ops/s with " in why and why.endswith("below 1,000,000 ops/s")
