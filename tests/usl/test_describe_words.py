"""fit.describe() (capmodel.models.usl.describe): the answer sentence the reports print, checked against figures computed here by hand.

Reference figures: the R package ``usl`` (Moeding) on its specsdm91 data, tests/summary.Rout.save (alpha 2.773e-02,
beta 1.044e-04, gamma 90.00, "Multiple R-squared: 0.9896") and tests/peak-scalability.Rout.save (peak 97 clients).
"""
import math
import re

import numpy as np
import pandas as pd
import pytest

from capmodel import datasets
from capmodel.models.usl.rivals import fit_amdahl, fit_linear
from capmodel.models.usl.selection import compare_models
from capmodel.models.usl.fit import fit_usl


def _figure_and_interval(text: str, figure: str) -> tuple[float, float, float]:
    """(figure, low, high) of the sentence's "**X ops/s** (95% interval A to B ops/s)" after ``figure``."""
    found = re.search(re.escape(figure) + r" \*\*([\d,.]+) ops/s\*\* \(95% interval ([\d,.]+) to ([\d,.]+) ops/s\)",
                      text)
    assert found, f"no {figure!r} with an interval in {text!r}"
    return tuple(float(v.replace(",", "")) for v in found.groups())


def test_usl_answer_names_the_peak_its_interval_the_parameters_and_the_best_point():
    curve = datasets.load_curve("usl_specsdm91")
    fit = fit_usl(curve)
    text = fit.describe(source="SPEC SDM91")
    # the peak N* = sqrt((1 - sigma)/kappa) with R's rounded figures: sqrt(0.97227 / 1.044e-4) = 96.5
    n_peak = math.sqrt((1 - 2.773e-02) / 1.044e-04)
    shown_n = float(re.search(r"at about \*\*([\d,.]+) clients\*\*", text).group(1))
    assert shown_n == pytest.approx(n_peak, rel=2e-3)
    x_peak = 90.0 * n_peak / (1 + 2.773e-02 * (n_peak - 1) + 1.044e-04 * n_peak * (n_peak - 1))   # R's X(N*)
    shown, low, high = _figure_and_interval(text, "throughput peaks at")
    assert shown == pytest.approx(x_peak, rel=2e-3) and low < shown < high
    # the interval is the peak's range over the likelihood region, the one the verdict judges
    peak = fit.figure_intervals(0.95)["peak_throughput"]
    assert (low, high) == (round(peak.low), round(peak.high))
    best = curve.loc[curve["throughput"].idxmax()]
    assert text.startswith(f"SPEC SDM91 measured 7 steps from 1 to 216 clients; the best measured rate was "
                           f"{best['throughput']:,.0f} ops/s (at {best['concurrency']:g} clients). The data support the "
                           "**USL** model (")
    assert "R² = 0.990" in text and "sigma = 0.02773" in text
    assert not fit.warnings and "warning" not in text   # nothing to warn of, and no sentence saying so twice
    # wider than a sound answer holds (high / low > 1.25): weak, with that reason and the next measurement
    reasons = {r.code: r for r in fit.evidence.reasons}
    assert fit.evidence.grade == "weak" and set(reasons) == {"wide_interval"}
    assert reasons["wide_interval"].value == pytest.approx(peak.high / peak.low) and peak.high / peak.low > 1.25
    assert f"Next: {fit.evidence.next_step.text}." in text


def test_amdahl_and_linear_answers_name_the_ceiling_or_what_the_data_support():
    n = np.array([1, 2, 4, 8, 16, 32.0])
    x = 100 * n / (1 + 0.05 * (n - 1))
    amdahl = fit_amdahl(pd.DataFrame({"concurrency": n, "throughput": x}))
    text = amdahl.describe()
    assert "levels off towards a ceiling of **2,000 ops/s**" in text   # 100 / 0.05
    # the ceiling lies 2000 / X(32) = 1.59x above the most the curve shows over the data: beyond them, weak
    reason = amdahl.evidence.main_reason
    assert amdahl.evidence.grade == "weak" and reason.code == "beyond_data"
    assert reason.value == pytest.approx(2000.0 / x.max(), rel=1e-6)
    assert max(reason.next_step.levels) > n.max()                     # measure past the data
    linear = fit_linear(pd.DataFrame({"concurrency": n, "throughput": 50 * n}))
    text = linear.describe()
    assert linear.evidence.grade == "unusable" and "unbounded" in linear.evidence.codes()
    assert "The data cannot support a peak or ceiling for this server" in text
    assert "where the server sustained 1,600 ops/s" in text            # 50 x 32, the best measured
    assert "ceiling of" not in text and "peaks at" not in text
    # points on a line leave no curve that bends: no lower end either, and no number is stated for it
    assert math.isinf(linear.evidence.main_reason.value)
    assert "every curve the data allow keeps rising" in text and "unreachable" not in text


