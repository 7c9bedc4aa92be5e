"""How far an answer can be trusted: a grade and its reasons, as data.

Every fit, plan, capacity and production-headroom result carries an ``Evidence``: ``sound`` (nothing found against the
answer), ``weak`` (the answer stands, with the reasons saying what to doubt) or ``unusable`` (the data cannot support
the number: the answer must say what the data *can* support instead). The grade is the worst of the reasons' grades, so
it is derived, never stored beside them. Reasons are data (a code, the grade it implies, one sentence, the figure
behind it) so that the CLI's ``--json`` (``{"grade": ..., "reasons": [...]}``), the text output and the reports show
the same verdict.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from capmodel.errors import InputError

GRADES = ("sound", "weak", "unusable")


@dataclass(frozen=True)
class Reason:
    """One finding about the evidence: ``code`` (stable, machine-readable), the ``grade`` it implies on its own
    (``weak`` or ``unusable``), a ``message`` for the reader (one sentence, no trailing full stop), and the ``value``
    it rests on (a ratio, a count, an R²) when there is one."""

    code: str
    grade: str
    message: str
    value: float | None = None

    def __post_init__(self):
        if self.grade not in GRADES[1:]:
            raise InputError(f"a reason's grade is 'weak' or 'unusable', not {self.grade!r}")

    def to_json(self) -> dict:
        value = self.value
        if value is not None and not math.isfinite(float(value)):
            value = None
        return {"code": self.code, "grade": self.grade, "message": self.message, "value": value}


@dataclass(frozen=True)
class Evidence:
    """A verdict on an answer: its reasons; the grade is the worst of theirs (``sound`` without any)."""

    reasons: tuple[Reason, ...] = ()

    @classmethod
    def of(cls, *reasons: Reason | None) -> "Evidence":
        """The verdict of the given reasons (``None`` entries, checks that found nothing, are left out)."""
        return cls(tuple(r for r in reasons if r is not None))

    @property
    def grade(self) -> str:
        """``sound``, ``weak`` or ``unusable``: the worst grade among the reasons."""
        return max((r.grade for r in self.reasons), key=GRADES.index, default="sound")

    @property
    def usable(self) -> bool:
        """True unless the grade is ``unusable``: the answer may be stated as a number."""
        return self.grade != "unusable"

    def __add__(self, other: "Evidence") -> "Evidence":
        """Both verdicts' reasons (a reason already present, same code and message, is kept once)."""
        seen = {(r.code, r.message) for r in self.reasons}
        return Evidence(self.reasons + tuple(r for r in other.reasons if (r.code, r.message) not in seen))

    def codes(self) -> list[str]:
        return [r.code for r in self.reasons]

    def to_json(self) -> dict:
        """``{"grade": ..., "reasons": [{"code", "grade", "message", "value"}, ...]}``, as the CLI's ``--json``."""
        return {"grade": self.grade, "reasons": [r.to_json() for r in self.reasons]}

    def describe(self) -> str:
        """The verdict in words (markdown): the grade, then each reason."""
        if not self.reasons:
            return "Evidence: **sound** (nothing in the data speaks against this answer)."
        ordered = sorted(self.reasons, key=lambda r: -GRADES.index(r.grade))
        return f"Evidence: **{self.grade}**: " + "; ".join(r.message for r in ordered) + "."

    def lines(self) -> list[str]:
        """The verdict as plain-text lines (the CLI's): ``evidence: GRADE``, then one indented line per reason."""
        return [f"evidence: {self.grade}"] + [f"  - {r.grade}: {r.message}" for r in self.reasons]
