"""The index of rendered reports gives, per report, its answer in one sentence, the grade of its evidence and the
reason that sets it, with the next step when one is known; a failed report says why in place of its answer.

What the index shows is stored in each executed notebook's metadata at render time (``capmodel.answer``): the tests
read that record against the headline's own evidence, and the page against the record.
"""
from __future__ import annotations

import html
import re

import nbformat
import pytest

from capmodel.models.evidence import GRADES, MEANINGS, Evidence, NextStep, Reason
from capmodel.report import notebooks
from capmodel.report.headline import MIME, headline
from capmodel.report.index import write_index
from capmodel.report.index_entry import answer_record, one_sentence
from capmodel.report.verdict import evidence_of, verdict_html
from tests.support.rendered_reports import render_small

STEP = NextStep((48.0, 64.0), 2, "measure 48 and 64 clients twice each")
WIDE = Reason("wide_interval", "weak", "the interval spans 1.9x", 1.9, STEP)
BOUND = Reason("client_bound", "unusable", "every step was client-bound")
BELOW = Reason("below_best", "weak", "the plan is read off a peak below the best measured", 1.06)


def _text(page: str) -> str:
    """A page's text as a reader reads it: blocks apart, inline tags dropped, entities read, whitespace folded."""
    blocks = re.sub(r"</?(td|th|tr|div|p|li|ul|br|h\d|summary|details)\b[^>]*>", " ", page)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", blocks)))


def _rows(page: str) -> list[str]:
    return page.split("<tr>")[2:]


def _notebook(folder, name: str, shown=None, error: str | None = None, store: bool = True) -> None:
    """An executed report as ``capmodel.report.execute`` writes it: its record, its headline, what the index shows."""
    nb = nbformat.v4.new_notebook()
    data = shown.to_json() if shown is not None else None
    if data is not None:
        nb.cells.append(nbformat.v4.new_code_cell(outputs=[nbformat.v4.new_output(
            "display_data", data={"text/html": shown._repr_html_(), MIME: data})]))
    nb.metadata["capmodel"] = {"report": {"name": name, "parameters": {}, "rendered_at": "2026-01-02T03:04:05+00:00",
                                          "total_s": 1.0, "error": error},
                               "question": "Q?", "headline": data}
    if store:
        nb.metadata["capmodel"]["answer"] = answer_record(data, error)
    nbformat.write(nb, folder / f"{name}.ipynb")


# -------------------------------------------------------------------------- the record, on verdicts made here
def test_the_record_takes_the_grade_main_reason_and_next_step_of_the_verdict():
    weak = Evidence.of(BELOW, WIDE)
    shown = headline("Q?", "A first sentence. A second one.", weak, short_answer="The one sentence.")
    record = answer_record(shown.to_json())
    assert record == {"sentence": "The one sentence.", "decision": None, "grade": "weak",
                      "main_reason": {"code": "below_best", "grade": "weak", "message": BELOW.message},
                      "next_step": STEP.text, "error": None}
    assert record["main_reason"]["code"] == weak.main_reason.code and record["next_step"] == weak.next_step.text
    # unusable: the gravest reason sets the grade; a weak reason's advice is not the verdict's next step
    worst = Evidence.of(WIDE, BOUND, BELOW)
    record = answer_record(headline("Q?", "A.", worst).to_json())
    assert record["grade"] == "unusable" and record["main_reason"]["code"] == "client_bound" == worst.main_reason.code
    assert record["next_step"] == (None if worst.next_step is None else worst.next_step.text)
    sound = answer_record(headline("Q?", "All fine. Really.", Evidence()).to_json())
    assert sound["grade"] == "sound" and sound["main_reason"] is None and sound["next_step"] is None
    assert sound["sentence"] == "All fine."       # no short answer given: the answer's first sentence


def test_a_verdict_stored_as_json_reads_back_as_the_same_evidence():
    verdict = Evidence.of(BELOW, WIDE, BOUND)
    back = evidence_of(verdict.to_json())
    assert back == verdict and back.main_reason == verdict.main_reason and back.next_step == verdict.next_step


@pytest.mark.parametrize("answer, first", [
    ("Read from the sample: 67 intervals, 67 with operations. Each operation costs 1.35 ms.",
     "Read from the sample: 67 intervals, 67 with operations."),
    ("- **Little's law** holds within 0.56% at every count.\n- **Utilization law**: 80%.",
     "**Little's law** holds within 0.56% at every count."),
    ("λ = 1,424 (607 to 2,341) ops/s per client; R² = 0.923.", "λ = 1,424 (607 to 2,341) ops/s per client; R² = 0.923."),
    ("At 0.26 ops/s per user it is **17,617 users**. Next.", "At 0.26 ops/s per user it is **17,617 users**."),
])
def test_an_answer_without_its_own_short_answer_gives_its_first_sentence(answer, first):
    assert one_sentence(answer) == first


