"""What ``plan``, ``nodes`` and ``shards`` print and their answers say in words, checked as wording: the figures the
JSON gives shown in the text (runway months, costs, intervals with their ends and a † only beside a one-sided one,
"at least" in report 03's answer), the objectives a plan was held to, a VM already too small said "over", a count the
verdict forbids withheld from the sentence, a capacity's reasons and verdict said, nouns that agree with their counts
("1 shard", "1 user"), separators in large counts, what "none" means in the VM table, and no ``nan`` printed. The
values themselves are checked on the JSON and the result objects in the other files of this folder."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from capmodel.cli import main
from capmodel.models.usl.closed_form import usl_throughput
from capmodel.models.usl.describe import describe_fit
from capmodel.models.usl.fit import fit_usl
from capmodel.observe.capacity import server_capacity
from capmodel.plan import Objectives, capacity_from_fit, plan_node_study, plan_shard_study
from capmodel.plan.capacity import describe_capacity
from tests.plan.test_capacity import exact_curve
from tests.plan.test_latency_objective import usl, write_curves
from tests.plan.test_plan_verdict import (
    measured_vm,  # noqa: F401  (a fixture)
    ok,
)
from tests.plan.test_runway import _months, _samples
from tests.plan.test_scale_out_verdict import node_curve
from tests.plan.test_unusable_vm import FLAT, RISING, _plan


def _out(capsys, *argv):
    status = main([*map(str, argv)])
    out, err = capsys.readouterr()
    assert status == 0, err
    return out


# --- plan -------------------------------------------------------------------------------------------------------------

def test_the_bundled_plan_prints_no_nan(capsys):
    assert "nan" not in _out(capsys, "plan", "--target-users", "50000")


def test_the_printed_runway_gives_each_vms_months_and_the_answers(measured_vm):  # noqa: F811
    # months = ln(capacity / users) / ln(1.05): big carries 37,222 users; three significant digits as printed
    big = math.log(33500 * 0.8 / 0.72 / 15000) / math.log(1.05)
    target = math.log(35000 / 15000) / math.log(1.05)
    text = ok("plan", *measured_vm, "--target-users", "35000", "--growth", "0.05", "--current-users", "15000")
    assert f"big                  {big:.3g} months" in text
    assert f"[reached in {target:.3g} months at 5% a month]" in text


@pytest.mark.parametrize("growth, words", [("-0.5", "never (users shrink)"), ("0", "never (no growth)")])
def test_a_runway_that_never_ends_says_why(capsys, growth, words):
    out = _out(capsys, "plan", "--growth", growth, "--current-users", 15000, "--target-users", 30000)
    runway = out.split("Runway at", 1)[1].split("\n\n", 1)[0]
    nevers = [ln for ln in runway.splitlines() if "never" in ln]
    assert nevers and all(words in ln for ln in nevers), runway
    assert f"reached in {words}" in out


def test_an_unsupported_vm_is_said_to_have_no_capacity_not_to_fail_an_objective(tmp_path, capsys):
    (tmp_path / "curves.csv").write_text("system,concurrency,throughput\n" + FLAT + RISING)
    out = _plan(tmp_path, capsys, "--curves", str(tmp_path / "curves.csv"))
    row = next(line for line in out.splitlines() if line.startswith("A "))
    assert row.split()[-1] == "unsupported" and "none" in row
    assert "fails an objective" not in out
    assert '"none": the VM\'s curve supports no capacity (unsupported: see its evidence)' in out


def test_no_none_no_note(tmp_path, capsys):
    from capmodel.models.evidence import MEANINGS

    out = _plan(tmp_path, capsys)
    for meaning in MEANINGS.values():     # what a grade promises is prose ("none was off by more than 25%")
        out = out.replace(meaning, "")
    assert " none " not in out and '"none"' not in out


def test_a_fitted_vms_interval_is_printed_with_its_ends_and_one_sided_only_when_it_is(tmp_path, capsys):
    """A relative latency target on fitted curves pasted with rounded figures: small's users are printed with their
    interval over the likelihood region when its ends differ at the figures' precision, and a † only beside an
    estimate that is an end of its interval, with the footnote that says what a fitted VM's one-sided interval is."""
    import json

    from capmodel.formatting import integer
    from capmodel.plan.planner import ONE_SIDED, ONE_SIDED_NOTE, _estimate

    catalog, curves = write_curves(tmp_path)
    rows = [f"{vm},{n},{usl(n, lam):.1f},{1.8 * n / usl(n, lam) * 1000:.3f}" for vm, lam in (("small", 500.0),
            ("big", 1000.0)) for n in (1, 2, 4, 8, 16, 32, 64, 128)]   # rounded as a pasted table is
    curves.write_text("system,concurrency,throughput,latency_p95_ms\n" + "\n".join(rows) + "\n")
    argv = ["plan", "--catalog", str(catalog), "--curves", str(curves), "--baseline-vm", "small",
            "--baseline-users", "5000", "--baseline-throughput", "2500", "--latency-increase", "0.05"]
    assert main(argv + ["--json"]) == 0
    row = next(r for r in json.loads(capsys.readouterr().out)["vms"] if r["vm"] == "small")
    users, low, high = (round(row[k]) for k in ("users", "users_low", "users_high"))
    assert low <= users <= high and row["binding_limit"] == "latency"
    assert main(argv) == 0
    out = capsys.readouterr().out
    small = next(line for line in out.splitlines() if line.startswith("small "))
    shown = f"{users:,} ({low:,} to {high:,})" if low != high else f" {users:,} "
    assert small.rstrip().endswith("latency") and shown in small
    assert ("†" in out) == (ONE_SIDED_NOTE in out) == (users in (low, high) and low != high)
    one_sided = pd.Series({"users": 5604.0, "users_low": 5604.0, "users_high": 5900.0})
    assert _estimate(one_sided, "users", integer) == "5,604 (5,604 to 5,900)" + ONE_SIDED
    assert "a fitted VM's interval ends at its fitted figure" in ONE_SIDED_NOTE


