"""``capmodel plan`` at the edges of its options: a target that is not a whole number of users is refused (a whole one
given as a float is planned) and a misspelled baseline VM is named before the calibration complains."""
from __future__ import annotations

import json

import pytest

from capmodel.cli import main


def _cli(capsys, *argv):
    status = main([*map(str, argv)])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("value", ["0.5", "50000.5", "1e-12"])
def test_a_target_that_is_not_a_whole_number_of_users_is_refused(capsys, value):
    status, out, err = _cli(capsys, "plan", "--target-users", 50000, value)
    assert status == 2 and out == "" and "target users must be a whole number of users" in err, err


def test_a_whole_target_given_as_a_float_is_still_planned(capsys):
    status, out, err = _cli(capsys, "plan", "--target-users", "5e4", "--json")
    assert status == 0, err
    (answer,) = json.loads(out)["recommendations"]
    assert (answer["target_users"], answer["vm"]) == (50000, "s3-2xlarge-8-SAS")   # the benchANT study's answer


def test_a_misspelled_baseline_vm_is_named_before_the_calibration_complains(tmp_path, capsys):
    # before: "give the ops/s at the baseline ... or a baseline VM whose measurements hold an absolute throughput",
    # which sends the user after a column they have, not after the name they mistyped
    (tmp_path / "cat.csv").write_text("vm,monthly_cost\na,100\nb,200\n")
    (tmp_path / "meas.csv").write_text("vm,throughput\na,1000\nb,2500\n")
    common = ["plan", "--catalog", tmp_path / "cat.csv", "--measurements", tmp_path / "meas.csv",
              "--baseline-users", 1000]
    status, out, err = _cli(capsys, *common, "--baseline-vm", "A")
    assert status == 2 and out == "" and err == "capmodel: error: unknown baseline VM 'A' (known: a, b)\n", err
    status, out, err = _cli(capsys, *common, "--baseline-vm", "a", "--json")
    assert status == 0, err
    import json

    assert json.loads(out)["workload"]["ops_per_user"] == 1000 / 1000    # 1,000 ops/s over 1,000 users
