"""What a rendered page says agrees with its own figures, tables and parameters, on the bundled studies and on a user's
own inputs: each test states the figure or the words the page must show, computed here or taken from the source
study; a column of figures follows one precision rule; a sentence claims only what the page shows."""
from __future__ import annotations

import html
import json
import math
import re
from pathlib import Path

import pandas as pd
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
    shown = Headline("Q?", "A.", None, provenance(context=empty))._provenance_html()
    assert "<code>ftdc</code> = (none) (default)" in shown


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
    small = capmodel.fit_usl(curve[curve["system"] == "zurich-small"])   # the file's vm column: the label system
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
    # the answer names where the servers came from instead of opening with a bare count, and so do the details
    assert fleet["answer"].startswith("Read from the FTDC in fleet: 2 servers. The first to run out is busiest at ")
    assert fleet["details"].startswith("From the FTDC in fleet: of 2 servers, the most urgent is ")
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


NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
HERE = "tests/fixtures/user_study/"


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """03 on a catalog and curves of one's own with its What-if sliders on (as `capmodel report` renders it by
    default), and 07 on the bundled FTDC sample with 5 concurrency bins."""
    from capmodel.report.render import render

    out = tmp_path_factory.mktemp("review2_pages")
    parameters = {
        "03_vm_capacity_plan": {"catalog": HERE + "catalog_chf.csv", "curves": HERE + "curves_chf.csv",
                                "vm_column": "vm", "ops_per_user": 0.5, "targets": [10000, 40000]},
        "07_production_capacity": {"bins": 5, "bootstrap": 0}}
    runs, _ = render(list(parameters), out, parameters, jobs=2)
    return out, {r.name: r for r in runs}


def test_report_03_renders_on_a_users_catalog_with_its_sliders_on(pages):
    # a catalog with no baseline and no users today has no runway: the page said so, but the What-if cell drew the
    # runway figure anyway and the render failed (KeyError: 'runway_months')
    out, runs = pages
    assert runs["03_vm_capacity_plan"].error is None, runs["03_vm_capacity_plan"].error
    page = (out / "03_vm_capacity_plan.html").read_text()
    assert page.count("No runway: give today") == 1


def test_report_07_says_how_many_bins_the_usl_was_fitted_to(pages):
    # the page read "grouped into bins concurrency bins": the parameter's name where its value belongs
    out, runs = pages
    assert runs["07_production_capacity"].error is None, runs["07_production_capacity"].error
    page = (out / "07_production_capacity.html").read_text()
    assert "grouped into 5 concurrency bins, each weighted by its count of intervals" in page
    assert "<code>bins</code> concurrency bins" not in page and "bins concurrency bins" not in page


def test_report_01s_knee_section_does_not_contradict_its_answer():
    # on plgm_workload1 at 5 ms the answer says "the peak decides" (the target binds at 67.8 clients, past the peak
    # at 66.5), while section 5 said "The latency target, not the peak, decides how many clients a machine should
    # carry"
    from capmodel.report.methodology_report import methodology_report

    assert "so the peak decides" in methodology_report(latency_target_ms=5.0).details
    cells = json.loads((NOTEBOOKS / "01_methodology.ipynb").read_text())["cells"]
    knee = ["".join(c["source"]) for c in cells if "".join(c["source"]).startswith("## 6. Why the knee matters")]
    assert len(knee) == 1
    assert "not the peak" not in knee[0] and "or the peak" in knee[0]


def _runway_rows(runways):
    import pandas as pd

    return pd.DataFrame([{"cluster": "rs0", "member": f"m{i}:27017", "folder": f"/f{i}", "error": None,
                          "verdict": "weak", "runway_months": r, "runway_low": r * 0.9, "runway_high": r * 1.1,
                          "spare_fraction": 0.2, "spare_low": 0.1, "spare_high": 0.3} for i, r in enumerate(runways)])