def test_an_unreachable_latency_target_states_no_throughput_in_words():
    # p95 = 2 x N/X; one client's N/X is 1/lambda = 1 ms, so no load has a p95 below 2 ms: nothing is sustained
    cap = capacity_from_fit(fit_usl(exact_curve(p95_factor=2.0)), Objectives(utilization_target=0.8,
                                                                             latency_p95_ms=1.5))
    text = cap.describe(ops_per_user=0.5)
    assert "sustains" not in text and "users" not in text


# --- runway in words --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("growth, status", [(0.05, "months"), (1e-9, "beyond_horizon"), (0.0, "never"),
                                            (None, "no_growth_given")])
def test_the_answer_says_the_runway_in_words(growth, status):
    said = server_capacity(_samples(), monthly_growth=growth, n_bootstrap=50).describe()
    if status == "months":
        assert f"reached in **{_months(growth):,.1f} months**" in said
    elif status == "beyond_horizon":
        assert "reached in **over 100 years**" in said and "months**" not in said    # not 1,525,... months
    elif status == "never":
        assert "never reaches it" in said
    else:
        assert "growth a month" not in said


@pytest.mark.parametrize("growth, status", [(1e-9, "beyond_horizon"), (0.0, "never"), (None, "no_growth_given"),
                                            (0.05, "months")])
def test_the_fleet_says_the_runway_in_words(growth, status):
    from tests.plan.test_runway import _fleet

    fleet = _fleet(growth)
    text = fleet.summary()
    if status == "beyond_horizon":
        assert "over 100 years" in text and "over 100 years" in fleet.describe()
    elif status == "never":
        assert "never" in text.splitlines()[3]
    elif status == "no_growth_given":
        assert text.splitlines()[3].rstrip().endswith("-")
    else:
        assert f"{_months(growth):,.1f}" in text


