"""Every public entry point answers a hostile curve table alike: the same refusal, or the same reason in its verdict
and, among the answers to the same question (the most the server delivers), the same grade.

The tables: rows that are parts of one step (named by a ``host`` or ``load_generator`` column, or told by Little's
law under a neutral label), a throughput in ops/ms or ops/min beside a latency column in ms, every step
client-bound, and data that start past the peak. The entry points: ``capmodel.fit_usl`` on the table and on
``read_curve`` of its file, ``compare_models``, ``capacity_from_fit``, report 02's result, and the command lines
``fit``, ``fit --model auto``, ``plan --curves``, ``nodes --node-curve`` and ``shards --curve``; report 02 rendered
once, for one table.
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import capmodel
from capmodel.errors import CapmodelError
from capmodel.plan.capacity import Objectives, capacity_from_fit
from capmodel.report.fit_report import fit_report
from tests.support.cli_run import run

LEVELS = np.array([1, 2, 4, 8, 12, 16, 24, 32, 48, 64.0])


def usl(n, sigma=0.05, kappa=0.0005, lambda_=1000.0):
    return lambda_ * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))


def curve(n=LEVELS, seed=0) -> pd.DataFrame:
    """A closed-loop sweep: throughput with 2% scatter, the latency Little's law gives (N / X, in ms)."""
    rng = np.random.default_rng(seed)
    x = usl(n) * np.exp(rng.normal(0, 0.02, len(n)))
    return pd.DataFrame({"concurrency": n, "throughput": x, "latency_mean_ms": 1000 * n / x})


def parts(label: str, total_concurrency: bool) -> pd.DataFrame:
    """Four load-generator hosts ran each step: a row per host with a quarter of the throughput; its concurrency the
    host's threads (the latency then agrees with it) or the step's clients (a quarter of them in flight per row)."""
    rows = []
    for n in LEVELS:
        x = usl(4 * n)
        for host in range(4):
            rows.append({label: f"lg-{host}", "concurrency": 4 * n if total_concurrency else n,
                         "throughput": x / 4, "latency_mean_ms": 1000 * 4 * n / x})
    return pd.DataFrame(rows)


TABLES = {
    # name: (table, expected: "refused" or the reason code every verdict carries)
    "host_column": (parts("host", False), "refused"),
    "load_generator_column": (parts("load_generator", False), "refused"),
    "parts_by_littles_law": (parts("lane", True), "refused"),
    "ops_per_ms": (curve().assign(throughput=lambda t: t["throughput"] / 1000), "in_flight"),
    "ops_per_min": (curve().assign(throughput=lambda t: t["throughput"] * 60), "in_flight"),
    "all_client_bound": (curve().assign(client_bound=True), "client_bound"),
    "past_the_peak_only": (curve(np.array([140, 160, 180, 200, 240, 280, 320.0])), "peak_below_data"),
}
#: the reasons about the curve itself, which every entry point carries; the others (the peak's) only the answers
#: that read the peak
CURVE_REASONS = {"in_flight", "client_bound"}


def write(tmp_path, name: str, table: pd.DataFrame, system: bool = False):
    path = tmp_path / f"{name}.csv"
    (table.assign(system="vm-a") if system else table).to_csv(path, index=False)
    return path


def outcome(call):
    """('refused', message) or (grade, reason codes) of an answer."""
    try:
        evidence = call()
    except CapmodelError as exc:
        return "refused", str(exc)
    return evidence.grade, set(evidence.codes())


def cli_outcome(*argv, key=lambda record: record["evidence"]):
    done = run(*argv, "--json")
    if done.returncode == 2:
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr   # one line, no traceback
        return "refused", done.stderr
    assert done.returncode == 0, done.stderr
    evidence = key(json.loads(done.stdout))
    return evidence["grade"], {r["code"] for r in evidence["reasons"]}


def answers(tmp_path, name: str, table: pd.DataFrame) -> dict:
    """Every entry point's outcome on one table: entry point -> (grade or 'refused', codes or message)."""
    path = write(tmp_path, name, table)
    with_vm = write(tmp_path, f"{name}_vm", table, system=True)
    catalog = tmp_path / "catalog.csv"
    catalog.write_text("vm,monthly_cost\nvm-a,100\n")

    def compared():
        comparison = capmodel.compare_models(table)
        return capmodel.models.usl.verdict.assessment.fit_verdict(comparison.best_fit, comparison)

    return {
        "fit_usl": outcome(lambda: capmodel.fit_usl(table).evidence),
        "read_curve+fit_usl": outcome(lambda: capmodel.fit_usl(capmodel.read_curve(path)).evidence),
        "compare_models": outcome(compared),
        "capacity_from_fit": outcome(lambda: capacity_from_fit(capmodel.fit_usl(table), Objectives()).evidence),
        "report 02": outcome(lambda: fit_report(file=str(path), model="usl").evidence),
        "capmodel fit": cli_outcome("fit", path),
        "capmodel fit --model auto": cli_outcome("fit", path, "--model", "auto"),
        "capmodel plan --curves": cli_outcome("plan", "--catalog", catalog, "--curves", with_vm, "--ops-per-user",
                                              "1", key=lambda record: record["vms"][0]["evidence"]),
        "capmodel nodes --node-curve": cli_outcome("nodes", "--node-curve", path, "--reference-ops", "50000",
                                                   "--candidate-ops", "10000", "--reference-nodes", "4"),
        "capmodel shards --curve": cli_outcome("shards", "--curve", path, "--target-rate", "5000"),
    }


#: the entry points that answer the same question as ``fit_usl`` (the most the server delivers, from the USL)
SAME_QUESTION = ("fit_usl", "read_curve+fit_usl", "report 02", "capmodel fit")


@pytest.mark.parametrize("name", TABLES)
def test_every_entry_point_answers_a_hostile_table_alike(tmp_path, name):
    table, expected = TABLES[name]
    got = answers(tmp_path, name, table)
    if expected == "refused":
        assert {grade for grade, _ in got.values()} == {"refused"}, got
        assert all("parts of one step" in message for _, message in got.values()), got
        return
    carriers = got if expected in CURVE_REASONS else {k: got[k] for k in (*SAME_QUESTION, "capacity_from_fit",
                                                                          "capmodel plan --curves")}
    assert all(expected in codes for _, codes in carriers.values()), got
    assert len({got[k][0] for k in SAME_QUESTION}) == 1, got
    if expected in CURVE_REASONS:
        assert {grade for grade, _ in got.values()} == {"unusable"}, got


@pytest.mark.notebooks
def test_report_02_rendered_on_a_unit_slip_says_unusable(tmp_path):
    """A rendered report 02 on throughput in ops/ms carries the verdict every other entry point gives."""
    path = write(tmp_path, "ops_per_ms", TABLES["ops_per_ms"][0])
    done = run("report", "02_fit_curve", "--out", tmp_path / "out", "-p", "file", path, "-p", "model", "usl")
    assert done.returncode == 0, done.stderr
    import nbformat

    notebook = nbformat.read(tmp_path / "out" / "02_fit_curve.ipynb", as_version=4)
    evidence = notebook.metadata["capmodel"]["headline"]["evidence"]
    assert evidence["grade"] == "unusable" and "in_flight" in {r["code"] for r in evidence["reasons"]}