def test_report_08s_runway_axis_mentions_the_cap_only_where_a_bar_is_cut():
    # a fleet whose longest runway is 13.9 months read "months (bars end at 36)" under an axis ending at 14
    from capmodel.plots.fleet import RUNWAY_CAP_MONTHS, fleet_runway_figure

    short = fleet_runway_figure(_runway_rows([0.0, 0.4, 9.3, 13.9]), 0.8)
    assert short.layout.xaxis.title.text == "runway (months)"
    long = fleet_runway_figure(_runway_rows([2.0, RUNWAY_CAP_MONTHS + 2.5]), 0.8)
    assert f"end at {RUNWAY_CAP_MONTHS:g}" in long.layout.xaxis.title.text
    bars = [x for trace in long.data for x in trace.x]
    assert max(bars) == RUNWAY_CAP_MONTHS and "38.5 months" in [t for trace in long.data for t in trace.text]
    # the title names what the runway runs to, as the load figure's legend does ("planned at 80% CPU")
    assert short.layout.title.text == "Months until the busiest load reaches its planned throughput (80% CPU)"


def test_report_03s_intro_names_only_the_objectives_and_runway_the_plan_has():
    # a catalog of one's own with curves, no baseline and no users today: no latency objective is set and no runway
    # can be computed (the page says "No runway"), but the intro promised "a latency objective" and "the growth runway"
    from capmodel.plan import Objectives
    from capmodel.report.plan_report import plan_report

    def intro(**given):
        return plan_report(catalog=HERE + "catalog_chf.csv", curves=HERE + "curves_chf.csv", vm_column="vm",
                           ops_per_user=0.5, targets=[5000], **given).intro

    bare = intro(objectives=Objectives(utilization_target=0.8))
    assert "latency objective" not in bare and "runway" not in bare
    assert bare.startswith("A capacity plan of the VMs in catalog_chf.csv: the usable throughput of each under a "
                           "utilization target, users per VM,")
    full = intro(objectives=Objectives(utilization_target=0.8, latency_p95_ms=3.0), current_users=5000, growth=0.05)
    assert "under a utilization target and a latency objective" in full and "the growth runway, and the" in full


def test_report_06s_fit_section_mentions_a_plan_only_where_one_follows():
    # every step client-bound: the Fit section said "the plan below uses the USL" above "No plan is shown"
    import capmodel
    from capmodel.report.bench_report import bench_report

    usable = bench_report(capmodel.datasets.load_curve("plgm_workload1"), [], {}, "a server", "ycsb-c", 5.0, 0.8,
                          0.26, 0.95, {})
    assert usable.plan_table() is not None and "the plan below uses the USL" in usable.fit_note
    bound = bench_report(capmodel.read_curve("tests/fixtures/client_bound_sweep/curve.csv"), [], {}, "a server",
                         "ycsb-c", 5.0, 0.8, 0.26, 0.95, {})
    assert bound.plan_table() is None and "No plan is shown" in bound.no_plan
    assert "plan below" not in bound.fit_note and "no plan is drawn from them" in bound.fit_note
    cells = json.loads((NOTEBOOKS / "06_live_benchmark.ipynb").read_text())["cells"]
    assert not [c for c in cells if c["cell_type"] == "markdown" and "plan below" in "".join(c["source"])]


def test_report_02_says_the_band_describes_the_steps_when_the_verdict_is_unusable():
    # every step client-bound: the answer says no saturation can be located, yet "The chosen model, with its
    # confidence band" drew the Amdahl curve and band on to 48 clients with nothing saying what they stand for
    from capmodel.report.fit_report import fit_report

    bound = fit_report(file=HERE + "client_bound_sweep.csv")
    assert bound.evidence.grade == "unusable"
    assert bound.band_note.startswith("The verdict is unusable, so the curve and its band below describe the "
                                      "measured steps, not where the server saturates. Why: every one of the 5 steps")
    assert fit_report().band_note == ""        # plgm_workload1: a usable verdict needs no such note
    cells = json.loads((NOTEBOOKS / "02_fit_curve.ipynb").read_text())["cells"]
    assert any("result.band_caption" in "".join(c["source"]) for c in cells if c["cell_type"] == "code")
    assert bound.band_caption.startswith(bound.band_note + " The 95% band is the throughput's range over")


