"""``mva --observed DIR`` says a missing folder before a missing option (hostile round seven).

Before: ``mva --observed nope`` answered "--observed needs --cores N" and, given --cores, then "no samples.csv
there": the user fixed the option only to learn the folder was wrong. The class: every --observed value that names
nothing (missing, empty, a folder without samples.csv, one of several) is said first, naming the value.
"""
from __future__ import annotations

import json

import pytest

from capmodel.cli import main


@pytest.mark.parametrize("extra", [[], ["--cores", "4"], ["--cores", "0"], ["--scale", "reads=2", "--rates", "x=1"]])
def test_a_missing_folder_is_said_first(tmp_path, capsys, extra):
    missing = tmp_path / "nope"
    assert main(["mva", "--observed", str(missing), *extra]) == 2
    err = capsys.readouterr().err
    assert err == f"capmodel: error: --observed {missing}: no such folder (write one with capmodel observe --out)\n"


def test_a_folder_without_samples_and_the_second_of_two(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["mva", "--observed", str(empty)]) == 2
    assert f"--observed {empty}: no samples.csv there" in capsys.readouterr().err
    good = tmp_path / "good"
    good.mkdir()
    (good / "samples.csv").write_text("time\n")
    assert main(["mva", "--observed", str(good), "--observed", str(tmp_path / "gone"), "--json"]) == 2
    out, err = capsys.readouterr()
    assert f"--observed {tmp_path / 'gone'}: no such folder" in json.loads(out)["error"] and err.count("\n") == 1


def test_an_empty_value_is_named_as_empty(capsys):
    assert main(["mva", "--observed", ""]) == 2
    assert capsys.readouterr().err == "capmodel: error: --observed is empty: give a capmodel observe output folder\n"
