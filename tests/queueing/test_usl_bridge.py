"""The USL -> queueing network bridge: the mapping identity, the repairman closed form, and the comparison table."""
from math import factorial
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from capmodel.errors import InputError
from capmodel.models.queueing.mva import exact_mva
from capmodel.models.queueing.usl_mva import mva_throughput_for_usl, usl_network, usl_vs_mva


def usl_formula(n, sigma, kappa, lambda_):
    """Gunther's USL, written out here so the test does not depend on capmodel.models.usl.fit."""
    return lambda_ * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))


def repairman_throughput(n, demand, think):
    """Machine-repairman (M/M/1//N) throughput from its closed-form idle probability (Kleinrock 1975, Vol. 1, ch. 3)."""
    p_idle = 1 / sum(factorial(n) / factorial(n - k) * (demand / think) ** k for k in range(n + 1))
    return (1 - p_idle) / demand


PARAMS = [(0.05, 0.0, 1000.0), (0.2, 0.001, 50.0), (0.02, 0.0005, 3.0), (0.0, 0.0, 10.0), (1.0, 0.0, 2.0)]


@pytest.mark.parametrize("sigma,kappa,lambda_", PARAMS)
def test_usl_is_the_synchronous_bound_of_its_network(sigma, kappa, lambda_):
    # the identity the bridge rests on: X_usl(N) = N / (Z + N D(N))
    n = np.arange(1, 41)
    net = usl_network(sigma, kappa, lambda_, n)
    synchronous = n / (net["parallel_time"] + n * net["serial_demand"])
    assert synchronous.to_numpy() == pytest.approx(usl_formula(n, sigma, kappa, lambda_), rel=1e-12)


@pytest.mark.parametrize("sigma,kappa,lambda_", PARAMS[:3])
def test_mva_curve_equals_repairman_closed_form(sigma, kappa, lambda_):
    n = np.arange(1, 31)
    ours = mva_throughput_for_usl(sigma, kappa, lambda_, concurrency=n)
    net = usl_network(sigma, kappa, lambda_, n)
    for i, (d, z) in enumerate(zip(net["serial_demand"], net["parallel_time"])):
        assert ours[i] == pytest.approx(repairman_throughput(int(n[i]), d, z), rel=1e-10)
    # and with the general MVA solver, one population at a time
    d, z = net["serial_demand"].iloc[19], net["parallel_time"].iloc[19]
    assert ours[19] == pytest.approx(exact_mva([d], think_time=z, populations=[20])["throughput"].iloc[0], rel=1e-12)


@pytest.mark.parametrize("sigma,kappa,lambda_", PARAMS)
def test_mva_agrees_at_one_user_and_never_falls_below_the_usl(sigma, kappa, lambda_):
    n = np.arange(1, 201)
    mva = mva_throughput_for_usl(sigma, kappa, lambda_, concurrency=n)
    usl = usl_formula(n, sigma, kappa, lambda_)
    assert mva[0] == pytest.approx(lambda_)
    assert np.all(mva >= usl * (1 - 1e-12))


def test_amdahl_case_shares_the_ceiling():
    sigma, lambda_ = 0.05, 1000.0  # ceiling lambda / sigma = 20000
    x = mva_throughput_for_usl(sigma, 0.0, lambda_, concurrency=[200])
    assert x[0] == pytest.approx(lambda_ / sigma, rel=1e-9)  # past N* = 1/sigma = 20 the serial station saturates
    assert usl_formula(200, sigma, 0.0, lambda_) < 0.92 * lambda_ / sigma  # the USL approaches it far more slowly


def test_usl_vs_mva_table_from_a_fit_like_object():
    curve = pd.DataFrame({"concurrency": [1, 4, 16, 32], "throughput": [50.0, 170.0, 330.0, 360.0]})
    fit = SimpleNamespace(sigma=0.2, kappa=0.001, lambda_=50.0, curve=curve)
    table = usl_vs_mva(fit)
    assert list(table.columns) == ["concurrency", "usl_throughput", "mva_throughput"]
    assert table["concurrency"].tolist() == list(range(1, 33))
    assert table["usl_throughput"].to_numpy() == pytest.approx(usl_formula(np.arange(1, 33), 0.2, 0.001, 50.0))
    same = usl_vs_mva(0.2, 0.001, 50.0, concurrency=range(1, 33))
    pd.testing.assert_frame_equal(table, same)


def test_bridge_rejects_what_a_network_cannot_represent():
    with pytest.raises(InputError, match="sigma"):
        mva_throughput_for_usl(-0.1, 0.0, 10.0, concurrency=[1, 2])  # superlinear fit
    with pytest.raises(InputError, match="kappa"):
        usl_network(0.1, -0.01, 10.0, [1])
    with pytest.raises(InputError, match="all three"):
        usl_vs_mva(0.1, concurrency=[1])
    with pytest.raises(InputError, match="concurrency"):
        usl_vs_mva(SimpleNamespace(sigma=0.1, kappa=0.0, lambda_=1.0))
    with pytest.raises(InputError, match="concurrency"):
        mva_throughput_for_usl(0.1, 0.0, 1.0, concurrency=[2.5])


def test_bridge_accepts_a_real_usl_fit():
    from capmodel.models.usl.fit import fit_usl

    n = np.array([1, 2, 4, 8, 16, 32, 64], dtype=float)
    curve = pd.DataFrame({"concurrency": n, "throughput": usl_formula(n, 0.03, 0.0002, 100.0)})
    table = usl_vs_mva(fit_usl(curve))
    assert table["concurrency"].tolist() == list(range(1, 65))
    expected = usl_formula(np.arange(1, 65), 0.03, 0.0002, 100.0)
    assert table["usl_throughput"].to_numpy() == pytest.approx(expected, rel=1e-6)
    assert table["mva_throughput"].iloc[0] == pytest.approx(100.0, rel=1e-6)
