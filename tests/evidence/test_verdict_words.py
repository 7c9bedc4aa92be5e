"""Printed wording of a fit's verdict: ``fit.describe()`` and ``fit.summary()`` state the grade and every reason of
``fit.evidence`` (the verdict the JSON carries, checked in test_one_verdict.py), for every bundled curve and each
model a user can ask for; and describe()'s verdict sentence says what was fitted once (no "Fitted, ... was fitted")."""
import re

import pytest

from capmodel import datasets
from tests.evidence.test_one_verdict import CURVES, FITS


@pytest.mark.parametrize("name", CURVES)
@pytest.mark.parametrize("model", sorted(FITS))
def test_describe_and_summary_state_the_fits_grade_and_reasons(name, model):
    fit = FITS[model](datasets.load_curve(name))
    evidence = fit.evidence.to_json()
    text = fit.describe()
    assert f"Evidence: **{evidence['grade']}**" in text
    for reason in evidence["reasons"]:
        assert reason["message"] in text
    assert f"evidence: {evidence['grade']}" in fit.summary().lower()


@pytest.mark.parametrize("name", CURVES)
@pytest.mark.parametrize("model", sorted(FITS))
def test_the_verdict_sentence_says_each_thing_once(name, model):
    text = FITS[model](datasets.load_curve(name)).describe()
    first = text.split("\n")[0]
    assert "Fitted," not in first
    sentences = re.split(r"(?<=[.)])\s+(?=[A-ZΔ])", first)
    for sentence in sentences:
        assert sentence.count("fitted") <= 1, sentence
        assert sentence[0].isupper() or sentence[0] == "Δ", sentence
