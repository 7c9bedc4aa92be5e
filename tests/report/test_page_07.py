"""Report 07 (production capacity) on the bundled FTDC sample and on an ``observe --out`` folder: its answer against
numbers computed here.

The expected figures come from ``tests/fixtures/ftdc_sample_go.csv``: the bundled sample decoded by the independent
Go decoder (``../shared/tools/ftdc-reference``, written from MongoDB's ``src/mongo/db/ftdc``; regenerate with
``ftdcdump -mode csv -metrics serverStatus.localTime,serverStatus.opLatencies.{reads,writes,commands}.{ops,latency},
serverStatus.extra_info.{user,system}_time_us,systemMetrics.cpu.num_cpus data/ftdc_sample/diagnostic.data`` and the
``file``/``chunk_offset`` columns dropped). From its counters: per interval X = Δops / Δt and CPU U = Δ(user + system)
/ Δt; the utilization law U = U0 + D·X by least squares (numpy's polyfit); the bottleneck law X_max = (cores − U0) / D
(Lazowska et al., *Quantitative System Performance*, 1984, ch. 3 and 5).
"""
from __future__ import annotations

import hashlib
import html
import re
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
import pytest

from capmodel.observe import bundled_sample, observe_ftdc, server_capacity
from capmodel.plan.production import NO_METHOD
from tests.support.rendered_reports import render_small

pytestmark = pytest.mark.notebooks
NAME = "07_production_capacity"
GO = Path(__file__).resolve().parents[1] / "fixtures" / "ftdc_sample_go.csv"
SS = "serverStatus."


def _headline_text(notebook: Path) -> str:
    for cell in nbformat.read(notebook, as_version=4).cells:
        for output in cell.get("outputs", []):
            page = output.get("data", {}).get("text/html", "")
            if "capmodel-headline" in page:
                return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))
    raise AssertionError("report 07 shows no headline block")


def _headline_data(notebook: Path) -> dict:
    """The headline as data beside its HTML (question, answer, evidence, provenance)."""
    from capmodel.report.headline import MIME

    found = [o["data"][MIME] for c in nbformat.read(notebook, as_version=4).cells for o in c.get("outputs", [])
             if MIME in o.get("data", {})]
    assert len(found) == 1, f"report 07 shows {len(found)} headline blocks"
    return found[0]


@pytest.fixture(scope="module")
def headline_text(tmp_path_factory, mongod):
    out, _ = render_small(tmp_path_factory, mongod.uri)
    return _headline_text(out / f"{NAME}.ipynb")