# --- fitted models and capacities in words ----------------------------------------------------------------------------

def test_describe_fit_names_the_model_its_intervals_and_the_amdahl_ceiling():
    import capmodel
    from capmodel import datasets

    curve = datasets.load_curve("plgm_workload1")
    comparison = capmodel.compare_models(curve)
    fit = comparison.fits[comparison.recommended]
    assert comparison.recommended == "amdahl"
    text = describe_fit(fit, comparison, level=0.9, source="Dataset plgm_workload1")
    assert "The data support the **Amdahl** model" in text
    assert f"a ceiling of **{fit.ceiling:,.0f} ops/s** (90% interval " in text
    low, high = comparison.region(0.9).limit_interval()
    assert f"(90% interval {low:,.0f} to {high:,.0f} ops/s)" in text
    best = curve.loc[curve["throughput"].idxmax()]
    assert f"measured {len(curve)} steps" in text and f"best measured rate was {best['throughput']:,.0f}" in text
    assert "with 90% intervals" in text
    asked = describe_fit(comparison.fits["usl"], comparison)
    assert "The **USL** model was fitted as asked; the comparison recommends **Amdahl**" in asked


def test_describe_capacity_reads_the_fit_or_says_why_not():
    import capmodel

    n = np.array([1, 2, 4, 8, 16, 32, 64], dtype=float)
    sigma, kappa, lam = 0.05, 0.001, 1000.0
    curve = pd.DataFrame({"concurrency": n, "throughput": lam * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))})
    fit = capmodel.fit_usl(curve)
    peak_n = math.sqrt((1 - sigma) / kappa)
    peak_x = lam * peak_n / (1 + sigma * (peak_n - 1) + kappa * peak_n * (peak_n - 1))
    text = describe_capacity(fit, Objectives(utilization_target=None, peak_fraction=0.8), ops_per_user=0.5)
    assert f"**{0.8 * peak_x:,.0f} ops/s**" in text and f"**{0.8 * peak_x / 0.5:,.0f} users**" in text
    assert "**No plan from this curve**: nothing to plan" in describe_capacity(fit, Objectives(utilization_target=None))
    # a straight line has no peak to plan a share of: the words say the data support no capacity figure
    linear = capmodel.fit_usl(pd.DataFrame({"concurrency": n, "throughput": 100 * n}))
    said = describe_capacity(linear, Objectives(utilization_target=0.8), ops_per_user=0.5)
    assert "**the data cannot support a capacity figure**" in said and "Evidence: **unusable**" in said
    assert "users" not in said and "sustains" not in said


# --- nodes and shards -------------------------------------------------------------------------------------------------

def test_nodes_prints_costs_and_intervals(tmp_path):
    import json

    curve = node_curve(tmp_path)
    table = tmp_path / "nodes.csv"
    table.write_text("workload,reference_ops_per_s,candidate_ops_per_s,reference_nodes,candidate_nodes\n"
                     "small,3000,800,3,1\n")
    args = ["nodes", "--table", str(table), "--node-curve", str(curve), "--concurrency", "Nodes", "--throughput",
            "ops", "--candidate-node-cost", "5000", "--bootstrap", "40"]
    record = json.loads(ok(*args, "--json"))
    row = record["rows"][0]
    assert row["cost_usl"] == row["nodes_usl"] * 5000 and row["cost_linear"] == row["nodes_linear"] * 5000
    assert record["evidence"]["grade"] in ("sound", "weak")
    text = ok(*args)
    # money from 100 up in whole units with separators (capmodel.formatting.money)
    assert f"{row['cost_usl']:,.0f}" in text and f"{row['cost_linear']:,.0f}" in text
    assert f"{row['nodes_usl_low']:,.0f} to {row['nodes_usl_high']:,.0f}" in text
    assert "candidate 5,000 per node" in text and "95% bootstrap percentile interval" in text


