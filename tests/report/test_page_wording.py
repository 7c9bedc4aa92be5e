"""Report pages as an analyst forwards them: a VM name is never broken at its hyphen, a footnote points to the table
that shows why, one state has one name on a page, a verdict in a table says what it rests on, each figure of an
answer is named as its table shows it, and the index of rendered reports counts them in agreeing words and says
which were not rendered and why."""
from __future__ import annotations

import re

import pandas as pd

NOWRAP = re.compile(r'<span style="white-space: nowrap">([^<]*)</span>')


def test_a_sentence_in_a_table_keeps_each_vm_name_it_mentions_on_one_line():
    # report 03 at 640 px: the recommendation's "why" broke "c4-2xlarge-4-SSD," as "c4-" / "2xlarge-4-" / "SSD,"
    from capmodel.report.plan_report import plan_report

    page = plan_report(targets=[50_000, 90_000]).recommendation_table()._repr_html_()
    kept = NOWRAP.findall(page)
    assert "c4-2xlarge-4-SSD," in kept
    for name in ("s3-2xlarge-8-SAS", "c4-2xlarge-4-SSD"):   # a name outside a span is a name a browser may break
        assert not re.search(rf"(?<![>\w-]){re.escape(name)}", NOWRAP.sub("", page)), name


def test_a_long_name_without_spaces_is_a_name_and_keeps_its_cell_on_one_line():
    from capmodel.formatting import Column, Table

    long_name = "Standard_E16ds_v5-premium-ssd-westeurope"          # over 24 characters, no space: a name
    html = Table([{"vm": long_name}, {"vm": "a sentence - with a m5-large in it"}],
                 {"vm": Column("VM", "text")})._repr_html_()
    cells = re.findall(r'<td class="([^"]*)">(.*?)</td>', html)
    assert cells[0][0] == "text keep"
    assert cells[1][0] == "text" and NOWRAP.findall(cells[1][1]) == ["m5-large"]


def test_the_headline_keeps_vm_names_whole():
    from capmodel.report.headline import headline

    block = headline("Which VM?", "For **50,000 users**: s3-2xlarge-8-SAS at 1,180 EUR/month.",
                     {"grade": "weak", "reasons": [{"code": "x", "grade": "weak",
                                                    "message": "c4-2xlarge-4-SSD: no utilization was measured",
                                                    "value": None}]})._repr_html_()
    assert {"s3-2xlarge-8-SAS", "c4-2xlarge-4-SSD:"} <= set(NOWRAP.findall(block))
    assert 'class="capmodel-headline graded-weak"' in block   # the tags themselves untouched


def test_report_03s_vm_table_note_points_to_the_latency_table_and_plans_note_does_not():
    # the footnote lost "(see the latency table)" when it took planner.none_note; plan prints no latency table
    from capmodel.report.plan_report import plan_report

    result = plan_report(targets=[50_000])
    assert result.vm_table().footnotes == [
        '"none": the VM fails an objective (see the latency table), so it carries no users']
    assert result.study.plan.vm_table().footnotes[0] == '"none": the VM fails an objective, so it carries no users'


def test_a_note_points_to_the_latency_table_only_when_a_vm_failed_the_latency_objective():
    from capmodel.plan.planner import none_note

    assert none_note(["utilization", "latency"], [False, True], see="the latency table") == [
        '"none": the VM fails an objective (see the latency table), so it carries no users']
    assert none_note(["utilization", "unsupported"], [False, True], see="the latency table")[0].startswith(
        '"none": the VM\'s curve supports no capacity')
    assert none_note(["utilization"], [False], see="the latency table") == []


def test_report_03s_runway_of_0_has_the_words_of_its_bar():
    # the table said "past the target now" beside a bar labelled "full now"; on 03 "target" is a user count
    from capmodel.plots.costs import FULL_NOW, runway_figure
    from capmodel.report.plan_report import plan_report

    result = plan_report(targets=[50_000])
    shown = result.vm_table()
    column = list(shown.columns).index("runway_months")
    table_words = {row[0]: row[column] for row in shown.cells()}
    labels = {a.x: a.text for a in runway_figure(result.vms).layout.annotations}
    assert table_words["m3-xlarge-8-SAS"] == FULL_NOW == labels["m3-xlarge-8-SAS"]


def test_every_latency_verdict_says_what_it_rests_on():
    # 'yes' stood beside an empty "how it was judged" for four of the six VMs
    from capmodel.report.plan_report import plan_report

    cells = plan_report(targets=[50_000]).latency_table().cells()
    judged = {row[0]: (row[1], row[2]) for row in cells}
    assert all(how for _, how in judged.values()), judged
    assert judged["m3-xlarge-8-SAS"] == ("yes", "the baseline VM itself")
    assert judged["s3-2xlarge-8-SAS"] == ("yes", "read and update latency reported lower than the baseline")
    assert judged["c4-xlarge-4-SAS"] == ("no", "update latency reported worse than the baseline")


