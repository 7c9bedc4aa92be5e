"""The command-line dispatcher: help lists every command; usage errors and closed pipes behave."""
import json
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
    assert main(["fit", "x.csv", "--weights", "foo"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("capmodel fit: error: argument --weights: invalid choice: 'foo'")


def test_fit_model_choices_are_the_model_family_and_auto(capsys):
    """--model accepts exactly capmodel.models.usl.selection.MODEL_CHOICES: every member of the family fits from the
    command line, and an unknown name is refused in one line listing them, before the file is read."""
    from capmodel import datasets
    from capmodel.models.usl.family import MODELS
    from capmodel.models.usl.selection import MODEL_CHOICES

    assert set(MODEL_CHOICES) == {"auto", *MODELS}
    assert main(["fit", "no-such-file.csv", "--model", "foo"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--model" in err[0] and all(name in err[0] for name in MODEL_CHOICES)
    for name in MODELS:
        assert main(["fit", str(datasets.path("usl_raytracer")), "--model", name, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["model"] == name
    # the USL alone has a sigma to free: asked of another model, refused by its option's name (it was ignored)
    assert main(["fit", str(datasets.path("usl_raytracer")), "--model", "amdahl", "--allow-superlinear"]) != 0
    assert capsys.readouterr().err.strip() == ("capmodel: error: --allow-superlinear: applies to the usl model only, "
                                               "not to amdahl")


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
