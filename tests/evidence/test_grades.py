"""The evidence verdict's algebra: the grade is the worst reason's, its meaning and next step travel with it, JSON as
the CLI prints it."""
import math

import pytest

from capmodel.errors import CapmodelError
from capmodel.models.evidence import GRADES, MEANINGS, Evidence, NextStep, Reason


def test_no_reason_is_sound():
    assert Evidence().grade == "sound"
    assert Evidence.of(None, None).to_json() == {"grade": "sound", "meaning": MEANINGS["sound"], "reasons": [],
                                                 "next_step": None}


def test_grade_is_the_worst_reason():
    weak = Reason("low_r2", "weak", "R² is 0.41", 0.41)
    bad = Reason("client_bound", "unusable", "every step was client-bound", 7)
    assert Evidence.of(weak).grade == "weak"
    assert Evidence.of(weak, bad).grade == "unusable"
    assert not Evidence.of(bad, weak).usable
    combined = Evidence.of(weak) + Evidence.of(weak, bad)
    assert combined.codes() == ["low_r2", "client_bound"]
    assert combined.main_reason is bad
    assert combined.describe() == (f"Evidence: **unusable** ({MEANINGS['unusable']}). Why: every step was "
                                   "client-bound; R² is 0.41.")


def test_every_grade_says_what_it_promises():
    assert set(MEANINGS) == set(GRADES)
    assert "93%" in MEANINGS["sound"] and "25%" in MEANINGS["sound"] and "85%" in MEANINGS["weak"]
    for grade in GRADES:
        evidence = Evidence.of(Reason("x", grade, "why")) if grade != "sound" else Evidence()
        assert MEANINGS[grade] in evidence.describe() and MEANINGS[grade] in evidence.lines()[0]


def test_json_has_no_non_finite_value():
    doc = Evidence.of(Reason("extrapolation", "weak", "beyond the data", math.inf)).to_json()
    assert doc == {"grade": "weak", "meaning": MEANINGS["weak"], "next_step": None,
                   "reasons": [{"code": "extrapolation", "grade": "weak", "message": "beyond the data", "value": None,
                                "next_step": None}]}


def test_the_next_step_is_the_gravest_reasons_that_has_one():
    step = NextStep((64.0, 128.0), 1, "measure 2 more levels")
    other = NextStep((8.0,), 3, "repeat the step at 8 clients")
    evidence = Evidence.of(Reason("a", "weak", "wide", None, other), Reason("b", "unusable", "unbounded", None, step),
                           Reason("c", "weak", "no advice"))
    assert evidence.next_step is step
    assert evidence.to_json()["next_step"] == {"levels": [64.0, 128.0], "repeats": 1, "text": "measure 2 more levels"}
    assert evidence.describe().endswith(" Next: measure 2 more levels.")
    assert evidence.lines()[-1] == "next: measure 2 more levels"


def test_a_reason_cannot_be_sound():
    with pytest.raises(CapmodelError):
        Reason("x", "sound", "nothing")


def test_lines_are_the_grade_then_one_line_per_reason_gravest_first():
    weak = Reason("low_r2", "weak", "R² is 0.41", 0.41)
    bad = Reason("client_bound", "unusable", "every step was client-bound", 7)
    assert Evidence().lines() == [f"evidence: sound ({MEANINGS['sound']})"]
    assert Evidence.of(weak, bad).lines() == [f"evidence: unusable ({MEANINGS['unusable']})",
                                              "  - unusable: every step was client-bound", "  - weak: R² is 0.41"]


def test_a_verdict_read_back_from_its_json_is_the_same_verdict():
    step = NextStep((64.0, 128.0), 2, "measure 2 more levels, twice each")
    evidence = Evidence.of(Reason("wide_interval", "weak", "wide", 1.4, step), Reason("in_flight", "unusable", "units"))
    again = Evidence.from_json(evidence.to_json())
    assert again == evidence and again.next_step is None and again.grade == "unusable"
    assert Evidence.from_json({"grade": "sound", "reasons": [{"grade": "sound", "message": "not a reason"}]}) == \
        Evidence()
