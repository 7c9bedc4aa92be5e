"""Every report notebook executed with papermill on small parameters (06 against the real embedded mongod), and the
answer each one shows checked against numbers computed here or stated by the source documents: each headline is its
report's page object's answer (the object the notebook builds, built here with the same parameters), and that object's
figures are the numbers checked. The answers' wording is tests/usl/test_describe_words.py's."""
from __future__ import annotations

import base64
import io
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
from capmodel.report.headline import MIME
from tests.support.rendered_reports import SMALL, render_small

pytestmark = pytest.mark.notebooks


@pytest.fixture(scope="module")
def reports(tmp_path_factory, mongod):
    out, _ = render_small(tmp_path_factory, mongod.uri)
    return out


def _nb(reports, name):
    return nbformat.read(reports / f"{name}.ipynb", as_version=4)


def _headline(reports, name) -> dict:
    """The headline the report shows first (question, answer, evidence, provenance), as the data beside its HTML."""
    nb = _nb(reports, name)
    found = [o["data"][MIME] for c in nb.cells for o in c.get("outputs", []) if MIME in o.get("data", {})]
    assert len(found) == 1, f"{name}: {len(found)} headline blocks"
    first = next(c for c in nb.cells if c.cell_type == "code" and c.get("outputs")
                 and "injected-parameters" not in c.metadata.get("tags", []))
    assert MIME in first.outputs[0].get("data", {}), f"{name}: the headline is not the first thing shown"
    return found[0]


def _answer(reports, name, part: str = "answer") -> str:
    """The report's answer in words (markdown), as its headline states it (``part="details"``: how it was worked
    out, as the page shows it below the headline)."""
    return re.sub(r"\s+", " ", _headline(reports, name)[part])


def _page_text(reports, name) -> str:
    """Every markdown and HTML output of the executed notebook, whitespace folded."""
    nb = _nb(reports, name)
    parts = [o["data"].get("text/markdown") or o["data"].get("text/html", "") for c in nb.cells
             for o in c.get("outputs", []) if "data" in o]
    return re.sub(r"\s+", " ", " ".join(parts))


def _csv_table(html: str) -> pd.DataFrame:
    """A report table read back from its CSV download link (the raw values, headers with units)."""
    data = re.search(r'href="data:text/csv;charset=utf-8;base64,([^"]+)"', html).group(1)
    return pd.read_csv(io.StringIO(base64.b64decode(data).decode("utf-8")))


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _shows(reports, name, result) -> None:
    """The report's headline shows its page object's answer, and below it the object's details, as they are."""
    head = _headline(reports, name)
    assert (head["answer"], head["details"]) == (result.answer, result.details)


def test_every_notebook_is_stored_without_outputs_and_opens_with_a_tagged_parameters_cell():
    names = notebooks.names()
    assert names == sorted(SMALL), "a notebook was added or removed without its small test parameters"
    for name in names:
        nb = nbformat.read(notebooks.path(name), as_version=4)
        nbformat.validate(nb)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert "parameters" in code[0].metadata.get("tags", []), name
        assert all(not c.outputs and c.execution_count is None for c in code), f"{name} is stored with outputs"
        assert notebooks.question(nb), f"{name}: no question"


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
    from capmodel.report.methodology_report import methodology_report

    result = methodology_report(upto=SMALL["01_methodology"]["upto"])
    _shows(reports, "01_methodology", result)
    curve = datasets.load_curve("plgm_workload1")
    # Little's law R = N / X against the study's measured mean latency (Percona plgm post, workload #1 table)
    worst = max(abs(n / x * 1000 / r - 1) for n, x, r in
                zip(curve["concurrency"], curve["throughput"], curve["latency_mean_ms"]))
    assert result.little["difference"].abs().max() == pytest.approx(worst, rel=1e-9)
    # utilization law on the benchANT baseline: D = U / X = 0.80 / 6500 s (123 µs), bound 1 / D = 8125 ops/s
    assert result.demand == pytest.approx(0.80 / 6500, rel=1e-12)
    assert 1 / result.demand == pytest.approx(8125, rel=1e-12)


def test_fit_curve_reports_the_amdahl_ceiling_fitted_independently(reports):
    from capmodel.report.fit_report import fit_report

    result = fit_report()
    _shows(reports, "02_fit_curve", result)
    curve = datasets.load_curve("plgm_workload1")
    n, x = curve["concurrency"].to_numpy(float), curve["throughput"].to_numpy(float)
    (sigma, lam), _ = curve_fit(lambda n, s, l: l * n / (1 + s * (n - 1)), n, x, p0=[0.05, 1000])
    assert result.fit.model == "amdahl"
    assert result.fit.ceiling == pytest.approx(lam / sigma, rel=2e-3)


