"""Report pages read as an analyst forwards them (a review of the rendered pages, session words4): a VM name is never
broken at its hyphen, a footnote points to the table that shows why, one state has one name on a page, and a
verdict in a table says what it rests on."""
from __future__ import annotations

import re

import pandas as pd

NOWRAP = re.compile(r'<span style="white-space: nowrap">([^<]*)</span>')


def test_a_sentence_in_a_table_keeps_each_vm_name_it_mentions_on_one_line():
    # report 03 at 640 px: the recommendation's "why" broke "c4-2xlarge-4-SSD," as "c4-" / "2xlarge-4-" / "SSD,"
    from capmodel.report.plan_report import plan_report

    page = plan_report(targets=[50_000, 90_000], bootstrap=0).recommendation_table()._repr_html_()
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
    assert 'class="capmodel-headline"' in block   # the tags themselves untouched


def test_report_03s_vm_table_note_points_to_the_latency_table_and_plans_note_does_not():
    # the footnote lost "(see the latency table)" when it took planner.none_note; plan prints no latency table
    from capmodel.report.plan_report import plan_report

    result = plan_report(targets=[50_000], bootstrap=0)
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

    result = plan_report(targets=[50_000], bootstrap=0)
    shown = result.vm_table()
    column = list(shown.columns).index("runway_months")
    table_words = {row[0]: row[column] for row in shown.cells()}
    labels = {a.x: a.text for a in runway_figure(result.vms).layout.annotations}
    assert table_words["m3-xlarge-8-SAS"] == FULL_NOW == labels["m3-xlarge-8-SAS"]


def test_every_latency_verdict_says_what_it_rests_on():
    # 'yes' stood beside an empty "how it was judged" for four of the six VMs
    from capmodel.report.plan_report import plan_report

    cells = plan_report(targets=[50_000], bootstrap=0).latency_table().cells()
    judged = {row[0]: (row[1], row[2]) for row in cells}
    assert all(how for _, how in judged.values()), judged
    assert judged["m3-xlarge-8-SAS"] == ("yes", "the baseline VM itself")
    assert judged["s3-2xlarge-8-SAS"] == ("yes", "read and update latency reported lower than the baseline")
    assert judged["c4-xlarge-4-SAS"] == ("no", "update latency reported worse than the baseline")


def test_a_pass_on_mixed_words_names_each():
    from capmodel.plan.latency import point_meets_latency
    from capmodel.plan.capacity import Objectives

    row = pd.Series({"read_latency_vs_baseline": "similar", "update_latency_vs_baseline": "lower"})
    ok, how = point_meets_latency(row, Objectives(latency_increase=0.05), None)
    assert ok is True and how == "update latency reported lower than the baseline; read latency reported similar " \
                                 "to the baseline"
