"""capmodel.constraints: one vocabulary for what a user may pass in, checked without changing what it checks; the
bench configuration and the planning objectives declare theirs with it."""
from __future__ import annotations

import math
import os

import pytest

from capmodel.bench.sweep.config import BenchConfig
from capmodel.constraints import Choice, Flag, Number, Sequence, checked, with_name
from capmodel.errors import BenchError, CapmodelError, PlanError
from capmodel.plan.capacity import Objectives


@pytest.mark.parametrize("constraint, value, expected", [
    (Number(int, 1, 10), 3, 3),
    (Number(int, 1, 10), 4.0, 4),                 # a whole float is the integer it writes
    (Number(float, 0, 1), "0.25", 0.25),          # text that reads as a number, for a float
    (Number(float, 0, 1), 1, 1.0),
    (Number(float, 0, 1), None, None),            # not given: the caller's default decides
    (Choice(("a", "b")), "b", "b"),
    (Flag(), False, False),
])
def test_a_value_inside_its_constraint_comes_back_as_its_kind(constraint, value, expected):
    got = constraint.check(value)
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize("constraint, value, message", [
    (Number(int, 1, 1_000, name="--repeat"), 0, "--repeat must be an integer from 1 to 1,000, got 0"),
    (Number(int, 1, 10, name="n"), 2.5, "n must be an integer from 1 to 10, got 2.5"),
    (Number(int, 1, 10, name="n"), "3", "n must be an integer from 1 to 10, got '3'"),
    (Number(int, 1, 10, name="n"), True, "n must be an integer from 1 to 10, got True"),
    (Number(float, 0, 3_600, name="--warmup"), math.nan, "--warmup must be a number from 0 to 3,600, got nan"),
    (Number(float, 0, 3_600, name="--warmup"), "x", "--warmup must be a number from 0 to 3,600, got 'x'"),
    (Number(float, 0, math.inf, low_open=True, name="t"), 0.0, "t must be a finite number > 0, got 0"),
    (Number(float, 0, math.inf, name="t"), 10**400, "t must be a finite number >= 0, got"),
    (Number(float, 0, 1, name="f", unit="s", required=True), None, "f must be given"),
    (Choice(("stop", "retry"), name="--on-error"), "go", "--on-error must be one of stop, retry, got 'go'"),
    (Flag(name="allow"), "yes", "allow must be True or False, got 'yes'"),
])
def test_a_value_outside_its_constraint_is_one_error_naming_it(constraint, value, message):
    with pytest.raises(CapmodelError) as caught:
        constraint.check(value)
    assert str(caught.value).startswith(message)


def test_checked_returns_new_values_and_leaves_the_given_ones_alone():
    given = {"n": 4.0, "mode": "b", "other": object()}
    out = checked({"n": Number(int, 1, 10), "mode": Choice(("a", "b")), "absent": Flag()}, given, PlanError)
    assert out == {"n": 4, "mode": "b"} and type(out["n"]) is int
    assert given["n"] == 4.0 and type(given["n"]) is float
    with pytest.raises(PlanError, match="mode must be one of a, b, got 'c'"):
        checked({"mode": Choice(("a", "b"), name="mode")}, {"mode": "c"}, PlanError)


def test_bench_config_check_returns_a_checked_copy_and_never_mutates():
    config = BenchConfig(concurrency=[8, 2, 2, 4], processes="auto", duration="3", seed=7.0, scheduler=None)
    out = config.check()
    assert out is not config
    assert out.concurrency == [2, 4, 8] and out.processes == min(os.cpu_count() or 1, 8)
    assert out.duration == 3.0 and out.seed == 7 and type(out.seed) is int
    # the caller's object is as it was built
    assert config.concurrency == [8, 2, 2, 4] and config.processes == "auto" and config.duration == "3"
    assert config.seed == 7.0 and type(config.seed) is float
    assert out.check() == out                      # checking a checked copy changes nothing


@pytest.mark.parametrize("kwargs, message", [
    ({"on_error": "later"}, "--on-error must be one of stop, retry, continue, got 'later'"),
    ({"arrivals": "bursty", "rate": 10.0}, "--arrivals must be one of uniform, poisson, got 'bursty'"),
    ({"binding": "motor"}, "--binding must be one of wire, mongojet, pymongo, got 'motor'"),
    ({"allow_server_js": "yes"}, "allow_server_js must be True or False, got 'yes'"),
    ({"tolerance": 1.0}, "--tolerance must be a number from 0.000001 to 0.999999, got 1"),
])
def test_bench_config_refuses_through_its_declared_constraints(kwargs, message):
    with pytest.raises(BenchError) as caught:
        BenchConfig(**kwargs).check()
    assert str(caught.value) == message


@pytest.mark.parametrize("kwargs, message", [
    ({"utilization_target": 1.5}, "utilization target must be a fraction from 0.01 to 1, got 1.5"),
    ({"utilization_target": 0.0}, "utilization target must be a fraction from 0.01 to 1, got 0"),
    ({"peak_fraction": "most"}, "peak fraction must be a fraction in (0, 1], got 'most'"),
    # plan/checks.py's positive figure: its range is said (a target past 1e15 ms made ratios leave a float's range)
    ({"latency_p95_ms": 0.0},
     "latency target must be a positive number of milliseconds (from a trillionth to a quadrillion), got 0"),
    ({"latency_p95_ms": "fast"},
     "latency target must be a positive number of milliseconds (from a trillionth to a quadrillion), got 'fast'"),
    ({"latency_p95_ms": 1e16},
     "latency target must be a positive number of milliseconds (from a trillionth to a quadrillion), got 10,000,000,000,000,000"),
    ({"peak_fraction": 1e-13}, "peak fraction must be a fraction in (0, 1], got 0.0000000000001"),
    ({"latency_increase": -0.1}, "latency increase must be a fraction >= 0, got -0.1"),
    ({"latency_increase": math.inf}, "latency increase must be a fraction >= 0, got inf"),
])
def test_objectives_refuse_through_their_declared_constraints(kwargs, message):
    with pytest.raises(PlanError) as caught:
        Objectives(**kwargs)
    assert str(caught.value) == message


