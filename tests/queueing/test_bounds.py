"""Asymptotic and balanced job bounds: they must contain the exact MVA solution (itself checked against a CTMC)."""
import numpy as np
import pytest

from capmodel.errors import InputError
from capmodel.models.queueing.bounds import asymptotic_bounds, balanced_job_bounds, saturation_population
from capmodel.models.queueing.mva import exact_mva

# Jain (1991) Example 34.2 timesharing system: D = 2, 3, 1 s, Z = 4 s
JAIN_DEMANDS = [2.0, 3.0, 1.0]


def test_jain_timesharing_asymptotes():
    # D = 6, Dmax = 3: N* = (6 + 4) / 3; X <= min(N / 10, 1/3); R >= max(6, 3 N - 4)
    assert saturation_population(JAIN_DEMANDS, 4.0) == pytest.approx(10 / 3)
    demands = {"cpu": 2.0, "disk_a": 3.0, "disk_b": 1.0}
    b = asymptotic_bounds(demands, 4.0, population=[1, 3, 20]).set_index("concurrency")
    assert b["throughput_high"].tolist() == pytest.approx([0.1, 0.3, 1 / 3])
    assert b["response_time_low"].tolist() == pytest.approx([6.0, 6.0, 56.0])
    # Jain Table 34.1 prints X(20) = 0.333 and R(20) = 56.016: right at the asymptotes
    assert b.loc[20, "response_time_low"] <= 56.016


def bounds_contain(bounds, exact, slack=1e-12):
    for low, high, col in [("throughput_low", "throughput_high", "throughput"),
                           ("response_time_low", "response_time_high", "response_time")]:
        assert np.all(bounds[low].to_numpy() <= exact[col].to_numpy() * (1 + slack)), col
        assert np.all(exact[col].to_numpy() <= bounds[high].to_numpy() * (1 + slack)), col


@pytest.mark.parametrize("seed", range(8))
def test_bounds_contain_exact_mva_and_balanced_bounds_are_tighter(seed):
    rng = np.random.default_rng(seed)
    demands = rng.uniform(0.01, 1.0, size=rng.integers(1, 6))
    think = float(rng.choice([0.0, rng.uniform(0.1, 10.0)]))
    exact = exact_mva(list(demands), think_time=think, populations=60)
    aba = asymptotic_bounds(demands, think, population=np.arange(1, 61))
    bjb = balanced_job_bounds(demands, think, population=np.arange(1, 61))
    bounds_contain(aba, exact)
    bounds_contain(bjb, exact)
    assert np.all(bjb["throughput_high"] <= aba["throughput_high"] + 1e-12)
    assert np.all(bjb["throughput_low"] >= aba["throughput_low"] - 1e-12)
    assert np.all(bjb["response_time_low"] >= aba["response_time_low"] - 1e-12)
    assert np.all(bjb["response_time_high"] <= aba["response_time_high"] + 1e-12)


def test_balanced_bounds_are_exact_for_a_balanced_batch_network():
    # Lazowska et al. (1984) ch. 5: with equal demands and Z = 0, X(N) = N / ((N + K - 1) D_k), both bounds meet it
    n = np.arange(1, 31)
    bjb = balanced_job_bounds([0.5] * 4, 0.0, population=n)
    assert bjb["throughput_low"].to_numpy() == pytest.approx(n / ((n + 3) * 0.5))
    assert bjb["throughput_high"].to_numpy() == pytest.approx(n / ((n + 3) * 0.5))
    assert exact_mva([0.5] * 4, populations=30)["throughput"].to_numpy() == pytest.approx(n / ((n + 3) * 0.5))


def test_bounds_reject_bad_inputs():
    with pytest.raises(InputError, match="demands"):
        asymptotic_bounds([0.1, -1.0])
    with pytest.raises(InputError, match="all service demands are 0"):
        balanced_job_bounds([0.0, 0.0])
    with pytest.raises(InputError, match="population"):
        balanced_job_bounds([0.1], population=0)
