"""The verdict on plans (capmodel.plan.assessment) through the real ``capmodel plan`` command and the Python API:
throughput scaled past the measured utilization, latency not measured at the planned load, utilization assumed from
the baseline, a model the comparison ranks worse (noted by default, replaced with ``--model recommended``; either
way the capacity's interval holds both), a fitted VM's verdict (its capacity's), and the runway in months."""
import json
import math

import numpy as np
import pandas as pd
import pytest

from tests.support import cli_run
from capmodel import datasets
from capmodel.models.evidence import MEANINGS
from capmodel.plan.study import plan_study


def cli(*argv, cwd=None):
    return cli_run.run(*argv, cwd=cwd)       # main() in this process: the test is about the text, not the process


def ok(*argv):
    proc = cli(*argv)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.fixture
def measured_vm(tmp_path):
    # the example: 33,500 ops/s measured at 72% utilization, planned at the 80% target
    catalog = tmp_path / "vms.csv"
    catalog.write_text("vm,monthly_cost,currency\nbig,1000,EUR\nsafe,900,EUR\n")
    measured = tmp_path / "measured.csv"
    measured.write_text("vm,throughput,cpu_util,latency_p95_ms\nbig,33500,0.72,4\nsafe,30000,0.9,5\n")
    return ["--catalog", str(catalog), "--measurements", str(measured), "--ops-per-user", "1",
            "--latency-p95-ms", "10"]


def test_throughput_scaled_past_the_measured_utilization_is_flagged(measured_vm):
    record = json.loads(ok("plan", *measured_vm, "--target-users", "35000", "--json"))
    rows = {r["vm"]: r for r in record["vms"]}
    planned = 33500 * 0.8 / 0.72                                   # the utilization law: 37,222 ops/s
    assert rows["big"]["throughput"] == pytest.approx(planned)
    reasons = {r["code"]: r for r in rows["big"]["evidence"]["reasons"]}
    assert rows["big"]["evidence"]["grade"] == "weak"
    assert reasons["utilization_extrapolation"]["value"] == pytest.approx(planned / 33500)
    assert reasons["utilization_extrapolation"]["message"] == (
        "big: 33,500 ops/s measured at 72% utilization is scaled to 37,222 ops/s by the utilization law; nothing was "
        "measured above 72%")
    assert reasons["latency_unmeasured"]["message"] == ("big: latency was measured at 33,500 ops/s, not at the "
                                                        "planned 37,222 ops/s")
    assert any("scaled to 37,222 ops/s" in n for n in record["notes"])
    # measured at 90% and planned at 80%: scaled down, inside what was measured: sound
    assert rows["safe"]["throughput"] == pytest.approx(30000 * 0.8 / 0.9)
    assert rows["safe"]["evidence"] == {"grade": "sound", "meaning": MEANINGS["sound"], "reasons": [], "next_step": None}
    # the answer names big (the only VM carrying 35,000 users): the study's verdict is big's
    assert record["recommendations"][0]["vm"] == "big"
    assert record["evidence"]["grade"] == "weak"
    assert {r["code"] for r in record["evidence"]["reasons"]} == {"utilization_extrapolation", "latency_unmeasured"}


def test_plan_gives_the_verdict_the_currency_and_the_runway(measured_vm):
    argv = ["plan", *measured_vm, "--target-users", "35000", "--growth", "0.05", "--current-users", "15000"]
    record = json.loads(ok(*argv, "--json"))
    # months = ln(capacity / users) / ln(1.05): big carries 37,222 users, safe 26,667
    big = math.log(33500 * 0.8 / 0.72 / 15000) / math.log(1.05)
    safe = math.log(30000 * 0.8 / 0.9 / 15000) / math.log(1.05)
    target = math.log(35000 / 15000) / math.log(1.05)
    runway = {row["vm"]: row["runway_months"] for row in record["vms"]}
    assert runway == {"big": pytest.approx(big), "safe": pytest.approx(safe)}
    assert {row["currency"] for row in record["vms"]} == {"EUR"}
    (answer,) = record["recommendations"]
    assert (answer["vm"], answer["monthly_cost"]) == ("big", 1000)
    assert answer["months_until_target"] == pytest.approx(target)
    # the verdict on the answer and its note
    assert record["evidence"]["grade"] == "weak"
    assert "big: latency was measured at 33,500 ops/s, not at the planned 37,222 ops/s" in record["notes"]


def test_a_runway_without_current_users_names_the_option(tmp_path):
    catalog = tmp_path / "vms.csv"
    catalog.write_text("vm,monthly_cost\na,100\n")
    measured = tmp_path / "m.csv"
    measured.write_text("vm,throughput,cpu_util\na,1000,0.5\n")
    proc = cli("plan", "--catalog", str(catalog), "--measurements", str(measured), "--ops-per-user", "1",
               "--growth", "0.05")
    assert proc.returncode == 2 and "--current-users" in proc.stderr and "Traceback" not in proc.stderr


