"""What the index of reports shows of each one: the answer in one sentence, its grade, the reason that sets the grade
and the next step, taken from the headline when the report is rendered and stored in the executed notebook's
metadata (``capmodel.answer``), so that the index never re-runs a report nor parses its page.

Each report states its own one-sentence answer (``headline(..., short_answer=...)``, from the report's result object);
a headline without one gives its answer's first sentence (``one_sentence``).
"""
from __future__ import annotations

import re

from capmodel.report.verdict import evidence_of, grade_of

#: a sentence ends at a full stop, question or exclamation mark followed by space and a capital, a digit or markdown
#: emphasis (not inside "e.g. this" or "0.56%"); a list item ends at its line
_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9*`_])")


def one_sentence(markdown: str) -> str:
    """The first sentence of an answer (markdown): its first list item's text when it opens with a list."""
    text = (markdown or "").strip()
    if not text:
        return ""
    first = text.splitlines()[0] if re.match(r"\s*[-*+] ", text) else text
    first = re.sub(r"^\s*[-*+] ", "", first)
    return _END.split(first.replace("\n", " "), maxsplit=1)[0].strip()


def answer_record(headline: dict | None, error: str | None = None) -> dict:
    """The index's record of one rendered report: ``sentence`` (markdown, one sentence), ``decision`` (markdown, the
    headline's decision, at most two short sentences; None when it states none), ``grade``, ``main_reason`` (its
    message, code and grade; None when sound), ``next_step`` (its words; None when none is known) and ``error`` (why
    the report failed; None when it ran)."""
    headline = headline or {}
    evidence = evidence_of(headline.get("evidence"))
    main = evidence.main_reason if evidence is not None else None
    step = evidence.next_step if evidence is not None else None
    sentence = headline.get("short_answer") or one_sentence(headline.get("answer", ""))
    return {"sentence": sentence, "decision": headline.get("decision") or None,
            "grade": grade_of(headline.get("evidence")) or None,
            "main_reason": None if main is None else {"code": main.code, "grade": main.grade,
                                                      "message": main.message},
            "next_step": None if step is None else step.text, "error": error}
