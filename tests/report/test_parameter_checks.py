"""A report parameter that cannot work is refused before any kernel, mongod or sweep starts, in one line that names
the parameter and the reason: among them a zero the study cannot use (03's targets, 05's target_rate and
per_shard_throughput)."""
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
    (["02_fit_curve", "-p", "model", "cubic"], "parameter model: 'cubic' is not one of auto, linear, amdahl, usl, log_coherency"),
    (["03_vm_capacity_plan", "-p", "curves", f"{FIXTURES}/user_study/curves_chf.csv"],
     "parameter curves: needs a catalog too"),
    (["03_vm_capacity_plan", "-p", "catalog", f"{FIXTURES}/user_study/catalog_chf.csv", "-p", "curves",
      f"{FIXTURES}/user_study/sweep_p95.csv", "-p", "ops_per_user", "0.5"],
     "parameter vm_column: tests/fixtures/user_study/sweep_p95.csv has no column 'vm'"),
    # a catalog of one's own has no baseline: the load per user is required, named with what it means
    (["03_vm_capacity_plan", "-p", "catalog", f"{FIXTURES}/user_study/catalog_chf.csv"],
     "parameter ops_per_user: give the ops/s one user generates (the load each user puts on the VMs): a catalog of "
     "your own has no baseline to derive it from (or give baseline_users and baseline_vm)"),
    (["03_vm_capacity_plan", "-p", "catalog", f"{FIXTURES}/user_study/catalog_chf.csv", "-p", "baseline_users",
      "25000"], "parameter baseline_vm: baseline_users = 25,000 needs the VM those users were measured on"),
    (["03_vm_capacity_plan", "-p", "catalog", f"{FIXTURES}/user_study/catalog_chf.csv", "-p", "baseline_users",
      "25000", "-p", "baseline_vm", "zurich-small"], "parameter baseline_vm: zurich-small has no measured throughput "
     "(ops/s) to derive the load per user from (none in the catalog or measurements); give ops_per_user instead"),
    (["03_vm_capacity_plan", "-p", "catalog", f"{FIXTURES}/user_study/catalog_chf.csv", "-p", "curves",
      f"{FIXTURES}/user_study/curves_chf.csv", "-p", "baseline_users", "25000", "-p", "baseline_vm", "zurich-small"],
     "parameter baseline_vm: zurich-small has no measured throughput (ops/s) to derive the load per user from (its "
     "curve is fitted)"),
    (["03_vm_capacity_plan", "-p", "catalog", f"{FIXTURES}/user_study/catalog_chf.csv", "-p", "curves",
      f"{FIXTURES}/user_study/curves_chf.csv", "-p", "ops_per_user", "0.5", "-p", "throughput", "qps"],
     "parameter curves: tests/fixtures/user_study/curves_chf.csv: column 'qps' given for throughput not found"),
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


def _path_cases(tmp_path):
    """A folder with no FTDC, a folder holding only a CSV, a plain file, a missing path (the class of inputs that
    named the wrong kind of path and failed inside the kernel)."""
    empty = tmp_path / "empty"
    empty.mkdir()
    csvs = tmp_path / "csvs"
    csvs.mkdir()
    (csvs / "curve.csv").write_text("concurrency,throughput\n1,100\n2,190\n4,350\n")
    a_file = tmp_path / "metrics.csv"
    a_file.write_text("concurrency,throughput\n1,100\n")
    return empty, csvs, a_file, tmp_path / "missing"


