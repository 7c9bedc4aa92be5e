"""One question, one solver: "the largest N (and its X) whose Little's-law response time N/X(N) meets a target".

Every public entry point (``closed_form.latency_limit``, ``USLFit.latency_limit`` and ``largest_concurrency_within``,
``usl_latency.throughput_at_latency``, ``LatencyFit.latency_limit`` and ``capacity_from_fit``'s latency limit) is
checked at targets below the zero-load response time, reachable below
the peak, exactly at the peak's response time and beyond it, on four fits: the bundled ``plgm_workload1`` and
``usl_specsdm91`` studies, an Amdahl-like curve (sigma > 0, kappa = 0) and a linear one.

The expected values are derived here by another route: the response time R(N) = N / X(N) computed from the USL's
definition, its largest N under the target found by bisection, the peak N* found by a bounded scalar maximisation of
X(N) (scipy, not the closed form sqrt((1 - sigma) / kappa)).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import optimize

from capmodel.data import datasets
from capmodel.errors import InputError, PlanError
from capmodel.models.usl.closed_form import latency_limit
from capmodel.models.usl.rivals import fit_amdahl, fit_linear
from capmodel.models.usl.fit import fit_usl
from capmodel.models.usl.latency_form import LatencyFit, throughput_at_latency
from capmodel.plan import Objectives, capacity_from_fit

N_AMDAHL = np.array([1, 2, 4, 8, 16, 32, 64.0])


def _fits():
    amdahl_x = 500.0 * N_AMDAHL / (1 + 0.04 * (N_AMDAHL - 1))
    return {
        "plgm_workload1": fit_usl(datasets.load_curve("plgm_workload1")),
        "usl_specsdm91": fit_usl(datasets.load_curve("usl_specsdm91")),
        "amdahl": fit_amdahl(pd.DataFrame({"concurrency": N_AMDAHL, "throughput": amdahl_x})),
        "linear": fit_linear(pd.DataFrame({"concurrency": N_AMDAHL, "throughput": 250.0 * N_AMDAHL})),
    }


FITS = _fits()


def x_of(n, fit):
    return fit.lambda_ * n / (1 + fit.sigma * (n - 1) + fit.kappa * n * (n - 1))


def r_of(n, fit):
    return n / x_of(n, fit)


def largest_n_within(target, fit, lo):
    """Bisection: the largest N >= lo with R(N) <= target (R rises with N here: sigma >= kappa >= 0)."""
    if r_of(lo, fit) > target:
        return None
    hi = max(2 * lo, 2.0)
    while r_of(hi, fit) <= target:
        hi *= 2
        if hi > 1e12:
            return math.inf
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if r_of(mid, fit) <= target else (lo, mid)
    return lo


def numeric_peak(fit):
    """N* by maximising X(N) numerically; inf when X keeps rising (kappa = 0)."""
    if fit.kappa <= 0:
        return math.inf
    best = optimize.minimize_scalar(lambda n: -x_of(n, fit), bounds=(1.0, 1e7), method="bounded",
                                    options={"xatol": 1e-10})
    return float(best.x)


def targets(fit):
    """Name -> seconds: below the zero-load response time 1/lambda, reachable below the peak, the peak's own
    response time, and past it (for a curve without a peak: two reachable targets instead)."""
    r1 = 1.0 / fit.lambda_
    n_peak = numeric_peak(fit)
    # below one client's response time but above the zero-load one (1 - sigma) / lambda: unreachable with whole
    # clients, reachable at N = 0.5 for the latency form of observed load
    light = {"below_one_client": r_of(0.5, fit)} if fit.sigma > 0 else {}
    if not math.isfinite(n_peak):
        return {"below_zero_load": 0.5 * r1, **light, "reachable": 3 * r1, "far": 40 * r1}
    r_peak = r_of(n_peak, fit)
    return {"below_zero_load": 0.5 * r1, **light, "reachable": r1 + 0.5 * (r_peak - r1), "at_peak": r_peak,
            "beyond_peak": 2.0 * r_peak}


CASES = [(name, which) for name, fit in FITS.items() for which in targets(fit)]


@pytest.mark.parametrize("name,which", CASES)
def test_every_entry_point_agrees_with_bisection(name, which):
    fit = FITS[name]
    seconds = targets(fit)[which]
    n_peak = numeric_peak(fit)
    unbounded = fit.sigma == 0 and fit.kappa == 0
    n_t = largest_n_within(seconds, fit, 1.0)                 # largest N >= 1 client
    n_t0 = largest_n_within(seconds, fit, 1e-9)               # the latency form's N from 0

    # the largest N, past the peak if need be (USLFit.largest_concurrency_within)
    limit = fit.largest_concurrency_within(seconds)
    if n_t is None:
        assert (limit.reachable, limit.reason) == (False, "below_zero_load")
        assert math.isnan(limit.concurrency) and math.isnan(limit.throughput)
    elif unbounded:
        assert (limit.reachable, limit.reason, limit.concurrency) == (True, "unbounded", math.inf)
    else:
        assert limit.reachable
        assert limit.concurrency == pytest.approx(n_t, rel=1e-7)
        assert limit.throughput == pytest.approx(x_of(n_t, fit), rel=1e-7)
        assert limit.branch == ("retrograde" if n_t > n_peak * (1 + 1e-6) else "normal") or which == "at_peak"

    # the rising side capped at the peak (capacity planning: the solver, USLFit.latency_limit; the latency form's
    # throughput at a target)
    capped = latency_limit(seconds, fit.sigma, fit.kappa, fit.lambda_, branch="normal", cap_at_peak=True)
    assert fit.latency_limit(seconds) == capped
    expect_n = None if n_t is None else min(n_t, n_peak)
    if expect_n is None:
        assert not capped.reachable and capped.reason == "below_zero_load"
    elif math.isfinite(expect_n):
        assert capped.concurrency == pytest.approx(expect_n, rel=1e-6)
        assert capped.throughput == pytest.approx(x_of(expect_n, fit), rel=1e-9)
        assert capped.reason == ("capped_at_peak" if which == "beyond_peak" else "met") or which == "at_peak"

    # usl_latency (N from 0: the observed form), module function and LatencyFit method
    form = throughput_at_latency(seconds, fit.sigma, fit.kappa, fit.lambda_)
    latency_fit = LatencyFit(fit.curve, np.ones(4), np.ones(4), np.array([fit.sigma, fit.kappa, fit.lambda_]))
    named = latency_fit.latency_limit(seconds * 1000.0)
    if n_t0 is None:
        assert math.isnan(form) and named.reason == "below_zero_load" and not named.reachable
    elif math.isinf(n_t0):
        assert form == math.inf and named.reason == "unbounded"
    else:
        expect = x_of(min(n_t0, n_peak), fit)
        assert form == pytest.approx(expect, rel=1e-6)
        assert named.throughput == form
    assert latency_fit.throughput_at_latency(seconds * 1000.0) == pytest.approx(form, nan_ok=True)

    # capacity_from_fit with the target in Objectives (no p95 measured: held against the mean)
    objectives = Objectives(utilization_target=None, latency_p95_ms=seconds * 1000.0)
    if n_t is not None and math.isinf(min(n_t, n_peak)):      # nothing bounds the throughput: no figure stated
        cap = capacity_from_fit(fit, objectives)
        assert cap.usable_throughput == math.inf and cap.evidence.grade == "unusable"
        assert "unbounded" in cap.evidence.codes() and "cannot support a capacity figure" in cap.describe()
    else:
        cap = capacity_from_fit(fit, objectives)
        assert cap.latency == capped
        if n_t is None:
            assert cap.usable_throughput == 0.0 and "latency_unreachable" in cap.evidence.codes()
            assert cap.evidence.grade == "unusable" and "sustains" not in cap.describe()
        else:
            assert cap.binding_limit == "latency"
            assert cap.usable_throughput == pytest.approx(x_of(min(n_t, n_peak), fit), rel=1e-6)


def test_the_issue_figures_at_20_ms_are_two_answers_to_two_named_questions():
    # issue 16: at 20 ms plgm_workload1 gave 10,766 ops/s (retrograde) and 13,564 ops/s (the peak)
    fit = FITS["plgm_workload1"]
    largest = fit.largest_concurrency_within(0.020)
    assert largest.branch == "retrograde" and round(largest.throughput) == round(x_of(largest_n_within(0.02, fit, 1),
                                                                                      fit))
    assert 10_700 < largest.throughput < 10_800
    cap = capacity_from_fit(fit, Objectives(utilization_target=None, latency_p95_ms=20.0))
    assert cap.latency.reason == "capped_at_peak"
    assert cap.usable_throughput == pytest.approx(x_of(numeric_peak(fit), fit), rel=1e-9)
    assert cap.operating_concurrency == pytest.approx(numeric_peak(fit), rel=1e-5)
    assert "latency_past_peak" in cap.evidence.codes()
    past = latency_limit(0.020, fit.sigma, fit.kappa, fit.lambda_, branch="normal", cap_at_peak=False)
    assert (past.reachable, past.reason) == (False, "past_peak")


def test_bad_arguments_are_refused_by_name():
    with pytest.raises(InputError, match="branch: expected one of normal, retrograde, got 'upper'"):
        latency_limit(0.01, 0.05, 0.001, 100.0, branch="upper")
    for bad in (0.0, -1.0, math.nan, math.inf):
        with pytest.raises(InputError, match="a latency target must be a number of seconds > 0"):
            latency_limit(bad, 0.05, 0.001, 100.0)


@pytest.mark.parametrize("sigma", [0.001, 0.03, 0.2])
@pytest.mark.parametrize("kappa", [1e-6, 3e-4, 1e-2])
def test_the_concurrency_of_the_peak_throughput_is_the_peak_not_infinity(sigma, kappa):
    # a plan capped at the peak asks which N carries the peak's throughput; rounding once made that "beyond the peak"
    from capmodel.models.usl.closed_form import concurrency_for_throughput, usl_peak

    fit = type("P", (), {"sigma": sigma, "kappa": kappa, "lambda_": 1000.0})()
    n_star = numeric_peak(fit)
    _, x_peak = usl_peak(sigma, kappa, 1000.0)
    assert concurrency_for_throughput(x_peak, sigma, kappa, 1000.0) == pytest.approx(n_star, rel=1e-5)
    assert concurrency_for_throughput(x_peak * (1 + 1e-6), sigma, kappa, 1000.0) == math.inf


@pytest.mark.parametrize("sigma,kappa", [(1.0, 0.5), (0.9, 0.5), (0.5, 2.0)])
def test_log_coherency_peak_below_one_client_is_at_one(sigma, kappa):
    from capmodel.models.usl.closed_form import log_coherency_peak

    # dX/dN of lambda*N / (1 + sigma(N-1) + kappa N ln N) has the sign of 1 - sigma - kappa N: negative from N = 1 on
    n, x = log_coherency_peak(sigma, kappa, 100.0)
    assert n == 1.0 and x == pytest.approx(100.0)       # X(1) = lambda: the log term vanishes at N = 1
