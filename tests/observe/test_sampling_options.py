"""observe --uri's sampling options checked before the first line is printed: --interval and --duration must be
finite and within their ranges (nan, inf, 1e-9, 1e12 refused naming the option), with --ftdc they are refused rather
than ignored, and an empty --uri is called empty."""
from __future__ import annotations

import pytest

from capmodel.cli import main

DEAD = "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=200"


@pytest.mark.parametrize("options, words", [
    (["--interval", "nan"], "--interval must be a number of seconds from 0.1 to 3,600, got nan"),
    (["--interval", "1e-9", "--duration", "1"], "--interval must be a number of seconds from 0.1 to 3,600"),
    (["--duration", "inf"], "--duration must be a number of seconds from 0.1 to 2,678,400 (31 days), got inf"),
    (["--duration", "1e12"], "--duration must be a number of seconds from 0.1 to 2,678,400 (31 days)"),
    (["--interval", "2", "--duration", "1"], "--duration must be at least one interval (2 s), got 1"),
])
def test_refused_before_the_sampling_line(tmp_path, capsys, options, words):
    assert main(["observe", "--uri", DEAD, "--out", str(tmp_path / "o"), *options]) == 2
    out, err = capsys.readouterr()
    assert err == f"capmodel: error: {words}\n" if words.endswith(("nan", "got 1")) else words in err
    assert "sampling serverStatus" not in err and err.count("\n") == 1
    assert not (tmp_path / "o").exists()


def test_an_empty_uri_is_called_empty(tmp_path, capsys):
    assert main(["observe", "--uri", " ", "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == \
        "capmodel: error: --uri is empty: give a MongoDB URI such as mongodb://localhost:27017/\n"


@pytest.mark.parametrize("options", [["--interval", "5"], ["--duration", "60"], ["--interval", "5", "--duration", "60"]])
def test_sampling_options_with_ftdc_are_refused_not_ignored(tmp_path, capsys, options):
    assert main(["observe", "--ftdc", str(tmp_path), "--out", str(tmp_path / "o"), *options]) == 2
    err = capsys.readouterr().err
    assert "set the live sampling of --uri; with --ftdc choose the samples with --since/--until" in err
