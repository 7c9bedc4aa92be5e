"""Every report notebook rendered once per test session with small parameters (shared by the notebook, report and
browser tests: the first test that asks renders them, the others reuse the folder)."""
from __future__ import annotations

from pathlib import Path

# small but real parameters: enough points to fit, few bootstrap samples, a sweep of a few seconds
SMALL = {
    "01_methodology": {"upto": 96},
    "02_fit_curve": {"bootstrap": 20},
    "03_vm_capacity_plan": {},
    "04_node_multiplier": {"sensitivity": [0.0, 0.01, 0.03]},
    "05_shard_scale_out": {"scenarios": [0.0, 0.02, 0.05]},
    "06_live_benchmark": {"concurrency": [1, 2, 4, 8], "duration": 0.5, "warmup": 0.2, "records": 300},
    "07_production_capacity": {"bootstrap": 30},
    "08_fleet_capacity": {"clusters": 1, "hours": 1.0},
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