def test_a_pass_on_mixed_words_names_each():
    from capmodel.plan.capacity import Objectives
    from capmodel.plan.latency import point_meets_latency

    row = pd.Series({"read_latency_vs_baseline": "similar", "update_latency_vs_baseline": "lower"})
    ok, how = point_meets_latency(row, Objectives(latency_increase=0.05), None)
    assert ok is True and how == "update latency reported lower than the baseline; read latency reported similar " \
                                 "to the baseline"


def _bundled_production():
    from capmodel.observe import bundled_sample, observe_ftdc
    from capmodel.plan.production import production_answer

    sample = bundled_sample()
    observation = observe_ftdc(sample["path"], sample["since"], sample["until"])
    return production_answer(observation.samples, observation.curve, latency_target_ms=5.0, monthly_growth=0.05,
                             n_bootstrap=50, source="the bundled FTDC sample")


def test_report_07s_answer_names_each_figure_as_its_table_shows_it():
    # the page said "0.0032 cores of background CPU" over a table's 0.00317, and "17% above ... (spare -19% to -15%)"
    # over -17.0 / -19.1 / -15.0
    result = _bundled_production()
    text = result.describe()
    rows = {r[0]: r for r in result.capacity_table().cells()}
    background = rows["background CPU"][2]
    assert f"on top of {background} cores of background CPU" in text
    spare, low, high = rows["spare fraction"][2:5]
    above = spare.removeprefix("-") if spare.startswith("-") else None
    if above is not None:
        assert f"already **{above}% above**" in text
    else:
        assert f"**{spare}%** of the planned throughput is spare" in text
    if low != "—" and above is not None and high.startswith("-"):   # all of it above: said in the sentence's sense
        assert f"({high.removeprefix('-')}% to {low.removeprefix('-')}% above)" in text
    elif low != "—":
        assert f"{low}% to {high}%" in text
    assert rows["CPU per operation (service demand)"][2] in text


def test_report_02s_answer_names_each_parameter_as_its_table_shows_it():
    # the table showed sigma 0.09474 (four digits) beside the answer's 0.0947; a sigma of 0.125 read 0.1250 there
    from capmodel.report.fit_report import fit_report

    result = fit_report()
    rows = {r[0].split(" ")[0]: r for r in result.parameter_table().cells()}
    for symbol, (name, estimate, low, high, *rest) in rows.items():
        assert f"{symbol} = {estimate} ({low} to {high})" in result.details, (symbol, estimate, result.details)


def test_report_08s_answer_names_the_spare_fraction_as_the_fleet_table_does():
    # the answer said "3% above its planned throughput" over the table's -3.3%
    from capmodel.observe.fleet import Fleet

    rows = pd.DataFrame({
        "cluster": ["rs0", "rs0"], "member": ["a:27017", "b:27017"], "folder": ["x", "y"], "hours": [6.0, 6.0],
        "busiest_ops": [28_058.0, 18_694.0], "capacity_ops": [33_949.0, 33_895.0], "method": ["operational laws"] * 2,
        "cpu_ms_per_op": [0.236, 0.236], "cores": [8, 8], "spare_fraction": [-0.0331, 0.31],
        "spare_low": [-0.0331, 0.31], "spare_high": [-0.0331, 0.31], "verdict": ["weak", "weak"],
        "runway_months": [0.0, 7.6], "error": [None, None], "duplicate_of": [None, None],
        "evidence": [{"grade": "weak", "reasons": []}] * 2})
    fleet = Fleet(rows, workers="local", monthly_growth=0.05)
    table = fleet.reading_table()
    header = [c.header for c in table.columns.values()]
    spare_column = next(i for i, h in enumerate(header) if h.startswith("spare"))
    shown = table.cells()[0][spare_column]
    assert shown == "-3.3%" and "past its utilization target now, 3.3% above its planned throughput" in \
        fleet.describe()


def test_a_parameter_left_at_its_not_given_value_says_what_that_means_on_the_page():
    # report 03 read "latency_p95_ms = 0 (default)": forwarded, that is a 0 ms target; the notebook's comment says 0
    # means relative to the baseline
    from pathlib import Path

    from capmodel.report.headline import headline
    from capmodel.report.params import not_given_meanings, notebook_parameters

    notebook = Path(__file__).resolve().parents[2] / "notebooks" / "03_vm_capacity_plan.ipynb"
    meanings = not_given_meanings(notebook)
    assert meanings["latency_p95_ms"] == "0 means relative to the baseline"
    assert meanings["catalog"] == '"" means the bundled benchANT study'
    context = {"defaults": notebook_parameters(notebook), "given": {"growth": 0.1}, "meanings": meanings}
    block = headline("Q?", "A.")
    block.provenance = __import__("capmodel.report.headline", fromlist=["provenance"]).provenance(context=context)
    page = block._repr_html_()
    assert "<code>latency_p95_ms</code> = 0 (default; 0 means relative to the baseline)" in page
    assert "<code>sliders</code> = true (default)" in page          # a flag's False/True is no "not given"
    assert "<code>utilization_target</code> = 0.8 (default)" in page


