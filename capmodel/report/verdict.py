"""A verdict on a page: its grade, what the grade promises, its reasons (the one that sets the grade first) and the
next step, as one HTML block, the same in a report's headline and under a section's figure.

The promise is ``capmodel.models.evidence.MEANINGS``, written there once; this module only places it. The grade, the
main reason and the next step are ``Evidence``'s own (``grade``, ``main_reason``, ``next_step``): a verdict stored as
JSON in an executed notebook is read back into an ``Evidence`` (``evidence_of``) rather than re-derived here.
"""
from __future__ import annotations

import html

from capmodel.formatting import unbroken_names
from capmodel.models.evidence import GRADES, MEANINGS, Evidence

EVIDENCE_CSS_CLASS = "capmodel-evidence"


def evidence_of(evidence) -> Evidence | None:
    """An ``Evidence`` from itself or from its JSON (``Evidence.to_json()``, as a headline stores it); None for None.
    A reason whose grade is not one a reason can have (a hand-written dict) is left out."""
    if evidence is None or isinstance(evidence, Evidence):
        return evidence
    return Evidence.from_json(evidence)


def grade_of(evidence) -> str:
    """The grade a verdict states: its reasons' (``Evidence.grade``), or the one a JSON verdict without reasons
    records."""
    found = evidence_of(evidence)
    if found is None:
        return ""
    if not found.reasons and isinstance(evidence, dict) and evidence.get("grade") in GRADES:
        return evidence["grade"]
    return found.grade


def verdict_html(evidence) -> str:
    """The verdict as an HTML block: "Evidence: GRADE" and what the grade promises on one line, then why (one
    reason in a sentence, several as a list, the main one first), then the next step; "" without a verdict."""
    found = evidence_of(evidence)
    if found is None:
        return ""
    grade = grade_of(evidence)
    parts = [f'<p class="grade"><strong>Evidence: {html.escape(grade)}</strong> '
             f'<span class="meaning">— what {html.escape(grade)} means: {html.escape(MEANINGS[grade])}.</span></p>']
    reasons = found.ordered
    if len(reasons) == 1:
        parts.append(f'<p class="why">Why: {html.escape(reasons[0].message)}.</p>')
    elif reasons:
        items = "".join(f"<li>{html.escape(r.message)}" + ("" if r.grade == grade else
                                                              f" <small>({html.escape(r.grade)})</small>") + "</li>"
                        for r in reasons)
        parts.append(f'<p class="why">Why:</p><ul class="why">{items}</ul>')
    step = found.next_step
    if step is not None and step.text:
        parts.append(f'<p class="next"><strong>Next step:</strong> {html.escape(step.text)}.</p>')
    return unbroken_names(f'<div class="{EVIDENCE_CSS_CLASS} grade-{html.escape(grade)}">' + "".join(parts) + "</div>")


class Verdict:
    """A verdict to display under a section's figure (the last expression of a cell): the headline's block."""

    def __init__(self, evidence):
        self.evidence = evidence

    def _repr_html_(self) -> str:
        return verdict_html(self.evidence)

    def __repr__(self) -> str:
        found = evidence_of(self.evidence)
        return "\n".join(found.lines()) if found is not None else ""


def verdict(evidence) -> Verdict:
    """Show ``evidence`` (an ``Evidence`` or its JSON) as the headline shows its own."""
    return Verdict(evidence)
