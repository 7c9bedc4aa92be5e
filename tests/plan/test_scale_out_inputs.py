"""``capmodel nodes`` and ``capmodel shards`` with odd tables and options: a node table with a bad cell is one line
naming the file, the column and the row; node counts and count limits are whole numbers in range naming their
option; an option that needs another (``--reference-nodes`` without ``--reference-ops``) is refused rather than
ignored; a repeated list option (``--target-rate``, ``plan --target-users``) keeps every value.
"""
from __future__ import annotations

import json

import pytest
from tests.support.cli_output import error_only

from capmodel.cli import main

HEADER = "workload,reference_ops_per_s,candidate_ops_per_s,reference_nodes,candidate_nodes\n"


def _cli(capsys, *argv):
    status = main([*map(str, argv)])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("rows, expected", [
    (",7120,800,3,3\n", "column 'workload', row 1: the workload has no name"),
    ("A,7120,800,3,3\n ,7000,800,3,3\n", "column 'workload', row 2: the workload has no name"),
    ("A,7120,800,3,3\nA,7000,800,3,3\n", "workload 'A' appears twice (rows 1 and 2)"),
    ("A,7120,800,2.5,3\n", "column 'reference_nodes', row 1: 2.5 is not a whole number of nodes"),
    ("A,7120,800,3,3\nB,7120,800,3,0.5\n", "column 'candidate_nodes', row 2: 0.5 is not a whole number"),
    ("A,7120,800,0,3\n", "column 'reference_nodes', row 1: 0 must be a number > 0"),
    ("A,7120,inf,3,3\n", "column 'candidate_ops_per_s', row 1: inf must be a number > 0"),
])
def test_a_node_table_with_a_bad_cell_is_one_line_naming_file_column_and_row(tmp_path, capsys, rows, expected):
    path = tmp_path / "nodes.csv"
    path.write_text(HEADER + rows)
    for extra in ([], ["--json"]):
        status, out, err = _cli(capsys, "nodes", "--table", path, *extra)
        assert status == 2 and error_only(out, err)
        assert err.count("\n") == 1 and str(path) in err and expected in err, err
        assert "np." not in err and "Traceback" not in err


def test_node_counts_on_the_command_line_are_whole_and_name_their_option(capsys):
    for flag, value in (("--reference-nodes", "2.5"), ("--candidate-nodes", "0"), ("--reference-nodes", "nan"),
                        ("--candidate-nodes", "1e9")):
        status, out, err = _cli(capsys, "nodes", "--reference-ops", 7120, "--candidate-ops", 800, flag, value)
        assert status == 2 and out == "" and f"{flag} (a node count) must be an integer" in err, err
    # a whole count still plans: 4 candidate nodes x 7120/800 = 35.6 -> 36 by the brief's rounding
    status, out, err = _cli(capsys, "nodes", "--reference-ops", 7120, "--candidate-ops", 800,
                            "--reference-nodes", 4, "--json")
    assert status == 0, err
    row = json.loads(out)["rows"][0]
    assert row["nodes_linear"] == round(4 * 7120 / 800) == 36


@pytest.mark.parametrize("flag, value", [("--reference-nodes", "5"), ("--candidate-nodes", "2"),
                                         ("--workload", "X")])
def test_a_single_row_option_without_the_single_row_is_refused_not_ignored(tmp_path, capsys, flag, value):
    status, out, err = _cli(capsys, "nodes", flag, value)
    assert status == 2 and out == "" and f"{flag} describes the single row given by --reference-ops" in err
    path = tmp_path / "nodes.csv"
    path.write_text(HEADER + "A,7120,800,3,3\n")
    status, out, err = _cli(capsys, "nodes", "--table", path, flag, value)
    assert status == 2 and flag in err


@pytest.mark.parametrize("command, flag", [("nodes", "--max-nodes"), ("shards", "--max-shards")])
@pytest.mark.parametrize("value", ["2.5", "0", "-3", "1e9", "nan", "inf"])
def test_a_count_limit_is_a_whole_number_in_range(capsys, command, flag, value):
    status, out, err = _cli(capsys, command, flag, value)
    assert status == 2 and out == "" and "must be an integer from 1 to 1,000,000" in err, err


def test_nodes_bootstrap_is_checked_even_without_a_node_curve(capsys):
    status, out, err = _cli(capsys, "nodes", "--bootstrap", "-1")
    assert status == 2 and "bootstrap (--bootstrap) must be an integer from 0 to 100,000, got -1" in err


def test_a_whole_limit_still_bounds_the_answer(capsys):
    # 1,000,000 inserts/s at 62,500 per shard, linear: 16 shards; a limit of 15 makes it unreachable
    status, out, err = _cli(capsys, "shards", "--max-shards", 15, "--json")
    assert status == 0, err
    row = json.loads(out)["rows"][0]
    assert row["shards"] is None and "limit of 15" in row["reason"]
    status, out, err = _cli(capsys, "shards", "--max-shards", 16, "--json")
    assert json.loads(out)["rows"][0]["shards"] == 1_000_000 // 62_500


def test_a_repeated_list_option_keeps_every_value(capsys):
    status, out, err = _cli(capsys, "shards", "--target-rate", 62500, "--target-rate", 125000, 250000, "--json")
    assert status == 0, err
    rows = json.loads(out)["rows"]
    assert [r["target_rate"] for r in rows] == [62500, 125000, 250000]
    assert [r["shards"] for r in rows] == [1, 2, 4]        # linear at 62,500 per shard
    status, out, err = _cli(capsys, "plan", "--target-users", 50000, "--target-users", 90000, "--json")
    assert status == 0, err
    assert [r["target_users"] for r in json.loads(out)["recommendations"]] == [50000, 90000]