def test_report_03s_answer_says_where_the_growth_starts():
    # "For 50,000 users (reached in 14.2 months at 5% a month)" did not say from how many users: the baseline's
    # 25,000 (benchANT), or the current_users given. ln(50,000 / 25,000) / ln(1.05) = 14.2 months; from 30,000: 10.5
    import math

    from capmodel.report.plan_report import plan_report

    assert (f"Growing 5% a month from today's 25,000, users reach 50,000 in {math.log(2) / math.log(1.05):.1f} "
            "months." in plan_report(targets=[50_000]).answer)
    answer = plan_report(targets=[50_000], current_users=30_000).answer
    assert (f"Growing 5% a month from today's 30,000, users reach 50,000 in "
            f"{math.log(5 / 3) / math.log(1.05):.1f} months." in answer)


def _fleet_rows(cpu_ms):
    """Fleet rows as fleet_table returns them (the fields reading_table shows), one per CPU-per-operation value."""
    n = len(cpu_ms)
    return pd.DataFrame({
        "cluster": ["rs0"] * n, "member": [f"m{i}:27017" for i in range(n)], "folder": ["x"] * n,
        "hours": [6.0] * n, "busiest_ops": [1000.0] * n, "capacity_ops": [5000.0] * n,
        "method": ["operational laws"] * n,
        "cpu_ms_per_op": cpu_ms, "cores": [8] * n, "spare_fraction": [0.5] * n, "spare_low": [0.5] * n,
        "spare_high": [0.5] * n, "verdict": ["weak"] * n, "runway_months": [12.0] * n, "error": [None] * n,
        "duplicate_of": [None] * n, "evidence": [{"grade": "weak", "reasons": []}] * n})


def test_report_08s_cpu_per_operation_column_spells_each_figure_with_one_precision():
    # the page showed 0.236 above 0.38: one column, one precision (0.380); no sentence of page 08 names a member's CPU
    # per operation, and one that named it would spell it as the column does (``column_figure``)
    from capmodel.formatting import column_figure
    from capmodel.observe.fleet import Fleet

    fleet = Fleet(_fleet_rows([0.236, 0.374, 0.376, 0.38]), workers="local", monthly_growth=0.05)
    shown = fleet.reading_table()
    at = [c.header for c in shown.columns.values()].index("CPU per operation (ms)")
    column = [row[at] for row in shown.cells()]
    assert column == ["0.236", "0.374", "0.376", "0.380"] == [f"{x:.3f}" for x in (0.236, 0.374, 0.376, 0.38)]
    key = list(shown.columns)[at]
    assert column_figure(0.38, [0.236, 0.374, 0.376, 0.38], shown.columns[key]) == "0.380"


def test_a_column_spells_its_figures_with_one_precision():
    from capmodel.formatting import Column, table

    shown = table(pd.DataFrame({"a": [1, 0.5, 3], "b": [2.5, 0.25, 1234.5]}), {"a": "a", "b": "b"}).cells()
    assert [r[0] for r in shown] == ["1.0", "0.5", "3.0"]
    assert [r[1] for r in shown] == ["2.50", "0.25", "1,234.50"]
    p95 = table(pd.DataFrame({"p95": [1.9, 2.0, 2.2, 10.9]}), {"p95": "p95 latency (ms)"}).cells()
    assert [r[0] for r in p95] == ["1.9", "2.0", "2.2", "10.9"]
    # report 01's Little's-law table: 0.170% under 0.532% (the difference column, three significant digits)
    shares = table(pd.DataFrame({"d": [0.00532, 0.0017, 0.8]}), {"d": Column("difference", "percent", digits=3)})
    assert [r[0] for r in shares.cells()] == ["0.532%", "0.170%", "80.000%"]
    # and its sentence names the largest difference as the column shows it
    from capmodel.report.methodology_report import methodology_report

    report = methodology_report()
    worst = report.little["difference"].abs().max()
    at = list(report.little_table().columns).index("difference")
    assert report.little_worst in [row[at] for row in report.little_table().cells()]
    assert report.little_worst == f"{100 * worst:.2f}%"     # 0.56%: two decimals, as 0.53% and 0.30% beside it
    # a column that declares its decimals keeps them (AICc, runway months): its sentences use the same
    fixed = table(pd.DataFrame({"m": [26.0, 19.63]}), {"m": Column("runway (months)", decimals=1)}).cells()
    assert [r[0] for r in fixed] == ["26.0", "19.6"]