def test_answer_with_a_comparison_says_how_the_model_was_chosen():
    from capmodel.models.usl.verdict.assessment import answer_region

    curve = datasets.load_curve("usl_raytracer")
    comparison = compare_models(curve)
    chosen = comparison.best_fit.describe(comparison=comparison)
    assert comparison.recommended == "amdahl"
    assert f"The data support the **Amdahl** model ({comparison.reason})" in chosen
    assert "ΔAICc of the others from the best:" in chosen
    # the chosen model's answer is read over every family compared: the choice is in its interval
    region = comparison.region(0.95)
    assert answer_region(comparison.best_fit, comparison) is region
    low, high = region.limit_interval()
    _, shown_low, shown_high = _figure_and_interval(chosen, "a ceiling of")
    assert (shown_low, shown_high) == (round(low), round(high))
    usl = fit_usl(curve)
    asked = usl.describe(comparison=comparison)
    assert "The **USL** model was fitted as asked; the comparison recommends **Amdahl**" in asked
    # the model asked for is read over its own family, whose edge κ = 0 is the Amdahl curve the comparison prefers
    assert answer_region(usl, comparison) is usl.region(0.95)
    _, shown_low, shown_high = _figure_and_interval(asked, "a ceiling of")
    assert shown_low <= round(comparison.best_fit.ceiling) <= shown_high
    # κ at its bound informs (fit.warnings) without grading: it is no reason of the verdict
    assert any(w.startswith("kappa is at its lower bound 0") for w in usl.warnings)
    assert all("lower bound" not in r.message for r in usl.evidence.reasons) and "warning:" not in asked


def test_exactly_determined_answer_has_no_intervals_and_states_no_peak():
    n = np.array([1, 2, 4.0])
    fit = fit_usl(pd.DataFrame({"concurrency": n, "throughput": 10 * n / (1 + 0.05 * (n - 1) + 0.002 * n * (n - 1))}))
    text = fit.describe()
    assert "Its parameters (too few points for an interval): sigma = 0.05, kappa = 0.002, lambda = 10;" in text
    assert fit.evidence.grade == "unusable" and {"exactly_determined", "no_interval"} <= set(fit.evidence.codes())
    assert "peaks at" not in text and "The data cannot support a peak or ceiling" in text
    # the next step: the concurrencies up to twice the largest (8) not yet measured, as many as make 8 levels
    assert fit.evidence.next_step.levels == tuple(float(v) for v in range(1, 9) if v not in n)


# --- the reports' headline answers (capmodel.report.*_report): every number they state is the result object's ------

def _bold_numbers(text: str) -> list[float]:
    import re

    return [float(m.replace(",", "")) for m in re.findall(r"\*\*([\d,]+(?:\.\d+)?)[^*]*\*\*", text)]


def test_fit_report_answer_states_the_fits_own_ceiling_best_point_and_intervals():
    from capmodel.report.fit_report import fit_report

    r = fit_report(dataset="plgm_workload1")
    text = r.details
    assert r.fit.model == "amdahl" and r.comparison.recommended == "amdahl"
    ceiling, best = _bold_numbers(text)
    assert ceiling == round(r.fit.ceiling) and best == r.curve["throughput"].max()
    ci = r.fit.conf_int(0.95, method="profile")     # each parameter's range over the likelihood region
    lam = re.search(r"λ = ([\d,]+) \(([\d,]+) to ([\d,]+)\) ops/s per client", text).groups()
    assert [float(v.replace(",", "")) for v in lam] == [round(r.fit.params["lambda"]), round(ci.loc["lambda", "low"]),
                                                        round(ci.loc["lambda", "high"])]
    # one interval for the ceiling: its range over the compared families' region (the model was chosen by them)
    _, low, high = _figure_and_interval(text, "a ceiling of")
    region_low, region_high = r.comparison.region(0.95).limit_interval()
    assert (low, high) == (round(region_low), round(region_high)) and low <= ceiling <= high
    assert text.count("(95% interval ") == 1 and text.count("λ = ") == 1 and "bootstrap" not in text
    assert f"R² = {r.fit.r2:.3f}" in text and "nan" not in text.lower()


