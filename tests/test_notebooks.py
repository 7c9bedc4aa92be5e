"""Every report notebook executed with papermill on small parameters (06 against the real embedded mongod), and the
answer each one prints checked against numbers computed here or stated by the source documents."""
from __future__ import annotations

import json
import math
import re

import nbformat
import numpy as np
import pandas as pd
import pytest
from scipy.optimize import curve_fit

from capmodel import datasets
from capmodel.report import notebooks
from rendered_reports import SMALL, render_small

pytestmark = pytest.mark.notebooks


@pytest.fixture(scope="module")
def reports(tmp_path_factory, mongod):
    out, _ = render_small(tmp_path_factory, mongod.uri)
    return out


def _nb(reports, name):
    return nbformat.read(reports / f"{name}.ipynb", as_version=4)


def _answer(reports, name) -> str:
    """The markdown the last cell displays: the report's answer in words."""
    last = _nb(reports, name).cells[-1]
    texts = [o["data"]["text/markdown"] for o in last.outputs if "text/markdown" in o.get("data", {})]
    assert texts, f"{name}: the last cell shows no answer"
    return re.sub(r"\s+", " ", texts[0])


def _html_table(html: str) -> pd.DataFrame:
    """A DataFrame's HTML output read back (its header row and body cells; the index column dropped)."""
    head = re.findall(r"<th>(.*?)</th>", html.split("</thead>")[0])
    body = html.split("<tbody>")[1]
    rows = [re.findall(r"<td>(.*?)</td>", row) for row in body.split("</tr>") if "<td>" in row]
    table = pd.DataFrame(rows, columns=head[-len(rows[0]):])
    for column in ("concurrency", "throughput"):
        table[column] = pd.to_numeric(table[column])
    return table


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def test_every_notebook_is_stored_without_outputs_and_opens_with_a_tagged_parameters_cell():
    names = notebooks.names()
    assert names == sorted(SMALL), "a notebook was added or removed without its small test parameters"
    for name in names:
        nb = nbformat.read(notebooks.path(name), as_version=4)
        nbformat.validate(nb)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert "parameters" in code[0].metadata.get("tags", []), name
        assert all(not c.outputs and c.execution_count is None for c in code), f"{name} is stored with outputs"
        assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# "), f"{name}: no question"


def test_every_notebook_runs_without_error_and_converts(reports):
    for name in notebooks.names():
        nb = _nb(reports, name)
        record = nb.metadata["capmodel"]["report"]
        assert record["error"] is None, f"{name}: {record['error']}"
        errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
        assert not errors, name
        assert (reports / f"{name}.html").stat().st_size > 1_000_000  # plotly.js is inlined
        for key, value in SMALL[name].items():
            assert record["parameters"][key] == value, (name, key)


def test_methodology_littles_law_and_utilization_law_on_the_bundled_numbers(reports):
    text = _answer(reports, "01_methodology")
    curve = datasets.load_curve("plgm_workload1")
    # Little's law R = N / X against the study's measured mean latency (Percona plgm post, workload #1 table)
    worst = max(abs(n / x * 1000 / r - 1) * 100 for n, x, r in
                zip(curve["concurrency"], curve["throughput"], curve["latency_mean_ms"]))
    assert f"within {worst:.1f} %" in text
    # utilization law on the benchANT baseline: D = U / X = 0.80 / 6500 s, bound 1 / D = 8125 ops/s
    assert "123 µs" in text and "8,125 ops/s" in text


def test_fit_curve_reports_the_amdahl_ceiling_fitted_independently(reports):
    text = _answer(reports, "02_fit_curve")
    curve = datasets.load_curve("plgm_workload1")
    n, x = curve["concurrency"].to_numpy(float), curve["throughput"].to_numpy(float)
    (sigma, lam), _ = curve_fit(lambda n, s, l: l * n / (1 + s * (n - 1)), n, x, p0=[0.05, 1000])
    match = re.search(r"λ/σ = ([\d,]+) ops/s", text)
    assert "**amdahl**" in text and match, text
    assert _number(match.group(1)) == pytest.approx(lam / sigma, rel=2e-3)


def test_capacity_plan_recommends_the_vm_the_benchant_study_chose_for_50000_users(reports):
    text = _answer(reports, "03_vm_capacity_plan")
    # benchANT: "For the near-term goal with a doubled amount of users (growing from 25,000 to 50,000), a VM was
    # identified which delivers 160% more throughput, for only 48% higher monthly costs": s3-2xlarge-8-SAS
    # (relative throughput 2.6; 1,180.08 / 797.76 = 1.479).
    assert "**50,000 users**" in text and "**s3-2xlarge-8-SAS** at 1,180.08" in text
    # runway at 5 % a month from 25,000 users to 50,000: ln 2 / ln 1.05 months
    assert f"reached in {math.log(2) / math.log(1.05):.1f} months" in text