def test_report_01s_upto_0_means_what_it_means_in_report_02():
    # -p upto 0 failed inside 01's kernel ("concurrency must be whole numbers >= 1, got [0.0, 1.0]"); in 02 it means
    # 1.5 x the largest measured concurrency
    import capmodel
    from capmodel.report.methodology_report import methodology_report

    largest = float(capmodel.datasets.load_curve("plgm_workload1")["concurrency"].max())
    result = methodology_report(upto=0)
    assert result.upto == 1.5 * largest
    assert float(result.mva["concurrency"].max()) == round(1.5 * largest)


def test_report_08s_runway_axis_says_what_a_never_bar_is_and_draws_no_interval_at_the_cap():
    # growth 0: every bar read "never at this growth" at 36 months, under an axis saying "longer runways end at 36,
    # labelled with their value", each with an interval whisker at the cap
    import math

    from capmodel.plots.fleet import RUNWAY_CAP_MONTHS, fleet_runway_figure

    rows = pd.DataFrame([{"cluster": "rs0", "member": f"m{i}:27017", "folder": f"/f{i}", "error": None,
                          "verdict": "weak", "runway_months": r, "runway_low": r * 0.9, "runway_high": r * 1.1,
                          "spare_fraction": 0.2, "spare_low": 0.1, "spare_high": 0.3}
                         for i, r in enumerate([0.0, math.inf, math.inf])])
    figure = fleet_runway_figure(rows, 0.8)
    title = figure.layout.xaxis.title.text
    assert title == f"runway (months; 'never at this growth' bars end at {RUNWAY_CAP_MONTHS:g})", title
    never = [(x, up, down) for trace in figure.data for x, t, up, down in
             zip(trace.x, trace.text, trace.error_x.array, trace.error_x.arrayminus) if t == "never at this growth"]
    assert never == [(RUNWAY_CAP_MONTHS, 0.0, 0.0)] * 2
    both = fleet_runway_figure(rows.assign(runway_months=[40.0, math.inf, 3.0], runway_low=[39, math.inf, 2.9],
                                     runway_high=[41, math.inf, 3.1]), 0.8).layout.xaxis.title.text
    assert both == (f"runway (months; longer runways end at {RUNWAY_CAP_MONTHS:g}, labelled with their value; "
                    f"'never at this growth' bars end at {RUNWAY_CAP_MONTHS:g})")


def test_report_03s_latency_table_does_not_head_a_met_objective_why_not():
    # on a catalog of one's own with a 20 ms p95 objective every VM met it, and the column beside "yes" was headed
    # "why not" above "p95 = 1.9 x N/X (median over measured points)": how the latency was judged, not a failure
    from capmodel.plan import Objectives
    from capmodel.report.plan_report import plan_report

    here = "tests/fixtures/user_study/"
    result = plan_report(catalog=here + "catalog_chf.csv", curves=here + "curves_chf.csv", vm_column="vm",
                         ops_per_user=0.5, targets=[10000],
                         objectives=Objectives(utilization_target=0.8, latency_p95_ms=20.0))
    shown = result.latency_table()
    headers = [c.header for c in shown.columns.values()]
    met = [row for row in shown.cells() if row[1] == "yes"]
    assert met and "why not" not in headers and "how it was judged" in headers


