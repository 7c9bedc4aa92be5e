"""What a reader of the rendered reports saw that contradicted the page's own evidence (a review of the pages at
1280 px): each test states the figure the page must show, computed here or taken from the source study."""
from __future__ import annotations

import math

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
