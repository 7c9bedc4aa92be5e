"""Exact and approximate MVA: against Jain's printed tables and against a brute-force CTMC solution."""
import itertools

import numpy as np
import pytest
from scipy.special import gammaln, logsumexp

from capmodel.errors import InputError
from capmodel.models.queueing.mva import approximate_mva, exact_mva

# Jain, "The Art of Computer Systems Performance Analysis" (1991), Example 34.2: timesharing system,
# Z = 4 s; CPU S = 0.125 s, V = 16; disk A S = 0.3 s, V = 10; disk B S = 0.2 s, V = 5 (D = 2, 3, 1 s).
JAIN_VISITS = {"cpu": 16, "disk_a": 10, "disk_b": 5}
JAIN_DEMANDS = {"cpu": 0.125 * 16, "disk_a": 0.3 * 10, "disk_b": 0.2 * 5}
# Table 34.1 (printed to 3 decimals): N -> per-visit response time CPU, A, B; system R; X; queue length CPU, A, B
JAIN_TABLE_34_1 = {
    1: (0.125, 0.300, 0.200, 6.000, 0.100, 0.200, 0.300, 0.100),
    2: (0.150, 0.390, 0.220, 7.400, 0.175, 0.421, 0.684, 0.193),
    3: (0.178, 0.505, 0.239, 9.088, 0.229, 0.651, 1.158, 0.273),
    4: (0.206, 0.647, 0.255, 11.051, 0.266, 0.878, 1.721, 0.338),
    5: (0.235, 0.816, 0.268, 13.256, 0.290, 1.088, 2.365, 0.388),
    17: (0.370, 3.962, 0.300, 47.045, 0.333, 1.974, 13.195, 0.499),
    18: (0.372, 4.259, 0.300, 50.032, 0.333, 1.981, 14.187, 0.499),
    19: (0.373, 4.556, 0.300, 53.022, 0.333, 1.987, 15.181, 0.500),
    20: (0.373, 4.854, 0.300, 56.016, 0.333, 1.991, 16.177, 0.500),
}


def test_exact_mva_reproduces_jain_table_34_1():
    table = exact_mva(JAIN_DEMANDS, think_time=4.0, populations=20).set_index("concurrency")
    for n, printed in JAIN_TABLE_34_1.items():
        row = table.loc[n]
        per_visit = [row[f"residence_time_{k}"] / v for k, v in JAIN_VISITS.items()]
        ours = per_visit + [row["response_time"], row["throughput"]] + [row[f"queue_length_{k}"] for k in JAIN_VISITS]
        assert ours == pytest.approx(printed, abs=0.0006), f"N = {n}"


# --- brute force: the continuous-time Markov chain of a central-server network --------------------------------------

def ctmc_central_server(service_times, servers, branch, think_time, n_users):
    """Solve the CTMC of a central-server network exactly (numpy linear algebra over all states).

    Station 0 is the CPU; after a CPU burst a job goes to device i >= 1 with probability branch[i] or leaves the
    system with probability branch[0] (to the terminals if think_time > 0, else straight back to the CPU as a new job).
    Devices return to the CPU. Returns throughput, mean queue lengths, per-server utilizations, marginal distributions.
    """
    k = len(service_times)
    stations = k + (1 if think_time > 0 else 0)  # the last one is the terminals
    states = [s for s in itertools.product(range(n_users + 1), repeat=stations) if sum(s) == n_users]
    index = {s: i for i, s in enumerate(states)}
    rates = np.zeros((len(states), len(states)))
    completions = np.zeros(len(states))  # rate of system-level completions in each state

    def move(state, src, dst, rate, i):
        t = list(state)
        t[src] -= 1
        t[dst] += 1
        rates[i, index[tuple(t)]] += rate

    for s, i in index.items():
        if s[0]:
            cpu_rate = min(s[0], servers[0]) / service_times[0]
            for dev in range(1, k):
                move(s, 0, dev, cpu_rate * branch[dev], i)
            completions[i] = cpu_rate * branch[0]
            if think_time > 0:
                move(s, 0, k, cpu_rate * branch[0], i)
        for dev in range(1, k):
            if s[dev]:
                move(s, dev, 0, min(s[dev], servers[dev]) / service_times[dev], i)
        if think_time > 0 and s[k]:
            move(s, k, 0, s[k] / think_time, i)
    generator = rates - np.diag(rates.sum(axis=1))
    a = np.vstack([generator.T, np.ones(len(states))])
    b = np.zeros(len(states) + 1)
    b[-1] = 1.0
    pi = np.linalg.lstsq(a, b, rcond=None)[0]
    occupancy = np.array(states, dtype=float)
    queue = pi @ occupancy[:, :k]
    busy = pi @ np.minimum(occupancy[:, :k], servers)
    marginals = [np.array([pi[occupancy[:, j] == m].sum() for m in range(n_users + 1)]) for j in range(stations)]
    utilization = busy / np.array(servers)
    return {"throughput": pi @ completions, "queue": queue, "utilization": utilization, "marginals": marginals}


