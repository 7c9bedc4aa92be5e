"""A runway at a tiny growth is said as beyond the horizon, not as billions of months, and the fleet's JSON says
which kind of runway a null is (estate9, point 3)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from capmodel.observe.capacity import server_capacity
from capmodel.observe.runway_words import HORIZON_MONTHS, months_words

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
def test_the_answer_and_its_json_say_which_runway(growth, status):
    capacity = server_capacity(_samples(), monthly_growth=growth, n_bootstrap=50)
    said, data = capacity.describe(), capacity.to_json()
    assert data["runway_status"] == status
    if status == "months":
        assert data["runway_months"]["estimate"] == pytest.approx(_months(growth), rel=1e-6)
        assert f"reached in **{_months(growth):,.1f} months**" in said
    elif status == "beyond_horizon":
        assert _months(growth) > 1e8 and data["runway_months"]["estimate"] == pytest.approx(_months(growth))
        assert "reached in **over 100 years**" in said and "months**" not in said    # before: 1,525,... months
    elif status == "never":
        assert "never reaches it" in said
    else:
        assert data["runway_months"] is None and "growth a month" not in said


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
def test_the_fleet_says_the_runway_in_words_and_its_json_says_which(growth, status):

    fleet = _fleet(growth)
    text = fleet.summary()
    (row,) = fleet.to_json()["rows"]
    assert row["runway_status"] == status
    shown = dict(zip(fleet.reading_table().columns, next(iter(fleet.reading_table().cells()))))
    if status == "beyond_horizon":
        assert "over 100 years" in text and "over 100 years" in fleet.describe()
        assert shown["runway_months"] == "over 100 years"
        assert row["runway_months"] == pytest.approx(_months(growth))     # the figure stays in the JSON
    elif status == "never":
        assert row["runway_months"] is None and "never" in text.splitlines()[3]
    elif status == "no_growth_given":
        assert row["runway_months"] is None and text.splitlines()[3].rstrip().endswith("-")
    else:
        assert f"{_months(growth):,.1f}" in text and shown["runway_months"] == f"{_months(growth):,.1f}"


@pytest.mark.parametrize("growth, status", [(0.05, "no_capacity"), (None, "no_growth_given")])
def test_a_server_that_cannot_be_read_says_why_it_has_no_runway(tmp_path, growth, status):
    from capmodel.observe.fleet import analyse_server

    row = analyse_server(tmp_path, monthly_growth=growth)
    assert isinstance(row["error"], str) and row["runway_months"] is None and row["runway_status"] == status