def test_fit_report_on_an_all_client_bound_sweep_states_no_capacity():
    from capmodel.report.fit_report import fit_report

    r = fit_report(file="tests/fixtures/user_study/client_bound_sweep.csv")
    assert r.evidence.grade == "unusable"
    assert _bold_numbers(r.details) == [3900.0]            # only what was measured
    assert "ceiling" not in r.details.replace("ceiling is at least", "") and "peaks" not in r.details
    # what the data support instead: the same sentence ``capmodel fit --json`` gives as "supported"
    from capmodel.models.usl.verdict.assessment import supported_instead

    assert supported_instead(r.fit, r.evidence) in r.details and "at least the best measured 3,900 ops/s" in r.details


def test_fit_report_exactly_determined_and_asked_models_state_what_the_data_support():
    from capmodel.report.fit_report import fit_report

    exact = fit_report(file="tests/fixtures/user_study/three_points.csv", model="usl")
    assert exact.evidence.grade == "unusable"
    assert {"exactly_determined", "no_interval"} <= set(exact.evidence.codes()) and "intervals" not in exact.details
    # no peak without an interval: only the best measured point is stated
    assert _bold_numbers(exact.details) == [exact.curve["throughput"].max()] and "peaks" not in exact.details
    auto = fit_report(dataset="plgm_workload1")
    asked = fit_report(dataset="plgm_workload1", model="usl")
    assert asked.fit.model == "usl" and "the comparison prefers Amdahl" in asked.details
    # the USL's interval is read over its own family, whose edge κ = 0 holds the Amdahl curve the comparison prefers
    _, low, high = _figure_and_interval(asked.details, "throughput peaks at")
    figure = asked.fit.figure_intervals(0.95, region=asked.fit.region(0.95))["peak_throughput"]
    assert (low, high) == (round(figure.low), round(figure.high))
    assert low <= auto.fit.ceiling <= high


def test_plan_report_answer_states_the_recommendations_rows():
    from capmodel.plan import Objectives
    from capmodel.report.plan_report import plan_report

    r = plan_report(catalog="tests/fixtures/user_study/catalog_chf.csv",
                    curves="tests/fixtures/user_study/curves_chf.csv", vm_column="vm", ops_per_user=0.5,
                    targets=[10000, 90000], objectives=Objectives(utilization_target=0.8))
    recs = r.study.recommendations
    first = recs.iloc[0]
    assert f"**{first['vm']}** at {first['monthly_cost']:,.0f} CHF/month carries {first['users']:,.0f} users" \
        in r.answer
    assert r.currency == "CHF" and "EUR" not in r.answer and not r.bundled and "benchANT" not in r.intro
    assert recs.iloc[1]["vm"] is None or not isinstance(recs.iloc[1]["vm"], str)
    assert "No single VM carries **90,000 users**" in r.answer
    # the verdict is the study's (the one ``capmodel plan --json`` prints): the reasons of the VMs the answer names
    # (a target no VM carries is an answer, not a doubt about one: it adds no reason)
    named = r.study.answer_vms()
    assert named and set(named) <= set(r.study.plan.vm_evidence)
    assert r.evidence.to_json() == r.study.plan.evidence_for(named).to_json()
    assert r.evidence.grade == max((r.study.plan.vm_evidence[vm].grade for vm in named),
                                   key=["sound", "weak", "unusable"].index)


def test_node_and_shard_answers_state_their_studies_numbers():
    from capmodel.report.node_report import node_report
    from capmodel.report.shard_report import shard_report

    nodes = node_report(sigma=0.01, kappa=0.0001)
    rows = nodes.study.rows
    reach = rows[rows["usl_reachable"].astype(bool)]
    assert f"**{int(rows['nodes_linear'].min())} to {int(rows['nodes_linear'].max())} nodes**" in nodes.details
    assert f"**{int(reach['nodes_usl'].min())} to {int(reach['nodes_usl'].max())} nodes**" in nodes.details
    shards = shard_report(1_000_000.0, 62_500.0, 0.0, 0.0, scenarios=[0.0, 0.05])
    row = shards.study.rows[0]
    assert _bold_numbers(shards.details) == [row["shards"], row["clients"]] == [16, 1024]


@pytest.mark.parametrize("curve_file", ["tests/fixtures/client_bound_sweep/curve.csv",
                                        "tests/fixtures/user_study/three_points.csv",
                                        "tests/fixtures/user_study/sweep_p95.csv",
                                        "data/plgm_workload1.csv"])
