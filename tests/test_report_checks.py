"""A report parameter that cannot work is refused before any kernel, mongod or sweep starts, in one line that names
the parameter and the reason (issue 17.4, issue 20.6)."""
from __future__ import annotations

import socket

import pytest

from capmodel.cli import main

FIXTURES = "tests/fixtures"


@pytest.fixture
def no_kernel_no_server(monkeypatch):
    """Fail loudly if a kernel or an embedded mongod is started: the checks must come first."""
    import papermill

    import capmodel.bench.server as server

    def refuse(*args, **kwargs):
        raise AssertionError("started although the parameters cannot work")

    monkeypatch.setattr(papermill, "execute_notebook", refuse)
    monkeypatch.setattr(server, "embedded_server", refuse)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]   # closed again when the block ends: nothing listens there


@pytest.mark.parametrize("argv, message", [
    (["02_fit_curve", "-p", "file", "nothere.csv"], "parameter file: nothere.csv does not exist"),
    (["02_fit_curve", "-p", "dataset", "nosuch"], "parameter dataset: unknown dataset 'nosuch' (bundled: "),
    (["02_fit_curve", "-p", "file", f"{FIXTURES}/curve_threads.csv", "-p", "throughput", "nocol"],
     "parameter file: tests/fixtures/curve_threads.csv: column 'nocol' given for throughput not found"),
    (["02_fit_curve", "-p", "model", "cubic"], "parameter model: 'cubic' is not one of auto, usl, amdahl"),
    (["03_vm_capacity_plan", "-p", "curves", f"{FIXTURES}/user_study/curves_chf.csv"],
     "parameter curves: needs a catalog too"),
    (["03_vm_capacity_plan", "-p", "catalog", f"{FIXTURES}/user_study/catalog_chf.csv", "-p", "curves",
      f"{FIXTURES}/user_study/curves_chf.csv"], "parameter vm_column: tests/fixtures/user_study/curves_chf.csv has "
     "no column 'system'"),
    (["04_node_multiplier", "-p", "rounding", "down"], "parameter rounding: 'down' is not nearest or up"),
    (["06_live_benchmark", "-p", "workload", "ycsb-zz"], "parameter workload: 'ycsb-zz' is neither a bundled "
     "workload (docdb-insert"),
    (["06_live_benchmark", "-p", "bench_dir", FIXTURES], "parameter bench_dir: tests/fixtures has neither "
     "steps.jsonl nor curve.csv"),
    (["06_live_benchmark", "-p", "bench_dir", "nowhere"], "parameter bench_dir: nowhere does not exist"),
    (["06_live_benchmark", "-p", "processes", "many"], "parameter processes: 'many' is neither auto nor"),
])
def test_a_parameter_that_cannot_work_is_one_line_before_any_kernel(tmp_path, capsys, no_kernel_no_server, argv,
                                                                    message):
    code = main(["report", *argv, "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "out").exists()


def test_an_unreachable_server_is_one_readable_line_without_a_mongod(tmp_path, capsys, no_kernel_no_server):
    uri = f"mongodb://analyst:hunter2secret@127.0.0.1:{_closed_port()}/?serverSelectionTimeoutMS=500"
    code = main(["report", "06_live_benchmark", "-p", "uri", uri, "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "parameter uri: mongodb://analyst:***@127.0.0.1:" in err and "no server answered within 3 s" in err
    assert "hunter2secret" not in err and "TopologyDescription" not in err


def test_the_python_api_checks_too(tmp_path, no_kernel_no_server):
    from capmodel.errors import InputError
    from capmodel.report.render import render

    with pytest.raises(InputError, match="parameter file: nothere.csv does not exist"):
        render(["02_fit_curve"], tmp_path / "out", {"02_fit_curve": {"file": "nothere.csv"}})
    assert not (tmp_path / "out").exists()