def test_a_node_count_its_verdict_forbids_is_not_printed(tmp_path):
    # measured at 1..4 nodes, exactly on the USL; the target is reached at 20 nodes, 5x the largest measured
    curve = node_curve(tmp_path, largest=4, noisy=False)
    target = float(usl_throughput(20, 0.03, 0.001, 800.0))
    table = tmp_path / "nodes.csv"
    table.write_text("workload,reference_ops_per_s,candidate_ops_per_s,reference_nodes,candidate_nodes\n"
                     f"big,{target - 1e-6},800,3,1\n")
    text = ok("nodes", "--table", str(table), "--node-curve", str(curve), "--concurrency", "Nodes", "--throughput",
              "ops", "--bootstrap", "0")
    assert "unsupported" in text and " 20 " not in text.split("\n")[2]


def test_describe_does_not_state_a_count_its_verdict_forbids():
    n = np.array([1, 2, 3, 4.0])
    curve = pd.DataFrame({"concurrency": n, "throughput": usl_throughput(n, 0.03, 0.001, 800.0)})
    target = float(usl_throughput(20, 0.03, 0.001, 800.0)) - 1e-6           # 20 nodes, 5x the measured 4
    table = pd.DataFrame([{"workload": "big", "reference_ops_per_s": target, "candidate_ops_per_s": 800.0,
                           "reference_nodes": 3, "candidate_nodes": 1}])
    nodes = plan_node_study(table, node_curve=curve, bootstrap=0)
    assert nodes.rows["nodes_usl"].iloc[0] == 20 and nodes.evidence.grade == "unusable"
    text = nodes.describe()
    assert "**20**" not in text and "cannot support a USL count" in text and "Evidence: **unusable**" in text
    shards = plan_shard_study([target, 3000.0], curve=curve, bootstrap=0)
    assert [r["shards"] for r in shards.rows] == [20, 5]       # usl_throughput(5) = 3,509 >= 3,000 > usl(4) = 2,878
    assert [e.grade for e in shards.row_evidence] == ["unusable", "sound"]
    text = shards.describe()
    assert "**20 shards**" not in text and "no shard count the data can support" in text
    assert "**5 shards**" in text


def test_counts_and_rates_read_as_numbers_with_separators_and_agreeing_nouns(capsys):
    # 10^15 inserts/s at 62,500 per shard, linear: 16,000,000,000 shards (10^15 / 62,500), over the limit of 32
    out = _out(capsys, "shards", "--target-rate", "1e15")
    assert f"needs {10**15 // 62_500:,} shards, more than the limit of 32" in out, out
    # kappa = 1: X(s) = 62,500 s / (1 + s(s-1)) peaks at s = 1 (X(2) = 125,000/3 < 62,500): one shard, singular
    out = _out(capsys, "shards", "--kappa", 1)
    assert "throughput peaks at 62,500 inserts/s with 1 shard, below 1,000,000 inserts/s" in out, out
    # a rate under one insert per second is shown as given, not rounded to 0
    out = _out(capsys, "shards", "--target-rate", 0.5, "--per-shard-throughput", 0.25)
    line = [ln for ln in out.splitlines() if ln.strip().startswith("0.5")]
    assert line and line[0].split()[:4] == ["0.5", "2", "2", "0.5"], out   # 2 shards x 0.25 = 0.5 delivered
    # 7,120 / 10^-6 x 3 nodes = 21,360,000,000 (+1 for the float): the count with separators
    out = _out(capsys, "nodes", "--reference-ops", 7120, "--candidate-ops", "1e-6")
    assert "needs 21,360,000,00" in out and "more than the limit of 1,000" in out, out


def test_the_shard_answer_in_words_agrees_in_number():
    text = plan_shard_study([62500], per_shard_throughput=62500).describe()
    assert "needs **1 shard**" in text and "1 shards" not in text


