"""Printed wording of the capacity commands' answers: a value inside an option's range reads as a person reads it (a
growth of 0.01% is not "0%", a runway past the horizon is said in years, a long runway has thousands separators).
The expected figures are read from the command's JSON and computed here from them."""
from __future__ import annotations

import json
import math

from capmodel.cli import main


def _run(capsys, *argv):
    status = main([*map(str, argv)])
    out, err = capsys.readouterr()
    return status, out, err


def _months(planned, peak, growth):
    """Months until ``peak`` grown at ``growth`` a month reaches ``planned``: log(planned / peak) / log(1 + growth)."""
    return math.log(planned / peak) / math.log1p(growth)


def test_a_small_growth_is_said_as_it_is_and_long_runways_carry_separators(members, tmp_path, capsys):
    growth = 0.0001
    status, out, err = _run(capsys, "observe", "--ftdc", members[0], "--out", tmp_path / "o", "--growth", growth,
                            "--json")
    assert status == 0, err
    capacity = json.loads(out)["capacity"]
    planned, peak = capacity["planned_throughput"]["estimate"], capacity["observed_peak_throughput"]
    months = _months(planned, peak, growth)
    assert months > 1200 and capacity["runway_status"] == "beyond_horizon"   # past the horizon: said in years
    status, out, err = _run(capsys, "observe", "--ftdc", members[0], "--out", tmp_path / "o", "--growth", growth)
    assert status == 0, err
    assert "At 0.01% growth a month the target is reached in over 100 years" in out
    assert "0% growth" not in out.replace("0.01% growth", "")
    # a growth whose runway is long but within the horizon (1,100 months): its figure with a thousands separator
    growth = (planned / peak) ** (1 / 1100) - 1
    months = _months(planned, peak, growth)
    assert 1000 < months <= 1200
    status, out, err = _run(capsys, "observe", "--ftdc", members[0], members[1], "--out", tmp_path / "m",
                            "--growth", growth)
    assert status == 0, err
    assert f"{months:,.1f} months of runway at " in out
