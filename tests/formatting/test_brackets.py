"""Sentences a manager reads: no bracket closes twice ('(R² 0.624))'), and no range whose ends differ only past the
figures' own precision ('36,531–36,532 ops/s' on an exactly fitted load)."""
import html
import re

import pytest

from capmodel.formatting import aside, interval, interval_words, number, shows_width, unnested
from capmodel.report.headline import _parameter_state


def nested_asides(text: str) -> list[str]:
    """Every prose bracket opened inside another prose bracket (a bracket opened after a space: a formula's X(N),
    σ(N − 1) or √((1 − σ)/κ) is not prose), with the text around it."""
    found, opened = [], []
    for i, ch in enumerate(text):
        if ch == "(":
            prose = i == 0 or text[i - 1].isspace()
            if prose and any(opened):
                found.append(text[max(0, i - 80):i + 60])
            opened.append(prose)
        elif ch == ")" and opened:
            opened.pop()
    return found


@pytest.mark.parametrize("clause, said", [
    ("the USL explains little of the observed throughput (R² 0.624)",
     "(the USL explains little of the observed throughput: R² 0.624)"),
    ("0 takes what the server reports (the host's CPU count)", "(0 takes what the server reports: the host's CPU count)"),
    ("the fit (R² 0.62) is weak; the peak (645 ops/s) is below", "(the fit, R² 0.62, is weak; the peak, 645 ops/s, is below)"),
    ("a (b (c)) d", "(a, b, c, d)"),
    ("X(N) = λN / (1 + σ(N − 1) + κN(N − 1))", "(X(N) = λN / (1 + σ(N − 1) + κN(N − 1)))"),   # a formula stays
])
def test_a_bracketed_clause_says_its_own_asides_without_brackets(clause, said):
    assert aside(clause) == said and (not nested_asides(said) or "=" in clause)   # a formula keeps its brackets


def test_a_parameters_note_with_its_own_aside_does_not_close_twice():
    # the 07 page read "cores = 0 (default; 0 takes what the server reports (the host's CPU count))"
    shown = _parameter_state(True, False, "0 takes what the server reports (the host's CPU count)")
    assert html.unescape(shown) == "(default; 0 takes what the server reports: the host's CPU count)"
    assert unnested("no aside here") == "no aside here"


def test_the_sentences_that_bracket_a_reason_built_elsewhere_use_aside():
    """The class, in the source: a clause built elsewhere (a reason, a why, a note) is bracketed by ``aside``."""
    from pathlib import Path
    import capmodel

    root = Path(capmodel.__file__).parent
    bare = re.compile(r"\(\{[\w.]*(?:reason|why|usl_note|_problem|message)\w*\}\)")
    sites = [f"{p.relative_to(root)}:{n}" for p in root.rglob("*.py")
             for n, line in enumerate(p.read_text().splitlines(), 1)
             if bare.search(line) and "Error(" not in line and "raise" not in line]
    assert not sites, sites


@pytest.mark.parametrize("low, high, width", [
    (36_531.4, 36_531.6, False),     # "36,531–36,532": equal at three significant digits
    (36_400, 36_600, True),
    (1_000, 1_004, False),
    (581.2, 602.4, True),
    (5, 6, True),                    # months: a whole step is a width
    (0.033112, 0.033138, False),
])
def test_a_range_is_shown_only_when_its_ends_differ_at_the_figures_precision(low, high, width):
    assert shows_width(low, high) is width
    assert (interval(36_531.5, low, high) != number(36_531.5)) is width
    assert bool(interval_words(36_531.5, low, high)) is width


def test_every_rendered_page_brackets_no_prose_inside_prose(reports):
    from capmodel.report import notebooks
    from tests.report.test_notebooks import _page_text

    for name in notebooks.names():
        text = re.sub(r"<[^>]+>", " ", _page_text(reports, name))
        assert not nested_asides(text), (name, nested_asides(text)[:3])
        assert not re.search(r"(\d[\d,.]*)\s?–\s?\1\b(?![\d,.])", text), name   # no "36,531–36,531"


@pytest.fixture(scope="module")
def reports(tmp_path_factory, mongod):
    from tests.support.rendered_reports import render_small

    return render_small(tmp_path_factory, mongod.uri)[0]


def test_the_workloads_range_reads_in_words_not_with_a_minus():
    # report 03 and 'capmodel plan' said "0.26 ops/s per user (0.24-0.28)": a hyphen between figures reads as a minus;
    # the range is said in words, as every interval under a headline is
    from tests.support.cli_run import run

    result = run("plan")
    assert result.returncode == 0 and "0.26 ops/s per user, between 0.24 and 0.28," in result.stdout, result.stdout


def test_an_r2_below_the_unusable_line_never_reads_as_the_line_itself():
    # R² below 0 (worse than the mean) is unusable, said with the digits that show it below 0; an R² between 0 and 1
    # is no reason of its own (the figure's interval carries the scatter)
    from types import SimpleNamespace

    import numpy as np

    from capmodel.models.usl.verdict.assessment import check_r2

    points = np.array([100.0, 180.0, 250.0])
    assert check_r2(SimpleNamespace(r2=0.8951, throughput=points, model="usl")) is None
    worse = check_r2(SimpleNamespace(r2=-0.0012, throughput=points, model="usl"))
    assert worse.grade == "unusable" and worse.message.startswith("R² = -0.001:"), worse.message
