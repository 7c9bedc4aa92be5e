"""The grades keep their promises on curves of known truth: a smaller seeded draw of the calibration study
(``benchmarks/calibrate_verdicts.py``, which prints the whole table on 1,200 curves).

For the fit, the model the comparison chooses, the capacity a plan reads off the fit and the capacity under a p95
target: sound answers' 95% intervals hold the truth at least 93% of the time and none is off by more than 25%; weak
answers' intervals hold it at least 85% of the time; unusable answers state no figure; and on the clean designs
(past the peak, 8 or more levels, noise at most 5%) at least 80% of the fits are sound.
"""
from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pytest

STUDY = Path(__file__).resolve().parents[2] / "benchmarks" / "calibrate_verdicts.py"
CURVES = 240


@pytest.fixture(scope="module")
def study():
    spec = importlib.util.spec_from_file_location("calibrate_verdicts", STUDY)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("calibrate_verdicts", module)      # its dataclasses look their module up
    spec.loader.exec_module(module)
    answers = [a for i in range(CURVES) for a in module.curve_task((11, i))]
    frame = module.rows_of(answers)
    return module, frame, module.summary(frame)


def rows(table, grade):
    return table[(table["grade"] == grade) & (table["figure"] != "peak_concurrency")]


def test_sound_answers_cover_and_are_never_far_off(study):
    module, frame, table = study
    sound = rows(table, "sound")
    assert set(sound["answer"]) == {"fit", "auto", "plan", "latency"}, sound
    for _, row in sound.iterrows():
        assert row["coverage"] >= module.SOUND_COVERAGE, row
        assert row["worst"] <= module.SOUND_WORST, row


def test_weak_answers_still_cover(study):
    module, frame, table = study
    for _, row in rows(table, "weak").iterrows():
        assert row["coverage"] >= module.WEAK_COVERAGE, row


def test_unusable_answers_state_no_figure_only_a_lower_bound(study):
    module, frame, table = study
    unusable = frame[frame["grade"] == "unusable"]
    assert len(unusable) and not unusable["stated"].any()
    fits = unusable[unusable["figure"] == "peak_throughput"]
    assert fits["high"].map(math.isinf).all()                 # "at least" the lower end, no upper end


def test_clean_designs_are_mostly_sound(study):
    module, frame, table = study
    for answer in ("fit", "auto"):
        clean = frame[(frame["answer"] == answer) & frame["clean"] & (frame["figure"] == "peak_throughput")]
        assert len(clean) >= 30 and (clean["grade"] == "sound").mean() >= module.CLEAN_SOUND


def test_the_grades_split_the_errors(study):
    """Weak answers are off by more than sound ones (the split carries information), and every grade is used."""
    module, frame, table = study
    fits = table[(table["answer"] == "fit") & (table["figure"] == "peak_throughput")].set_index("grade")
    assert set(fits.index) >= {"sound", "weak", "unusable"}
    assert fits.loc["weak", "median_error"] > 2 * fits.loc["sound", "median_error"]