def demands_of(service_times, branch):
    visits = [1.0 / branch[0]] + [branch[i] / branch[0] for i in range(1, len(service_times))]
    return [v * s for v, s in zip(visits, service_times)]


NETWORKS = {
    "single servers, think time":
        dict(service_times=[0.05, 0.08, 0.12], servers=[1, 1, 1], branch=[0.2, 0.5, 0.3], think_time=1.5),
    "multi-server stations, think time":
        dict(service_times=[0.05, 0.4, 0.3], servers=[2, 3, 1], branch=[0.25, 0.45, 0.3], think_time=0.8),
    "multi-server, batch (no think time)":
        dict(service_times=[0.02, 0.1], servers=[4, 2], branch=[0.4, 0.6], think_time=0.0),
}


@pytest.mark.parametrize("name", NETWORKS)
def test_exact_mva_equals_ctmc_solution(name):
    net = NETWORKS[name]
    d = demands_of(net["service_times"], net["branch"])
    table = exact_mva(d, think_time=net["think_time"], populations=5, servers=net["servers"])
    for n in range(1, 6):
        truth = ctmc_central_server(n_users=n, **net)
        row = table.iloc[n - 1]
        assert row["throughput"] == pytest.approx(truth["throughput"], rel=1e-9, abs=0)
        assert row["response_time"] == pytest.approx(n / truth["throughput"] - net["think_time"], rel=1e-9)
        for j in range(len(d)):
            assert row[f"queue_length_station{j + 1}"] == pytest.approx(truth["queue"][j], rel=1e-9, abs=1e-12)
            assert row[f"utilization_station{j + 1}"] == pytest.approx(truth["utilization"][j], rel=1e-9, abs=1e-12)


def test_ctmc_reproduces_jain_example_35_5_state_probabilities():
    # Jain (1991) Example 35.5 (convolution algorithm; Table 35.5): N = 3, Z = 4.68, D = 0.78 / 2.34 / 1.56 for
    # CPU / disk A / disk B; printed: P(n_A = 0, 2, 3) = 0.383, 0.211, 0.070, X = 0.264, R = 6.694, U_A = 0.618.
    # Demands are realised here with CPU S = 0.078 and branch [0.1, 0.6, 0.3] to disks with S = 0.39 and 0.52.
    net = dict(service_times=[0.078, 0.39, 0.52], servers=[1, 1, 1], branch=[0.1, 0.6, 0.3], think_time=4.68)
    assert demands_of(net["service_times"], net["branch"]) == pytest.approx([0.78, 2.34, 1.56])
    truth = ctmc_central_server(n_users=3, **net)
    assert truth["marginals"][1][[0, 2, 3]] == pytest.approx([0.383, 0.211, 0.070], abs=0.0006)
    assert truth["marginals"][3][3] == pytest.approx(0.094, abs=0.0006)  # all three users at the terminals
    table = exact_mva([0.78, 2.34, 1.56], think_time=4.68, populations=[3])
    assert table["throughput"].iloc[0] == pytest.approx(0.264, abs=0.0006)
    assert table["response_time"].iloc[0] == pytest.approx(6.694, abs=0.0006)
    # the book's 0.618 is 0.264 x 2.34 from the rounded throughput; unrounded it is 0.6172
    assert table["utilization_station2"].iloc[0] == pytest.approx(0.618, abs=0.0012)
    assert table["queue_length_station2"].iloc[0] == pytest.approx(0.97, abs=0.006)


