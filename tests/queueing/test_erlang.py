"""M/M/1, M/M/c and Erlang B/C: table values, closed forms, direct formulas, numerical integration, simulation."""
import heapq
import math

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.special import gammaln, logsumexp

from capmodel.errors import InputError, PlanError
from capmodel.models.queueing.erlang import erlang_b, erlang_c, mm1, mmc, servers_for_target


def erlang_c_direct(c, a):
    """Erlang C from the textbook factorial formula (Kleinrock 1975, Vol. 1, ch. 3), in log space so large c works."""
    logs = [k * math.log(a) - gammaln(k + 1) for k in range(c)]
    log_top = c * math.log(a) - gammaln(c + 1) + math.log(c / (c - a))
    return math.exp(log_top - logsumexp(logs + [log_top]))


def test_erlang_c_table_value():
    # Erlang C tables: a = 10 Erlangs on c = 11 servers -> P(wait) = 0.6821
    assert erlang_c(11, 10.0) == pytest.approx(0.6821, abs=5e-5)


@pytest.mark.parametrize("c,a", [(1, 0.5), (2, 1.0), (5, 3.7), (11, 10.0), (40, 38.5), (1000, 950.0), (1000, 999.0)])
def test_erlang_c_equals_direct_formula(c, a):
    assert erlang_c(c, a) == pytest.approx(erlang_c_direct(c, a), rel=1e-10)


def test_erlang_b_equals_direct_formula_and_relation_to_c():
    for c, a in [(1, 0.3), (7, 4.2), (300, 280.0)]:
        logs = [k * math.log(a) - gammaln(k + 1) for k in range(c + 1)]
        assert erlang_b(c, a) == pytest.approx(math.exp(logs[-1] - logsumexp(logs)), rel=1e-10)
    assert erlang_b(1, 0.3) == pytest.approx(0.3 / 1.3)  # M/M/1/1: a / (1 + a)


def test_mm1_jain_gateway_example():
    # Jain (1991) ch. 31, the gateway example: 125 packets/s arrive, 2 ms to forward each (mu = 500/s).
    # M/M/1 box: rho = lambda/mu, E[n] = rho/(1-rho), E[r] = (1/mu)/(1-rho), q-percentile of r = E[r] ln(100/(100-q)).
    r = mm1(125.0, 500.0)
    assert r.utilization == pytest.approx(0.25)
    assert r.mean_in_system == pytest.approx(1 / 3)
    assert r.mean_response == pytest.approx(0.002 / 0.75)  # 2.67 ms
    assert r.response_percentile(0.90) == pytest.approx(0.002 / 0.75 * math.log(10))
    assert r.prob_wait == pytest.approx(0.25)  # P(busy) = rho for M/M/1


def test_mm2_closed_forms():
    # M/M/2 (Kleinrock 1975, Vol. 1, ch. 3): L = 2 rho / (1 - rho^2), C = 2 rho^2 / (1 + rho)
    for rho in (0.1, 0.5, 0.9):
        r = mmc(2 * rho, 1.0, 2)
        assert r.mean_in_system == pytest.approx(2 * rho / (1 - rho**2))
        assert r.prob_wait == pytest.approx(2 * rho**2 / (1 + rho))
        assert r.mean_response == pytest.approx(r.mean_in_system / r.arrival_rate)  # Little's law


def test_wait_percentile_inverts_wait_distribution():
    r = mmc(10.0, 1.0, 11)
    t90 = r.wait_percentile(0.90)
    assert r.prob_wait_exceeds(t90) == pytest.approx(0.10)
    assert r.wait_percentile(0.30) == 0.0  # only 68 % wait, so the 30th percentile of the wait is 0
    assert r.prob_wait_exceeds(0.0) == pytest.approx(r.prob_wait)


def response_survival_by_integration(r, t):
    """P(W + S > t) by numerical convolution of the wait (atom 1 - C at 0, then C * theta e^{-theta w}) with S."""
    theta, mu, c_prob = r.servers * r.service_rate - r.arrival_rate, r.service_rate, r.prob_wait
    tail = quad(lambda w: theta * math.exp(-theta * w) * math.exp(-mu * (t - w)), 0.0, t)[0]
    return (1 - c_prob) * math.exp(-mu * t) + c_prob * (tail + math.exp(-theta * t))


@pytest.mark.parametrize("lam,mu,c", [(3.0, 1.0, 4), (1.0, 1.0, 2), (5.0, 2.0, 3), (0.4, 1.0, 1), (95.0, 1.0, 100)])
def test_response_time_distribution_matches_numerical_convolution(lam, mu, c):
    # (1.0, 1.0, 2) is the special case c mu - lambda == mu
    r = mmc(lam, mu, c)
    for t in (0.0, 0.3, 1.0, 2.5, 7.0):
        assert r.prob_response_exceeds(t) == pytest.approx(response_survival_by_integration(r, t), rel=1e-8, abs=1e-14)
    p95 = r.response_percentile(0.95)
    assert r.prob_response_exceeds(p95) == pytest.approx(0.05, rel=1e-9)


