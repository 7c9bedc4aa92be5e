"""One verdict per fit: ``capmodel fit FILE --model M --json`` and ``fit.evidence`` give the same grade and the same
reasons for the same data, for every bundled curve and each model a user can ask for (that summary() and describe()
state that verdict is checked in test_verdict_words.py)."""

import pytest

from capmodel import datasets
from capmodel.models.usl.fit import fit_usl
from capmodel.models.usl.rivals import fit_amdahl
from capmodel.models.usl.selection import compare_models
from tests.support.cli_run import run

CURVES = ["usl_specsdm91", "usl_raytracer", "plgm_workload1", "plgm_workload2", "plgm_workload3"]
FITS = {"usl": fit_usl, "amdahl": fit_amdahl}


def cli_evidence(name: str, model: str) -> dict:
    import json

    done = run("fit", str(datasets.path(name)), "--model", model, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["evidence"]


@pytest.mark.parametrize("name", CURVES)
@pytest.mark.parametrize("model", sorted(FITS))
def test_python_results_and_cli_give_one_verdict(name, model):
    fit = FITS[model](datasets.load_curve(name))
    expected = cli_evidence(name, model)
    assert fit.evidence.to_json() == expected


def test_the_verdict_reads_the_models_choice_into_the_interval():
    # the raytracer curve never turns down: the ranking prefers Amdahl. Chosen by the ranking, Amdahl's ceiling is
    # judged by its interval over every family compared; the USL asked for is judged over its own family, whose edge
    # κ = 0 is the Amdahl curve, so its interval holds the ceiling the ranking prefers
    from capmodel.models.usl.verdict.assessment import assess_fit

    curve = datasets.load_curve("usl_raytracer")
    comparison = compare_models(curve)
    assert comparison.recommended == "amdahl"
    chosen = assess_fit(comparison.best_fit, comparison)
    low, high = comparison.region(0.95).limit_interval()
    assert chosen.main_reason.code == "wide_interval" and chosen.main_reason.value == pytest.approx(high / low)
    fit = fit_usl(curve)
    low, high = fit.region(0.95).limit_interval()
    assert fit.evidence.main_reason.code == "wide_interval" and fit.evidence.grade == "weak"
    assert fit.evidence.main_reason.value == pytest.approx(high / low)
    assert low <= comparison.best_fit.ceiling <= high
