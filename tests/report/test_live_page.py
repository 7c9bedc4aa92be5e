"""The live what-if of the report notebooks (``capmodel.report.live.LivePage``): one panel of controls, every section
drawn from one result and drawn again in place when a control moves; on a rendered report, no panel and each
section shown once, computed from the parameters exactly as given."""
import pytest

from capmodel.plan.shards import plan_shard_study
from capmodel.report import live
from capmodel.report.live import LivePage, slider


def shards_for(target_rate, sigma):
    """The smallest shard count whose USL throughput (62,500 inserts/s a shard, κ = 0) reaches the target."""
    return next(s for s in range(1, 33) if 62_500 * s / (1 + sigma * (s - 1)) >= target_rate)


def plan(target_rate, sigma):
    return plan_shard_study([target_rate], per_shard_throughput=62_500, sigma=sigma, kappa=0.0)


def shards_of(area) -> int:
    return int(area.outputs[0]["data"]["text/plain"])


def test_moving_a_control_redraws_every_section_from_one_new_result(monkeypatch):
    monkeypatch.setattr("capmodel.report.headline.kernel_context", lambda: {})   # JupyterLab, not a render
    page = LivePage(plan, True, target_rate=slider(1e6, 1e5, 3e6, 5e4, "rate"), sigma=slider(0.0, 0.0, 0.1, 0.001, "σ"))
    page.panel()
    page.section(lambda study: repr(study.rows[0]["shards"]))
    page.section(lambda study: [study.rows[0]["target_rate"], study.describe()])
    shards, words = (area for _, area in page._sections)
    assert shards_of(shards) == shards_for(1e6, 0.0) == 16
    page._widgets["sigma"].value = 0.02          # what a reader's drag does
    assert page.values == {"target_rate": 1e6, "sigma": 0.02}
    assert shards_of(shards) == shards_for(1e6, 0.02)
    assert f"**{shards_for(1e6, 0.02)} shards**" in words.outputs[1]["data"]["text/plain"]
    page._widgets["target_rate"].value = 1.2e6
    assert shards_of(shards) == shards_for(1.2e6, 0.02)
    assert float(words.outputs[0]["data"]["text/plain"]) == 1.2e6


def test_a_rendered_report_has_no_panel_and_computes_from_the_parameters_as_given(monkeypatch, capsys):
    monkeypatch.setattr("capmodel.report.headline.kernel_context", lambda: {"name": "05_shard_scale_out"})
    seen = []
    page = LivePage(lambda kappa: seen.append(kappa) or kappa, True, kappa=slider(0.0005, -6, -1, 0.1, "κ", log=True))
    assert not page.live and seen == [0.0005]        # not 10 ** -3.3 = 0.000501, where a log slider's step lands
    page.panel()
    assert capsys.readouterr().out == ""
    page.section(lambda kappa: [kappa, kappa * 2])      # displayed at once, as a cell's own outputs
    assert capsys.readouterr().out.split() == ["0.0005", "0.001"]
    assert not page._widgets and not page._sections   # no slider made, nothing to redraw


@pytest.mark.parametrize("live_param", [False, True])
def test_the_sliders_parameter_turns_the_panel_off(monkeypatch, live_param):
    monkeypatch.setattr("capmodel.report.headline.kernel_context", lambda: {})
    page = LivePage(lambda sigma: sigma, live_param, sigma=slider(0.01, 0.0, 0.1, 0.001, "σ"))
    assert page.live is live_param


def test_a_slider_s_range_holds_its_value():
    wide = slider(5.0, 0.0, 1.0, 0.1, "wide").widget()
    assert (wide.min, wide.max, wide.value) == (0.0, 5.0, 5.0)
    low = slider(1e-7, -6, -1, 0.1, "κ", log=True).widget()
    assert low.min == pytest.approx(-7) and low.value == pytest.approx(1e-7)


def test_items_of_a_section_become_display_data():
    bundle = live._bundle("**bold**")
    assert bundle["text/markdown"] == "**bold**"
    import plotly.graph_objects as go

    figure = live._bundle(go.Figure(go.Bar(x=[1], y=[2]), layout={"title": "t"}))
    assert figure["application/vnd.plotly.v1+json"]["data"][0]["y"] == [2]


def test_a_control_not_moved_keeps_its_parameter_and_a_derived_one_starts_at_its_figure(monkeypatch):
    monkeypatch.setattr("capmodel.report.headline.kernel_context", lambda: {})
    calls = []
    page = LivePage(lambda sigma, kappa, load: calls.append((sigma, kappa, load)), True,
                    sigma=slider(0.01, 0.0, 0.1, 0.001, "σ"), kappa=slider(0.0005, -6, -1, 0.1, "κ", log=True),
                    load=slider(0.0, 0.05, 2.0, 0.01, "ops/s per user", shown=lambda result: 0.26))
    page.panel()
    assert page._widgets["load"].value == 0.26 and page._widgets["kappa"].value != 0.0005   # 10 ** -3.3 on its grid
    page._widgets["sigma"].value = 0.02
    assert calls == [(0.01, 0.0005, 0.0), (0.02, 0.0005, 0.0)]   # κ as given, the load still derived (0)
    page._widgets["load"].value = 0.5
    assert calls[-1] == (0.02, 0.0005, 0.5)
