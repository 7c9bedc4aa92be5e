"""A third review of the pages as an analyst reads them: a column of figures printed under one precision rule, and
sentences that claim only what the page shows."""
from __future__ import annotations

import pandas as pd


def _fleet_rows(cpu_ms):
    """Fleet rows as fleet_table returns them (the fields reading_table shows), one per CPU-per-operation value."""
    n = len(cpu_ms)
    return pd.DataFrame({
        "cluster": ["rs0"] * n, "member": [f"m{i}:27017" for i in range(n)], "folder": ["x"] * n,
        "hours": [6.0] * n, "busiest_ops": [1000.0] * n, "capacity_ops": [5000.0] * n, "method": ["operational laws"] * n,
        "cpu_ms_per_op": cpu_ms, "cores": [8] * n, "spare_fraction": [0.5] * n, "spare_low": [0.5] * n,
        "spare_high": [0.5] * n, "verdict": ["weak"] * n, "runway_months": [12.0] * n, "error": [None] * n,
        "duplicate_of": [None] * n, "evidence": [{"grade": "weak", "reasons": []}] * n})


def test_report_08s_cpu_per_operation_column_spells_each_figure_as_a_sentence_does():
    # the page showed 0.236 above 0.38, then 0.380 (a column's trailing zeros) where a sentence would say 0.38: one
    # figure, one spelling on a page (formatting's note on precision; session words4 chose the trimmed column)
    from capmodel.formatting import number
    from capmodel.observe.fleet import Fleet

    fleet = Fleet(_fleet_rows([0.236, 0.374, 0.376, 0.38]), workers="local", monthly_growth=0.05)
    shown = fleet.reading_table()
    at = [c.header for c in shown.columns.values()].index("CPU per operation (ms)")
    column = [row[at] for row in shown.cells()]
    assert column == ["0.236", "0.374", "0.376", "0.38"] == [number(x) for x in (0.236, 0.374, 0.376, 0.38)]


def test_a_column_spells_every_figure_as_number_does():
    from capmodel.formatting import Column, number, percent, table

    shown = table(pd.DataFrame({"a": [1, 0.5, 3], "b": [2.5, 0.25, 1234.5]}), {"a": "a", "b": "b"}).cells()
    assert [r[0] for r in shown] == ["1", "0.5", "3"]
    assert [r[1] for r in shown] == ["2.5", "0.25", "1,234"] == [number(x) for x in (2.5, 0.25, 1234.5)]
    p95 = table(pd.DataFrame({"p95": [1.9, 2.0, 2.2, 10.9]}), {"p95": "p95 latency (ms)"}).cells()
    assert [r[0] for r in p95] == ["1.9", "2", "2.2", "10.9"]
    # report 01's Little's-law table: 0.17% under 0.532% (the difference column, three significant digits)
    shares = table(pd.DataFrame({"d": [0.00532, 0.0017, 0.8]}), {"d": Column("difference", "percent", digits=3)})
    assert [r[0] for r in shares.cells()] == ["0.532%", "0.17%", "80%"] == [percent(x, 3) for x in (0.00532, 0.0017,
                                                                                                    0.8)]
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
                         ops_per_user=0.5, targets=[10000], objectives=Objectives(utilization_target=0.8, latency_p95_ms=20.0))
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

    answer = shard_report(1_000_000, 62_500, 0.5, 1.0, scenarios=[0.0]).answer
    assert "**cannot be reached**: throughput peaks at 62,500 inserts/s with 1 shard" in answer, answer
    assert "unreachable: " not in answer and answer.endswith("Unreachable within 32 shards when σ is 0 (κ = 1).")
    assert "(κ" not in shard_report(2_000_000, 62_500, 0.0, 0.0, scenarios=[0.05]).answer


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
            in result.answer)


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


def test_the_index_names_the_live_reports_it_does_not_hold(tmp_path):
    # `report --all` renders every report but the live benchmark; the index said "7 reports" and nothing of 06
    import nbformat

    from capmodel.report import notebooks
    from capmodel.report.index import write_index

    live = [name for name in notebooks.names() if notebooks.is_live(name)]
    assert live == ["06_live_benchmark"]
    assert "Not rendered: 06_live_benchmark, which benchmarks a live server" in write_index(tmp_path).read_text()
    nb = nbformat.v4.new_notebook()
    nb.metadata["capmodel"] = {"report": {"name": "06_live_benchmark", "question": "Q?", "status": "ok"}}
    nbformat.write(nb, tmp_path / "06_live_benchmark.ipynb")
    assert "Not rendered" not in write_index(tmp_path).read_text()
