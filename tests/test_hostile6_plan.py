"""`capmodel plan` at the edges of its options (hostile round six).

Before: ``--target-users 0.5`` was planned and printed as "0 users -> m3-xlarge-8-SAS"; a shrinking user base
(``--growth -0.5``) read "never (no growth)"; a repeated ``--target-users`` kept only the last one (tested in
test_hostile6_nodes_shards.py beside ``shards --target-rate``).
"""
from __future__ import annotations

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
    status, out, err = _cli(capsys, "plan", "--target-users", "5e4")
    assert status == 0 and "50,000 users -> s3-2xlarge-8-SAS" in out, out   # the benchANT study's answer


@pytest.mark.parametrize("growth, words", [("-0.5", "never (users shrink)"), ("0", "never (no growth)")])
def test_a_runway_that_never_ends_says_why(capsys, growth, words):
    status, out, err = _cli(capsys, "plan", "--growth", growth, "--current-users", 15000, "--target-users", 30000)
    assert status == 0, err
    runway = out.split("Runway at", 1)[1].split("\n\n", 1)[0]
    nevers = [ln for ln in runway.splitlines() if "never" in ln]
    assert nevers and all(words in ln for ln in nevers), runway
    assert f"reached in {words}" in out