@pytest.mark.parametrize("report, name, which, reason", [
    ("02_fit_curve", "file", "empty", "is a folder, not a file"),
    ("02_fit_curve", "file", "csvs", "is a folder, not a file"),
    ("03_vm_capacity_plan", "catalog", "csvs", "is a folder, not a file"),
    ("04_node_multiplier", "table", "csvs", "is a folder, not a file"),
    ("08_fleet_capacity", "folders", "empty", "holds no FTDC files (metrics.*), in it or the folders below it"),
    ("08_fleet_capacity", "folders", "csvs", "holds no FTDC files (metrics.*), in it or the folders below it"),
    ("08_fleet_capacity", "folders", "a_file", "is not a folder"),
    ("08_fleet_capacity", "folders", "missing", "does not exist"),
    ("07_production_capacity", "ftdc", "empty", "holds no FTDC files (metrics.*)"),
    ("07_production_capacity", "ftdc", "missing", "does not exist"),
    ("07_production_capacity", "observed", "a_file", "is not a folder"),
])
def test_a_path_of_the_wrong_kind_is_refused_naming_the_parameter_and_the_path(tmp_path, capsys, no_kernel_no_server,
                                                                               report, name, which, reason):
    empty, csvs, a_file, missing = _path_cases(tmp_path)
    path = {"empty": empty, "csvs": csvs, "a_file": a_file, "missing": missing}[which]
    code = main(["report", report, "-p", name, str(path), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err == f"capmodel: error: parameter {name}: {path} {reason}", err
    assert not (tmp_path / "out").exists()


def test_a_fleet_parent_of_ftdc_folders_and_a_diagnostic_data_folder_pass_the_check(tmp_path):
    from capmodel.report.checks import check_report_parameters

    member = tmp_path / "rs0" / "diagnostic.data"
    member.mkdir(parents=True)
    (member / "metrics.2026-01-01T00-00-00Z-00000").write_bytes(b"\0" * 16)
    check_report_parameters({"folders": ""}, {"folders": f"{tmp_path}, {member}"})
    check_report_parameters({"ftdc": ""}, {"ftdc": str(member)})


@pytest.mark.parametrize("argv, message", [
    (["07_production_capacity", "-p", "interval", "0"], "parameter interval must be a number from 0.01 to 3,600, got 0"),
    (["07_production_capacity", "-p", "bins", "-1"], "parameter bins must be an integer from 0 to 10,000, got -1"),
    (["07_production_capacity", "-p", "fit_on", "abc"], "parameter fit_on: 'abc' is not throughput or latency"),
    (["07_production_capacity", "-p", "since", "abc"], "parameter since: 'abc' is not a time (give one such as "),
    (["07_production_capacity", "-p", "since", "nan"], "parameter since: 'nan' is not a time"),
    (["07_production_capacity", "-p", "since", "2026-01-02", "-p", "until", "2026-01-01"],
     "parameter until: 2026-01-01 is before since 2026-01-02"),
    (["07_production_capacity", "-p", "uri", "abc"], "parameter uri: abc is not a MongoDB URI"),
    (["08_fleet_capacity", "-p", "scheduler", "abc"], "parameter scheduler: 'abc' is not a scheduler address such as"),
    (["03_vm_capacity_plan", "-p", "targets", ""], "parameter targets: give at least one value (the default is "
     "50000, 90000)"),
    (["04_node_multiplier", "-p", "sensitivity", " "], "parameter sensitivity: give at least one value"),
    (["05_shard_scale_out", "-p", "scenarios", "[]"], "parameter scenarios: give at least one value"),
])
def test_an_edge_value_is_refused_in_one_line_naming_the_parameter(tmp_path, capsys, no_kernel_no_server, argv,
                                                                   message):
    code = main(["report", *argv, "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err


def test_an_observe_folder_that_is_not_one_is_refused_naming_the_parameter(tmp_path, capsys, no_kernel_no_server):
    code = main(["report", "07_production_capacity", "-p", "observed", str(tmp_path), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith(f"capmodel: error: parameter observed: {tmp_path}: no samples.csv here"), err


def test_a_scheduler_address_and_a_window_that_can_work_pass_the_checks():
    from capmodel.report.checks import check_report_parameters

    check_report_parameters({"scheduler": ""}, {"scheduler": "tcp://10.0.0.5:8786"})
    check_report_parameters({"since": "", "until": ""}, {"since": "2026-11-02T01:00:00Z", "until": "2026-11-02 02:00"})


@pytest.mark.parametrize("extra, known", [
    ([], "(known: m3-xlarge-8-SAS, "),
    (["-p", "catalog", f"{FIXTURES}/user_study/catalog_chf.csv"], "(known: zurich-small, zurich-medium, zurich-large)"),
])
def test_an_unknown_baseline_vm_is_refused_before_the_kernel(tmp_path, capsys, no_kernel_no_server, extra, known):
    # it failed inside the kernel: "PlanError: unknown baseline VM 'abc'"
    code = main(["report", "03_vm_capacity_plan", "-p", "baseline_vm", "abc", *extra, "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith("capmodel: error: parameter baseline_vm: unknown VM 'abc' " + known), err


@pytest.mark.parametrize("report, key, value, words", [
    ("03_vm_capacity_plan", "targets", "0", "parameter targets: every value must be an integer from 1 to"),
    ("03_vm_capacity_plan", "targets", "50000,0", "parameter targets: every value must be an integer from 1 to"),
    ("05_shard_scale_out", "target_rate", "0", "parameter target_rate must be a number > 0"),
    ("05_shard_scale_out", "per_shard_throughput", "0", "parameter per_shard_throughput must be a number > 0"),
])
def test_a_zero_the_study_cannot_use_is_refused_before_any_kernel(tmp_path, capsys, report, key, value, words):
    out = tmp_path / "reports"
    assert main(["report", report, "-p", key, value, "--out", str(out)]) == 2
    _, err = capsys.readouterr()
    assert words in err and err.count("\n") == 1, err
    assert not out.exists()


def test_zero_still_means_not_given_where_the_notebook_says_so():
    # 03's ops_per_user and baseline_users default to 0.0, "take it from the study": 0 stays allowed
    from capmodel.report.params import checked_parameter

    assert checked_parameter("ops_per_user", 0.0, like=0.0) == 0.0
    assert checked_parameter("baseline_users", 0.0, like=0.0) == 0.0


def test_users_at_a_baseline_vm_with_a_measured_throughput_pass_the_check(tmp_path):
    """The load per user can come from the baseline: users at a VM whose catalog row holds its ops/s."""
    from capmodel.report import notebooks
    from capmodel.report.checks import check_report_parameters
    from capmodel.report.params import notebook_parameters

    catalog = tmp_path / "vms.csv"
    catalog.write_text("VM;Monthly cost;Throughput (ops/sec)\nsmall;$100;4000\nlarge;$300;9000\n")
    defaults = notebook_parameters(notebooks.path("03_vm_capacity_plan"))
    check_report_parameters(defaults, {"catalog": str(catalog), "baseline_vm": "small", "baseline_users": 10000.0})
