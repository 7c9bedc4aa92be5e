"""The runway, written once (``capmodel.models.runway``) and called by the planner (users per VM) and by the
operational laws (ops/s of one server): computed by hand, its edge cases, and both commands giving the same answers;
the one ``Estimate`` (``capmodel.models.estimate``) that carries it; a runway at a tiny growth keeps its figure in
the JSON and is beyond the horizon in the tables; the JSON says which kind of runway a null is. How the runways are
said in sentences is checked in test_plan_words.py."""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from capmodel.cli import main
from capmodel.errors import InputError, PlanError
from capmodel.models.estimate import Estimate, format_estimate
from capmodel.models.runway import runway, runway_months
from capmodel.observe.capacity import server_capacity
from capmodel.observe.runway_words import HORIZON_MONTHS, months_words

FTDC = "data/ftdc_sample/diagnostic.data"


def by_hand(capacity, load, growth):
    return math.log(capacity / load) / math.log(1 + growth)


def test_runway_by_hand_and_its_edges():
    assert runway_months(65000, 25000, 0.05) == pytest.approx(by_hand(65000, 25000, 0.05))   # 19.58 months
    assert runway_months(2000.0, 500.0, 0.10) == pytest.approx(math.log(4) / math.log(1.1))  # 14.55 months
    assert runway_months(20000, 25000, 0.05) == 0.0          # the load is already past the capacity
    assert runway_months(25000, 25000, 0.05) == 0.0          # ... or at it
    assert runway_months(30000, 25000, 0.0) == math.inf      # no growth: never
    assert runway_months(30000, 25000, -0.05) == math.inf    # a shrinking load: never either
    assert runway_months(20000, 25000, -0.05) == 0.0         # past it already, whatever the growth
    assert math.isnan(runway_months(math.nan, 25000, 0.05))  # an unknown capacity: an unknown runway
    months = runway_months(np.array([25000.0, 100000.0, math.inf]), 25000, 0.05)
    assert months[0] == 0.0 and months[1] == pytest.approx(by_hand(4, 1, 0.05)) and months[2] == math.inf


@pytest.mark.parametrize("args, message", [((1000, 0, 0.05), "current users must be > 0"),
                                           ((1000, 10, -1.0), "monthly growth must be a finite monthly fraction "
                                                                  "from -0.99 to 10"),
                                           ((1000, 10, math.nan), "from -0.99 to 10"),
                                           ((1000, 10, 10.5), "from -0.99 to 10")])
def test_bad_inputs_raise_the_callers_error(args, message):
    with pytest.raises(InputError, match=message):
        runway_months(*args)
    with pytest.raises(PlanError, match=message):
        runway_months(*args, error=PlanError)


def test_an_interval_carries_through_end_for_end():
    months = runway(Estimate(3000.0, 2500.0, 3600.0), 1000.0, 0.05)
    assert months.estimate == pytest.approx(by_hand(3000, 1000, 0.05))       # 22.5 months
    assert months.low == pytest.approx(by_hand(2500, 1000, 0.05))             # 18.8
    assert months.high == pytest.approx(by_hand(3600, 1000, 0.05))            # 26.3
    assert months.low < months.estimate < months.high


def test_the_plan_and_the_laws_call_the_same_runway():
    from capmodel.plan.growth import growth_plan

    vms = pd.DataFrame({"vm": ["a"], "users": [70000.0], "monthly_cost": [100.0]})
    plan = growth_plan(vms, [65000], current_users=25000, monthly_growth=0.05)
    assert plan["months_until_target"].iloc[0] == runway_months(65000, 25000, 0.05)
    with pytest.raises(PlanError, match="current users must be > 0"):
        growth_plan(vms, [65000], current_users=0, monthly_growth=0.05)
    x = np.linspace(200.0, 600.0, 40)      # CPU = 0.05 cores + 1 ms per operation, on 2 cores
    samples = pd.DataFrame({"interval_s": 1.0, "reads_per_s": x, "writes_per_s": 0.0, "commands_per_s": 0.0,
                            "reads_latency_ms": 0.5, "cpu_cores": 0.05 + 0.001 * x})
    for growth, expected in ((0.05, None), (0.0, math.inf), (-0.05, math.inf)):
        cap = server_capacity(samples, cores=2, monthly_growth=growth, n_bootstrap=50)
        planned, load = cap.planned_throughput, cap.observed_peak_throughput
        assert planned.estimate == pytest.approx((0.8 * 2 - 0.05) / 0.001)        # 1,550 ops/s
        want = by_hand(planned.estimate, load, growth) if expected is None else expected
        assert cap.runway_months.estimate == pytest.approx(want)
        assert cap.runway_months == runway(planned, load, growth)


