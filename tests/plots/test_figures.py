"""Figures draw exactly the numbers of their tables and fits, and display offline in reports."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.io as pio
import pytest

from capmodel import datasets
from capmodel.models.usl.fit import fit_usl
from capmodel.plots import setup_notebook
from capmodel.plots.render import figure_bundle
from capmodel.plots.costs import bar_figure, pareto_figure, runway_figure
from capmodel.plots.curves import latency_figure, throughput_figure
from capmodel.plots.methodology import usl_terms_figure
from capmodel.plots.tables import grouped_bars_figure, lines_figure


@pytest.fixture(scope="module")
def curve():
    return datasets.load_curve("plgm_workload3")


@pytest.fixture(scope="module")
def fit(curve):
    return fit_usl(curve)


def _trace(fig, name):
    return next(t for t in fig.data if t.name == name)


def test_throughput_figure_draws_the_points_the_fit_and_its_band(curve, fit):
    fig = throughput_figure(curve, {"USL": fit}, level=0.9)
    points = _trace(fig, "measured")
    assert list(points.x) == list(curve["concurrency"]) and list(points.y) == list(curve["throughput"])
    line = _trace(fig, "USL")
    n = np.asarray(line.x)
    assert n[0] == 1 and n[-1] == curve["concurrency"].max()
    # the line is the USL formula with the fitted parameters, computed here
    expected = fit.lambda_ * n / (1 + fit.sigma * (n - 1) + fit.kappa * n * (n - 1))
    np.testing.assert_allclose(line.y, expected, rtol=1e-12)
    band = _trace(fig, "USL 90% band")
    table = fit.predict(n, level=0.9)
    np.testing.assert_allclose(band.y, np.concatenate([table["high"], table["low"][::-1]]))
    assert all(h >= m >= lo for h, m, lo in zip(table["high"], expected, table["low"]))


def test_peak_is_marked_where_the_usl_peaks(fit, curve):
    fig = throughput_figure(curve, fit, level=None)
    peak = _trace(fig, "USL peak")
    # the USL peak N* = sqrt((1 - sigma) / kappa) (N. J. Gunther, Guerrilla Capacity Planning, Springer 2007)
    assert peak.x[0] == pytest.approx(np.sqrt((1 - fit.sigma) / fit.kappa))


def test_latency_figure_uses_littles_law_in_milliseconds(curve, fit):
    fig = latency_figure(curve, {"USL": fit}, target_ms=20)
    line = _trace(fig, "USL model mean: N/X(N) (Little's law)")
    n = np.asarray(line.x)
    x = fit.lambda_ * n / (1 + fit.sigma * (n - 1) + fit.kappa * n * (n - 1))
    np.testing.assert_allclose(line.y, n / x * 1000)
    assert list(_trace(fig, "measured mean").y) == list(curve["latency_mean_ms"])
    assert fig.layout.shapes[0].y0 == 20


def test_latency_figure_compares_mean_with_mean_when_only_percentiles_were_measured(curve, fit):
    only_p95 = curve[["concurrency", "throughput", "latency_p99_ms"]].rename(columns={"latency_p99_ms": "latency_p95_ms"})
    fig = latency_figure(only_p95, {"USL": fit})
    # derived, not measured: the legend says so (it read "measured mean from N/X")
    derived = _trace(fig, "mean derived from N and X by Little's law, not measured")
    # Little's law for a closed system without think time: R = N / X (in ms here)
    np.testing.assert_allclose(derived.y, only_p95["concurrency"] / only_p95["throughput"] * 1000)
    assert not any(t.name.startswith("measured mean") for t in fig.data)
    # with think time Z the mean response time is N/X - Z, as the model lines draw it
    thinking = _trace(latency_figure(only_p95, {"USL": fit}, think_time_s=0.001), derived.name)
    np.testing.assert_allclose(thinking.y, (only_p95["concurrency"] / only_p95["throughput"] - 0.001) * 1000)
    p95 = _trace(fig, "measured p95 (percentile, not modelled)")
    assert p95.mode == "markers" and list(p95.y) == list(only_p95["latency_p95_ms"])


def test_usl_terms_figure_shows_linear_amdahl_and_usl():
    fig = usl_terms_figure(0.1, 0.01, 100.0, upto=10)
    linear, amdahl, usl = fig.data
    np.testing.assert_allclose(linear.y, 100.0 * np.asarray(linear.x))
    n = np.asarray(amdahl.x)
    np.testing.assert_allclose(amdahl.y, 100 * n / (1 + 0.1 * (n - 1)))
    np.testing.assert_allclose(usl.y, 100 * n / (1 + 0.1 * (n - 1) + 0.01 * n * (n - 1)))


def test_bars_carry_intervals_and_highlights():
    table = pd.DataFrame({"vm": ["a", "b"], "users": [10.0, 20.0], "users_low": [8.0, 15.0],
                          "users_high": [11.0, 20.0]})
    others, chosen = bar_figure(table, "users", highlight="b").data
    assert list(others.x) == ["a"] and list(others.y) == [10.0] and list(chosen.y) == [20.0]
    assert list(others.error_y.array) == [1.0] and list(others.error_y.arrayminus) == [2.0]
    assert list(chosen.error_y.array) == [0.0] and list(chosen.error_y.arrayminus) == [5.0]
    assert others.marker.color != chosen.marker.color and chosen.name == "recommended"
    assert others.textposition == "inside"  # labels at the bar's foot, never under an error bar


def test_a_bar_without_a_value_is_labelled_not_left_out():
    table = pd.DataFrame({"vm": ["a", "b"], "users": [10.0, float("nan")]})
    fig = bar_figure(table, "users", missing_text="fails an objective")
    assert list(fig.layout.xaxis.categoryarray) == ["a", "b"]
    assert [(a.x, a.text) for a in fig.layout.annotations] == [("b", "fails an objective")]
    bars = grouped_bars_figure(pd.DataFrame({"w": ["A", "D"], "usl": [40.0, float("nan")]}), "w", {"usl": "USL"})
    assert [(a.x, a.text) for a in bars.layout.annotations] == [("D", "USL: unreachable")]


def test_levels_cross_the_whole_plot_each_with_its_label():
    """``lines`` are drawn across the plot's whole width (paper coordinates), one per level, labelled at their left
    end; the bars are unchanged."""
    table = pd.DataFrame({"vm": ["a", "b"], "users": [10.0, 20.0]})
    fig = bar_figure(table, "users", lines={"target: 15 users": 15.0, "target: 30 users": 30.0})
    assert [(s.xref, s.x0, s.x1, s.y0, s.y1) for s in fig.layout.shapes] == [("x domain", 0, 1, 15.0, 15.0),
                                                                          ("x domain", 0, 1, 30.0, 30.0)]
    assert sorted((a.text, a.y) for a in fig.layout.annotations) == [("target: 15 users", 15.0),
                                                                     ("target: 30 users", 30.0)]
    assert [list(t.y) for t in fig.data] == [[10.0, 20.0]]


def test_pareto_figure_joins_only_the_flagged_rows():
    table = pd.DataFrame({"vm": ["a", "b", "c"], "monthly_cost": [3.0, 1.0, 2.0], "users": [30.0, 10.0, 5.0],
                          "pareto": [True, True, False]})
    fig = pareto_figure(table, performance="users")
    front = _trace(fig, "Pareto front")
    assert list(front.x) == [1.0, 3.0] and list(front.y) == [10.0, 30.0]
    assert list(_trace(fig, "VMs").text) == ["a", "b", "c"]


def test_runway_marks_when_each_target_is_reached():
    vms = pd.DataFrame({"vm": ["a", "b"], "runway_months": [3.0, 12.0]})
    recs = pd.DataFrame({"target_users": [50000.0], "months_until_target": [7.5]})
    fig = runway_figure(vms, recs)
    assert list(fig.data[0].y) == [3.0, 12.0] and fig.layout.yaxis.title.text == "runway (months)"
    assert fig.layout.shapes[0].y0 == 7.5 and "50,000 users in 7.5 months" in fig.layout.annotations[0].text


def test_table_figures_draw_each_column():
    table = pd.DataFrame({"shards": [1, 2], "a": [1.0, 2.0], "b": [1.0, 1.5], "b_low": [0.5, 1.0],
                          "b_high": [1.5, 2.0]})
    lines = lines_figure(table, "shards", ["a", "b"], level=1.8)
    assert [t.name for t in lines.data] == ["a", "b"] and list(lines.data[1].y) == [1.0, 1.5]
    bars = grouped_bars_figure(table, "shards", {"a": "A", "b": "B"})
    assert [t.name for t in bars.data] == ["A", "B"] and list(bars.data[1].error_y.arrayminus) == [0.5, 0.5]


def test_notebook_bundle_gives_jupyterlab_and_offline_html_without_the_library():
    fig = usl_terms_figure(0.1, 0.01, 100.0, upto=10)
    bundle = figure_bundle(fig)
    assert bundle["application/vnd.plotly.v1+json"]["data"][0]["type"] == "scatter"
    assert bundle["text/plain"] == "<plotly figure: The three terms of the Universal Scalability Law>"
    page = bundle["text/html"]
    assert "Plotly.newPlot" in page and "<script src" not in page and "cdn" not in page.lower()
    assert len(page) < 100_000   # the figure only: plotly.js itself comes once per report page


def test_setup_notebook_makes_ipython_publish_the_bundle():
    from IPython.core.displaypub import CapturingDisplayPublisher
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.display import display

    shell = InteractiveShell.instance()
    shell.display_pub = CapturingDisplayPublisher()
    try:
        setup_notebook()
        display(usl_terms_figure(0.1, 0.01, 100.0, upto=10))
        (published,) = shell.display_pub.outputs
        assert set(published["data"]) == {"application/vnd.plotly.v1+json", "text/html", "text/plain"}
        assert published["data"]["text/plain"].startswith("<plotly figure:")
    finally:
        InteractiveShell.clear_instance()
        pio.templates.default = "plotly"


def test_the_nose_figure_draws_and_names_a_nose_only_when_the_fit_has_one():
    # report 07 on a server whose USL fit has no coherency term named a retrograde branch and a peak it did not draw
    import math

    from capmodel.models.usl.latency_form import LatencyFit
    from capmodel.plots.nose import NO_NOSE, nose_figure

    x = np.array([1000.0, 2000.0, 3000.0])
    points = pd.DataFrame({"throughput": x, "latency_mean_ms": [1.0, 1.2, 1.6]})
    flat = nose_figure(points, LatencyFit(points, x, x * 0 + 0.001, [0.05, 0.0, 1000.0]))
    assert [t.name for t in flat.data] == ["observed intervals", NO_NOSE]
    line = flat.data[1]
    # one branch, R = (1 - sigma) / (lambda - sigma X), finite up to the ceiling lambda / sigma = 20,000 ops/s
    assert max(line.x) < 20_000 and all(math.isfinite(v) for v in line.y)
    np.testing.assert_allclose(line.y, 0.95 / (1000.0 - 0.05 * np.asarray(line.x)) * 1000.0, rtol=1e-9)
    nosed = nose_figure(points, LatencyFit(points, x, x * 0 + 0.001, [0.05, 0.0001, 1000.0]))
    assert [t.name for t in nosed.data] == ["observed intervals", "USL R(X), normal branch",
                                            "USL R(X), retrograde branch", "peak (nose)"]