def test_response_distribution_is_continuous_through_the_special_case():
    # c mu - lambda == mu at lambda = 1 (c = 2, mu = 1): the formula switches form there
    exact = mmc(1.0, 1.0, 2)
    c_prob = exact.prob_wait
    assert exact.prob_response_exceeds(2.0) == pytest.approx((1 - c_prob) * math.exp(-2) + c_prob * 3 * math.exp(-2))
    for lam in (1.0 - 1e-9, 1.0 + 1e-9, 1.0 - 1e-5):
        assert mmc(lam, 1.0, 2).prob_response_exceeds(2.0) == pytest.approx(exact.prob_response_exceeds(2.0), rel=1e-4)


def simulate_mmc_fcfs(lam, mu, c, n_jobs, seed):
    """Waits and responses of an M/M/c FCFS queue by direct simulation: each arrival takes the earliest-free server."""
    rng = np.random.default_rng(seed)
    arrivals = np.cumsum(rng.exponential(1 / lam, n_jobs))
    services = rng.exponential(1 / mu, n_jobs)
    free_at = [0.0] * c
    waits = np.empty(n_jobs)
    for i in range(n_jobs):
        start = max(arrivals[i], heapq.heappop(free_at))
        waits[i] = start - arrivals[i]
        heapq.heappush(free_at, start + services[i])
    return waits[n_jobs // 10 :], (waits + services)[n_jobs // 10 :]


def test_mmc_against_fixed_seed_simulation():
    r = mmc(3.0, 1.0, 4)
    waits, responses = simulate_mmc_fcfs(3.0, 1.0, 4, 200_000, seed=1)
    assert np.mean(waits > 0) == pytest.approx(r.prob_wait, abs=0.01)
    assert waits.mean() == pytest.approx(r.mean_wait, rel=0.05)
    assert np.quantile(responses, 0.95) == pytest.approx(r.response_percentile(0.95), rel=0.03)
    assert np.quantile(waits, 0.95) == pytest.approx(r.wait_percentile(0.95), rel=0.05)


def test_servers_for_target_is_the_smallest_that_meets_it():
    lam, mu = 200.0, 1 / 0.05  # 200 req/s, 50 ms each: a = 10 Erlangs
    c = servers_for_target(lam, mu, max_prob_wait=0.2)
    assert erlang_c(c, 10.0) <= 0.2 < erlang_c(c - 1, 10.0)
    c = servers_for_target(lam, mu, percentile=0.99, max_response_at_percentile=0.3)
    assert mmc(lam, mu, c).response_percentile(0.99) <= 0.3 < mmc(lam, mu, c - 1).response_percentile(0.99)
    both = servers_for_target(lam, mu, max_mean_wait=0.001, max_wait_at_percentile=0.01, percentile=0.9)
    r, fewer = mmc(lam, mu, both), mmc(lam, mu, both - 1)
    assert r.mean_wait <= 0.001 and r.wait_percentile(0.9) <= 0.01
    assert fewer.mean_wait > 0.001 or fewer.wait_percentile(0.9) > 0.01
    big = servers_for_target(10_000.0, 1.0, max_prob_wait=0.05)  # large c stays quick with the Erlang B recursion
    assert erlang_c(big, 10_000.0) <= 0.05 < erlang_c(big - 1, 10_000.0)


def test_unreachable_targets_and_bad_inputs_are_named():
    with pytest.raises(PlanError, match="max_mean_response"):
        servers_for_target(10.0, 1.0, max_mean_response=1.0)  # service alone takes 1/mu = 1
    with pytest.raises(PlanError, match="max_response_at_percentile"):
        servers_for_target(10.0, 1.0, percentile=0.95, max_response_at_percentile=2.9)  # -ln(0.05) = 3.0
    with pytest.raises(PlanError, match="max_prob_wait"):
        servers_for_target(10.0, 1.0, max_prob_wait=0.0)
    with pytest.raises(InputError, match="target"):
        servers_for_target(10.0, 1.0)
    with pytest.raises(InputError, match="unstable"):
        mmc(10.0, 1.0, 10)
    with pytest.raises(InputError, match="unstable"):
        erlang_c(5, 5.0)
    with pytest.raises(InputError, match="arrival_rate"):
        mm1(-1.0, 2.0)
    with pytest.raises(InputError, match="servers"):
        mmc(1.0, 2.0, 2.5)
    with pytest.raises(InputError, match="p must"):
        mm1(1.0, 2.0).response_percentile(95)


@pytest.mark.parametrize("p, shown", [(1.0, "1"), (0, "0"), (float("nan"), "nan"), (True, "True"),
                                      ("x", "'x'"), ("0.9", "'0.9'")])
def test_a_percentile_outside_0_1_or_not_a_number_is_one_input_error(p, shown):
    # models/laws.py's PROBABILITY: text was read by float() before, and 'x' escaped as a ValueError
    message = f"must be a probability strictly between 0 and 1 (e.g. 0.95), got {shown}"
    r = mmc(300.0, 100.0, 4)
    for call, name in [(r.wait_percentile, "p"), (r.response_percentile, "p"),
                       (lambda v: servers_for_target(300.0, 100.0, percentile=v, max_wait_at_percentile=0.01),
                        "percentile")]:
        with pytest.raises(InputError) as caught:
            call(p)
        assert str(caught.value) == f"{name} {message}"