def _cli_json(capsys, *argv):
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("growth", ["0.05", "0", "-0.1"])
def test_both_commands_give_the_runway_and_its_edges(capsys, tmp_path, growth):
    g = float(growth)
    plan = _cli_json(capsys, "plan", "--growth", growth, "--current-users", "15000", "--json")
    for row in plan["vms"]:
        if row["users"] is not None:
            want = by_hand(row["users"], 15000, g) if g > 0 else None       # JSON has no infinity: null
            assert row["runway_months"] == (pytest.approx(want) if want is not None else None), row["vm"]
    past = _cli_json(capsys, "plan", "--growth", growth, "--current-users", "9000000", "--json")
    assert {r["runway_months"] for r in past["vms"] if r["users"] is not None} == {0.0}
    for cores, past_it in (("4", False), ("1", True)):    # the sample's 692 ops/s: under 4 cores' plan, over 1 core's
        out = _cli_json(capsys, "observe", "--ftdc", FTDC, "--out", str(tmp_path / cores), "--cores", cores,
                        "--growth", growth, "--json")["capacity"]
        planned, load = out["planned_throughput"], out["observed_peak_throughput"]
        for end in ("estimate", "low", "high"):
            if past_it:
                assert planned[end] < load and out["runway_months"][end] == 0.0
            else:
                want = by_hand(planned[end], load, g) if g > 0 else None
                assert out["runway_months"][end] == (pytest.approx(want) if want is not None else None)


def test_one_estimate_for_every_layer():
    from capmodel import plan

    e = Estimate(62000.0, 55000.0, 68000.0)
    assert plan.Estimate is Estimate and e.value == e.estimate == 62000.0
    assert str(e) == format_estimate(62000, 55000, 68000) == "62,000 (55,000-68,000)"
    assert str(Estimate(25000.0, 25000.0, 25000.0)) == "25,000"
    assert Estimate(1.5, math.nan, math.inf).to_json() == {"estimate": 1.5, "low": None, "high": None}
    assert json.dumps(e.to_json()) == '{"estimate": 62000.0, "low": 55000.0, "high": 68000.0}'


N = 20
RATES = np.linspace(100.0, 400.0, N)
BACKGROUND, DEMAND, CORES = 0.1, 0.001, 4.0            # cores; CPU seconds per operation; the host's cores


def _samples() -> pd.DataFrame:
    return pd.DataFrame({"interval_s": np.ones(N), "dropped": [""] * N, "reads_per_s": RATES,
                         "reads_latency_ms": np.full(N, 1.0), "writes_per_s": np.zeros(N),
                         "writes_latency_ms": np.full(N, np.nan), "commands_per_s": np.zeros(N),
                         "commands_latency_ms": np.full(N, np.nan), "cpu_cores": BACKGROUND + DEMAND * RATES,
                         "cores": np.full(N, CORES)})


def _months(growth: float) -> float:
    """Months until the observed peak reaches the planned throughput, by hand: ln(planned / peak) / ln(1 + g)."""
    planned = (0.8 * CORES - BACKGROUND) / DEMAND
    return math.log(planned / np.percentile(RATES, 95)) / math.log1p(growth)


@pytest.mark.parametrize("growth, status", [(0.05, "months"), (1e-9, "beyond_horizon"), (0.0, "never"),
                                            (None, "no_growth_given")])
def test_the_answers_json_says_which_runway(growth, status):
    data = server_capacity(_samples(), monthly_growth=growth, n_bootstrap=50).to_json()
    assert data["runway_status"] == status
    if status == "months":
        assert data["runway_months"]["estimate"] == pytest.approx(_months(growth), rel=1e-6)
    elif status == "beyond_horizon":
        assert _months(growth) > 1e8 and data["runway_months"]["estimate"] == pytest.approx(_months(growth))
    elif status == "never":                  # an endless runway: no figure in the JSON, the status says why
        assert data["runway_months"]["estimate"] is None
    else:
        assert data["runway_months"] is None


def test_the_horizon_is_where_the_words_change():
    assert months_words(HORIZON_MONTHS) == "1,200.0"
    assert months_words(HORIZON_MONTHS + 0.1) == "over 100 years"
    assert months_words(math.inf) == "never" and months_words(0.0) == "past the target now"


def _fleet(growth):
    from capmodel.observe.fleet import FLEET_COLUMNS, Fleet, capacity_summary

    row = {column: None for column in FLEET_COLUMNS}
    row.update(cluster="rs0", member="a:27017", hours=1.0, folder="a")
    row.update(capacity_summary(server_capacity(_samples(), monthly_growth=growth, n_bootstrap=50)))
    return Fleet(pd.DataFrame([row], columns=FLEET_COLUMNS), "test", growth)


@pytest.mark.parametrize("growth, status", [(1e-9, "beyond_horizon"), (0.0, "never"), (None, "no_growth_given"),
                                            (0.05, "months")])
def test_the_fleets_json_and_table_say_which_runway(growth, status):
    fleet = _fleet(growth)
    (row,) = fleet.to_json()["rows"]
    assert row["runway_status"] == status
    shown = dict(zip(fleet.reading_table().columns, next(iter(fleet.reading_table().cells()))))
    if status == "beyond_horizon":
        assert shown["runway_months"] == "over 100 years"
        assert row["runway_months"] == pytest.approx(_months(growth))     # the figure stays in the JSON
    elif status in ("never", "no_growth_given"):
        assert row["runway_months"] is None
    else:
        assert row["runway_months"] == pytest.approx(_months(growth), rel=1e-6)
        assert shown["runway_months"] == f"{_months(growth):,.1f}"


@pytest.mark.parametrize("growth, status", [(0.05, "no_capacity"), (None, "no_growth_given")])
def test_a_server_that_cannot_be_read_says_why_it_has_no_runway(tmp_path, growth, status):
    from capmodel.observe.fleet import analyse_server

    row = analyse_server(tmp_path, monthly_growth=growth)
    assert isinstance(row["error"], str) and row["runway_months"] is None and row["runway_status"] == status
