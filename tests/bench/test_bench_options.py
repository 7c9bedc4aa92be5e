"""bench options refused before anything connects, in the words of the option (``--concurrency``, ``--processes``,
``--read-preference``, ``--collection ''``, ...), and whole numbers read in any spelling ``--records`` takes
(``1e3`` is 1,000; ``1.5`` is not whole). Nothing listens on port 1: a refusal that reached the server would say
"cannot reach", which these must not.
"""
from __future__ import annotations

import pytest

from capmodel.cli import main
from capmodel.commands import parse_number_list

DEAD = "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=200"


@pytest.mark.parametrize("option, value, words", [
    ("--concurrency", "1.5,2", "--concurrency: item 1 of '1.5,2' (1.5) is not a whole number"),
    ("--concurrency", "2,inf", "--concurrency: every number must be finite, got '2,inf'"),
    ("--processes", "1.5", "argument --processes: must be an integer >= 1 or 'auto', got '1.5'"),
    ("--processes", "two", "argument --processes: must be an integer >= 1 or 'auto', got 'two'"),
    ("--read-preference", "x", "--read-preference must be one of primary, primaryPreferred, secondary, "
                               "secondaryPreferred, nearest, got 'x'"),
    ("--read-preference", "Secondary", "--read-preference must be one of primary"),
    ("--collection", "", "--collection is empty: give a collection name, or leave it out for the workload's"),
    ("--collection", "  ", "--collection is empty"),
])
def test_refused_naming_the_option_before_connecting(tmp_path, capsys, option, value, words):
    status = main(["bench", "--uri", DEAD, "--out", str(tmp_path / "o"), "--duration", "1", option, value])
    err = capsys.readouterr().err
    assert status == 2 and words in err and err.count("\n") == 1
    assert "cannot reach" not in err and "process_count" not in err and "URI" not in err
    assert not (tmp_path / "o").exists()


def test_whole_numbers_are_read_as_records_reads_them():
    assert parse_number_list("1e3,8.0,1_000,2", "--concurrency", int) == [1000, 8, 1000, 2]
    assert all(type(v) is int for v in parse_number_list("1e3,8.0", "--concurrency", int))
    assert parse_number_list("0.5,1e-3", "--x") == [0.5, 0.001]


def test_a_whole_number_of_processes_in_any_spelling_passes_the_option_check():
    from capmodel.commands.bench import process_count

    assert process_count("4") == 4 and process_count("4.0") == 4 and process_count("1e1") == 10
    assert process_count("auto") == "auto"