@pytest.mark.parametrize("model", ["auto", "usl"])
def test_report_02s_headline_evidence_is_the_clis(curve_file, model):
    """One verdict per answer: ``capmodel fit FILE --json``'s evidence is the one report 02 shows for the same file
    and model (both read it from ``assess_fit``; here through the command's ``main``, as a user runs it)."""
    import json

    from tests.support import cli_run
    from capmodel.report.fit_report import fit_report

    proc = cli_run.run("fit", curve_file, "--model", model, "--json")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    cli = json.loads(out)["evidence"]
    report = fit_report(file=curve_file, model=model)
    assert json.loads(json.dumps(report.evidence.to_json())) == cli
    assert cli["grade"] in ("sound", "weak", "unusable") and report.fit.model == json.loads(out)["model"]


def test_methodology_knee_is_the_latency_quadratics_root_or_says_why_there_is_none():
    """Report 01's knee: the largest N with N/X(N) <= T solves kappa N² + (sigma - kappa) N + 1 - sigma - lambda T = 0
    (Gunther 2007, ch. 6), solved here by hand; a target below one client's response time 1/lambda is unreachable."""
    import re

    from capmodel.report.methodology_report import methodology_report

    r = methodology_report(upto=64, latency_target_ms=3.0)
    s, k, lam = r.fit.sigma, r.fit.kappa, r.fit.lambda_
    t = r.latency_target_ms / 1000.0
    root = (-(s - k) + math.sqrt((s - k) ** 2 - 4 * k * (1 - s - lam * t))) / (2 * k)
    assert root < math.sqrt((1 - s) / k)   # 3 ms is met on the rising side of the curve
    knee = re.search(r"should carry at most ([\d,]+) clients \(([\d,]+) ops/s", r.details).groups()
    assert int(knee[0].replace(",", "")) == math.floor(root)
    assert float(knee[1].replace(",", "")) == pytest.approx(lam * root / (1 + s * (root - 1) + k * root * (root - 1)),
                                                            abs=0.5)
    # 5 ms (the default) is reached only past the peak N* = sqrt((1 - sigma) / kappa): the peak decides, not the target
    r = methodology_report(upto=64)
    t = r.latency_target_ms / 1000.0
    root = (-(s - k) + math.sqrt((s - k) ** 2 - 4 * k * (1 - s - lam * t))) / (2 * k)
    peak = math.sqrt((1 - s) / k)
    assert root > peak
    assert f"reaches 5 ms only at {root:.3g} clients, past the peak (N* ≈ {peak:.3g})" in r.details
    assert "should carry at most" not in r.details
    # Little's law's largest difference named as the table shows it (the answer said 0.56% over a table's 0.564%)
    shown = r.little_table()
    column = list(shown.columns).index("difference")
    largest = max((row[column] for row in shown.cells()), key=lambda c: abs(float(c.rstrip("%"))))
    assert f"within {largest} at every thread count" in r.details
    fast = methodology_report(upto=64, latency_target_ms=0.05)   # one client alone takes 1/lambda, about 0.87 ms
    assert 1000.0 / lam > 0.05
    assert (f"a 0.05 ms mean-latency target is unreachable on this fit: even at the lightest load a request takes "
            f"{1000.0 / lam:.3g} ms") in fast.details
    assert "should carry at most" not in fast.details


def test_bench_report_plans_through_capacity_from_fit_without_deprecation_and_hides_an_unsupported_plan():
    import re
    import warnings

    import capmodel
    from capmodel.plan import Objectives, capacity_from_fit
    from capmodel.report.bench_report import bench_report

    curve = datasets.load_curve("plgm_workload1")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)   # our own API, called the current way
        r = bench_report(curve, [], {}, "a server", "ycsb-c", 5.0, 0.8, 0.26, 0.95, {})
        plan = capacity_from_fit(capmodel.fit_usl(curve), Objectives(utilization_target=None, peak_fraction=0.8,
                                                                      latency_p95_ms=5.0))
        answer, verdict, shown = r.details, r.evidence, r.plan_table()
    # the page's verdict is its plan's (the fit's reasons, the capacity's interval), with the fit's on its peak
    assert verdict.usable and set(plan.evidence.codes()) <= set(verdict.codes())
    assert verdict.grade == plan.evidence.grade
    said = float(re.search(r"sustains \*\*([\d,]+) ops/s", answer).group(1).replace(",", ""))
    assert said == round(plan.usable_throughput) and shown is not None
    bound = bench_report(capmodel.read_curve("tests/fixtures/client_bound_sweep/curve.csv"), [], {}, "a server",
                         "ycsb-c", 5.0, 0.8, 0.26, 0.95, {})
    assert bound.evidence.grade == "unusable" and bound.plan_table() is None
    assert "client-bound" in bound.no_plan and "sustains" not in bound.details
    assert "at least the best measured 3,905 ops/s" in bound.details
