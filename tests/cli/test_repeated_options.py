"""An option given twice: the same value twice is harmless; two different values of a single-valued option
(``bench --concurrency``, ``plan --growth``, ``fit --model``, one report parameter under ``-p``) are one line naming
the option; list options (``--target-users``, ``--target-rate``, ``--ftdc``, ``-p``) take every value."""
from __future__ import annotations

import pytest

from capmodel.cli import main


def _cli(capsys, *argv):
    status = main([*map(str, argv)])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("argv, option, values", [
    (["plan", "--growth", "0.05", "--growth", "0.1"], "--growth", "0.05 and 0.1"),
    (["plan", "--utilization-target", "0.7", "--utilization-target", "0.8"], "--utilization-target", "0.7 and 0.8"),
    (["fit", "x.csv", "--model", "usl", "--model", "auto"], "--model", "usl and auto"),
    (["nodes", "--sigma", "0.01", "--sigma", "0.02"], "--sigma", "0.01 and 0.02"),
    (["shards", "--per-shard-throughput", "1000", "--per-shard-throughput", "2000"], "--per-shard-throughput",
     "1000.0 and 2000.0"),
    (["bench", "--concurrency", "1,2", "--concurrency", "4", "--out", "never"], "--concurrency", "1,2 and 4"),
    (["bench", "--workload", "ycsb-a", "--workload", "ycsb-b", "--out", "never"], "--workload", "ycsb-a and ycsb-b"),
    (["mva", "m.yaml", "--solver", "exact", "--solver", "schweitzer"], "--solver", "exact and schweitzer"),
])
def test_a_single_valued_option_given_two_values_is_refused_naming_both(tmp_path, capsys, monkeypatch, argv, option,
                                                                        values):
    monkeypatch.chdir(tmp_path)
    status, out, err = _cli(capsys, *argv)
    assert status == 2 and out == ""
    assert err == f"capmodel {argv[0]}: error: {option} given twice ({values}); give it once\n", err
    assert not (tmp_path / "never").exists()


def test_the_same_value_twice_is_harmless(capsys):
    once = _cli(capsys, "plan", "--growth", "0.05", "--json")
    twice = _cli(capsys, "plan", "--growth", "0.05", "--growth", "0.05", "--json")
    assert once[0] == twice[0] == 0 and once[1] == twice[1]


def test_each_parse_starts_afresh(capsys):
    assert _cli(capsys, "plan", "--growth", "0.05", "--json")[0] == 0
    assert _cli(capsys, "plan", "--growth", "0.1", "--json")[0] == 0    # not "given twice" across two calls


@pytest.mark.parametrize("parameters, first, second", [
    (["-p", "utilization_target", "0.7", "-p", "utilization_target", "0.8"], "-p utilization_target '0.7'",
     "-p utilization_target '0.8'"),
])
def test_a_report_parameter_set_twice_is_refused_before_any_kernel(tmp_path, capsys, parameters, first, second):
    out_dir = tmp_path / "reports"
    status, out, err = _cli(capsys, "report", "03_vm_capacity_plan", *parameters, "--out", out_dir)
    assert status == 2
    assert f"{first} and {second} set 03_vm_capacity_plan's 'utilization_target' twice" in err, err
    assert not out_dir.exists() or not any(out_dir.iterdir())


def test_an_interrupted_bench_says_what_it_kept(tmp_path):
    """The sentence ``bench`` prints on Ctrl-C, from the folder as an interrupted run leaves it (the live case is
    tests/bench/test_bench_command.py::test_ctrl_c_keeps_completed_steps_and_resume_finishes)."""
    import json

    from capmodel.bench.server import Terminated
    from capmodel.commands.bench import _kept

    out = tmp_path / "run"
    assert _kept(out, KeyboardInterrupt()) == f"interrupted; no step had completed, nothing was kept in {out}"
    out.mkdir()
    (out / "steps.jsonl").write_text(json.dumps({"status": "ok"}) + "\n" + json.dumps({"status": "failed"}) + "\n"
                                     + json.dumps({"status": "ok"}) + "\n" + '{"status": "ok", "torn')
    assert _kept(out, KeyboardInterrupt()) == (
        f"interrupted; kept 2 completed steps in {out / 'steps.jsonl'} and {out / 'curve.csv'}: run the same "
        "command with --resume to go on")
    assert _kept(out, Terminated("received signal 15")).startswith("interrupted (received signal 15); kept 2")
