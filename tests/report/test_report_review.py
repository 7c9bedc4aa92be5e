"""What a reader of the rendered reports saw that contradicted the page's own evidence (a review of the pages at
1280 px): each test states the figure the page must show, computed here or taken from the source study."""
from __future__ import annotations

import html
import math
import re

import pytest

from capmodel.plan import plan_shard_study


def test_report_05_does_not_call_the_study_an_extrapolation_from_one_shard():
    # the DocumentDB post measured 1 to 16 shards; its 62,500/s per shard is 1,000,000 / 16, measured on 16 shards,
    # so 16 shards for 1,000,000/s is no extrapolation (``capmodel shards`` with no input says the same)
    from capmodel.report.shard_report import shard_report

    report = shard_report(1_000_000.0, 1_000_000 / 16, 0.0, 0.0, scenarios=[0.0, 0.05])
    codes = [r["code"] for r in report.evidence.to_json()["reasons"]]
    assert "extrapolation" not in codes
    assert report.evidence.to_json() == plan_shard_study().evidence.to_json()
    # a rate of one's own is still taken as measured on one shard: 20 shards is then 20x that
    own = shard_report(1_000_000.0, 50_000.0, 0.0, 0.0, scenarios=[0.0])
    extrapolation = [r for r in own.evidence.to_json()["reasons"] if r["code"] == "extrapolation"]
    assert extrapolation and extrapolation[0]["value"] == pytest.approx(1_000_000 / 50_000 / 1)


def test_report_05_keeps_the_linear_estimate_where_the_usl_cannot_reach_the_target():
    # the linear estimate ignores sigma: ceil(1,000,000 / 62,500) = 16 shards in every scenario, the unreachable one
    # included (the figure said "linear estimate: unreachable within 32 shards")
    from capmodel.report.shard_report import shard_report

    report = shard_report(1_000_000.0, 62_500.0, 0.0, 0.0, scenarios=[0.0, 0.05])
    scen = report.scenarios.set_index("sigma")
    assert scen.loc[0.05, "shards"] is None or math.isnan(scen.loc[0.05, "shards"])
    assert scen.loc[0.05, "linear_shards"] == math.ceil(1_000_000 / 62_500)
    row = [r for r in report.scenario_table().cells() if r[0] == "0.05"][0]
    assert row[2] == "unreachable" and row[3] == "16"


def test_the_provenance_line_shows_no_python_repr_and_one_bracket_per_parameter():
    # the pages showed ``file = "" (default) (not used)``: a raw repr of the empty text and two brackets
    from capmodel.report.headline import Headline, provenance

    context = {"defaults": {"dataset": "plgm_workload1", "file": "", "level": 0.95},
               "given": {"file": "sweep.csv"}, "rendered_at": "2026-11-24T06:00:00+00:00"}
    shown = Headline("Q?", "A.", None, provenance(context=context, unused=("dataset",)))._provenance_html()
    assert '""' not in shown and "&quot;&quot;" not in shown
    assert "<code>dataset</code> = plgm_workload1 (default, not used)" in shown
    assert "<code>file</code> = sweep.csv <strong>(set)</strong>" in shown
    assert "<code>level</code> = 0.95 (default)" in shown
    empty = {"defaults": {"ftdc": ""}, "given": {}, "rendered_at": "2026-11-24T06:00:00+00:00"}
    assert "<code>ftdc</code> = (none) (default)" in Headline("Q?", "A.", None, provenance(context=empty))._provenance_html()


def test_a_sha256_is_never_broken_across_lines():
    from capmodel.report.convert import CSS

    rule = [line for line in CSS.splitlines() if line.startswith(".capmodel-headline .sha")][0]
    assert "white-space: nowrap" in rule and "break-all" not in rule


def _annotations(fig) -> dict:
    return {a.x: a.text for a in fig.layout.annotations if a.textangle == -90}


def test_report_03s_runway_says_why_a_vm_has_no_bar():
    # benchANT: m3-xlarge-8-SAS is the baseline VM, serving today's 25,000 users at the utilization target, so it is
    # full now (0 months, a bar of no height); c4-xlarge-4-SAS misses the latency objective (its update latency is
    # worse than the baseline's) and carries no users. The page labelled both "full or not used".
    from capmodel.plots.costs import runway_figure
    from capmodel.report.plan_report import plan_report

    vms = plan_report(targets=[50_000]).vms
    assert float(vms.set_index("vm").loc["m3-xlarge-8-SAS", "runway_months"]) == 0
    labels = _annotations(runway_figure(vms))
    assert labels["m3-xlarge-8-SAS"] == "full now"
    assert labels["c4-xlarge-4-SAS"] == "fails an objective"
    assert labels["s3-2xlarge-4-SAS"] == "fails an objective"
    assert "s3-2xlarge-8-SAS" not in labels