def test_report_07s_table_gives_no_background_figure_the_fit_could_not_measure(tmp_path):
    # a member's even load: the verdict said "the load varied too little to separate background CPU from CPU per
    # operation" over a table reading "background CPU 0 cores", a measured-looking 0
    from capmodel.observe import observe_ftdc
    from capmodel.observe.synthetic import fleet_servers, write_server
    from capmodel.plan.production import NOT_SEPARATED, production_answer

    server = fleet_servers(clusters=1, members=1, hours=0.5, seed=3)[0]
    observation = observe_ftdc(write_server(server, tmp_path / "diagnostic.data"))
    answer = production_answer(observation.samples, observation.curve, n_bootstrap=20)
    assert "background_not_separable" in {r.code for r in answer.capacity.evidence.reasons}   # an even load
    made = answer.capacity_table()
    rows = {r[0]: r for r in made.cells()}
    assert rows["background CPU"][2] == NOT_SEPARATED
    assert any(n.startswith(f"{NOT_SEPARATED}:") for n in made.footnotes)


def test_a_spare_past_the_plan_gives_its_interval_in_the_same_sense():
    """'already 17% above its planned throughput (15% to 19% above)': the interval of the figure the sentence names,
    not of the spare fraction's negative ('(spare -19% to -15%)' beside '17% above' read as two conventions); where
    the interval reaches the plan, the spare's own range, which says so."""
    from types import SimpleNamespace

    from capmodel.models.estimate import Estimate
    from capmodel.observe.members import spare_phrase

    above = SimpleNamespace(spare_fraction=Estimate(-0.17, -0.19, -0.15))
    assert spare_phrase(above) == "already 17% above its planned throughput (15% to 19% above)"
    reaching = SimpleNamespace(spare_fraction=Estimate(-0.05, -0.12, 0.03))
    assert spare_phrase(reaching) == "already 5% above its planned throughput (spare -12% to 3%)"
    spare = SimpleNamespace(spare_fraction=Estimate(0.12, 0.09, 0.15))
    assert spare_phrase(spare) == "12% of its planned throughput spare (9% to 15%)"


def test_the_index_counts_its_reports_in_words(tmp_path):
    import nbformat

    from capmodel.report.index import write_index

    assert "<p>0 reports;" in write_index(tmp_path).read_text()
    nb = nbformat.v4.new_notebook()
    nb.metadata["capmodel"] = {"report": {"name": "01_x", "question": "Q?", "status": "ok"}}
    nbformat.write(nb, tmp_path / "01_x.ipynb")
    text = write_index(tmp_path).read_text()
    assert "<p>1 report;" in text and "report(s)" not in text


def _rendered(folder, name):
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["capmodel"] = {"report": {"name": name, "question": "Q?", "status": "ok"}}
    nbformat.write(nb, folder / f"{name}.ipynb")


def test_a_partial_index_says_what_was_and_was_not_rendered(tmp_path):
    """Issue 29: a folder with 03 alone said "Not rendered: 06_live_benchmark" while six others were not rendered
    either. It names what it holds, the reports it lacks, and the live one with how to render it."""
    from capmodel.report import notebooks
    from capmodel.report.index import write_index

    names = notebooks.names()
    live = [name for name in names if notebooks.is_live(name)]
    assert live == ["06_live_benchmark"]
    _rendered(tmp_path, "03_vm_capacity_plan")
    text = write_index(tmp_path).read_text()
    others = ", ".join(n for n in names if n not in ("03_vm_capacity_plan", "06_live_benchmark"))
    assert "Rendered here: 03_vm_capacity_plan." in text
    assert f"Not rendered: {others} (<code>capmodel report NAME</code> or <code>--all</code> renders them)." in text
    assert "Not rendered either: 06_live_benchmark, which benchmarks a live server" in text
    for name in names:          # `report --all`: every report but the live benchmark
        if name not in live:
            _rendered(tmp_path, name)
    text = write_index(tmp_path).read_text()
    assert "Not rendered: 06_live_benchmark, which benchmarks a live server" in text and "either" not in text
    _rendered(tmp_path, "06_live_benchmark")
    assert "Not rendered" not in write_index(tmp_path).read_text()
