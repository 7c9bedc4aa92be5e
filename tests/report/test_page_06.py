"""Report 06 reads as one statement: the best measured rate, the fitted peak (or ceiling) the plan is read off with
its one interval, and the plan, in the headline, the plan table and the verdict alike; a plan read off a fitted
figure below the best measured rate says why.

The sweeps are written here (tests/support/bench_folders.py), so the page renders without a live server.
"""
from __future__ import annotations

import base64
import html
import io
import re

import nbformat
import numpy as np
import pandas as pd
import pytest

from tests.support.bench_folders import BELOW_BEST, below_best_folder
from capmodel.formatting import number
from capmodel.report.bench_report import bench_report, read_bench_folder
from capmodel.report.headline import MIME


def _report(curve, steps=(), run=None):
    return bench_report(curve, list(steps), run or {}, server_name="a server", workload="`ycsb-b`",
                        latency_target_ms=5.0, peak_fraction=0.8, ops_per_user=0.26, level=0.95, inputs={})


@pytest.fixture(scope="module")
def below(tmp_path_factory):
    folder = below_best_folder(tmp_path_factory.mktemp("below_best"))
    return folder, _report(*read_bench_folder(folder))


def _rows(report) -> dict:
    return {row[0]: row[1:] for row in report.plan_table().cells()}


def _span(estimate) -> str:
    return f"{number(estimate.low)} to {number(estimate.high)}"


def test_a_plan_from_a_fitted_peak_below_the_best_measured_says_so_in_the_verdict_and_the_answer(below):
    _, report = below
    fit, plan = report.fit, report.plan
    best = max(BELOW_BEST.values())
    assert fit.peak_throughput < best / 1.05           # the case: the fitted peak more than 5% below the best level
    reason = report.below_best
    assert reason is not None and reason.value == pytest.approx(best / fit.peak_throughput)
    assert report.evidence.usable and report.evidence.main_reason.code == "below_best"
    assert plan.usable_throughput == pytest.approx(0.8 * fit.peak_throughput) or plan.binding_limit == "latency"
    answer = report.details
    assert f"measured at best **{number(best)} ops/s** (at 24 clients)" in answer
    peak = report.figures["peak_throughput"]
    assert f"peaks at **{number(peak.estimate)} ops/s** (95% interval {_span(peak)} ops/s)" in answer
    assert f"The plan is read off that fitted peak, {reason.value - 1:.0%} below the best measured rate" in answer
    assert "of the fitted peak" in report.objectives_words()
    assert f"from a fitted peak {reason.value - 1:.0%} below that best" in report.short_answer


def test_the_plan_table_states_the_figures_of_the_answer_each_with_one_interval(below):
    _, report = below
    rows, plan, figures = _rows(report), report.plan, report.figures
    peak, n_star = figures["peak_throughput"], figures["peak_concurrency"]
    assert rows["fitted peak throughput"][:2] == [number(peak.estimate), _span(peak)]
    assert rows["fitted peak concurrency"][0] == number(n_star.estimate)
    assert rows["best measured throughput (at 24 clients)"][:2] == [number(max(BELOW_BEST.values())), "—"]
    usable = rows["usable throughput (the plan)"]
    assert usable[:2] == [number(plan.usable_throughput),
                          f"{number(plan.usable_throughput_low)} to {number(plan.usable_throughput_high)}"]
    # the planned figure's interval is the one the verdict judges (and quotes when it is too wide to be sound)
    wide = [r for r in report.evidence.reasons if r.code == "wide_interval"]
    assert all(usable[1] in r.message for r in wide)
    # a limit the plan did not bind to, and the binding one, carry no second interval for the same figure
    assert all(v[1] == "—" for k, v in rows.items() if k.startswith("limit: "))
    stated = [f for f in rows if re.search(r"\bpeak throughput\b|\bceiling\b", f)]
    assert stated == ["fitted peak throughput"]


def test_a_curve_without_a_peak_is_planned_from_its_ceiling_named_as_one():
    # an Amdahl-like sweep: the USL's coherency fits at 0, so what the plan takes a share of is a ceiling
    rng = np.random.default_rng(1)
    n = np.array([1, 2, 4, 8, 16, 24, 32, 48, 64.0])
    x = 1000 * n / (1 + 0.2 * (n - 1)) * (1 + rng.normal(0, 0.01, len(n)))
    curve = pd.DataFrame({"concurrency": n, "throughput": x, "latency_mean_ms": n / x * 1000,
                          "latency_p95_ms": 2000 * n / x})
    report = _report(curve)
    assert report.fit.kappa == 0 and report.limit_kind == "ceiling"
    rows = _rows(report)
    assert "fitted ceiling throughput" in rows and "fitted peak throughput" not in rows
    assert "fitted peak concurrency" not in rows and "limit: throughput at most 80% of the fitted ceiling" in rows
    assert "of the fitted ceiling" in report.objectives_words() and "levels off towards a ceiling" in report.details