@pytest.mark.parametrize("constraint, wanted", [
    (Number(int, 1, math.inf), "an integer >= 1"),
    (Number(float, 0, math.inf), "a finite number >= 0"),
    (Number(float, 0, math.inf, low_open=True), "a finite number > 0"),
    (Number(float, -math.inf, 5, high_open=True), "a finite number < 5"),
    (Number(float, 0, 1, low_open=True, high_open=True), "a number > 0 and < 1"),
    (Number(float, 0, 1, high_open=True, unit="s"), "a number >= 0 and < 1 s"),
    (Number(int, -10**15, 10**15), "an integer from minus a quadrillion to a quadrillion"),
    (Number(None, 1, 10_000), "a number from 1 to 10,000"),
    (Number(float), "a finite number"),
])
def test_the_wanted_sentence_says_each_kind_of_bound(constraint, wanted):
    assert constraint.wanted() == wanted


def test_numpy_numbers_are_numbers_and_numpy_bools_are_not():
    np = pytest.importorskip("numpy")
    assert Number(int, 1, 10).check(np.int64(3)) == 3 and type(Number(int, 1, 10).check(np.int64(3))) is int
    assert type(Number(float, 0, 1).check(np.float32(0.5))) is float
    assert Number(None, 0, 10).check(np.int32(4)) == 4 and type(Number(None, 0, 10).check(np.int32(4))) is int
    with pytest.raises(CapmodelError, match=r"^n must be an integer from 1 to 10, got "):
        Number(int, 1, 10, name="n").check(np.True_)


@pytest.mark.parametrize("constraint, value, expected", [
    (Number(None, 0, 10), 3, 3), (Number(None, 0, 10), 2.5, 2.5),     # kind None: as given
    (Number(float, 0, 1, high_open=True), 0.0, 0.0),
    (Number(float, 0, 10, text=True), " 2.5", 2.5),
])
def test_kind_none_keeps_the_kind_given_and_open_bounds_keep_the_closed_end(constraint, value, expected):
    got = constraint.check(value)
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize("constraint, value, message", [
    (Number(None, 0, 10, name="p"), "3", "p must be a number from 0 to 10, got '3'"),     # text is no number here
    (Number(float, 0, math.inf, text=False, name="d"), "0.1", "d must be a finite number >= 0, got '0.1'"),
    (Number(float, 0, 1, high_open=True, name="u"), 1.0, "u must be a number >= 0 and < 1, got 1"),
    (Number(float, 0, 1, name="u"), -math.inf, "u must be a number from 0 to 1, got -inf"),
    (Number(float, 0, math.inf, name="x"), 10**400, "x must be a finite number >= 0, got 1000000000000000000000"),
])
def test_text_off_open_ends_and_huge_integers_are_refused_naming_the_value(constraint, value, message):
    with pytest.raises(CapmodelError) as caught:
        constraint.check(value)
    assert str(caught.value).startswith(message)


def test_a_sequence_checks_every_value_and_returns_a_new_list():
    rates = Sequence(Number(float, 0, 10, low_open=True), name="rates")
    given = (1, "2.5", 4.0)
    out = rates.check(given)
    assert out == [1.0, 2.5, 4.0] and all(type(v) is float for v in out) and given == (1, "2.5", 4.0)
    assert rates.check(range(1, 3)) == [1.0, 2.0] and rates.check([]) == []
    for value, message in (([1, 0], "rates: every value must be a number > 0 and <= 10, got 0"),
                           ([1, True], "rates: every value must be a number > 0 and <= 10, got True"),
                           ([math.nan], "rates: every value must be a number > 0 and <= 10, got nan"),
                           ("1,2", "rates must be a list of values, each a number > 0 and <= 10, got '1,2'"),
                           ({"a": 1}, "rates must be a list of values, each a number > 0 and <= 10, got {'a': 1}")):
        with pytest.raises(PlanError) as caught:
            rates.check(value, PlanError)
        assert str(caught.value) == message
    with pytest.raises(PlanError, match=r"^pair must be a list of exactly 2 values, got 3 value\(s\)$"):
        Sequence(Number(), name="pair", min_length=2, max_length=2).check([1, 2, 3], PlanError)


def test_the_callers_name_is_shown_without_a_new_constraint_and_with_name_makes_one():
    servers = Number(int, 1, math.inf, name="c", required=True)
    with pytest.raises(CapmodelError, match=r"^servers\[cpu\] must be an integer >= 1, got 0$"):
        servers.check(0, CapmodelError, "servers[cpu]")
    with pytest.raises(CapmodelError, match=r"^servers\[cpu\] must be given$"):
        servers.check(None, CapmodelError, "servers[cpu]")
    renamed = with_name(servers, "cores", required=False)
    assert renamed.name == "cores" and renamed.check(None) is None and servers.name == "c"