def test_bundled_study_says_utilization_was_assumed():
    study = plan_study(targets=[50000])
    assert study.recommended_vms() == ["s3-2xlarge-8-SAS"]
    # benchANT measured cpu_util on the baseline only (80%); the others are taken at the baseline's
    assert study.plan.vm_evidence["m3-xlarge-8-SAS"].grade == "sound"
    assumed = study.plan.vm_evidence["s3-2xlarge-8-SAS"].reasons
    assert [r.code for r in assumed] == ["utilization_assumed"] and assumed[0].value == 0.8
    assert study.evidence.grade == "weak"


def _two_vm_curves(tmp_path):
    frames = []
    for vm, name in (("ray", "usl_raytracer"), ("sdm", "usl_specsdm91")):
        frames.append(datasets.load_curve(name)[["concurrency", "throughput"]].assign(system=vm))
    curves = tmp_path / "curves.csv"
    pd.concat(frames).to_csv(curves, index=False)
    catalog = tmp_path / "vms.csv"
    catalog.write_text("vm,monthly_cost\nray,100\nsdm,200\n")
    return ["--catalog", str(catalog), "--curves", str(curves), "--ops-per-user", "1"]


def _family_comparison(name: str):
    """The USL family ranked on a bundled curve, as the plan ranks it (capmodel.plan.assessment.compare_family)."""
    from capmodel.models.usl.selection import compare_models
    from capmodel.plan.assessment import USL_FAMILY

    return compare_models(datasets.load_curve(name), models=list(USL_FAMILY), extrapolation=False)


def test_a_model_the_comparison_ranks_worse_is_noted_or_replaced_and_its_interval_holds_both(tmp_path):
    from scipy.optimize import curve_fit

    args = _two_vm_curves(tmp_path)
    default = json.loads(ok("plan", *args, "--json"))
    # the raytracer never turns down: the comparison prefers Amdahl; the plan uses the USL by default and says so
    assert any("ray: planned from the usl model although the comparison recommends amdahl" in n
               for n in default["notes"])
    assert not any(n.startswith("sdm:") for n in default["notes"])    # SPEC SDM91 falls: the USL is recommended
    chosen = json.loads(ok("plan", *args, "--model", "recommended", "--json"))
    assert any("ray: planned from the amdahl model, which the comparison recommends" in n for n in chosen["notes"])
    # Amdahl has no peak: without cpu_util the utilization target is 80% of its ceiling λ/σ (scipy's fit here)
    curve = datasets.load_curve("usl_raytracer")
    n, x = curve["concurrency"].to_numpy(float), curve["throughput"].to_numpy(float)
    (sigma, lam), _ = curve_fit(lambda n, s, l: l * n / (1 + s * (n - 1)), n, x, p0=[0.05, 20])
    amdahl_plan = 0.8 * lam / sigma
    # either way the capacity's interval is 80% of the peak's range over the USL family's region, whose edge κ = 0 is
    # the Amdahl curve: the model choice is inside the interval, and the verdict judges its width
    low, high = _family_comparison("usl_raytracer").region(0.95).only("usl").limit_interval()
    for record in (default, chosen):
        ray = {r["vm"]: r for r in record["vms"]}["ray"]
        assert ray["usable_throughput"] == pytest.approx(amdahl_plan, rel=2e-3)
        assert (ray["usable_throughput_low"], ray["usable_throughput_high"]) == pytest.approx((0.8 * low, 0.8 * high))
        reasons = {r["code"]: r for r in ray["evidence"]["reasons"]}
        assert ray["evidence"]["grade"] == "weak" and "wide_interval" in reasons
        assert reasons["wide_interval"]["value"] == pytest.approx(high / low)


def test_the_python_keyword_chooses_the_model_too():
    curve = datasets.load_curve("usl_raytracer")     # the comparison prefers Amdahl (the curve never turns down)
    from capmodel.models.usl.fit import fit_usl

    catalog = pd.DataFrame({"vm": ["sdm"], "monthly_cost": [200.0]})
    kept = plan_study(catalog=catalog, fits={"sdm": fit_usl(curve)}, ops_per_user=1)
    chosen = plan_study(catalog=catalog, fits={"sdm": fit_usl(curve)}, ops_per_user=1, model="recommended")
    assert any(n.startswith("sdm: planned from the usl model although") for n in kept.plan.notes)
    assert any(n.startswith("sdm: planned from the amdahl model, which") for n in chosen.plan.notes)
    with pytest.raises(Exception, match="model"):
        plan_study(catalog=catalog, fits={"sdm": fit_usl(curve)}, ops_per_user=1, model="best")
    # the USL's κ is 0 here, so both plan 80% of the same ceiling; the choice is read into one interval
    kept_cap, chosen_cap = kept.plan.fit_capacities["sdm"], chosen.plan.fit_capacities["sdm"]
    assert np.isfinite(chosen_cap.usable_throughput)
    assert chosen_cap.usable_throughput == pytest.approx(kept_cap.usable_throughput, rel=1e-6)
    assert (chosen_cap.usable_throughput_low, chosen_cap.usable_throughput_high) == pytest.approx(
        (kept_cap.usable_throughput_low, kept_cap.usable_throughput_high))
    assert kept.plan.vm_evidence["sdm"].to_json() == chosen.plan.vm_evidence["sdm"].to_json()