def test_one_shard_is_singular(capsys):
    out = _out(capsys, "shards", "--max-shards", "1")
    assert "at most 1 shard;" in out and "1 shards" not in out
    assert "at most 2 shards;" in _out(capsys, "shards", "--max-shards", "2")


def test_the_peak_below_one_shard_is_said_in_the_singular(capsys):
    assert "at 1 shard)" in _out(capsys, "shards", "--sigma", "0.5", "--kappa", "1")


def test_shards_without_inputs_says_it_ran_the_bundled_study(capsys):
    assert "No inputs given: ran the bundled DocumentDB study" in _out(capsys, "shards")


def test_an_unreachable_row_shows_its_linear_estimate_in_text(capsys):
    # sigma = 0.05 needs 76 shards (above the 32 limit); the linear estimate 1,000,000 / 62,500 = 16 still holds
    text = _out(capsys, "shards", "--sigma", "0.05")
    assert "linear estimate (shards)" in text
    [row] = [line.split() for line in text.splitlines() if line.split()[:1] == ["1,000,000"]]
    assert row[:3] == ["1,000,000", "unreachable", "16"]


def test_the_studies_answers_in_words_name_the_answer():
    from capmodel.plan import plan_study

    # the benchANT study's answer at 50,000 users: s3-2xlarge-8-SAS at 1,180.08 EUR a month (data/benchant_vms.csv)
    assert "**s3-2xlarge-8-SAS** at 1,180.08 EUR/month" in plan_study(targets=[50000, 90000], growth=0.05).describe()
    # Micron workload A at sigma 0.02: 50 nodes under the USL against the brief's linear 26 (README)
    assert "**50** under the USL (+24)" in plan_node_study(sigma=0.02, sensitivity=[0.0, 0.02]).describe()
    # DocumentDB: 1,000,000 inserts/s at 62,500 per shard
    assert "needs **16 shards**" in plan_shard_study(scenarios=[0.0, 0.02, 0.05]).describe()


def test_the_objectives_say_what_a_utilization_target_without_cpu_figures_applies_to(tmp_path, capsys):
    # fitted curves without cpu_util: the 80% is of the fitted peak, not "utilization at most 80%"
    n = np.array([1, 2, 4, 8, 16, 24, 32, 48, 64], dtype=float)
    frames = [pd.DataFrame({"vm": vm, "concurrency": n, "throughput": lam * n / (1 + 0.03 * (n - 1) + 0.0005 * n *
                                                                                 (n - 1))})
              for vm, lam in (("a", 1000.0), ("b", 2500.0))]
    curves = tmp_path / "curves.csv"
    pd.concat(frames).to_csv(curves, index=False)
    catalog = tmp_path / "vms.csv"
    catalog.write_text("vm,monthly_cost\na,100\nb,200\n")
    text = _out(capsys, "plan", "--catalog", catalog, "--curves", curves, "--ops-per-user", "0.5")
    assert "Objectives: throughput at most 80% of the fitted peak (the utilization target, with no CPU utilization " \
           "measured)" in text and "utilization at most 80%" not in text


def _runway_lines(capsys, current):
    out = _out(capsys, "plan", "--growth", "0.05", "--current-users", str(current))
    block = out[out.index("Runway at"):].split("\n\n")[0].splitlines()
    return block[0], {line.split()[0]: line.split(None, 1)[1] for line in block[1:]}


def test_a_vm_already_too_small_is_said_over_not_there(capsys):
    """30,000 users today on the baseline VM that carries 25,000 (the bundled study's baseline): "already over", not
    'now (already there)', which reads as a VM just full."""
    head, rows = _runway_lines(capsys, 30000)
    assert rows["m3-xlarge-8-SAS"] == "now: already over, 30,000 users today against the 25,000 it carries"
    # a VM with room keeps its months: ln(65,000 / 30,000) / ln(1.05)
    assert rows["s3-2xlarge-8-SAS"].startswith(f"{math.log(65000 / 30000) / math.log(1.05):.1f} months")