def test_report_07_on_a_cut_ftdc_file_says_what_was_dropped(tmp_path):
    # a diagnostic.data whose newest file ends inside a document (mongod stopped while writing): observe says so on
    # stderr, but the page said nothing of it
    from pathlib import Path

    from capmodel.report.render import render

    sample = next(Path("data/ftdc_sample/diagnostic.data").glob("metrics.*"))
    cut = tmp_path / "diagnostic.data"
    cut.mkdir()
    data = sample.read_bytes()
    (cut / sample.name).write_bytes(data[: len(data) * 2 // 3])
    runs, _ = render(["07_production_capacity"], tmp_path / "out", {"07_production_capacity": {
        "ftdc": str(cut), "bootstrap": 0}}, jobs=1)
    assert runs[0].error is None, runs[0].error
    page = (tmp_path / "out" / "07_production_capacity.html").read_text()
    assert "truncated FTDC file: it ends inside the document at byte offset" in page


def test_report_05s_unreachable_answer_says_it_once_and_names_the_kappa_of_its_scenarios():
    # sigma 0.5, kappa 1, scenarios 0 read "cannot be reached: unreachable: throughput peaks at 62,500 inserts/s with
    # 1 shard ... Unreachable within 32 shards when σ is 0." (σ = 0 is unreachable only because κ = 1)
    from capmodel.report.shard_report import shard_report

    answer = shard_report(1_000_000, 62_500, 0.5, 1.0, scenarios=[0.0]).details   # the model's words, below
    assert "**cannot be reached**: throughput peaks at 62,500 inserts/s with 1 shard" in answer, answer
    assert "unreachable: " not in answer and answer.endswith("Unreachable within 32 shards when σ is 0 (κ = 1).")
    assert "(κ" not in shard_report(2_000_000, 62_500, 0.0, 0.0, scenarios=[0.05]).details


def test_report_01s_usl_terms_legend_says_when_curves_coincide_and_has_no_exponent():
    # sigma = kappa = 0 drew three legend entries over one visible line; kappa 0.00001 read "kappa = 1e-05"
    from capmodel.plots.methodology import usl_terms_figure

    names = [t.name for t in usl_terms_figure(0.0, 0.0, 1000.0).data]
    assert names == ["linear: lambda*N", "Amdahl: sigma = 0 (on the linear line)",
                     "USL: sigma = 0, kappa = 0 (on the Amdahl line)"]
    names = [t.name for t in usl_terms_figure(0.05, 0.00001, 1000.0).data]
    assert names[1:] == ["Amdahl: sigma = 0.05", "USL: sigma = 0.05, kappa = 0.00001"]


def test_report_06s_no_plan_sentence_does_not_nest_its_reasons_in_parentheses():
    # "No plan is shown: the data cannot support one (every one of the 5 steps was client-bound (the load
    # generator, not the server, set the pace): the curve describes the client)."
    import capmodel
    from capmodel.report.bench_report import bench_report

    bound = bench_report(capmodel.read_curve("tests/fixtures/client_bound_sweep/curve.csv"), [], {}, "a server",
                         "ycsb-c", 5.0, 0.8, 0.26, 0.95, {})
    reason = next(r.message for r in bound.evidence.reasons if r.grade == "unusable")
    assert bound.no_plan == f"No plan is shown, because the data cannot support one: {reason}."


def test_report_01_with_no_latency_target_says_the_peak_alone_bounds_the_clients():
    # -p latency_target_ms 0 failed inside 01's kernel: "PlanError: latency target must be > 0"
    from capmodel.formatting import integer
    from capmodel.report.methodology_report import methodology_report

    result = methodology_report(latency_target_ms=0.0)
    fit = result.fit
    assert (f"- **The knee**: no latency target was given (latency_target_ms = 0), so only the peak bounds the "
            f"clients: at most {integer(fit.recommended_concurrency)} clients ({integer(fit.peak_throughput)} ops/s)."
            in result.details)


def test_report_08s_failed_server_is_labelled_by_whole_folder_names():
    # a server whose files could not be read was labelled "ew3-fleet2/bad/diagnostic.data" (the last 30 characters
    # of /tmp/review3-fleet2/bad/diagnostic.data, cut inside a folder name)
    from capmodel.plots.fleet import fleet_runway_figure

    rows = pd.DataFrame([{"cluster": None, "member": None, "folder": "/tmp/review3-fleet2/bad/diagnostic.data",
                          "error": "not an FTDC file", "verdict": None, "runway_months": None, "runway_low": None,
                          "runway_high": None, "spare_fraction": None, "spare_low": None, "spare_high": None}])
    labels = [y for trace in fleet_runway_figure(rows, 0.8).data for y in trace.y]
    assert labels == ["…/bad/diagnostic.data"]


def test_report_03s_vm_table_says_a_runway_of_0_in_words():
    # the bundled study's baseline VM carries today's 25,000 users: its runway read "0.0" months
    from capmodel.plots.costs import FULL_NOW
    from capmodel.report.plan_report import plan_report

    result = plan_report(targets=[50000])
    shown = result.vm_table()
    column = list(shown.columns).index("runway_months")
    runways = {row[0]: row[column] for row in shown.cells()}
    assert float(result.vms.set_index("vm").loc["m3-xlarge-8-SAS", "runway_months"]) == 0.0
    assert runways["m3-xlarge-8-SAS"] == FULL_NOW and runways["c4-2xlarge-4-SSD"] == "26.0"
