"""The production answer: which method answers (USL only when sound, else the operational laws, else none) and
its figures (its sentences: test_production_answer_words.py).

Points are generated from the USL's definition X(N) = lambda N / (1 + sigma (N - 1) + kappa N (N - 1)) (Gunther,
*Guerrilla Capacity Planning*, 2007) with Little's law R = N / X; every expected figure (the peak at
N* = sqrt((1 - sigma) / kappa), the N where R = D(N) / lambda meets a target) is solved here from that definition.
"""
from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pandas as pd
import pytest

from capmodel.models.usl.latency_form import LatencyFit
from capmodel.observe.capacity import LAWS, USL
from capmodel.observe.tables import curve_from_samples
from capmodel.plan.production import NO_METHOD, production_answer
from capmodel.plan.usl_observed import usl_verdict

SIGMA, KAPPA, LAMBDA = 0.05, 0.002, 1000.0
N_STAR = math.sqrt((1 - SIGMA) / KAPPA)
D_S = 0.0001                                   # 0.1 ms of CPU per operation


def x_of(n):
    n = np.asarray(n, dtype=float)
    return LAMBDA * n / (1 + SIGMA * (n - 1) + KAPPA * n * (n - 1))


def n_at_latency(target_s: float) -> float:
    """R(N) = D(N) / lambda = target: kappa N^2 + (sigma - kappa) N + (1 - sigma - lambda target) = 0."""
    b, c = SIGMA - KAPPA, 1 - SIGMA - LAMBDA * target_s
    return (-b + math.sqrt(b * b - 4 * KAPPA * c)) / (2 * KAPPA)


def observed(n, cpu=True) -> tuple[pd.DataFrame, pd.DataFrame]:
    n = np.asarray(n, dtype=float)
    x = x_of(n)
    samples = pd.DataFrame({
        "time": pd.date_range("2026-01-01", periods=len(n), freq="s", tz="UTC"), "interval_s": 1.0,
        "reads_per_s": x, "reads_latency_ms": n / x * 1000.0, "writes_per_s": 0.0, "writes_latency_ms": np.nan,
        "commands_per_s": 0.0, "commands_latency_ms": np.nan,
        "cpu_cores": 0.02 + D_S * x if cpu else np.nan, "dropped": ""})
    return samples, curve_from_samples(samples)


KNEE = np.geomspace(1, 30, 40)                 # reaches past N* = 21.8
LIGHT = np.linspace(0.05, 0.4, 40)             # a healthy production server: N well below 1


def test_usl_answers_when_the_knee_is_reached_and_the_latency_target_is_reached():
    samples, curve = observed(KNEE)
    answer = production_answer(samples, curve, cores=1, latency_target_ms=2.0, monthly_growth=0.05, bins=None,
                               n_bootstrap=20)
    # the throughput falls past the peak (7,397 ops/s) long before the CPU saturates (9,800): the USL answers
    assert answer.capacity.saturation_throughput.low > float(x_of(N_STAR))
    assert answer.usl_evidence.grade == "sound" and answer.method == USL
    peak = float(x_of(N_STAR))
    assert answer.saturation_throughput.estimate == pytest.approx(peak, rel=1e-3)
    at = float(x_of(n_at_latency(0.002)))
    state, value = answer.latency_outcome
    assert state == "reached" and value == pytest.approx(at, rel=1e-3)
    busiest = float(np.quantile(curve["throughput"], 0.95))
    assert answer.observed_peak_throughput == pytest.approx(busiest)
    spare = 1 - busiest / (0.8 * peak)                 # the window reached the knee: already past an 80% plan
    assert spare < 0 and answer.spare_fraction.estimate == pytest.approx(spare, rel=1e-3)
    assert answer.runway_months.estimate == 0


def test_a_plateau_is_no_peak_for_the_usl(tmp_path):
    # a server whose CPU saturates (an M/M/8 queue, capmodel.observe.synthetic) driven to 97% of its capacity: its
    # throughput levels off while the concurrency grows, and the USL fitted to the day puts a peak 4% below the truth
    # (7,640 ops/s against 7,930) with an interval under 1% wide that misses it (sound before ``no_decline``). The
    # window never shows the throughput falling past that peak, so the USL does not answer, not even for a server
    # without CPU figures
    from capmodel.observe.observation import observe_ftdc
    from capmodel.observe.synthetic import SyntheticServer, write_server

    server = SyntheticServer("plateau:27017", cores=8, cpu_ms_per_op=1.0, mean_rate=4570.0, daily_amplitude=0.67,
                             peak_hour=23.5, start=dt.datetime(2026, 11, 2, 10, 29, tzinfo=dt.timezone.utc),
                             seed=955, period_s=60.0, background_cores=0.07, filler_metrics=5)
    observation = observe_ftdc(write_server(server, tmp_path / "diagnostic.data"))
    samples = observation.samples.assign(cpu_cores=np.nan)
    answer = production_answer(samples, observation.curve, n_bootstrap=10)
    assert observation.curve["throughput"].max() > 0.95 * server.capacity
    assert "no_decline" in answer.usl_evidence.codes() and answer.method == NO_METHOD


