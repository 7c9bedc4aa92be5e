"""The SLO search (``capmodel.bench.sweep.slo``) without a server: objectives as written, the rates it chooses, the
verdicts and grades, and the grades' promise on simulated servers of known capacity.

The simulated server is M/M/1 (Poisson arrivals at the asked rate, exponential service at rate mu, one server, first
come first served), simulated operation by operation with Lindley's recursion (W[k+1] = max(0, W[k] + S[k] - A[k+1]);
Kleinrock, "Queueing Systems", vol. 1, 1975). Its response time in steady state is exponential with rate mu - lambda,
so the rate at which the p-quantile of latency equals a bound T is known exactly:
lambda* = mu - ln(1 / (1 - p)) / T.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from capmodel.bench.sweep import slo
from capmodel.errors import BenchError
from capmodel.models.evidence import SOUND_SPAN


@pytest.mark.parametrize("text, metric, limit, relative", [
    ("p95<=5ms", "p95", 5.0, False),
    (" p99 <= 20 ms ", "p99", 20.0, False),
    ("p99.9<=0.5s", "p99.9", 500.0, False),
    ("mean<=800us", "mean", 0.8, False),
    ("errors<=0.1%", "errors", 0.001, False),
    ("p95<=+5%", "p95", 0.05, True),
])
def test_objectives_are_read_in_milliseconds_or_shares(text, metric, limit, relative):
    objective = slo.parse_objective(text)
    assert (objective.metric, objective.relative) == (metric, relative)
    assert objective.limit == pytest.approx(limit)


@pytest.mark.parametrize("text, says", [
    ("p95<5ms", "write a bound as METRIC<=VALUE"),
    ("p96<=5ms", "write a bound as METRIC<=VALUE"),
    ("p95<=5", "write a bound as METRIC<=VALUE"),
    ("errors<=3ms", "an error bound is a share in %"),
    ("p95<=5%", "a relative latency bound is written with + and %"),
    ("p95<=+5ms", "a relative latency bound is written with + and %"),
    ("p95<=0ms", "a latency bound must be above 0"),
])
def test_a_malformed_objective_is_refused_naming_the_option(text, says):
    with pytest.raises(BenchError, match=r"^--slo ") as caught:
        slo.parse_objective(text)
    assert says in str(caught.value) and "\n" not in str(caught.value)


def step(p95_ms, ops_per_s, status="ok", errors=0, operations=10_000):
    return {"status": status, "operations": operations, "error_count": errors, "ops_per_s": ops_per_s,
            "latency": {"all": {"p95_ms": p95_ms, "p99_ms": p95_ms * 2, "mean_ms": p95_ms / 2}}}


def test_a_relative_bound_is_the_baseline_figure_raised_by_its_share():
    objective = slo.parse_objective("p95<=+5%")
    assert objective.bound(step(2.0, 100)) == pytest.approx(2.1)
    with pytest.raises(BenchError, match="needs the baseline step"):
        objective.bound(None)


def test_steps_are_long_enough_for_the_tail_and_the_error_share():
    p99, errors = slo.parse_objective("p99<=20ms"), slo.parse_objective("errors<=0.1%")
    assert p99.steps_needed(20.0) == math.ceil(slo.TAIL_SAMPLES / 0.01)
    assert errors.steps_needed(0.001) == math.ceil(slo.ERROR_SAMPLES / 0.001)
    bounds = {p99.text: 20.0, errors.text: 0.001}
    assert slo.step_seconds([p99, errors], bounds, rate=100.0, duration=5.0) == pytest.approx(3000 / 100.0)
    assert slo.step_seconds([p99], bounds, rate=10_000.0, duration=5.0) == 5.0


def test_rates_bracket_by_doubling_and_halving_then_bisect():
    assert slo.next_rate([], [], probe=1000.0, tolerance=0.1) == 500.0
    assert slo.next_rate([500.0], [], 1000.0, 0.1) == 1000.0
    assert slo.next_rate([], [500.0], 1000.0, 0.1) == 250.0
    assert slo.next_rate([500.0], [1000.0], 1000.0, 0.1) == 750.0
    assert slo.next_rate([500.0, 750.0], [1000.0, 800.0], 1000.0, 0.1) is None   # 800 / 750 - 1 < 10%
    assert slo.next_rate([500.0, 700.0], [400.0], 1000.0, 0.1) == 1400.0  # a noisy miss below the best: go up


def test_a_rate_misses_when_a_median_figure_is_over_its_bound_or_the_server_falls_behind():
    p95 = [slo.parse_objective("p95<=5ms")]
    assert slo.judge(1000.0, [step(4.0, 1000), step(6.0, 999), step(4.5, 1000)], p95, None).met
    over = slo.judge(1000.0, [step(6.0, 1000), step(5.5, 1000)], p95, None)
    assert not over.met and over.misses == ["p95 5.75 ms > 5 ms"] and not over.fell_behind
    behind = slo.judge(1000.0, [step(1.0, 900), step(1.0, 910)], p95, None)
    assert not behind.met and behind.fell_behind
    failed = slo.judge(1000.0, [step(1.0, 1000, status="failed"), step(1.0, 1000, status="failed")], p95, None)
    assert not failed.met and failed.fell_behind
    errors = slo.judge(1000.0, [step(1.0, 1000, errors=20)], [slo.parse_objective("errors<=0.1%")], None)
    assert not errors.met and errors.figures["errors<=0.1%"] == pytest.approx(20 / 10_020)


def scripted(p95_of_rate):
    """A search against a server whose p95 at each rate is given (no noise): measure returns it exactly."""
    return slo.search([slo.parse_objective("p95<=5ms")], lambda rate, seconds: step(p95_of_rate(rate), rate),
                      lambda: {"ops_per_s": 1000.0}, duration=1.0, tolerance=0.1, max_steps=12)


def test_without_noise_the_answer_brackets_the_crossing_within_the_tolerance_and_is_sound():
    answer = scripted(lambda rate: 5.0 * rate / 730.0)   # the bound is crossed at 730 ops/s
    low, high = answer.interval
    assert low <= 730.0 < high and high / low - 1 <= 0.1 and answer.max_rate == low
    assert answer.evidence.grade == "sound" and answer.noise == pytest.approx(0.0, abs=1e-12)
    record = answer.to_json()
    assert record["max_rate"] == low and record["interval"] == [low, high]
    assert [j["rate"] for j in record["met"]] == sorted(j.rate for j in answer.met)


def test_no_rate_met_or_none_missed_is_unusable_and_says_what_the_data_support():
    below = scripted(lambda rate: 50.0)
    assert below.max_rate is None and below.evidence.grade == "unusable"
    assert below.evidence.codes() == ["no_rate_met"] and below.evidence.reasons[0].value == min(
        j.rate for j in below.judged)
    above = scripted(lambda rate: 1.0)
    assert above.evidence.grade == "unusable" and above.evidence.codes() == ["no_rate_missed"]
    assert above.evidence.reasons[0].value == above.max_rate == max(j.rate for j in above.judged)


def mm1_step(rng, mu, rate, seconds, warmup=2.0):
    """One open-loop step against a simulated M/M/1 server: the latencies after ``warmup`` simulated seconds."""
    skip = int(rate * warmup)
    n = max(int(rate * seconds), 50) + skip
    arrivals, services = rng.exponential(1 / rate, n), rng.exponential(1 / mu, n)
    drift = np.concatenate([[0.0], np.cumsum(services[:-1] - arrivals[1:])])
    waits = drift - np.minimum.accumulate(drift)   # Lindley's recursion, solved in closed form
    latency_ms = (waits + services)[skip:] * 1000.0
    return {"status": "ok", "operations": len(latency_ms), "error_count": 0, "ops_per_s": min(rate, mu),
            "latency": {"all": {"p95_ms": float(np.percentile(latency_ms, 95)),
                                "p99_ms": float(np.percentile(latency_ms, 99))}}}


@pytest.mark.parametrize("metric, quantile", [("p95", 0.95), ("p99", 0.99)])
def test_grades_keep_their_promise_on_simulated_servers_of_known_capacity(metric, quantile):
    """Sound intervals hold the truth at least 93% of the time and no sound answer is off by more than 25%; weak
    intervals hold it at least 85% of the time (``capmodel.models.evidence.MEANINGS``)."""
    z = math.log(1 / (1 - quantile))
    held: dict[str, list[bool]] = {"sound": [], "weak": [], "unusable": []}
    worst_sound = 0.0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        mu, load = rng.uniform(3000, 12000), rng.uniform(0.3, 0.9)
        bound_ms = z / (mu * (1 - load)) * 1000.0
        truth = mu - z / (bound_ms / 1000.0)
        answer = slo.search([slo.parse_objective(f"{metric}<={bound_ms:.9f}ms")],
                            lambda rate, seconds: mm1_step(rng, mu, rate, seconds), lambda: {"ops_per_s": mu},
                            duration=10.0, tolerance=0.1, max_steps=12)
        low, high = answer.interval
        grade = answer.evidence.grade
        held[grade].append((low or 0.0) <= truth <= (high or math.inf))
        if grade == "sound":
            assert high / low <= SOUND_SPAN
            worst_sound = max(worst_sound, abs(answer.max_rate / truth - 1))
    assert held["sound"] and held["weak"]  # the study reaches both grades
    assert np.mean(held["sound"]) >= 0.93 and worst_sound <= 0.25
    assert np.mean(held["weak"]) >= 0.85


def test_objectives_of_one_line_are_separated_by_semicolons():
    assert slo.objectives_in(" p95<=5ms; errors<=0.1% ;") == ["p95<=5ms", "errors<=0.1%"]
    assert slo.objectives_in("") == []
