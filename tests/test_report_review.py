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