def test_latency_target_met_at_the_peak_or_unreachable():
    samples, curve = observed(KNEE)
    r_peak_ms = N_STAR / float(x_of(N_STAR)) * 1000.0                  # 2.9 ms at the nose
    loose = production_answer(samples, curve, latency_target_ms=3 * r_peak_ms, bins=None, n_bootstrap=10)
    assert loose.latency_outcome[0] == "met_at_peak"
    tight = production_answer(samples, curve, latency_target_ms=0.5, bins=None, n_bootstrap=10)   # R(0) = 0.95 ms
    assert tight.latency_outcome == ("unreachable", None)


def test_light_load_uses_the_laws_and_never_claims_no_room():
    samples, curve = observed(LIGHT)
    answer = production_answer(samples, curve, cores=1, latency_target_ms=5.0, monthly_growth=0.05, n_bootstrap=20)
    assert not answer.usl_evidence.usable and "knee_not_reached" in answer.usl_evidence.codes()
    assert answer.method == LAWS
    assert answer.saturation_throughput.estimate == pytest.approx((1 - 0.02) / D_S, rel=0.01)   # 9,800 ops/s
    # room to grow (spare and months of runway), and the latency target not checked: the laws bound no latency
    assert answer.spare_fraction.estimate > 0 and answer.runway_months.estimate > 0
    assert answer.latency_outcome == ("not_checked", None)
    assert answer.evidence.grade == answer.capacity.evidence.grade


def test_no_cpu_and_light_load_states_only_the_lower_bound():
    samples, curve = observed(LIGHT, cpu=False)
    answer = production_answer(samples, curve, n_bootstrap=10)
    assert answer.method == NO_METHOD and not answer.evidence.usable
    assert answer.saturation_throughput is None and answer.spare_fraction is None
    # the busiest load carried (95th percentile) is the lower bound stated
    assert answer.at_least == answer.observed_peak_throughput == pytest.approx(np.quantile(x_of(LIGHT), 0.95))


def test_a_fit_whose_peak_the_data_run_past_is_unusable():
    samples, curve = observed(KNEE)
    x = curve["throughput"].to_numpy()
    r = curve["latency_mean_ms"].to_numpy() / 1000.0
    # a fit with a third of the true lambda: its peak lies far below the busiest intervals, its R² is poor
    wrong = LatencyFit(curve, x, r, np.array([SIGMA, KAPPA, LAMBDA / 3]), method="throughput")
    verdict = usl_verdict(wrong, curve)
    assert {"past_peak", "low_r2"} <= set(verdict.codes()) and not verdict.usable
    past = next(r for r in verdict.reasons if r.code == "past_peak")
    assert past.value == pytest.approx(wrong.observed_peak_throughput / (float(x_of(N_STAR)) / 3), rel=1e-6)


def test_an_unusable_laws_answer_is_not_the_method_that_answers():
    # light load (no knee for the USL) and a core count the data contradict (the laws' verdict unusable): neither
    # method may state a capacity; the answer gives the observed load as a lower bound and says why
    samples, curve = observed(LIGHT)
    busiest = float(np.quantile(curve["throughput"], 0.95))
    cores = 0.02 + D_S * busiest * 0.5                          # half the CPU the busiest intervals used
    answer = production_answer(samples, curve, cores=cores, monthly_growth=0.05, n_bootstrap=10)
    assert not answer.capacity.evidence.usable and "above_saturation" in answer.capacity.evidence.codes()
    assert answer.method == NO_METHOD and not answer.evidence.usable
    assert "above_saturation" in answer.evidence.codes()
    assert answer.saturation_throughput is None and answer.runway_months is None
    assert answer.at_least == pytest.approx(busiest)                # the lower bound stated instead
    no_cpu = production_answer(*observed(LIGHT, cpu=False), n_bootstrap=10)
    assert no_cpu.capacity is None and no_cpu.capacity_error                         # without a laws verdict: why
    knee = next(r for r in answer.evidence.reasons if r.code == "knee_not_reached")
    # the fitted peak's concurrency over the 95th percentile the window ran: well beyond what it saw
    assert knee.value == pytest.approx(answer.usl.peak_concurrency / np.quantile(curve["concurrency"], 0.95))
    assert knee.value > 1