def test_the_index_shows_answer_grade_main_reason_and_next_step_and_a_failure_says_why(tmp_path):
    _notebook(tmp_path, "01_planned", headline("Q?", "Long answer. More.", Evidence.of(BELOW, WIDE),
                                            short_answer="Planned at **4,580 ops/s**."))
    _notebook(tmp_path, "02_fine", headline("Q?", "Fine. More.", Evidence(), short_answer="All **good**."))
    _notebook(tmp_path, "03_broken", headline("Q?", "Half an answer.", Evidence.of(WIDE)),
              error="cell 4: ValueError: no curve")
    _notebook(tmp_path, "04_older", headline("Q?", "Rendered before the record. Second.", Evidence.of(BOUND)),
              store=False)
    page = write_index(tmp_path).read_text()
    weak, sound, failed, old = _rows(page)
    assert "Planned at <strong>4,580 ops/s</strong>." in weak
    assert _text(weak).count("weak") == 1 and BELOW.message in weak and WIDE.message not in weak
    assert f"Next step: {STEP.text}." in _text(weak)
    assert "All <strong>good</strong>." in sound and ">sound<" in sound and "Next step" not in sound
    # a failed report: why, in place of the answer, and no grade (its page says no answer is given)
    assert "Failed: cell 4: ValueError: no curve." in _text(failed)
    assert "Half an answer" not in failed and "weak" not in _text(failed)
    # a notebook rendered before the record was stored: rebuilt from its headline
    assert "Rendered before the record." in old and BOUND.message in old and ">unusable<" in old


# -------------------------------------------------------------------------- the verdict block on every page
def test_the_verdict_block_states_what_its_grade_means_once_with_why_and_the_next_step():
    for verdict in (Evidence(), Evidence.of(WIDE), Evidence.of(BELOW, WIDE, BOUND)):
        block = verdict_html(verdict)
        text = _text(block)
        assert text.count(MEANINGS[verdict.grade]) == 1, text
        assert all(r.message in text for r in verdict.reasons)
        if verdict.reasons:
            # the reason that sets the grade comes first, the others after it
            assert text.index(verdict.main_reason.message) == min(text.index(r.message) for r in verdict.reasons)
    assert "Next step: " + STEP.text in _text(verdict_html(Evidence.of(WIDE)))
    assert "Why: every step was client-bound." in _text(verdict_html(Evidence.of(BOUND)))   # one reason, a sentence


# -------------------------------------------------------------------------- the rendered suite
@pytest.fixture(scope="module")
def reports(tmp_path_factory, mongod):
    out, _ = render_small(tmp_path_factory, mongod.uri)
    return out


@pytest.mark.notebooks
def test_every_rendered_report_stores_its_one_sentence_answer_grade_and_main_reason(reports):
    for name in notebooks.names():
        meta = nbformat.read(reports / f"{name}.ipynb", as_version=4).metadata["capmodel"]
        record, shown = meta["answer"], meta["headline"]
        assert record["error"] is None and record["sentence"], name
        assert one_sentence(record["sentence"]) == record["sentence"], (name, record["sentence"])
        assert record["sentence"] == shown["short_answer"]
        verdict = evidence_of(shown["evidence"])
        assert record["grade"] == verdict.grade == shown["evidence"]["grade"] and record["grade"] in GRADES
        main = verdict.main_reason
        assert record["main_reason"] == (None if main is None else
                                         {"code": main.code, "grade": main.grade, "message": main.message}), name
        assert record["next_step"] == (None if verdict.next_step is None else verdict.next_step.text), name


@pytest.mark.notebooks
def test_the_index_of_the_rendered_suite_gives_each_reports_answer_grade_and_reason(reports):
    page = (reports / "index.html").read_text()
    rows = _rows(page)
    assert len(rows) == len(notebooks.names())
    for name, row in zip(notebooks.names(), rows):
        record = nbformat.read(reports / f"{name}.ipynb", as_version=4).metadata["capmodel"]["answer"]
        text = _text(row)
        said = record.get("decision") or record["sentence"]      # the headline's decision first, where it has one
        assert _text(re.sub(r"\*\*|`", "", said)) in text, (name, text)
        assert f'class="grade grade-{record["grade"]}">{record["grade"]}<' in row
        if record["main_reason"]:
            assert record["main_reason"]["message"] in text, (name, text)


@pytest.mark.notebooks
def test_every_rendered_page_states_what_its_grade_means(reports):
    for name in notebooks.names():
        page = _text((reports / f"{name}.html").read_text())
        grade = nbformat.read(reports / f"{name}.ipynb", as_version=4).metadata["capmodel"]["answer"]["grade"]
        assert f"Evidence: {grade} — what {grade} means: {MEANINGS[grade]}." in page, name


def test_the_index_shows_the_decision_where_the_headline_states_one(tmp_path):
    # the index listed "contention (σ = 0.0563) bends the curve ... (95% interval 11,851 to 22,071 ops/s)": a manager
    # reads the decision the headline leads with, the one-sentence answer where it has none
    from capmodel.report.index import write_index

    _notebook(tmp_path, "01_decided", headline("Q?", "The answer (with its interval).", Evidence(),
                                                short_answer="One sentence (σ = 0.05).",
                                                decision="**Plan 16 shards**: now."))
    _notebook(tmp_path, "02_plain", headline("Q?", "Fine. More.", Evidence(), short_answer="All **good**."))
    page = write_index(tmp_path).read_text()
    assert "<strong>Plan 16 shards</strong>: now." in page and "σ = 0.05" not in page
    assert "All <strong>good</strong>." in page
    record = answer_record(headline("Q?", "A.", Evidence(), decision="**Do**.").to_json())
    assert record["decision"] == "**Do**." and record["sentence"] == "A."
