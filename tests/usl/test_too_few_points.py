"""``capmodel fit`` on too few points or levels says the count in agreeing words ("1 point", "only 1 distinct
concurrency level")."""
from __future__ import annotations

import pytest

from capmodel.cli import main


@pytest.mark.parametrize("rows, words", [
    ("1,100\n", "1 point cannot fit usl with 3 parameters"),
    ("1,100\n2,190\n", "2 points cannot fit usl with 3 parameters"),
    ("1,100\n1,110\n1,120\n1,105\n", "only 1 distinct concurrency level: usl with 3 parameters needs at least 3"),
    ("1,100\n2,190\n1,120\n2,185\n", "only 2 distinct concurrency levels: usl"),
])
def test_too_few_points_or_levels_are_counted_in_agreeing_words(tmp_path, capsys, rows, words):
    path = tmp_path / "few.csv"
    path.write_text("concurrency,throughput\n" + rows)
    assert main(["fit", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and words in err and str(path) in err, err


def test_model_selection_on_one_point_says_one_point(tmp_path, capsys):
    path = tmp_path / "one.csv"
    path.write_text("concurrency,throughput\n4,350\n")
    assert main(["fit", str(path), "--model", "auto"]) == 2
    out, err = capsys.readouterr()
    assert "with 1 point (" in err and "1 points" not in err, err