def test_report_03_says_where_the_throughput_of_a_fitted_vm_comes_from(tmp_path):
    # with measured curves the throughput is the USL's at the utilization target, not a measured figure: 80% of the
    # fitted peak for a curve without cpu_util
    import capmodel
    from capmodel.plan import Objectives
    from capmodel.report.plan_report import plan_report

    here = "tests/fixtures/user_study/"
    report = plan_report(catalog=here + "catalog_chf.csv", curves=here + "curves_chf.csv", vm_column="vm",
                         ops_per_user=0.5, targets=[5000], objectives=Objectives(utilization_target=0.8))
    assert "fitted" in report.throughput_note and "Measured throughput" not in report.throughput_note
    curve = capmodel.read_curve(here + "curves_chf.csv", concurrency="threads", throughput="ops_per_sec")
    small = capmodel.fit_usl(curve[curve["vm"] == "zurich-small"])
    shown = float(report.vms.set_index("vm").loc["zurich-small", "throughput"])
    assert shown == pytest.approx(0.8 * small.peak_throughput, rel=1e-6)
    assert "Measured throughput" in plan_report(targets=[50_000]).throughput_note


def test_report_02_shows_the_fits_own_warnings():
    # three points for Amdahl's two parameters: ``capmodel fit`` warns that the estimates are rough; the page
    # said only "Evidence: sound" and left the warning out
    from capmodel.report.fit_report import fit_report

    report = fit_report(file="tests/fixtures/user_study/three_points.csv")
    assert report.fit.n_points == 3
    # three points leave no interval for the ceiling (the few-points warning became this reason, issue 26): unusable
    assert report.evidence.grade == "unusable" and "no_interval" in report.evidence.codes()
    # each of the fit's warnings is a reason of the page's verdict (said there once, not again as a note)
    assert {r.message for r in report.evidence.reasons} >= set(report.fit.warnings)


@pytest.fixture(scope="module")
def user_pages(tmp_path_factory):
    """Reports 02, 06, 07 and 08 rendered on a user's own inputs: a sweep whose every step was client-bound (as a
    CSV, and as the folder a real ``capmodel bench`` wrote against the embedded mongod), an ``observe --out`` folder
    (of the bundled FTDC sample), a folder of generated FTDC; and 07 on an idle server's FTDC."""
    from capmodel import observe
    from capmodel.observe import synthetic
    from capmodel.report.render import render

    base = tmp_path_factory.mktemp("user_pages")
    sample = observe.bundled_sample()
    observation = observe.observe_ftdc(sample["path"], sample["since"], sample["until"])
    observation.write(base / "obs")
    fleet = base / "fleet"
    synthetic.write_fleet(synthetic.fleet_servers(clusters=1, members=2, hours=1.0, seed=2), fleet)
    parameters = {"02_fit_curve": {"file": "tests/fixtures/user_study/client_bound_sweep.csv"},
                  "06_live_benchmark": {"bench_dir": "tests/fixtures/bench_client_bound"},
                  "07_production_capacity": {"observed": str(base / "obs"), "bootstrap": 0},
                  "08_fleet_capacity": {"folders": str(fleet), "workers": 1}}
    runs, _ = render(list(parameters), base / "out", parameters, jobs=2)
    idle = {"07_production_capacity": {"ftdc": "tests/fixtures/ftdc_idle", "bootstrap": 0}}
    runs += render(list(idle), base / "idle", idle, jobs=1)[0]
    assert all(r.error is None for r in runs), [r.error for r in runs]
    return base / "out", base / "idle"


def _head(out, name) -> dict:
    import nbformat

    from capmodel.report.headline import MIME

    nb = nbformat.read(out / f"{name}.ipynb", as_version=4)
    return [o["data"][MIME] for c in nb.cells for o in c.get("outputs", []) if MIME in o.get("data", {})][0]


def test_user_pages_say_which_parameters_their_inputs_made_moot(user_pages):
    out, idle = user_pages
    fleet = _head(out, "08_fleet_capacity")
    used = {p["name"]: p["used"] for p in fleet["provenance"]["parameters"]}
    assert not any(used[n] for n in ("clusters", "members", "hours", "seed")) and used["folders"]
    # the answer names where the servers came from instead of opening with a bare count
    assert fleet["answer"].startswith("From the FTDC in fleet: of 2 servers, the most urgent is ")
    production = _head(out, "07_production_capacity")
    used = {p["name"]: p["used"] for p in production["provenance"]["parameters"]}
    assert used["observed"] and not any(used[n] for n in ("ftdc", "uri", "duration", "interval", "since", "until"))
    page = (out / "02_fit_curve.html").read_text()
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    # the fit's cautions are the verdict's reasons, stated in its block (the few-points warning of this test's
    # first version became the interval's own reason in issue 26), never as a separate note
    assert "The fit warns" not in page
    assert all(r["message"] in text for r in _head(out, "02_fit_curve")["evidence"]["reasons"])


