"""The operation-mix what-if: the class-switching model against its Markov chain, recovery of known demands, and the
bundled plgm curves (Percona plgm study, seed 003_: workload #1 "100% find()" (PLGM_FIND_PERCENT=100), workload #2
"54% Reads, 46% Writes", workload #3 the default workload, "also a mixed workload test (54% reads and 46% writes)")."""
import itertools

import numpy as np
import pytest

from capmodel import datasets
from capmodel.errors import InputError
from capmodel.models.mix.demands import check_mix, fit_mix_demands, solve_mix
from capmodel.models.queueing.multiclass import multiclass_mva
from tests.support.queueing_ctmc import stationary

READ_ONLY = {"read": 1.0}
MIXED = {"read": 0.54, "write": 0.46}


def switching_ctmc(n, share, demand, delay, servers):
    """N threads; each operation is a read with probability share['read'], else a write; it spends an exponential
    delay (mean delay[c]) and then exponential work (mean demand[c]) at a processor-sharing station of ``servers``
    processors. State: (reads at delay, writes at delay, reads at db, writes at db). Returns X and R per class."""
    classes = ["read", "write"]
    states = [s for s in itertools.product(range(n + 1), repeat=4) if sum(s) == n]
    index = {s: i for i, s in enumerate(states)}
    moves, done = [], np.zeros(len(states))
    for s, i in index.items():
        at_db = s[2] + s[3]
        for c in range(2):
            if s[c]:  # delay over: to the database
                t = list(s)
                t[c] -= 1
                t[2 + c] += 1
                moves.append((i, index[tuple(t)], s[c] / delay[classes[c]]))
            if s[2 + c]:  # database work over: the next operation picks its class
                rate = s[2 + c] / at_db * min(at_db, servers) / demand[classes[c]]
                done[i] += rate
                for c2 in range(2):
                    t = list(s)
                    t[2 + c] -= 1
                    t[c2] += 1
                    moves.append((i, index[tuple(t)], rate * share[classes[c2]]))
    pi = stationary(states, moves)
    x = pi @ done
    occupancy = np.array(states, dtype=float)
    mean = pi @ occupancy
    return x, {c: (mean[k] + mean[2 + k]) / (share[c] * x) for k, c in enumerate(classes)}


def test_class_latencies_of_the_switching_model_equal_its_markov_chain():
    demand, delay = {"read": 0.3, "write": 0.7}, {"read": 0.5, "write": 0.2}
    model = solve_mix(demand, delay, {"read": 0.6, "write": 0.4}, servers=2, concurrency=[1, 3, 5])
    for row in model.itertuples():
        x, r = switching_ctmc(row.concurrency, {"read": 0.6, "write": 0.4}, demand, delay, servers=2)
        assert row.throughput == pytest.approx(x, rel=1e-9)
        assert row.latency_read_ms / 1000 == pytest.approx(r["read"], rel=1e-9)
        assert row.latency_write_ms / 1000 == pytest.approx(r["write"], rel=1e-9)


def test_known_demands_are_recovered_from_two_mixes():
    demand, delay = {"read": 0.0003, "write": 0.0007}, {"read": 0.0012, "write": 0.0015}
    n = [1, 4, 8, 16, 32, 64, 128]
    curves = {}
    for name, mix in (("read-only", READ_ONLY), ("mixed", MIXED)):
        model = solve_mix(demand, delay, {c: mix.get(c, 0.0) for c in demand}, 4, n)
        curves[name] = (model.rename(columns={"latency_read_ms": "latency_read_mean_ms",
                                              "latency_write_ms": "latency_write_mean_ms"}), mix)
    fit = fit_mix_demands(curves, servers=4)
    assert fit.demand == pytest.approx(demand, rel=1e-5)
    assert fit.delay == pytest.approx(delay, rel=1e-5)
    assert fit.fit_errors()["mean_abs_throughput_error_pct"].max() < 1e-4


@pytest.fixture(scope="module")
def plgm():
    curves = {name: datasets.load_curve(name) for name in ("plgm_workload1", "plgm_workload2", "plgm_workload3")}
    # the study's servers are 4 vCPU / 8 GB VMs (data/README.md): the saturating primary has 4 processors
    fit = fit_mix_demands({"plgm_workload1": (curves["plgm_workload1"], READ_ONLY),
                           "plgm_workload2": (curves["plgm_workload2"], MIXED)}, servers=4)
    return fit, curves


def test_plgm_what_if_predicts_workload_3_within_its_error(plgm):
    fit, curves = plgm
    measured = curves["plgm_workload3"]
    prediction = fit.compare(measured, MIXED, "plgm_workload3")
    predicted = fit.predict(MIXED, measured["concurrency"])["throughput"].to_numpy()
    errors = (predicted / measured["throughput"].to_numpy() - 1) * 100
    assert prediction.mean_abs_throughput_error_pct == pytest.approx(np.mean(np.abs(errors)))
    peak_error = (predicted.max() / measured["throughput"].max() - 1) * 100
    assert prediction.peak_error_pct == pytest.approx(peak_error)
    # the saturated plateau is what a capacity plan uses: predicted within 10 % of workload 3's 8,256 ops/s peak
    assert abs(peak_error) < 10
    # writes cost more at the database than reads, as the study found ("Introducing 46% writes lowered capacity")
    assert fit.demand["write"] > fit.demand["read"]
    # Little's law inside the model: N = X R at every concurrency
    model = fit.predict(MIXED, [4, 32, 128])
    assert (model["throughput"] * model["latency_mean_ms"] / 1000).to_numpy() == pytest.approx([4, 32, 128])


def test_the_fitted_demands_as_dedicated_tenants(plgm):
    fit, _ = plgm
    demands, servers = fit.network()
    result = multiclass_mva(demands, {"read": 32, "write": 32}, servers=servers)
    # 32 threads of each kind: the 4 processors cannot do more than X_r D_r + X_w D_w = 4; Little's law per tenant
    busy = result.throughput["read"] * fit.demand["read"] + result.throughput["write"] * fit.demand["write"]
    assert 0.9 < busy / 4 <= 1 + 1e-12
    assert (result.throughput * result.response_time).to_numpy() == pytest.approx([32, 32])
    assert result.response_time["write"] > result.response_time["read"]


@pytest.mark.parametrize("mix, message", [
    ({"read": 0.5, "write": 0.4}, "must add up to 1"),
    ({"read": -0.1, "write": 1.1}, "must be >= 0"),
    ("reads", "must be a mapping"),
])
def test_bad_mixes(mix, message):
    with pytest.raises(InputError, match=message):
        check_mix(mix)


def test_one_mix_cannot_separate_two_classes(plgm):
    fit, curves = plgm
    with pytest.raises(InputError, match="2 classes .* need curves of at least 2 linearly independent mixes"):
        fit_mix_demands({"a": (curves["plgm_workload2"], MIXED)})
    with pytest.raises(InputError, match="class 'delete'"):
        fit.predict({"read": 0.5, "delete": 0.5}, [4])
