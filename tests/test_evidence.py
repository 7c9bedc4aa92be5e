"""The evidence verdict's algebra: the grade is the worst reason's, JSON as the CLI prints it."""
import math

import pytest

from capmodel.errors import CapmodelError
from capmodel.models.evidence import Evidence, Reason


def test_no_reason_is_sound():
    assert Evidence().grade == "sound"
    assert Evidence.of(None, None).to_json() == {"grade": "sound", "reasons": []}


def test_grade_is_the_worst_reason():
    weak = Reason("low_r2", "weak", "R² is 0.41", 0.41)
    bad = Reason("client_bound", "unusable", "every step was client-bound", 7)
    assert Evidence.of(weak).grade == "weak"
    assert Evidence.of(weak, bad).grade == "unusable"
    assert not Evidence.of(bad, weak).usable
    combined = Evidence.of(weak) + Evidence.of(weak, bad)
    assert combined.codes() == ["low_r2", "client_bound"]
    assert combined.describe().startswith("Evidence: **unusable**: every step was client-bound; R² is 0.41")


def test_json_has_no_non_finite_value():
    doc = Evidence.of(Reason("extrapolation", "weak", "beyond the data", math.inf)).to_json()
    assert doc == {"grade": "weak", "reasons": [{"code": "extrapolation", "grade": "weak",
                                                 "message": "beyond the data", "value": None}]}


def test_a_reason_cannot_be_sound():
    with pytest.raises(CapmodelError):
        Reason("x", "sound", "nothing")


def test_lines_are_the_grade_then_one_line_per_reason():
    weak = Reason("low_r2", "weak", "R² is 0.41", 0.41)
    assert Evidence().lines() == ["evidence: sound"]
    assert Evidence.of(weak).lines() == ["evidence: weak", "  - weak: R² is 0.41"]