@pytest.mark.notebooks
def test_the_rendered_page_of_a_recorded_folder_reads_as_one_statement(below, tmp_path):
    from capmodel.report.render import render

    folder, report = below
    runs, index = render(["06_live_benchmark"], tmp_path, {"06_live_benchmark": {"bench_dir": str(folder)}})
    assert runs[0].error is None, runs[0].error
    nb = nbformat.read(tmp_path / "06_live_benchmark.ipynb", as_version=4)
    shown = next(o["data"][MIME] for c in nb.cells for o in c.get("outputs", []) if MIME in o.get("data", {}))
    # the page names the server as its folder's run record does; every other word is the report object's
    assert shown["answer"] == report.answer
    assert shown["details"] == report.details.replace("a server", "mongodb://db.example.net:27017/")
    assert shown["short_answer"] == report.short_answer
    assert [r["code"] for r in shown["evidence"]["reasons"]] == report.evidence.codes()
    # the plan table's download: the same fitted peak, its one interval, and the best measured level
    tables = [o["data"]["text/html"] for c in nb.cells for o in c.get("outputs", [])
              if "plan.csv" in o.get("data", {}).get("text/html", "")]
    data = re.search(r'href="data:text/csv;charset=utf-8;base64,([^"]+)"', tables[0]).group(1)
    table = pd.read_csv(io.StringIO(base64.b64decode(data).decode("utf-8"))).set_index("figure")
    peak = report.figures["peak_throughput"]
    assert table.loc["fitted peak throughput", "95% interval"] == _span(peak)
    assert table.loc["fitted peak throughput", "value"] == number(peak.estimate)
    # the index gives the answer in one sentence and the reason the plan sits below the best measured rate
    record = nb.metadata["capmodel"]["answer"]
    assert record["grade"] == "weak" and record["main_reason"]["code"] == "below_best"
    assert report.below_best.message in html.unescape(index.read_text())


def _slo_answer(max_rate, interval, bound=5.0, relative=False, baseline_p95=None, grade="sound"):
    """An SLO search's answer as slo.json holds it (SloAnswer.to_json()'s fields the page reads)."""
    objective = {"metric": "p95", "limit": 0.5 if relative else bound, "relative": relative, "text": "p95<=x",
                 "bound": bound}
    return {"max_rate": max_rate, "interval": list(interval), "objectives": [objective],
            "baseline": None if baseline_p95 is None else {"p95_ms": baseline_p95},
            "evidence": {"grade": grade, "reasons": []}}


def test_the_measured_slo_capacity_is_set_beside_the_fits_prediction_of_it(below):
    from capmodel.plan import Objectives, capacity_from_fit

    folder, report = below
    curve, steps, run = read_bench_folder(folder)
    measured = _report(curve, steps, run)
    measured.slo = _slo_answer(1234.0, (1200.0, 1300.0))
    predicted = capacity_from_fit(measured.fit, Objectives(utilization_target=None, latency_p95_ms=5.0), 0.95,
                                  comparison=measured.comparison)
    assert measured.slo_prediction.latency_throughput == pytest.approx(predicted.latency_throughput)
    words = measured.slo_words()
    assert "the highest rate that met them was **1,234 ops/s** (interval 1,200 to 1,300 ops/s)" in words
    assert f"predicts **{number(predicted.latency_throughput)} ops/s** at that p95" in words
    assert f"{predicted.latency_throughput / 1234.0:.2f}x the measured rate" in words
    # a relative bound reads the search's baseline p95: +50% over 2 ms is the absolute 3 ms
    relative = _report(curve, steps, run)
    relative.slo = _slo_answer(1234.0, (1200.0, 1300.0), bound=3.0, relative=True, baseline_p95=2.0)
    absolute = capacity_from_fit(relative.fit, Objectives(utilization_target=None, latency_p95_ms=3.0), 0.95,
                                 comparison=relative.comparison)
    assert relative.slo_prediction.latency_throughput == pytest.approx(absolute.latency_throughput, rel=1e-9)


def test_an_slo_without_a_p95_objective_has_no_prediction_and_says_so(below):
    folder, _ = below
    report = _report(*read_bench_folder(folder))
    report.slo = {**_slo_answer(None, (None, 900.0), grade="unusable"),
                  "objectives": [{"metric": "errors", "limit": 0.001, "relative": False, "text": "errors<=0.1%",
                                  "bound": 0.001}]}
    assert report.slo_prediction is None
    assert report.slo_words().startswith("Measured under errors at most 0.1%: no rate the search tried met them")
    assert report.slo_words().endswith("The fit predicts p95 latencies only, so it gives no figure to set beside it.")


def test_an_slo_folder_without_its_answer_is_refused_naming_the_parameter(tmp_path):
    from capmodel.errors import InputError
    from capmodel.report.bench_report import read_slo_folder

    with pytest.raises(InputError, match=r"^parameter slo_dir: .*slo.json is missing or unreadable"):
        read_slo_folder(tmp_path)
    (tmp_path / "slo.json").write_text('{"max_rate": 1}')
    with pytest.raises(InputError, match="is not the answer of an SLO search"):
        read_slo_folder(tmp_path)


@pytest.mark.notebooks
def test_the_rendered_page_shows_a_recorded_slo_search(below, tmp_path):
    import json

    from capmodel.report.render import render

    folder, report = below
    slo_folder = tmp_path / "slo"
    slo_folder.mkdir()
    (slo_folder / "slo.json").write_text(json.dumps(_slo_answer(1234.0, (1200.0, 1300.0))))
    runs, _ = render(["06_live_benchmark"], tmp_path / "out",
                     {"06_live_benchmark": {"bench_dir": str(folder), "slo_dir": str(slo_folder)}})
    assert runs[0].error is None, runs[0].error
    nb = nbformat.read(tmp_path / "out" / "06_live_benchmark.ipynb", as_version=4)
    shown = [o["data"]["text/markdown"] for c in nb.cells for o in c.get("outputs", [])
             if "Capacity under the objectives, measured" in o.get("data", {}).get("text/markdown", "")]
    report.slo = _slo_answer(1234.0, (1200.0, 1300.0))
    assert shown == ["## Capacity under the objectives, measured\n\n" + report.slo_words()]