def test_node_multiplier_matches_the_micron_brief_and_an_independent_usl_count(reports):
    text = _answer(reports, "04_node_multiplier")
    micron = datasets.load("micron_ycsb_96threads").set_index("workload")
    # the brief's linear rule: 3 x X_SSD / X_HDD, rounded; it states 26 nodes for YCSB A
    assert "YCSB A: multiplier 8.70 → **26 nodes**" in text
    sigma, kappa = 0.01, 0.0001   # the notebook's defaults

    def usl(n):
        return n / (1 + sigma * (n - 1) + kappa * n * (n - 1))

    row = micron.loc["A"]
    needed = next(n for n in range(1, 1000)
                  if row.candidate_ops_per_s * usl(n) / usl(row.candidate_nodes) >= row.reference_ops_per_s)
    assert f"**{needed}** under the USL" in text


def test_shard_scale_out_repeats_the_documentdb_16_shards_and_1024_clients(reports):
    text = _answer(reports, "05_shard_scale_out")
    # AWS post: over a million inserts/s on 16 shards driven by 1,024 client processes; 62,500/s per shard is the
    # linear lower bound 1,000,000 / 16
    assert "**16 shards**" in text and "**1024 client processes**" in text
    # sigma = 0.05 cannot reach 1,000,000: the USL ceiling is 62,500 / 0.05 = 1,250,000 but with kappa = 0 it is
    # approached only at infinitely many shards; within 32 shards X(32) = 62,500 * 32 / (1 + 0.05 * 31)
    assert 62_500 * 32 / (1 + 0.05 * 31) < 1_000_000
    assert "unreachable within 32 shards: σ = 0.05" in text


def test_live_benchmark_measured_every_step_on_the_real_server(reports):
    text = _answer(reports, "06_live_benchmark")
    steps = len(SMALL["06_live_benchmark"]["concurrency"])
    assert f"measured {steps} steps from 1 to 8 clients" in text
    nb = _nb(reports, "06_live_benchmark")
    table = next(o["data"]["text/html"] for c in nb.cells for o in c.get("outputs", [])
                 if "<table" in str(o.get("data", {}).get("text/html", "")))
    measured = _html_table(table)
    assert list(measured["concurrency"]) == [1, 2, 4, 8] and (measured["throughput"] > 0).all()
    best = re.search(r"best measured rate was ([\d,]+) ops/s", text)
    assert _number(best.group(1)) == pytest.approx(measured["throughput"].max(), abs=1)
    # where the clients ran, and that they shared the embedded server's host (the report says so)
    assert "The clients ran as" in text and "the clients run on the server's host" in text


def test_widget_outputs_are_left_out_of_the_static_page(reports):
    nb = _nb(reports, "01_methodology")
    widget = "application/vnd.jupyter.widget-view+json"
    assert any(widget in o.get("data", {}) for c in nb.cells for o in c.get("outputs", []))
    html = (reports / "01_methodology.html").read_text()
    assert widget not in html and "FloatSlider" not in html


def test_injected_parameters_are_recorded(reports):
    nb = _nb(reports, "04_node_multiplier")
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1 and "sensitivity = [0.0, 0.01, 0.03]" in injected[0].source
    assert json.loads(json.dumps(nb.metadata["papermill"]["parameters"])) == SMALL["04_node_multiplier"]
    assert np.isfinite(nb.metadata["capmodel"]["report"]["total_s"])


def test_methodology_what_if_predicts_plgm_workload_3_from_workloads_1_and_2(reports):
    from capmodel.models.mix import fit_mix_demands

    text = _answer(reports, "01_methodology")
    # Percona plgm study (seed 003_): workload 1 "100% find()", workloads 2 and 3 "54% reads and 46% writes";
    # the study's servers have 4 vCPUs (the notebook's defaults)
    mixed = {"read": 0.54, "write": 0.46}
    fit = fit_mix_demands({"plgm_workload1": (datasets.load_curve("plgm_workload1"), {"read": 1.0}),
                           "plgm_workload2": (datasets.load_curve("plgm_workload2"), mixed)}, servers=4)
    workload3 = datasets.load_curve("plgm_workload3")
    prediction = fit.compare(workload3, mixed, "plgm_workload3")
    assert re.sub(r"\s+", " ", prediction.describe()) in text
    assert f"against the measured {workload3['throughput'].max():,.0f} ops/s" in text   # 8,256 in the study's table
    assert "Two tenants of 32 threads each" in text
