"""YCSB runs throttled by a throughput target (-target N) measure the target, not the server: a sweep held at its
target has no server peak, some steps at their target make the fit weak naming them, and a run below its target or
an unthrottled run is not flagged."""
import json

import pytest

from capmodel.cli import main

RUN = """YCSB Client 0.17.0
Command line: -db site.ycsb.db.MongoDbClient -s -P workloads/workloadb -threads {threads}{target} -t
[OVERALL], RunTime(ms), 60000
[OVERALL], Throughput(ops/sec), {throughput}
[READ], Operations, {ops}
[READ], AverageLatency(us), 900
[READ], 95thPercentileLatency(us), 2100
[READ], Return=OK, {ops}
"""


def write_sweep(tmp_path, target_text, throughputs):
    folder = tmp_path / "sweep"
    folder.mkdir()
    for threads, x in throughputs.items():
        (folder / f"run_t{threads}.txt").write_text(RUN.format(threads=threads, target=target_text, throughput=x,
                                                               ops=int(x * 60)))
    return folder


# a server that would scale on (1,000 ops/s per thread, sigma 0.05) held by -target 4000 from 8 threads on
THROTTLED = {4: 3478.3, 8: 3996.1, 16: 3998.7, 32: 3999.2, 64: 3999.0}


@pytest.mark.parametrize("target_text", [" -target 4000", " -p target=4000"])
def test_a_sweep_held_at_its_target_has_no_server_peak(tmp_path, capsys, target_text):
    """Every step from 8 threads reached the -target: the fit's 'ceiling' is the client's target (4,000), which the
    fit printed as the server's with a weak verdict at best."""
    folder = write_sweep(tmp_path, target_text, {k: v for k, v in THROTTLED.items() if k >= 8})
    assert main(["fit", str(folder), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["evidence"]["grade"] == "unusable"
    assert [r["code"] for r in out["evidence"]["reasons"] if r["grade"] == "unusable"] == ["client_bound"]


def test_some_steps_at_their_target_make_the_fit_weak_naming_them(tmp_path, capsys):
    folder = write_sweep(tmp_path, " -target 4000", THROTTLED)
    assert main(["fit", str(folder), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["evidence"]["grade"] == "weak"
    (bound,) = [r for r in out["evidence"]["reasons"] if r["code"] == "client_bound"]
    assert bound["grade"] == "weak" and bound["value"] == 4                     # 4 of the 5 steps
    assert bound["next_step"]["levels"] == [8, 16, 32, 64]                      # the steps held at the target


def test_a_run_below_its_target_and_an_unthrottled_run_are_not_flagged(tmp_path):
    import capmodel

    folder = write_sweep(tmp_path, " -target 4000", {1: 1000.0, 2: 1904.8})
    curve = capmodel.read_curve(folder)
    assert curve["client_bound"].tolist() == [False, False]
    (tmp_path / "plain").mkdir()
    plain = write_sweep(tmp_path / "plain", "", {1: 1000.0, 2: 1904.8})
    assert "client_bound" not in capmodel.read_curve(plain).columns
