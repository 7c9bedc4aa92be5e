"""Open and mixed multi-class networks: against M/M/1 and M/M/c formulas written out here, and a mixed network against
its (truncated) brute-force Markov chain."""
import itertools
import math

import numpy as np
import pytest

from capmodel.errors import InputError
from capmodel.models.queueing.open_networks import mixed_network, open_network, stability_limit
from tests.support.queueing_ctmc import stationary


def mmc_response_time(lam, service, c):
    """M/M/c FCFS mean response time (Kleinrock 1975, Vol. 1, sec. 3.5; Jain 1991, the M/M/m box in ch. 31):
    P0 from the sum over k < c of a^k/k! plus a^c/(c! (1-rho)); wait = P(queue) S / (c (1 - rho))."""
    a, rho = lam * service, lam * service / c
    tail = a ** c / (math.factorial(c) * (1 - rho))
    p0 = 1 / (sum(a ** k / math.factorial(k) for k in range(c)) + tail)
    return service + tail * p0 * service / (c * (1 - rho))


def test_open_single_class_queue_and_multi_server_match_mm1_and_mmc():
    # 900 requests/s on 11 servers of 10 ms, and 60/s on one server of 10 ms
    result = open_network({"r": 900.0}, {"db": {"r": 0.01}}, {"db": 11})
    assert result.response_time["r"] == pytest.approx(mmc_response_time(900, 0.01, 11), rel=1e-12)
    assert result.utilization["db"] == pytest.approx(900 * 0.01 / 11)
    single = open_network({"r": 60.0}, {"db": {"r": 0.01}})
    assert single.response_time["r"] == pytest.approx(0.01 / (1 - 0.6))


def test_open_multi_class_shares_the_stretch_and_reports_the_stability_limit():
    demands = {"cpu": {"read": 0.002, "write": 0.004}, "disk": {"read": 0.001, "write": 0.008}, "net": {"read": 0.01}}
    rates = {"read": 100.0, "write": 50.0}
    result = open_network(rates, demands, {"net": "delay"})
    u_cpu, u_disk = 100 * 0.002 + 50 * 0.004, 100 * 0.001 + 50 * 0.008
    assert result.utilization[["cpu", "disk"]].to_numpy() == pytest.approx([u_cpu, u_disk])
    assert result.response_time["read"] == pytest.approx(0.002 / (1 - u_cpu) + 0.001 / (1 - u_disk) + 0.01)
    assert result.response_time["write"] == pytest.approx(0.004 / (1 - u_cpu) + 0.008 / (1 - u_disk))
    limit = stability_limit(rates, demands, {"net": "delay"})
    assert limit["bottleneck"] == "disk" and limit["factor"] == pytest.approx(1 / u_disk)
    assert limit["max_rate_alone"] == pytest.approx({"read": 500.0, "write": 1 / 0.008})
    with pytest.raises(InputError, match=r"station disk to utilization 1\.5 >= 1.*at most 0\.6667"):
        open_network({"read": 300.0, "write": 150.0}, demands, {"net": "delay"})


def mixed_ctmc(d_closed, d_open, n_closed, think, lam, cap):
    """One closed class (cycle: think -> station 0 -> station 1) and one open class (arrive -> 0 -> 1 -> leave) on
    two processor-sharing queues; open customers truncated at ``cap`` in total. Returns (X_closed, R_open)."""
    states = [(c, o) for c in itertools.product(range(n_closed + 1), repeat=3) if sum(c) == n_closed
              for o in itertools.product(range(cap + 1), repeat=2) if sum(o) <= cap]
    index = {s: i for i, s in enumerate(states)}
    moves, completions = [], np.zeros(len(states))
    for (c, o), i in index.items():
        def go(nc, no, rate):
            moves.append((i, index[(tuple(nc), tuple(no))], rate))
        if c[2]:
            go((c[0] + 1, c[1], c[2] - 1), o, c[2] / think)
        if sum(o) < cap:
            go(c, (o[0] + 1, o[1]), lam)
        for k in (0, 1):
            total = c[k] + o[k]
            if c[k]:
                rate = c[k] / total / d_closed[k]
                nxt = (c[0] - 1, c[1] + 1, c[2]) if k == 0 else (c[0], c[1] - 1, c[2] + 1)
                go(nxt, o, rate)
                if k == 1:
                    completions[i] += rate
            if o[k]:
                rate = o[k] / total / d_open[k]
                go(c, (o[0] - 1, o[1] + 1) if k == 0 else (o[0], o[1] - 1), rate)
    pi = stationary(states, moves)
    open_mean = sum(p * sum(o) for p, (c, o) in zip(pi, states))
    return pi @ completions, open_mean / lam


def test_mixed_network_equals_its_markov_chain():
    d_closed, d_open, lam = (0.3, 0.2), (0.1, 0.15), 1.5     # open utilization 0.15 and 0.225
    x_closed, r_open = mixed_ctmc(d_closed, d_open, n_closed=2, think=1.0, lam=lam, cap=30)
    result = mixed_network({"cpu": {"users": 0.3, "reports": 0.1}, "disk": {"users": 0.2, "reports": 0.15}},
                           populations={"users": 2}, arrival_rates={"reports": lam}, think_times={"users": 1.0})
    assert result.throughput["users"] == pytest.approx(x_closed, rel=1e-9)
    assert result.response_time["reports"] == pytest.approx(r_open, rel=1e-9)
    assert result.throughput["reports"] == lam
    assert result.utilization["cpu"] == pytest.approx(x_closed * 0.3 + lam * 0.1)
    assert "mixed network" in result.describe()


def test_mixed_network_refusals():
    with pytest.raises(InputError, match="both closed"):
        mixed_network({"cpu": {"a": 0.1}}, {"a": 1}, {"a": 1.0})
    with pytest.raises(InputError, match="2 servers and open load"):
        mixed_network({"cpu": {"a": 0.1, "b": 0.1}}, {"a": 1}, {"b": 1.0}, servers={"cpu": 2})
    with pytest.raises(InputError, match="open classes load station cpu"):
        mixed_network({"cpu": {"a": 0.1, "b": 0.5}}, {"a": 1}, {"b": 2.0})
