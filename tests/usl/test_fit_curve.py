"""``capmodel.fit_curve``: the model asked for is the one fitted (the same fit ``fit_usl`` and the family give),
``auto`` takes the comparison's recommendation, and bad requests are refused by name before any fit."""
from __future__ import annotations

import json

import pytest

import capmodel
from capmodel.errors import InputError
from capmodel.models.usl.family import get_model
from capmodel.models.usl.selection import MODEL_CHOICES


@pytest.fixture(scope="module")
def curve():
    return capmodel.datasets.load_curve("usl_raytracer")


def test_a_named_model_is_that_model_fitted_alone(curve):
    usl = capmodel.fit_curve(curve, "usl")
    assert usl.comparison is None
    assert usl.fit.params == pytest.approx(capmodel.fit_usl(curve).params, rel=1e-12)
    amdahl = capmodel.fit_curve(curve, "amdahl")
    assert amdahl.fit.params == pytest.approx(get_model("amdahl").fit(curve).params, rel=1e-12)
    assert amdahl.to_json()["kappa"] == 0.0 and amdahl.to_json()["ci"]["kappa"] == [0.0, 0.0]


def test_auto_takes_the_comparisons_recommendation(curve):
    answer = capmodel.fit_curve(curve, "auto", level=0.9)
    assert answer.fit.model == capmodel.compare_models(curve).recommended
    record = answer.to_json()
    assert record["model"] == answer.fit.model and record["level"] == 0.9
    assert [row["model"] for row in record["selection"]["table"]] == answer.comparison.table["model"].tolist()
    assert record["evidence"]["grade"] == answer.evidence.grade
    json.dumps(record, allow_nan=False)


def test_the_answer_sentence_carries_the_figures_of_the_json():
    """On a curve with a peak (SPEC SDM91, Gunther's reference set): the sentence states the JSON's peak throughput
    and concurrency with their intervals, and the text summary opens with it."""
    from capmodel.formatting import number

    answer = capmodel.fit_curve(capmodel.datasets.load_curve("usl_specsdm91"), "usl")
    record, sentence = answer.to_json(), answer.describe()
    assert answer.evidence.usable and sentence.startswith("Throughput peaks at ")
    low, high = record["ci"]["peak_throughput"]
    assert f"{number(record['peak_throughput'])} ops/s (95% interval {number(low)} to {number(high)} ops/s)" in sentence
    assert f"at about {number(record['peak_concurrency'])} clients" in sentence
    assert answer.summary().splitlines()[0] == "Answer: t" + sentence[1:]


@pytest.mark.parametrize("kwargs, message", [
    ({"model": "cubic"}, "model: expected one of " + ", ".join(MODEL_CHOICES)),
    ({"model": "amdahl", "allow_superlinear": True}, "allow_superlinear: applies to the usl model only"),
    ({"model": "usl", "level": 1.5}, "level: expected a confidence level between 0 and 1"),
])
def test_bad_requests_are_refused_by_name(curve, kwargs, message):
    with pytest.raises(InputError, match=message):
        capmodel.fit_curve(curve, **kwargs)


def test_a_comparison_gives_the_fit_a_choice_names(curve):
    """``ModelComparison.fit_for``: the one rule for "auto or a named model" that fit_curve and report 02 follow."""
    comparison = capmodel.compare_models(curve)
    assert comparison.fit_for("auto") is comparison.fits[comparison.recommended]
    assert comparison.fit_for("amdahl") is comparison.fits["amdahl"]
    with pytest.raises(InputError, match="model: 'cubic' is not one of auto, "):
        comparison.fit_for("cubic")