def test_a_vm_whose_curve_is_unusable_gets_no_users(tmp_path):
    # one VM measured through an all-client-bound sweep (as `capmodel bench` writes it), one from SPEC SDM91
    sweep = pd.read_csv("tests/fixtures/client_bound_sweep/curve.csv").assign(system="clientbound")
    sdm = datasets.load_curve("usl_specsdm91")[["concurrency", "throughput"]].assign(system="sdm")
    curves = tmp_path / "curves.csv"
    pd.concat([sweep, sdm]).to_csv(curves, index=False)
    catalog = tmp_path / "vms.csv"
    catalog.write_text("vm,monthly_cost\nclientbound,10\nsdm,200\n")
    args = ["plan", "--catalog", str(catalog), "--curves", str(curves), "--ops-per-user", "1", "--target-users",
            "100"]
    record = json.loads(ok(*args, "--json"))
    rows = {r["vm"]: r for r in record["vms"]}
    assert rows["clientbound"]["evidence"]["grade"] == "unusable"
    assert rows["clientbound"]["users"] is None and rows["clientbound"]["binding_limit"] == "unsupported"
    assert rows["clientbound"]["throughput"] is None and rows["clientbound"]["throughput_per_cost"] is None
    assert rows["sdm"]["users"] > 100
    # the cheap VM would carry 100 users by its curve; with no supported capacity the answer is the other one
    assert record["recommendations"][0]["vm"] == "sdm"
    assert any(n.startswith("clientbound: no users planned: its fitted curve cannot support a capacity")
               for n in record["notes"])


def test_plan_curve_options_that_the_advice_names_exist(tmp_path):
    curves = tmp_path / "c.csv"
    curves.write_text("system,N,X\na,1,20\na,2,39\na,4,70\na,8,100\na,16,120\n")
    catalog = tmp_path / "vms.csv"
    catalog.write_text("vm,monthly_cost\na,100\n")
    base = ["plan", "--catalog", str(catalog), "--curves", str(curves), "--ops-per-user", "1"]
    proc = cli(*base)
    assert proc.returncode == 2 and "map it with --concurrency COL" in proc.stderr
    record = json.loads(ok(*base, "--concurrency", "N", "--throughput", "X", "--json"))
    assert record["vms"][0]["vm"] == "a"
    proc = cli(*base, "--vm-column", "nope")
    assert proc.returncode == 2 and "--vm-column nope: no such column" in proc.stderr
    proc = cli("plan", "--model", "recommended")
    assert proc.returncode == 2 and "--curves" in proc.stderr


def test_a_fitted_vms_verdict_is_its_capacitys_named_by_vm():
    from capmodel.models.usl.verdict.assessment import fit_verdict
    from capmodel.models.usl.fit import fit_usl
    from capmodel.plan.assessment import assess_fitted_vm
    from capmodel.plan.capacity import Objectives, capacity_from_fit

    fit = fit_usl(datasets.load_curve("usl_specsdm91"))
    capacity = capacity_from_fit(fit, Objectives(utilization_target=0.8))
    # without CPU the plan is 80% of the peak, so its interval is 80% of the peak's: as wide as the peak's, weak
    peak = fit.figure_intervals(0.95)["peak_throughput"]
    assert (capacity.usable_throughput_low, capacity.usable_throughput_high) == pytest.approx(
        (0.8 * peak.low, 0.8 * peak.high))
    verdict = assess_fitted_vm("sdm", fit, capacity)
    assert [(r.code, r.grade, r.value) for r in verdict.reasons] == [
        (r.code, r.grade, r.value) for r in capacity.evidence.reasons]
    assert [r.message for r in verdict.reasons] == [f"sdm: {r.message}" for r in capacity.evidence.reasons]
    assert verdict.grade == "weak" and verdict.reasons[0].value == pytest.approx(peak.high / peak.low)
    # no capacity planned: the fit's own verdict on its peak
    alone = assess_fitted_vm("sdm", fit, None)
    assert [(r.code, r.grade) for r in alone.reasons] == [(r.code, r.grade) for r in fit_verdict(fit).reasons]