def test_capacity_plan_recommends_the_vm_the_benchant_study_chose_for_50000_users(reports):
    from capmodel.report.plan_report import BUNDLED_INTRO, plan_report

    result = plan_report(targets=[50000, 90000])      # the notebook's defaults
    _shows(reports, "03_vm_capacity_plan", result)
    # benchANT: "For the near-term goal with a doubled amount of users (growing from 25,000 to 50,000), a VM was
    # identified which delivers 160% more throughput, for only 48% higher monthly costs": s3-2xlarge-8-SAS
    # (relative throughput 2.6; 1,180.08 / 797.76 = 1.479).
    chosen = result.study.recommendations.set_index("target_users").loc[50000]
    assert chosen["vm"] == "s3-2xlarge-8-SAS" and chosen["monthly_cost"] == pytest.approx(1180.08)
    assert result.currency == "EUR"
    # runway at 5 % a month from 25,000 users to 50,000: ln 2 / ln 1.05 months
    assert chosen["months_until_target"] == pytest.approx(math.log(2) / math.log(1.05), rel=1e-9)
    # the bundled study's story is told because the bundled study is the input
    assert result.bundled and result.intro == BUNDLED_INTRO
    assert re.sub(r"\s+", " ", result.intro) in _page_text(reports, "03_vm_capacity_plan")


def test_node_multiplier_matches_the_micron_brief_and_an_independent_usl_count(reports):
    from capmodel.report.node_report import node_report

    result = node_report("", sigma=0.01, kappa=0.0001, sensitivity=SMALL["04_node_multiplier"]["sensitivity"])
    _shows(reports, "04_node_multiplier", result)
    micron = datasets.load("micron_ycsb_96threads").set_index("workload")
    # the brief's linear rule: 3 x X_SSD / X_HDD, rounded; it states 26 nodes for YCSB A
    table = _csv_table(next(o["data"]["text/html"] for c in _nb(reports, "04_node_multiplier").cells
                            for o in c.get("outputs", []) if "nodes.csv" in o.get("data", {}).get("text/html", "")))
    row_a = table[table["YCSB workload"] == "A"].iloc[0]
    assert row_a["multiplier"] == pytest.approx(3 * micron.loc["A"].reference_ops_per_s
                                                / (3 * micron.loc["A"].candidate_ops_per_s))
    assert row_a["nodes, linear rule"] == 26
    sigma, kappa = 0.01, 0.0001   # the notebook's defaults

    def usl(n):
        return n / (1 + sigma * (n - 1) + kappa * n * (n - 1))

    def needed(row):   # the smallest node count that reaches the reference throughput (None: none up to 1,000)
        return next((n for n in range(1, 1001)
                     if row.candidate_ops_per_s * usl(n) / usl(row.candidate_nodes) >= row.reference_ops_per_s), None)

    assert row_a["nodes under the USL"] == needed(micron.loc["A"])
    # the answer's USL counts (a range over the reachable workloads) and YCSB D unreachable, from the same study
    rows = result.rows.set_index("workload")
    for workload, row in micron.iterrows():
        count = needed(row)
        assert bool(rows.loc[workload, "usl_reachable"]) == (count is not None), workload
        if count is not None:
            assert rows.loc[workload, "nodes_usl"] == count, workload
    assert needed(micron.loc["D"]) is None
    reachable = rows[rows["usl_reachable"].astype(bool)]["nodes_usl"]
    assert reachable.min() < reachable.max()


def test_shard_scale_out_repeats_the_documentdb_16_shards_and_1024_clients(reports):
    from capmodel.report.shard_report import shard_report

    scenarios = SMALL["05_shard_scale_out"]["scenarios"]
    result = shard_report(1_000_000.0, 62_500.0, 0.0, 0.0, scenarios=scenarios)   # the notebook's defaults
    _shows(reports, "05_shard_scale_out", result)
    # AWS post: over a million inserts/s on 16 shards driven by 1,024 client processes; 62,500/s per shard is the
    # linear lower bound 1,000,000 / 16
    assert (result.row["shards"], result.row["clients"]) == (16, 1024)
    # sigma = 0.05 cannot reach 1,000,000: the USL ceiling is 62,500 / 0.05 = 1,250,000 but with kappa = 0 it is
    # approached only at infinitely many shards; within 32 shards X(32) = 62,500 * 32 / (1 + 0.05 * 31)
    assert 62_500 * 32 / (1 + 0.05 * 31) < 1_000_000
    assert result.study.model["max_shards"] == 32
    unreachable = result.scenarios.loc[result.scenarios["shards"].isna(), "sigma"].tolist()
    assert unreachable == [0.05]