def test_exact_mva_large_population_approaches_bottleneck_and_keeps_littles_law():
    # 3 servers of demand 0.6 each: capacity 5/s; the single server of demand 0.15 alone allows 6.67/s
    d, c, z = [0.6, 0.15], [3, 1], 2.0
    table = exact_mva(d, think_time=z, populations=400, servers=c)
    assert table["throughput"].iloc[-1] == pytest.approx(3 / 0.6, rel=1e-6)
    assert np.all(np.diff(table["throughput"]) > -1e-12)
    population = table["queue_length_station1"] + table["queue_length_station2"] + table["throughput"] * z
    assert population.to_numpy() == pytest.approx(table["concurrency"].to_numpy(), rel=1e-9)
    assert table["utilization_station1"].max() <= 1.0 + 1e-12


def finite_source_multiserver(n, c, demand, think):
    """M/M/c//N (N users thinking Z, one c-server station) from its product-form distribution, in log space.

    p(k) ~ N! / (N-k)! (D/Z)^k / beta(k), beta(k) = k! for k <= c, c! c^(k-c) above (Kleinrock 1975, Vol. 1, ch. 3,
    finite customer population). Returns throughput and mean queue length at the station.
    """
    k = np.arange(n + 1)
    beta = np.where(k <= c, gammaln(k + 1), gammaln(c + 1) + (k - c) * np.log(c))
    log_w = gammaln(n + 1) - gammaln(n - k + 1) + k * np.log(demand / think) - beta
    p = np.exp(log_w - logsumexp(log_w))
    return (p * np.minimum(k, c)).sum() / demand, (p * k).sum()


@pytest.mark.parametrize(
    "n,c,demand,think", [(500, 8, 0.08, 2.0), (2000, 16, 0.05, 3.0), (1000, 32, 0.3, 9.0), (300, 4, 0.1, 1e-4)]
)
def test_exact_mva_multiserver_stays_exact_at_large_population(n, c, demand, think):
    # the textbook p(0) = 1 - sum p(j) update loses all accuracy here (X off by 60 % at N = 1000, c = 32)
    x, queue = finite_source_multiserver(n, c, demand, think)
    row = exact_mva([demand], think_time=think, populations=[n], servers=[c]).iloc[0]
    assert row["throughput"] == pytest.approx(x, rel=1e-9)
    assert row["queue_length_station1"] == pytest.approx(queue, rel=1e-9)


def test_schweitzer_is_close_to_exact_for_jain_example():
    exact = exact_mva(JAIN_DEMANDS, think_time=4.0, populations=20)
    approx = approximate_mva(JAIN_DEMANDS, think_time=4.0, populations=20)
    assert approx["throughput"].iloc[0] == pytest.approx(0.1, rel=1e-9)  # exact at N = 1
    error = np.abs(approx["throughput"] / exact["throughput"] - 1)
    assert error.max() < 0.05  # Bard-Schweitzer is known to be within a few per cent on throughput
    assert error.iloc[0] < 1e-9 and error.max() > 1e-3  # and it is genuinely an approximation
    # its own fixed point: R_k = D_k (1 + (N-1)/N Q_k) holds at the solution
    row = approx.iloc[9]
    for k, dk in JAIN_DEMANDS.items():
        assert row[f"residence_time_{k}"] == pytest.approx(dk * (1 + 9 / 10 * row[f"queue_length_{k}"]), rel=1e-8)


def test_schweitzer_large_population_is_fast_and_saturates():
    table = approximate_mva(JAIN_DEMANDS, think_time=4.0, populations=[10_000])
    assert table["throughput"].iloc[0] == pytest.approx(1 / 3, rel=1e-3)


def test_schweitzer_with_seidmann_multiserver_is_near_exact():
    d, c, z = [0.6, 0.15, 0.2], [3, 1, 2], 1.0
    exact = exact_mva(d, think_time=z, populations=30, servers=c)
    approx = approximate_mva(d, think_time=z, populations=30, servers=c)
    assert np.max(np.abs(approx["throughput"] / exact["throughput"] - 1)) < 0.1


def test_mva_rejects_impossible_inputs():
    with pytest.raises(InputError, match="demands"):
        exact_mva([0.1, -0.2], populations=3)
    with pytest.raises(InputError, match="servers"):
        exact_mva([0.1, 0.2], populations=3, servers=[1, 0])
    with pytest.raises(InputError, match="populations"):
        exact_mva([0.1], populations=0)
    with pytest.raises(InputError, match="populations"):
        exact_mva([0.1], populations=2.5)
    with pytest.raises(InputError, match="think_time"):
        approximate_mva([0.1], think_time=-1, populations=3)
