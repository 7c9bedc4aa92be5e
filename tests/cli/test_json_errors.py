"""Every command with --json ends an error the same way (capmodel.cli): one line on stderr, exit 2, and
{"error": that line} on stdout, so that a script reading the JSON reads the error too."""
import json

import pytest

from capmodel.cli import main


@pytest.mark.parametrize("argv", [
    ["fit", "no-such.csv"],
    ["plan", "--catalog", "no-such.csv"],
    ["nodes", "--table", "no-such.csv"],
    ["shards", "--curve", "no-such.csv"],
    ["mva", "no-such.yaml"],
    ["mva", "--observed", "no-such-dir", "--cores", "2"],
    ["fleet", "no-such-dir"],
    ["observe", "--ftdc", "no-such-dir"],
    ["fit", "--level", "2", "data/usl_specsdm91.csv"],
])
def test_a_json_commands_error_is_json_on_stdout_and_one_line_on_stderr(argv, capsys, tmp_path, monkeypatch):
    from pathlib import Path

    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    assert main([*argv, "--json"]) == 2
    said = capsys.readouterr()
    error = json.loads(said.out)["error"]
    assert said.err.count("\n") == 1 and said.err.rstrip("\n").endswith(error)
    assert "Traceback" not in said.err and error


def test_without_json_stdout_stays_empty(capsys):
    assert main(["fit", "no-such.csv"]) == 2
    said = capsys.readouterr()
    assert said.out == "" and "no-such.csv" in said.err
