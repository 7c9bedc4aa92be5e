"""Numerical corners of the multi-class MVA (issue 20, point 4): classes held only by a load-dependent station, the
approximate solvers at c-server stations, and no NaN without an error. References: the brute-force Markov chain in
tests/queueing_ctmc.py (no mean-value recursion in it) and the exact solver on a grid."""
import numpy as np
import pytest

from capmodel.errors import CapmodelError
from capmodel.models.queueing.load_dependent import rate_function
from capmodel.models.queueing.multiclass import approximate_multiclass_mva, multiclass_mva
from capmodel.models.queueing.network import MulticlassResult, build_network
from tests.support.queueing_ctmc import closed_network


def _random_network(rng):
    """2-3 stations, 2-3 classes, populations 1-3; station 0 is load-dependent; class 0 has no think time and
    visits station 0 only (the case that gave all-NaN before)."""
    k_all, c_all = rng.integers(2, 4), rng.integers(2, 4)
    d = rng.uniform(0.05, 1.0, (k_all, c_all)) * (rng.uniform(size=(k_all, c_all)) < 0.7)
    d[:, 0] = 0.0
    d[0, 0] = rng.uniform(0.05, 1.0)
    for c in range(1, c_all):
        if not d[:, c].any():
            d[rng.integers(k_all), c] = rng.uniform(0.05, 1.0)
    think = np.where(rng.uniform(size=c_all) < 0.5, 0.0, rng.uniform(0.1, 2.0, c_all))
    think[0] = 0.0
    pops = rng.integers(1, 4, c_all)
    if rng.uniform() < 0.5:
        servers = int(rng.integers(2, 4))
        station, ctmc_kind = servers, servers
    else:
        def alpha(j, a=rng.uniform(0.2, 1.0)):
            return 1.0 + a * np.log(j)
        station, ctmc_kind = rate_function(alpha, "log rate"), alpha
    return d, pops, think, station, ctmc_kind


@pytest.mark.parametrize("seed", range(40))
def test_a_class_held_only_by_a_load_dependent_station_equals_the_markov_chain(seed):
    d, pops, think, station, ctmc_kind = _random_network(np.random.default_rng(seed))
    k_all, c_all = d.shape
    stations, classes = [f"s{k}" for k in range(k_all)], [f"c{c}" for c in range(c_all)]
    demands = {s: {c: d[k, j] for j, c in enumerate(classes) if d[k, j] > 0} for k, s in enumerate(stations)}
    x, q = closed_network(d, pops.tolist(), think.tolist(), [ctmc_kind] + ["queue"] * (k_all - 1))
    result = multiclass_mva(demands, dict(zip(classes, pops.tolist())), dict(zip(classes, think.tolist())),
                            {"s0": station})
    assert np.all(np.isfinite(result.throughput))
    assert result.throughput.to_numpy() == pytest.approx(x, rel=1e-9)
    assert result.queue_length.to_numpy() == pytest.approx(q, rel=1e-8, abs=1e-12)


def test_two_trapped_classes_at_one_multi_server_station():
    # classes x (D 0.1) and y (D 0.2), 2 customers each, no think time, only at a 3-server station: 4 requests share
    # 3 servers, always busy: X_x D_x + X_y D_y = 3, and by symmetry of processor sharing the 3 servers split
    # per customer: X_x = 2 * (3/4) / 0.1 = 15, X_y = 2 * (3/4) / 0.2 = 7.5; class z alone at a queue: 1 / 0.3
    result = multiclass_mva({"a": {"x": 0.1, "y": 0.2}, "b": {"z": 0.3}}, {"x": 2, "y": 2, "z": 1}, servers={"a": 3})
    assert result.throughput.to_numpy() == pytest.approx([15.0, 7.5, 1 / 0.3], rel=1e-12)


GRID = {"cpu": {"r": 0.4, "w": 0.2}, "disk": {"r": 0.05, "w": 0.15}, "net": {"r": 0.1, "w": 0.1}}


@pytest.mark.parametrize("servers, bounds", [
    # worst over the grid after the fix (before: throughput 21.2 / 28.3 / 36.7 %, CPU queue 59 / 90 / 103 %)
    (2, {"throughput": 0.09, "queue": 0.09}),   # measured 8.5 % and 8.3 %
    (4, {"throughput": 0.095, "queue": 0.15}),  # 9.0 % and 14.4 %
    (8, {"throughput": 0.095, "queue": 0.15}),  # 9.1 % and 14.0 %
])
def test_linearizer_at_a_c_server_station_follows_seidmann(servers, bounds):
    """Linearizer with Seidmann's transformation against exact MVA, every (N_r, N_w) in {1, 2, 5, 10, 20}^2:
    throughput of each class and the mean number at the c-server CPU."""
    worst = {"throughput": 0.0, "queue": 0.0}
    for n1 in (1, 2, 5, 10, 20):
        for n2 in (1, 2, 5, 10, 20):
            args = (GRID, {"r": n1, "w": n2}, {"r": 0.1, "w": 0.1}, {"cpu": servers, "net": "delay"})
            exact, approx = multiclass_mva(*args), approximate_multiclass_mva(*args, method="linearizer")
            worst["throughput"] = max(worst["throughput"], np.max(np.abs(approx.throughput / exact.throughput - 1)))
            cpu = approx.queue_length.loc["cpu"].sum() / exact.queue_length.loc["cpu"].sum() - 1
            worst["queue"] = max(worst["queue"], abs(cpu))
    print(servers, "servers: worst", worst)
    for what, bound in bounds.items():
        assert worst[what] < bound, what


def test_a_result_is_never_nan_without_an_error():
    net = build_network({"cpu": {"a": 1.0}})
    with pytest.raises(CapmodelError, match="no finite solution for class 'a'"):
        MulticlassResult(net, [np.nan], [[np.nan]], [np.nan], "some solver")


def _line_cases():
    import json
    from pathlib import Path

    return json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "line_reference_mva.json").read_text())["cases"]


@pytest.mark.parametrize("case", _line_cases(), ids=lambda c: f"{c['servers']}-servers-{c['populations']}")
def test_a_trapped_class_agrees_with_the_independent_line_solver(case):
    # values from LINE's CTMC solver, kept in tests/fixtures/line_reference_mva.json with the script that made them
    n_x, n_y = case["populations"]
    result = multiclass_mva({"a": {"x": case["a"][0], "y": case["a"][1]}, "b": {"y": case["b"]}},
                            {"x": n_x, "y": n_y}, {"x": 0.0, "y": case["think"]}, {"a": case["servers"]})
    assert result.throughput.to_numpy() == pytest.approx(case["throughput"], rel=1e-9)
    assert result.queue_length.loc["a"].to_numpy() == pytest.approx(case["queue_at_a"], rel=1e-9)