def _figure_traces(out, name) -> list[str]:
    import nbformat

    nb = nbformat.read(out / f"{name}.ipynb", as_version=4)
    return [t.get("name") or "" for c in nb.cells for o in c.get("outputs", [])
            for t in o.get("data", {}).get("application/vnd.plotly.v1+json", {}).get("data", [])]


def test_an_unusable_verdict_draws_no_peak(user_pages):
    # every step client-bound: the answer says no peak can be located, and the figure marked a "USL peak" anyway
    out, _ = user_pages
    for name in ("02_fit_curve", "06_live_benchmark"):
        assert _head(out, name)["evidence"]["grade"] == "unusable"
        traces = _figure_traces(out, name)
        assert any(t == "measured" for t in traces), traces
        assert not [t for t in traces if "peak" in t.lower()], (name, traces)


def test_report_06_on_a_bench_folder_does_not_call_its_server_the_embedded_one(user_pages):
    out, _ = user_pages
    page = (out / "06_live_benchmark.html").read_text()
    assert "laptop-sized embedded server" not in page
    borrowed = _head(out, "06_live_benchmark")["provenance"]["borrowed"]
    assert borrowed == [{"figure": "ops per user 0.26", "source": "the benchANT study: 6,500 ops/s for 25,000 users"}]


def test_report_07_describes_a_figure_only_where_it_draws_it(user_pages):
    # an idle server's FTDC (one interval with operations) has neither the CPU figure nor the nose: the page
    # described both ("Each dot is one interval ...") above nothing
    out, idle = user_pages
    idle_page = (idle / "07_production_capacity.html").read_text()
    assert "Each dot is one interval" not in idle_page and "Its latency form draws the nose" not in idle_page
    assert "No CPU figures to apply the laws to: only 1 busy interval" in idle_page
    busy_page = (out / "07_production_capacity.html").read_text()
    assert "Each dot is one interval" in busy_page and "Its latency form draws the nose" in busy_page


def test_cost_axes_group_thousands_as_the_tables_do():
    # the cost axes read "1500" and "1000" beside tables that write 1,500
    import pandas as pd

    from capmodel.plots.costs import bar_figure, pareto_figure

    vms = pd.DataFrame({"vm": ["a", "b"], "monthly_cost": [798.0, 1625.0], "users": [25_000.0, 62_000.0],
                        "pareto": [True, False]})
    assert bar_figure(vms, "monthly_cost", axis_title="monthly cost (EUR/month)").layout.yaxis.tickformat == ","
    pareto = pareto_figure(vms, performance="users")
    assert pareto.layout.xaxis.tickformat == "," and pareto.layout.yaxis.tickformat == ","


def test_an_unreachable_point_sits_in_a_labelled_band_not_at_a_node_count():
    # 04's sensitivity figure put its × at 98 and 93 "candidate nodes", values no workload needs
    import pandas as pd

    from capmodel.plots.tables import lines_figure

    scan = pd.DataFrame({"sigma": [0.0, 0.01, 0.02], "A": [29.0, 40.0, 87.0], "D": [41.0, None, None]})
    fig = lines_figure(scan, "sigma", {"A": "YCSB A", "D": "YCSB D"})
    band = [s for s in fig.layout.shapes if s.type == "rect"]
    assert len(band) == 1 and band[0].y0 > 87.0
    crosses = [t for t in fig.data if t.legendgroup == "missing"]
    assert crosses and all(band[0].y0 <= y <= band[0].y1 for t in crosses for y in t.y)
    assert any(a.text == "unreachable" for a in fig.layout.annotations)
    assert not [s for s in lines_figure(scan[["sigma", "A"]], "sigma").layout.shapes if s.type == "rect"]


def test_report_tables_give_months_to_one_decimal_and_the_briefs_range_plainly():
    from capmodel.report.node_report import node_report
    from capmodel.report.plan_report import plan_report

    runway = plan_report(targets=[50_000])
    months = runway.vm_table().cells()
    shown = {r[0]: r[-1] for r in months}
    assert shown["m3-xlarge-8-SAS"] == "full now" and shown["c4-2xlarge-4-SSD"] == "26.0"   # one decimal
    headers = [c.header for c in node_report("", sigma=0.01, kappa=0.0001).nodes_table().columns.values()]
    assert "brief's nodes (low)" in headers and "brief's nodes (high)" in headers and "brief: to" not in headers


def test_the_index_counts_its_reports_in_words(tmp_path):
    from capmodel.report.index import write_index

    import nbformat

    assert "<p>0 reports;" in write_index(tmp_path).read_text()
    nb = nbformat.v4.new_notebook()
    nb.metadata["capmodel"] = {"report": {"name": "01_x", "question": "Q?", "status": "ok"}}
    nbformat.write(nb, tmp_path / "01_x.ipynb")
    text = write_index(tmp_path).read_text()
    assert "<p>1 report;" in text and "report(s)" not in text