def test_one_user_is_singular(capsys):
    head, _ = _runway_lines(capsys, 1)
    assert "from 1 user (" in head


# --- a capacity's and a plan's verdict in words ---------------------------------------------------------------------

def test_the_objectives_in_words_say_a_share_of_the_peak_or_a_utilization():
    from tests.plan.test_assumed_utilization import N, X

    peak = capacity_from_fit(fit_usl(pd.DataFrame({"concurrency": N, "throughput": X})), Objectives()).describe()
    assert "throughput at most 80% of the fitted peak" in peak and "utilization at most 80%" not in peak
    demand = 0.9 / X.max()           # CPU seconds per operation: 90% busy at the best measured point
    measured = pd.DataFrame({"concurrency": N, "throughput": X, "cpu_util": X * demand})
    assert "utilization at most 80%" in capacity_from_fit(fit_usl(measured), Objectives()).describe()


def test_the_bundled_study_says_its_evidence_is_weak():
    from capmodel.plan import plan_study

    assert "Evidence: **weak**" in plan_study(targets=[50000]).describe()


def test_a_capacitys_reasons_are_said():
    from tests.plan.test_capacity import PEAK_X, x_of

    curve = exact_curve()
    past = capacity_from_fit(fit_usl(curve[curve["concurrency"] <= 8]),
                             Objectives(utilization_target=None, peak_fraction=0.95))
    assert f"{PEAK_X / x_of(8) - 1:.0%} above the most the fitted curve shows" in past.describe()
    three = capacity_from_fit(fit_usl(curve[curve["concurrency"] <= 4]),
                              Objectives(utilization_target=None, peak_fraction=0.95))
    assert "the data cannot support a capacity figure" in three.describe()
    curve["client_bound"] = curve["concurrency"] >= 48          # the two largest steps: the bench flagged them
    bound = capacity_from_fit(fit_usl(curve), Objectives(utilization_target=0.8))
    assert "Evidence: **weak**" in bound.describe() and "2 of 10 steps were client-bound" in bound.describe()


@pytest.mark.parametrize("shift", [None, "symmetric"])
def test_a_one_sided_interval_is_marked_and_explained_in_the_vm_table(shift):
    # the benchANT study's "2.5-2.6x" used as 2.6x: "65,000 (62,500 to 65,000)" users, marked, with the footnote;
    # with every stated range centred on its value nothing is one-sided and nothing is marked
    from capmodel.plan.planner import ONE_SIDED, ONE_SIDED_NOTE
    from tests.plan.test_study_intervals import shifted_plan

    text = shifted_plan(shift).vm_table().text()
    assert (ONE_SIDED_NOTE in text) == (shift is None)
    [line] = [line for line in text.splitlines() if line.startswith("s3-2xlarge-8-SAS")]
    assert ("65,000 (62,500 to 65,000)" + ONE_SIDED in line) == (shift is None)


@pytest.mark.parametrize("value, low, high, expected", [
    (65_000, 62_500, 65_000, ", at least 62,500"),       # a one-sided range: the estimate is its top
    (62_500, 62_500, 65_000, ", at most 65,000"),        # ... or its bottom
    (63_000, 62_500, 65_000, ", between 62,500 and 65,000"),
    (65_000, 65_000, 65_000, ""), (65_000, float("nan"), 65_000, "")])
def test_interval_words(value, low, high, expected):
    from capmodel.formatting import interval_words

    assert interval_words(value, low, high) == expected


def test_report_03_answer_says_the_one_sided_interval():
    from capmodel.report.plan_report import plan_report

    answer = plan_report(targets=[50_000], growth=0.05).answer
    assert "carries 65,000 users, at least 62,500." in answer
