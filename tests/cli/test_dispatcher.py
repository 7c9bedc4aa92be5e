"""The command-line dispatcher: help lists every command; usage errors and closed pipes behave."""
import subprocess
import sys

from capmodel.cli import main

COMMANDS = ["bench", "fit", "mva", "nodes", "plan", "report", "server", "shards"]


def test_help_lists_every_command(capsys):
    assert main([]) == 2
    out = capsys.readouterr().out
    for command in COMMANDS:
        assert f"\n    {command} " in out


def test_usage_error_is_one_line_naming_the_subcommand_and_option(capsys):
    assert main(["fit", "x.csv", "--model", "foo"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("capmodel fit: error: argument --model: invalid choice: 'foo'")


def test_unknown_command_is_one_line(capsys):
    assert main(["fitt"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("capmodel: error:") and "'fitt'" in err[0]


def test_output_into_a_closed_pipe_ends_quietly():
    # `capmodel nodes --json | head -1`: the reader goes away after one line; no error, no traceback.
    proc = subprocess.run(
        f"{sys.executable} -m capmodel.cli nodes --json | head -1",
        shell=True, capture_output=True, text=True, timeout=60,
    )
    assert proc.stdout.strip() == "{"
    assert proc.stderr == ""
