"""The options the capacity commands share, at their edges: ``--utilization-target``, ``--growth``, ``--cores`` and
``--workers`` of ``observe`` (one server and several members), ``fleet``, ``plan`` and the 07/08 reports' parameters.
Each is declared once (``capmodel.constraints``); a value outside its range (NaN, infinite, negative, beyond its bound)
is one line and exit 2 before any file is decoded, any worker started or any kernel run (how a value inside it reads
is checked in test_capacity_words.py)."""
from __future__ import annotations

import json
import os

import pytest

from capmodel.cli import main


def _run(capsys, *argv):
    status = main([*map(str, argv)])
    out, err = capsys.readouterr()
    return status, out, err


SHAPES = {
    "observe one server": lambda m, out: ["observe", "--ftdc", m[0], "--out", out],
    "observe members": lambda m, out: ["observe", "--ftdc", m[0], m[1], "--out", out],
    "fleet": lambda m, out: ["fleet", m[0], m[1], "--workers", "1"],
}
REFUSED = [
    ("--utilization-target", "1e-300", "--utilization-target must be a fraction from 0.01 to 1, got 1e-300"),
    ("--utilization-target", "0.001", "--utilization-target must be a fraction from 0.01 to 1, got 0.001"),
    ("--growth", "nan", "--growth must be a finite monthly fraction from -0.99 to 10 (0.05 = 5% a month), got nan"),
    ("--growth", "-2", "--growth must be a finite monthly fraction from -0.99 to 10 (0.05 = 5% a month), got -2"),
    ("--growth", "1e308", "--growth must be a finite monthly fraction from -0.99 to 10 (0.05 = 5% a month)"),
    ("--growth", "-0.995", "--growth must be a finite monthly fraction from -0.99 to 10 (0.05 = 5% a month)"),
    ("--cores", "inf", "--cores must be a number of CPUs from 0.01 to 1,024, got inf"),
    ("--cores", "1e308", "--cores must be a number of CPUs from 0.01 to 1,024, got 1e+308"),
    ("--cores", "1e-300", "--cores must be a number of CPUs from 0.01 to 1,024, got 1e-300"),
]


@pytest.mark.parametrize("shape, option, value, message", [
    (shape, *refused) for shape in SHAPES for refused in REFUSED
    if not (shape == "fleet" and refused[0] == "--cores")])   # the fleet takes each server's cores from its hostInfo
def test_an_option_outside_its_range_is_one_line_and_exit_2_in_every_estate_command(members, tmp_path, capsys,
                                                                                     shape, option, value, message):
    out_dir = tmp_path / "o"
    status, out, err = _run(capsys, *SHAPES[shape](members, out_dir), f"{option}={value}")
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and message in err
    assert not out_dir.exists()          # refused before the FTDC was decoded or a folder claimed


def test_plan_refuses_a_utilization_target_below_one_percent(capsys):
    status, out, err = _run(capsys, "plan", "--utilization-target", "1e-9")
    assert status == 2 and out == ""
    assert "utilization target must be a fraction from 0.01 to 1, got 0.000000001" in err


def test_fleet_workers_beyond_four_per_core_are_refused_before_any_process_starts(members, capsys):
    most = 4 * (os.cpu_count() or 1)
    for value in (most + 1, 99_999):
        status, out, err = _run(capsys, "fleet", members[0], "--workers", value)
        assert status == 2 and out == ""
        assert f"--workers must be an integer from 1 to {most:,} (4 per CPU core here), got {value}" in err


@pytest.mark.parametrize("report, name, value, message", [
    ("08_fleet_capacity", "workers", "0", "parameter workers must be an integer from 1 to 1,024, got 0"),
    ("08_fleet_capacity", "workers", "99999", "parameter workers must be an integer from 1 to 1,024, got 99999"),
    ("08_fleet_capacity", "seed", "-1", "parameter seed must be an integer from 0 to 4,294,967,295, got -1"),
    ("07_production_capacity", "cores", "-1", "parameter cores must be a number from 0 to 1,024, got -1"),
    ("07_production_capacity", "monthly_growth", "-5",
     "parameter monthly_growth must be a number from -0.99 to 10, got -5"),
])
def test_report_parameters_of_the_estate_reports_are_refused_before_any_kernel(tmp_path, capsys, report, name,
                                                                               value, message):
    status, out, err = _run(capsys, "report", report, "-p", name, value, "--out", tmp_path / "r")
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and message in err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("fit_on", ["bogus", "Throughput", "", None])
def test_production_answer_refuses_a_fit_method_it_does_not_know(members, fit_on):
    # report 07's fit_on: before, "bogus" rendered "ok" with the USL verdict "unusable: the USL could not be fitted:
    # method: expected 'latency' or 'throughput'" (the user's typo reported as the data's failing)
    from capmodel.errors import InputError
    from capmodel.observe.observation import observe_ftdc
    from capmodel.plan.production import production_answer

    observation = observe_ftdc(members[0])
    with pytest.raises(InputError) as caught:
        production_answer(observation.samples, observation.curve, fit_on=fit_on)
    assert str(caught.value) in (f"fit_on must be one of throughput, latency, got {fit_on!r}", "fit_on must be given")
    # both known methods are still answered
    for method in ("throughput", "latency"):
        assert production_answer(observation.samples, observation.curve, fit_on=method, n_bootstrap=0) is not None


@pytest.mark.parametrize("argv, message", [
    (["--since", "nan"], "--since 'nan': expected a time such as 2024-05-01T12:00:00Z"),
    (["--until", "NaT"], "--until 'NaT': expected a time such as 2024-05-01T12:00:00Z"),
    (["--since", "none"], "--since 'none': expected a time such as 2024-05-01T12:00:00Z"),
    (["--since", "2026-11-02T00:20:00Z", "--until", "2026-11-02T00:10:00Z"],
     "--since 2026-11-02T00:20:00Z is after --until 2026-11-02T00:10:00Z"),
    (["--since", "2026-11-02T00:20:00", "--until", "2026-11-02T00:10:00+00:00"],      # naive is UTC
     "--since 2026-11-02T00:20:00 is after --until 2026-11-02T00:10:00+00:00"),
])
def test_a_window_that_is_no_time_or_backwards_is_refused_before_reading(members, tmp_path, capsys, argv, message):
    # before: "nan"/"NaT"/"none" read as no bound (the whole window, silently); a backwards window was "no FTDC sample
    # falls in that window", as if the files were at fault
    for ftdc in ([members[0]], members):
        status, out, err = _run(capsys, "observe", "--ftdc", *ftdc, "--out", tmp_path / "o", *argv)
        assert status == 2 and out == "" and err == f"capmodel: error: {message}\n"
    status, out, err = _run(capsys, "observe", "--ftdc", members[0], "--out", tmp_path / "o", "--json",
                            "--since", "2026-11-02T00:10:00Z", "--until", "2026-11-02T00:20:00")
    assert status == 0, err
    assert json.loads(out)["intervals"] == 600      # one sample a second over the ten minutes asked


def test_fleet_workers_with_a_scheduler_is_refused_not_ignored(members, capsys):
    # before: --workers 8 --scheduler ADDRESS ran on the scheduler's workers and said nothing of the 8
    status, out, err = _run(capsys, "fleet", members[0], "--scheduler", "tcp://127.0.0.1:1", "--workers", "8")
    assert status == 2 and out == ""
    assert err == ("capmodel: error: --workers sizes the embedded local cluster; with --scheduler the scheduler's "
                   "own workers run the tasks: give one or the other\n")
