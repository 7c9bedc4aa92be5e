"""The block every report opens with: the question, the answer, its evidence and its provenance.

A notebook computes its result in the cells right after its parameters (no output), then shows
``headline(question, answer, evidence, inputs=..., borrowed=...)`` so the page reads answer-first; figures and tables
follow. The provenance line needs what only the render pipeline knows (which parameters were given, the notebook's
defaults, the render time): ``capmodel.report.execute`` injects it as the ``capmodel_report`` variable beside the
notebook's parameters, and ``headline`` reads it from the kernel's namespace (run by hand in Jupyter, the block says
the parameters were not recorded). The converter gives the page the question as its ``<title>``.

The verdict shows as ``capmodel.report.verdict`` draws it (the grade, what it promises, why, the next step), and the
answer's one sentence (``short_answer``) travels with the headline's data for the index of reports
(``capmodel.report.index_entry``).
"""
from __future__ import annotations

import hashlib
import html
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from capmodel.formatting import unbroken_names, unnested

CONTEXT_NAME = "capmodel_report"   # the variable the render pipeline injects into every report's kernel
HEADLINE_CSS_CLASS = "capmodel-headline"    # the page's headline block (the browser test looks for it)
DETAILS_CSS_CLASS = "capmodel-details"    # how the answer was worked out, below the headline block
DETAILS_TITLE = "How the answer was worked out"
MIME = "application/vnd.capmodel.headline+json"   # the headline as data, beside its HTML, in the executed notebook


