"""Report parameters that a kernel would refuse are refused before it starts (hostile round six).

Before: ``-p targets 0`` (03) and ``-p target_rate 0`` / ``-p per_shard_throughput 0`` (05) passed the checks, a
kernel started, and the page failed with "PlanError: target users must be a number > 0" in cell 3.
"""
from __future__ import annotations

import pytest

from capmodel.cli import main


@pytest.mark.parametrize("report, key, value, words", [
    ("03_vm_capacity_plan", "targets", "0", "parameter targets: every value must be an integer from 1 to"),
    ("03_vm_capacity_plan", "targets", "50000,0", "parameter targets: every value must be an integer from 1 to"),
    ("05_shard_scale_out", "target_rate", "0", "parameter target_rate must be a number > 0"),
    ("05_shard_scale_out", "per_shard_throughput", "0", "parameter per_shard_throughput must be a number > 0"),
])
def test_a_zero_the_study_cannot_use_is_refused_before_any_kernel(tmp_path, capsys, report, key, value, words):
    out = tmp_path / "reports"
    assert main(["report", report, "-p", key, value, "--out", str(out)]) == 2
    _, err = capsys.readouterr()
    assert words in err and err.count("\n") == 1, err
    assert not out.exists()


def test_zero_still_means_not_given_where_the_notebook_says_so():
    # 03's ops_per_user and baseline_users default to 0.0, "take it from the study": 0 stays allowed
    from capmodel.report.params import checked_parameter

    assert checked_parameter("ops_per_user", 0.0, like=0.0) == 0.0
    assert checked_parameter("baseline_users", 0.0, like=0.0) == 0.0
