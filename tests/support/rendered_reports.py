"""Every report notebook rendered once per test session with small parameters (shared by the notebook, report and
browser tests: the first test that asks renders them, the others reuse the folder), and a second set rendered on a
user's own data and on adversarial inputs.

Both sets are tables: a report added later (07, 08, ...) needs one row in SMALL, and rows in USER_DATA for the inputs
it takes from users."""
from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "user_study"

# small but real parameters: enough points to fit, few bootstrap samples (07), a sweep of a few seconds
SMALL = {
    "01_methodology": {"upto": 96},
    "02_fit_curve": {},
    "03_vm_capacity_plan": {},
    "04_node_multiplier": {"sensitivity": [0.0, 0.01, 0.03]},
    "05_shard_scale_out": {"scenarios": [0.0, 0.02, 0.05]},
    # processes as `-p processes 1` gives it: a string, the type of the notebook's default "auto"
    "06_live_benchmark": {"concurrency": [1, 2, 4, 8], "duration": 0.5, "warmup": 0.2, "records": 300,
                          "processes": "1"},
    "07_production_capacity": {"bootstrap": 30},
    # the fleet tests (tests/fleet/test_fleet.py) read this render too: its truth is synthetic.fleet_servers of these
    "08_fleet_capacity": {"clusters": 1, "members": 3, "hours": 1.0, "seed": 4, "growth": 0.1},
    # the bundled sample (its log and FTDC), few refits; tests/report/test_page_09.py checks its figures
    "09_query_shapes": {"bootstrap": 30},
}

# page name -> (report, parameters): a user's own files, and inputs that push every answer into its corners.
# "{bench_dir}" is filled with a bench folder the session measures on the real mongod.
USER_DATA = {
    "user_sweep_p95": ("02_fit_curve", {"file": str(FIXTURES / "sweep_p95.csv")}),
    "user_client_bound": ("02_fit_curve", {"file": str(FIXTURES / "client_bound_sweep.csv")}),
    "user_three_points": ("02_fit_curve", {"file": str(FIXTURES / "three_points.csv"), "model": "usl"}),
    "user_model_rejected": ("02_fit_curve", {"model": "usl"}),
    "user_catalog_chf": ("03_vm_capacity_plan", {
        "catalog": str(FIXTURES / "catalog_chf.csv"), "curves": str(FIXTURES / "curves_chf.csv"),
        "vm_column": "vm", "ops_per_user": 0.5, "targets": [10000, 40000, 90000],
        "sliders": False}),
    "user_unreachable_latency": ("01_methodology", {"latency_target_ms": 0.05, "upto": 64, "sliders": False}),
    "user_bench_folder": ("06_live_benchmark", {"bench_dir": "{bench_dir}", "latency_target_ms": 0.01}),
    "user_observe_folder": ("07_production_capacity", {"observed": "{observe_dir}", "cores": 1.0, "bootstrap": 10}),
    "user_idle_ftdc": ("07_production_capacity", {"ftdc": str(FIXTURES.parent / "ftdc_idle"), "bootstrap": 10}),
}


def render_small(tmp_path_factory, mongod_uri: str) -> tuple[Path, dict]:
    """The folder with every report rendered (06 against ``mongod_uri``) and name -> ReportRun (None when reused)."""
    from capmodel.report import notebooks
    from capmodel.report.render import render

    out = tmp_path_factory.getbasetemp() / "rendered_reports"
    if (out / "index.html").is_file():
        return out, {}
    parameters = {name: dict(values) for name, values in SMALL.items()}
    parameters["06_live_benchmark"]["uri"] = mongod_uri
    runs, _ = render(notebooks.names(), out, parameters, jobs=2)
    return out, {r.name: r for r in runs}


def bench_folder(tmp_path_factory, mongod_uri: str) -> Path:
    """A short real sweep's --out folder (run once per session), for reports that read one."""
    from capmodel.bench.sweep.config import BenchConfig
    from capmodel.bench.sweep.sweep import run_sweep

    out = tmp_path_factory.getbasetemp() / "user_bench_folder"
    if not (out / "steps.jsonl").is_file():
        config = BenchConfig(workload="ycsb-c", concurrency=[1, 2, 4, 8], duration=0.4, warmup=0.1, records=200,
                             processes=1)
        run_sweep(mongod_uri, config, out, progress=False)
    return out


def observe_folder(tmp_path_factory) -> Path:
    """An 'observe --out' folder of the bundled FTDC sample's window (written once per session)."""
    from capmodel.observe import bundled_sample, observe_ftdc

    out = tmp_path_factory.getbasetemp() / "user_observe_folder"
    if not (out / "samples.csv").is_file():
        sample = bundled_sample()
        observe_ftdc(sample["path"], sample["since"], sample["until"]).write(out)
    return out


def render_user_data(tmp_path_factory, mongod_uri: str) -> tuple[Path, dict]:
    """The folder with every USER_DATA page rendered (each as its own copy of the report, named by its row)."""
    import shutil

    from capmodel.report import notebooks
    from capmodel.report.render import render

    out = tmp_path_factory.getbasetemp() / "rendered_user_data"
    if (out / "index.html").is_file():
        return out, {}
    sources = tmp_path_factory.getbasetemp() / "user_data_notebooks"
    sources.mkdir(exist_ok=True)
    folder = bench_folder(tmp_path_factory, mongod_uri)
    filled = {"{bench_dir}": str(folder), "{observe_dir}": str(observe_folder(tmp_path_factory))}
    names, parameters = [], {}
    for page, (report, values) in USER_DATA.items():
        copy = sources / f"{page}.ipynb"
        shutil.copyfile(notebooks.path(report), copy)
        names.append(str(copy))
        parameters[str(copy)] = {k: (filled.get(v, v) if isinstance(v, str) else v) for k, v in values.items()}
    runs, _ = render(names, out, parameters, jobs=2)
    return out, {r.name: r for r in runs}