def sha256_of(path: str | Path) -> str:
    """The SHA-256 of a file, or of a folder (every file under it, sorted, name and bytes)."""
    path = Path(path)
    digest = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for item in files:
        if path.is_dir():
            digest.update(str(item.relative_to(path)).encode() + b"\0")
        with open(item, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class Provenance:
    """Where a report's answer comes from: render time, versions, inputs (name -> (path, sha256)), parameters
    (name -> (value shown, is the default)) and borrowed figures (figure -> source)."""

    rendered_at: str
    capmodel_version: str
    mongodb_version: str | None = None
    inputs: tuple = ()        # (label, path, sha256)
    parameters: tuple = ()    # (name, value shown, is default)
    unused: tuple = ()        # names of parameters these inputs made irrelevant (e.g. a sweep's, for a bench folder)
    borrowed: tuple = ()      # (figure, source)
    recorded: bool = True     # False when run by hand: the parameters are not known to be the report's
    meanings: tuple = ()      # (name, the notebook's words for its "not given" value: '0 means ...')

    def to_json(self) -> dict:
        return {"rendered_at": self.rendered_at, "capmodel_version": self.capmodel_version,
                "mongodb_version": self.mongodb_version,
                "inputs": [{"name": n, "path": p, "sha256": s} for n, p, s in self.inputs],
                "parameters": [{"name": n, "value": v, "default": d, "used": n not in self.unused}
                               for n, v, d in self.parameters],
                "borrowed": [{"figure": f, "source": s} for f, s in self.borrowed]}


def kernel_context() -> dict:
    """What the render pipeline injected (``capmodel_report``), or ``{}`` outside a rendered report."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - reports always run in IPython
        return {}
    shell = get_ipython()
    value = shell.user_ns.get(CONTEXT_NAME) if shell is not None else None
    return value if isinstance(value, dict) else {}


def provenance(inputs: dict | None = None, borrowed: dict | None = None, mongodb_version: str | None = None,
               context: dict | None = None, unused=(), meanings: dict | None = None) -> Provenance:
    """The provenance of a report: ``inputs`` label -> file or folder (hashed here; empty paths left out),
    ``borrowed`` figure -> its source, ``context`` what the pipeline injected (default: read from the kernel),
    ``meanings`` parameter -> what its "not given" value means for these inputs, over the notebook's own words."""
    from capmodel import __version__

    context = kernel_context() if context is None else context
    rows = []
    for label, where in (inputs or {}).items():
        if where and Path(where).exists():
            rows.append((label, str(where), sha256_of(where)))
    defaults = context.get("defaults", {})
    given = context.get("given", {})
    parameters = tuple((name, given.get(name, default), name not in given) for name, default in defaults.items())
    rendered = context.get("rendered_at") or datetime.now(timezone.utc).isoformat(timespec="seconds")
    return Provenance(rendered_at=rendered, capmodel_version=__version__, mongodb_version=mongodb_version,
                      inputs=tuple(rows), parameters=parameters, borrowed=tuple((borrowed or {}).items()),
                      recorded=bool(context), unused=tuple(unused),
                      meanings=tuple({**(context.get("meanings") or {}), **(meanings or {})}.items()))


def _evidence_json(evidence) -> dict | None:
    if evidence is None:
        return None
    return evidence.to_json() if hasattr(evidence, "to_json") else dict(evidence)


def _markdown(text: str) -> str:
    import mistune

    return str(mistune.html(text))


def _shown(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        from capmodel.formatting import number

        return number(value, digits=6)
    if isinstance(value, (list, tuple)):
        return ", ".join(_shown(v) for v in value) or "(none)"
    if value == "":   # an empty text parameter: what the notebook's own comment says "" means
        return "(none)"
    return str(value)


def distinct_names(paths) -> list[str]:
    """Each path by its last parts, as few as tell it from the others (and never a bare "diagnostic.data", the name
    every server's FTDC folder has): five members' folders read as "rs0-0_27017/diagnostic.data", ..., not as five
    "diagnostic.data"."""
    parts = [Path(str(p)).parts or (str(p),) for p in paths]
    for depth in range(1, max((len(x) for x in parts), default=1) + 1):
        names = [str(Path(*x[-depth:])) for x in parts]
        generic = any(Path(n).name == "diagnostic.data" and len(x) > depth == 1 for n, x in zip(names, parts))
        if len(set(names)) == len(names) and not generic:
            return names
    return [str(p) for p in paths]


def folders_phrase(paths) -> str:
    """The folders a report read, for its answer: one by its ``distinct_names`` name, several by their count and the
    folder they share ("5 folders under /data/fleet"), or their names when they share none."""
    paths = [str(p) for p in paths]
    if len(paths) == 1:
        return distinct_names(paths)[0]
    common = os.path.commonpath(paths) if all(os.path.isabs(p) for p in paths) else ""
    if common and common != os.sep and common not in paths:
        return f"{len(paths)} folders under {common}"
    return ", ".join(distinct_names(paths))


def _not_given(value) -> bool:
    """0 or "": the value a parameters cell uses for "not given" (a flag's False is not one)."""
    return not isinstance(value, bool) and (value == "" or isinstance(value, (int, float)) and value == 0)


def _parameter_state(default: bool, unused: bool, meaning: str | None = None) -> str:
    """"(default)", "(set)" in bold, with ", not used" inside the same parentheses when the inputs made it moot, and
    the notebook's words for a "not given" value ('0 means relative to the baseline') where it has one."""
    note = (", not used" if unused else "") + (f"; {html.escape(unnested(meaning))}" if meaning and not unused else "")
    return f"(default{note})" if default else f"<strong>(set{note})</strong>"


@dataclass
class Headline:
    """The question, the answer (markdown), the evidence verdict and the provenance; shows as one HTML block."""

    question: str
    answer: str
    evidence: dict | None = None
    provenance: Provenance | None = None
    notes: list = field(default_factory=list)   # footnotes for words standing in for numbers ("unreachable", "—")
    short_answer: str = ""   # the answer in one sentence (markdown), for the index; "": the answer's first sentence
    decision: str = ""       # the decision a manager forwards, at most two short sentences, leading the answer
    details: str = ""        # how the answer was worked out (markdown): the method, symbols, intervals' sources;
    # shown in the page body, below the headline block, never in it

    def to_json(self) -> dict:
        from capmodel.report.index_entry import one_sentence

        return {"question": self.question, "answer": self.answer,
                "short_answer": self.short_answer or one_sentence(self.answer), "decision": self.decision,
                "details": self.details,
                "evidence": self.evidence, "provenance": self.provenance.to_json() if self.provenance else None}

    def _evidence_html(self) -> str:
        from capmodel.report.verdict import verdict_html

        return verdict_html(self.evidence)

    def _provenance_html(self) -> str:
        p = self.provenance
        if p is None:
            return ""
        when = p.rendered_at.replace("T", " ").replace("+00:00", "") + " UTC"
        parts = [f"Rendered {html.escape(when)}", f"capmodel {html.escape(p.capmodel_version)}"]
        if p.mongodb_version:
            parts.append(f"MongoDB {html.escape(p.mongodb_version)}")
        lines = [" · ".join(parts)]
        if p.inputs:
            names = distinct_names([where for _, where, _ in p.inputs])
            lines.append("Inputs: " + "; ".join(
                f"<code>{html.escape(label)}</code> = {html.escape(name)} "
                f'<span class="sha">SHA-256 {sha}</span>' for (label, _, sha), name in zip(p.inputs, names)))
        meaning = dict(p.meanings)
        if p.parameters:
            lines.append("Parameters: " + "; ".join(
                f"<code>{html.escape(name)}</code> = {html.escape(_shown(value))} "
                + _parameter_state(default, name in p.unused, meaning.get(name) if _not_given(value) else None)
                for name, value, default in p.parameters))
        elif not p.recorded:
            lines.append("Parameters: not recorded (run by hand, not by <code>capmodel report</code>)")
        if p.borrowed:
            lines.append("Borrowed figures: " + "; ".join(
                f"{html.escape(figure)} (from {html.escape(source)})" for figure, source in p.borrowed))
        return '<div class="provenance">' + "<br>".join(lines) + "</div>"

    def _decision_html(self) -> str:
        """The decision, first and larger; the answer below it gives the figures' intervals and qualifications."""
        if not self.decision:
            return ""
        lead = _markdown(self.decision).strip().removeprefix("<p>").removesuffix("</p>")
        return f'<p class="decision">{unbroken_names(lead)}</p>'

    def _repr_html_(self) -> str:
        from capmodel.report.verdict import grade_of

        notes = "".join(f"<li>{html.escape(n)}</li>" for n in self.notes)
        grade = grade_of(self.evidence)   # the block's edge takes the grade's colour, as its verdict's does
        graded = f" graded-{html.escape(grade)}" if grade else ""
        return (f'<div class="{HEADLINE_CSS_CLASS}{graded}"><h1 class="question">{html.escape(self.question)}</h1>'
                f'<div class="answer">{self._decision_html()}{unbroken_names(_markdown(self.answer))}</div>'
                f'{self._evidence_html()}'
                + (f'<ul class="notes">{notes}</ul>' if notes else "") + self._provenance_html() + "</div>"
                + self._details_html())

    def _details_html(self) -> str:
        """The method behind the answer, below the headline block: the page body's first section."""
        if not self.details:
            return ""
        return (f'<div class="{DETAILS_CSS_CLASS}"><h2>{DETAILS_TITLE}</h2>'
                f"{unbroken_names(_markdown(self.details))}</div>")

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        return {"text/html": self._repr_html_(), "text/plain": repr(self), MIME: self.to_json()}

    def __repr__(self) -> str:  # the text/plain twin of the HTML block
        from capmodel.report.verdict import grade_of

        grade = grade_of(self.evidence)
        lead = f"{self.decision}\n\n" if self.decision else ""
        details = f"\n\n{DETAILS_TITLE}\n\n{self.details}" if self.details else ""
        return (f"{self.question}\n\n{lead}{self.answer}" + (f"\n\nEvidence: {grade}" if grade else "")
                + details)


def headline(question: str, answer: str, evidence=None, inputs: dict | None = None, borrowed: dict | None = None,
             mongodb_version: str | None = None, notes=(), unused=(), short_answer: str = "",
             meanings: dict | None = None, decision: str = "", details: str = "") -> Headline:
    """The headline block of a report; display it (the last expression of a cell) right after the compute cells.

    ``evidence`` is an ``Evidence`` or its JSON; ``inputs`` label -> file/folder (hashed), ``borrowed`` figure ->
    source (e.g. ``{"ops per user 0.26": "the benchANT study"}``), ``unused`` the parameters these inputs made
    irrelevant (marked "not used"), ``short_answer`` the answer in one sentence for the index of reports (default: the
    answer's first sentence), ``meanings`` what a parameter's "not given" value (0 or "") means for these inputs where
    the notebook's comment speaks of other ones (a user's catalog has no study baseline), ``decision`` the decision in
    at most two short sentences (``decision_problems`` says what keeps one from being that), shown before the answer,
    and ``details`` how the answer was worked out (the method, its symbols and intervals), shown below the block: the
    answer itself says its qualifications in plain words (``answer_problems``)."""
    return Headline(question=question, answer=answer, evidence=_evidence_json(evidence),
                    provenance=provenance(inputs, borrowed, mongodb_version, unused=unused, meanings=meanings),
                    notes=list(notes), short_answer=short_answer, decision=decision, details=details)


#: a decision's most words: two short sentences a manager forwards as they are
DECISION_WORDS = 40


def _plain_problems(text: str, most: int) -> list[str]:
    """More than ``most`` words in ``text`` (markdown marks left out), or a bracket: a symbol-and-bracket clause or an
    interval, which belong below the headline."""
    import re

    words = len(re.sub(r"[*`]", "", text).split())
    return ([f"{words} words, more than {most}"] if words > most else []) + \
        (["a bracket"] if re.search(r"[()\[\]]", text) else [])


def decision_problems(decision: str) -> list[str]:
    """What keeps ``decision`` (markdown) from leading a headline: more than two sentences, more than
    ``DECISION_WORDS`` words, or a bracket (a symbol-and-bracket clause, an interval: they belong below it)."""
    from capmodel.report.index_entry import one_sentence

    text = decision.strip()
    problems = []
    first = one_sentence(text)
    rest = text[len(first):].strip()
    if rest and one_sentence(rest) != rest:
        problems.append("more than two sentences")
    return problems + _plain_problems(text, DECISION_WORDS)


#: the most words of the answer under a decision: its qualifications, in short plain sentences
ANSWER_WORDS = 90


def answer_problems(answer: str) -> list[str]:
    """What keeps ``answer`` (markdown, the text under the decision) from reading as plain qualifications: more than
    ``ANSWER_WORDS`` words, or a bracket (a symbol-and-bracket clause belongs in the details below the headline)."""
    return _plain_problems(answer, ANSWER_WORDS)