def go_laws() -> dict:
    """Intervals of the sample window from the Go decoder's counters, and the utilization law fitted on them."""
    sample = bundled_sample()
    raw = pd.read_csv(GO)
    t = raw[f"{SS}localTime"]
    since, until = (pd.Timestamp(sample[k]).value // 1_000_000 for k in ("since", "until"))
    raw = raw[(t >= since) & (t <= until)].reset_index(drop=True)
    seconds = np.diff(raw[f"{SS}localTime"].to_numpy(float)) / 1000.0
    ops = sum(raw[f"{SS}opLatencies.{k}.ops"].to_numpy(float) for k in ("reads", "writes", "commands"))
    cpu = (raw[f"{SS}extra_info.user_time_us"] + raw[f"{SS}extra_info.system_time_us"]).to_numpy(float)
    x, u = np.diff(ops) / seconds, np.diff(cpu) / 1e6 / seconds
    slope, intercept = np.polyfit(x[x > 0], u[x > 0], 1)
    cores = float(raw["systemMetrics.cpu.num_cpus"].iloc[-1])
    return {"intervals": len(x), "busy": int((x > 0).sum()), "d_ms": slope * 1000, "u0": intercept, "cores": cores,
            "saturation": (cores - intercept) / slope, "observed": float(np.percentile(x[x > 0], 95))}


def test_capacity_of_the_bundled_sample_matches_the_go_decoder():
    expected = go_laws()
    sample = bundled_sample()
    capacity = server_capacity(observe_ftdc(sample["path"], sample["since"], sample["until"]).samples)
    assert capacity.cores == expected["cores"] == 1          # mongod pinned to one CPU reports one
    assert capacity.busy_intervals == expected["busy"]
    assert capacity.service_demand_ms.estimate == pytest.approx(expected["d_ms"], rel=1e-6)
    assert capacity.background_cores == pytest.approx(expected["u0"], abs=1e-6)
    assert capacity.saturation_throughput.estimate == pytest.approx(expected["saturation"], rel=1e-6)
    assert capacity.observed_peak_throughput == pytest.approx(expected["observed"], rel=1e-6)
    # made with the server as the bottleneck: the busiest intervals ran within 15% of the law's saturation
    assert expected["observed"] > 0.85 * expected["saturation"]


def test_report_answers_with_the_laws_and_states_method_and_verdict(headline_text):
    expected = go_laws()
    assert f"Read from the bundled FTDC sample: {expected['intervals']} intervals" in headline_text
    assert f"saturation at {expected['saturation']:,.0f} ops/s" in headline_text
    assert f"{expected['d_ms']:.3g} ms of CPU" in headline_text
    assert "Method: operational laws" in headline_text and "Evidence: weak" in headline_text
    assert "no room to grow" not in headline_text and "reaches the 5 ms target" not in headline_text
    assert "The 5 ms latency target is not checked" in headline_text
    assert "MongoDB 6.0.5" in headline_text and "/" + "work" not in headline_text


def test_report_renders_an_observe_folder_without_sampling(tmp_path, capsys):
    from capmodel.cli import main
    from capmodel.report.production_report import production_report
    from capmodel.report.render import render_one

    sample = bundled_sample()
    folder = tmp_path / "obs"
    assert main(["observe", "--ftdc", str(sample["path"]), "--since", sample["since"], "--until", sample["until"],
                 "--out", str(folder), "--cores", "1", "--json"]) == 0
    capsys.readouterr()
    run = render_one(NAME, tmp_path / "out", {"observed": str(folder), "cores": 1.0, "bootstrap": 10})
    assert run.error is None, run.error
    shown = _headline_data(run.notebook)
    report = production_report(observed=str(folder), cores=1.0, bootstrap=10)   # the page object, as the notebook
    # builds it: the headline's answer, and below it how the answer was worked out
    assert (shown["answer"], shown["details"]) == (report.answer, report.result.describe())
    expected = go_laws()
    assert report.source == "the observe folder obs" and not report.bundled    # read from the folder as it is:
    assert {"ftdc", "uri", "duration", "interval"} <= set(report.unused)        # no FTDC decoded, nothing sampled
    assert report.result.saturation_throughput.estimate == pytest.approx(expected["saturation"], abs=0.5)
    digest = hashlib.sha256((folder / "samples.csv").read_bytes()).hexdigest()   # the file the report read
    assert [(i["name"], Path(i["path"]).name, i["sha256"]) for i in shown["provenance"]["inputs"]] == \
        [("observed", "samples.csv", digest)]


def test_report_on_an_idle_server_states_only_what_the_data_support(tmp_path):
    from capmodel.observe import observe_ftdc
    from capmodel.report.production_report import production_report
    from capmodel.report.render import render_one

    idle_ftdc = Path(__file__).resolve().parents[1] / "fixtures" / "ftdc_idle"     # a real mongod idle for 8 s, FTDC on
    run = render_one(NAME, tmp_path / "out", {"ftdc": str(idle_ftdc), "bootstrap": 10})
    assert run.error is None, run.error
    shown = _headline_data(run.notebook)
    report = production_report(ftdc=str(idle_ftdc), bootstrap=10)     # the page object, as the notebook builds it
    result = report.result
    assert shown["details"] == result.describe()
    busiest = float(np.quantile(observe_ftdc(idle_ftdc).curve["throughput"], 0.95))
    assert result.observed_peak_throughput == pytest.approx(busiest, rel=1e-12)   # what it carried at its busiest
    assert shown["evidence"]["grade"] == result.evidence.grade == "unusable"
    assert shown["provenance"]["mongodb_version"] == "6.0.5"   # the version the FTDC metadata carry (buildInfo)
    # no method states a capacity: no saturation, no spare, no method; the busiest load is a lower bound only
    assert result.method == NO_METHOD
    assert result.saturation_throughput is None and result.spare_fraction is None
    assert result.at_least == pytest.approx(busiest, rel=1e-12)
    page = re.sub(r"<(script|style).*?</\1>", " ", Path(run.html).read_text(), flags=re.S)
    visible = html.unescape(re.sub(r"<[^>]+>", " ", page))
    assert "lower bound" in visible
    assert not re.search(r"\b(nan|NaN|None|inf)\b", visible)