def test_live_benchmark_measured_every_step_on_the_real_server(reports):
    text = _answer(reports, "06_live_benchmark", "details")
    nb = _nb(reports, "06_live_benchmark")
    table = next(o["data"]["text/html"] for c in nb.cells for o in c.get("outputs", [])
                 if "curve.csv" in str(o.get("data", {}).get("text/html", "")))
    measured = _csv_table(table)
    assert list(measured["concurrency (clients)"]) == [1, 2, 4, 8] and (measured["throughput (ops/s)"] > 0).all()
    best = re.search(r"measured at best \*\*([\d,]+) ops/s", text)
    assert _number(best.group(1)) == pytest.approx(measured["throughput (ops/s)"].max(), abs=1)
    # the MongoDB version the sweep recorded is in the provenance
    assert _headline(reports, "06_live_benchmark")["provenance"]["mongodb_version"]
    # where the clients ran, and that they shared the embedded server's host (the report says so)
    page = _page_text(reports, "06_live_benchmark")
    assert "The clients ran as" in page and "the clients run on the server's host" in page


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
    given = {k: v for k, v in nb.metadata["papermill"]["parameters"].items() if k != "capmodel_report"}
    assert json.loads(json.dumps(given)) == SMALL["04_node_multiplier"]
    assert np.isfinite(nb.metadata["capmodel"]["report"]["total_s"])


def test_methodology_what_if_predicts_plgm_workload_3_from_workloads_1_and_2(reports):
    from capmodel.models.mix.demands import fit_mix_demands
    from capmodel.report.methodology_report import methodology_report

    text = _answer(reports, "01_methodology", "details")
    result = methodology_report(upto=SMALL["01_methodology"]["upto"])
    _shows(reports, "01_methodology", result)
    # Percona plgm study (seed 003_): workload 1 "100% find()", workloads 2 and 3 "54% reads and 46% writes";
    # the study's servers have 4 vCPUs (the notebook's defaults)
    mixed = {"read": 0.54, "write": 0.46}
    fit = fit_mix_demands({"plgm_workload1": (datasets.load_curve("plgm_workload1"), {"read": 1.0}),
                           "plgm_workload2": (datasets.load_curve("plgm_workload2"), mixed)}, servers=4)
    workload3 = datasets.load_curve("plgm_workload3")
    prediction = fit.compare(workload3, mixed, "plgm_workload3")
    assert re.sub(r"\s+", " ", prediction.describe()) in text, text
    pd.testing.assert_frame_equal(result.what_if.table, prediction.table)
    assert result.what_if.table["measured_throughput"].max() == workload3["throughput"].max()   # 8,256 in the study
    # two tenants of 32 threads each (the notebook's default tenant_threads)
    assert result.tenants.populations.to_dict() == {"read": 32, "write": 32}


def test_every_headline_carries_its_provenance(reports):
    import hashlib

    for name in notebooks.names():
        head = _headline(reports, name)
        nb = nbformat.read(notebooks.path(name), as_version=4)
        assert head["question"] == notebooks.question(nb)
        prov = head["provenance"]
        assert prov["rendered_at"].endswith("+00:00") and prov["capmodel_version"]
        shown = {p["name"]: p for p in prov["parameters"]}
        defaults = notebooks_defaults(name)
        assert set(shown) == set(defaults), name
        given = set(SMALL[name]) | ({"uri"} if name == "06_live_benchmark" else set())  # as render_small gives
        for key, p in shown.items():
            assert p["default"] == (key not in given), (name, key)
        for item in prov["inputs"]:  # every input's digest, recomputed here
            assert item["sha256"] == hashlib.sha256(open(item["path"], "rb").read()).hexdigest()
        assert head["evidence"]["grade"] in ("sound", "weak", "unusable")
    page = (reports / "02_fit_curve.html").read_text()
    assert f"<title>{_headline(reports, '02_fit_curve')['question']}</title>" in page


def notebooks_defaults(name: str) -> dict:
    from capmodel.report.params import notebook_parameters

    return notebook_parameters(notebooks.path(name))


def test_every_notebook_is_stored_as_git_s_notebook_filter_writes_it():
    """scripts/nbclean.py (git's clean filter for notebooks) leaves each stored notebook byte for byte as it is, and
    takes a run notebook's outputs, execution counts, widget state and kernel version details away."""
    import sys

    first = notebooks.names()[0]
    sys.path.insert(0, str(notebooks.path(first).parents[1] / "scripts"))
    try:
        import nbclean
    finally:
        sys.path.pop(0)
    for name in notebooks.names():
        stored = notebooks.path(name).read_text(encoding="utf-8")
        assert nbclean.clean(stored) == stored, name
    run = json.loads(notebooks.path(first).read_text(encoding="utf-8"))
    code = next(c for c in run["cells"] if c["cell_type"] == "code")
    code.update(outputs=[{"output_type": "stream", "name": "stdout", "text": ["1\n"]}], execution_count=3)
    code["metadata"].update(scrolled=True, execution={"iopub.status.busy": "2026-11-29T15:00:00Z"})
    run["metadata"].update(language_info={"name": "python", "version": "3.11.2", "codemirror_mode": {"name": "ipython"}},
                           widgets={"application/vnd.jupyter.widget-state+json": {"state": {}}})
    cleaned = json.loads(nbclean.clean(json.dumps(run)))
    assert cleaned == json.loads(notebooks.path(first).read_text(encoding="utf-8"))
