"""How far an answer can be trusted: a grade and its reasons, as data.

Every fit, plan, capacity and production-headroom result carries an ``Evidence``. A grade is a promise measured on
curves and servers of known truth (``benchmarks/calibrate_verdicts.py``; ``MEANINGS`` says it in words):

- ``sound``: the stated 95% interval of the answer's figure covers the truth at least 93% of the time, and no sound
  answer is off by more than 25%;
- ``weak``: the answer stands, with a stated reason and, where one is known, the next measurement that would make it
  sound (``NextStep``); its interval still covers at least 85% of the time;
- ``unusable``: the data cannot support the figure; the answer says what the data *can* support instead.

The grade is the worst of the reasons' grades, so it is derived, never stored beside them. Reasons are data (a code,
the grade it implies, one sentence, the figure behind it, the next step) so that the CLI's ``--json`` (``{"grade",
"meaning", "reasons", "next_step"}``), the text output and the reports show the same verdict.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from capmodel.errors import InputError

GRADES = ("sound", "weak", "unusable")
#: a figure's 95% interval (high / low) at most this wide may be sound: a covered answer is then within 25% of the
#: truth (capmodel.models.usl.verdict.assessment applies it; benchmarks/calibrate_verdicts.py measures what it keeps)
SOUND_SPAN = 1.25
#: what each grade promises, as measured by benchmarks/calibrate_verdicts.py on curves and servers of known truth
MEANINGS = {
    "sound": "where answers like this state a 95% interval, it held the truth at least 93% of the time on curves and "
             "servers of known truth, and none was off by more than 25%",
    "weak": "the answer stands, with the reason below; where answers like this state a 95% interval, it still held "
            "the truth at least 85% of the time on curves and servers of known truth",
    "unusable": "the data cannot support the figure; what they do support is said instead",
}


@dataclass(frozen=True)
class NextStep:
    """The measurement that would make a weak or unusable answer sound.

    Parameters
    ----------
    levels : tuple of float
        The concurrencies to measure (new ones, or existing ones to repeat).
    repeats : int
        How many times each.
    text : str
        The advice in words, no full stop.
    """

    levels: tuple[float, ...]
    repeats: int
    text: str

    def to_json(self) -> dict:
        return {"levels": [float(v) for v in self.levels], "repeats": int(self.repeats), "text": self.text}

    @classmethod
    def from_json(cls, data: dict | None) -> "NextStep | None":
        """The step ``to_json`` wrote (None for None or an empty one)."""
        if not data:
            return None
        return cls(tuple(float(v) for v in data.get("levels", ())), int(data.get("repeats", 1)),
                   str(data.get("text", "")))


@dataclass(frozen=True)
class Reason:
    """One finding about the evidence behind an answer.

    Parameters
    ----------
    code : str
        Stable and machine-readable (``wide_interval``, ``no_peak_in_range`` ...).
    grade : {"weak", "unusable"}
        The grade it implies on its own.
    message : str
        For the reader: one sentence, no trailing full stop.
    value : float, optional
        The figure it rests on (a ratio, a count, an R²).
    next_step : NextStep, optional
        The measurement that would lift it.

    Raises
    ------
    InputError
        ``grade`` is not ``weak`` or ``unusable``.
    """

    code: str
    grade: str
    message: str
    value: float | None = None
    next_step: NextStep | None = None

    def __post_init__(self):
        if self.grade not in GRADES[1:]:
            raise InputError(f"a reason's grade is 'weak' or 'unusable', not {self.grade!r}")

    def to_json(self) -> dict:
        value = self.value
        if value is not None and not math.isfinite(float(value)):
            value = None
        return {"code": self.code, "grade": self.grade, "message": self.message, "value": value,
                "next_step": None if self.next_step is None else self.next_step.to_json()}


@dataclass(frozen=True)
class Evidence:
    """A verdict on an answer: its reasons; the grade is the worst of theirs (``sound`` without any).

    Every fit, plan, capacity and production answer carries one. ``grade``, ``usable``, ``codes()``, ``next_step``,
    ``describe()`` and ``to_json()`` read it; ``Evidence.of(*reasons)`` builds one, leaving out ``None``.

    Parameters
    ----------
    reasons : tuple of Reason, default ()
        The findings.

    Examples
    --------
    >>> from capmodel.models.evidence import Evidence, Reason
    >>> verdict = Evidence.of(Reason("few_points", "weak", "only 5 concurrency levels"), None)
    >>> verdict.grade, verdict.usable, verdict.codes()
    ('weak', True, ['few_points'])
    >>> Evidence().grade
    'sound'
    """

    reasons: tuple[Reason, ...] = ()

    @classmethod
    def from_json(cls, data: dict) -> "Evidence":
        """The verdict ``to_json`` wrote (as a report's headline or a fleet's worker stores it); a reason whose grade
        a reason cannot have is left out."""
        return cls(tuple(Reason(str(r.get("code", "")), r["grade"], str(r.get("message", "")), r.get("value"),
                                NextStep.from_json(r.get("next_step")))
                         for r in data.get("reasons") or [] if r.get("grade") in GRADES[1:]))

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

    @property
    def ordered(self) -> list[Reason]:
        """The reasons, the gravest first (unusable before weak), each grade in the order found."""
        return sorted(self.reasons, key=lambda r: -GRADES.index(r.grade))

    @property
    def main_reason(self) -> Reason | None:
        """The reason that sets the grade (the first of the gravest); None when sound."""
        return self.ordered[0] if self.reasons else None

    @property
    def next_step(self) -> NextStep | None:
        """The measurement that would lift a reason of the verdict's own grade (None: none known, or sound): a weak
        reason's advice cannot lift an unusable verdict."""
        return next((r.next_step for r in self.ordered if r.next_step is not None and r.grade == self.grade), None)

    def to_json(self) -> dict:
        """``{"grade", "meaning", "reasons": [{"code", "grade", "message", "value", "next_step"}, ...],
        "next_step"}``, as the CLI's ``--json``."""
        step = self.next_step
        return {"grade": self.grade, "meaning": MEANINGS[self.grade], "reasons": [r.to_json() for r in self.reasons],
                "next_step": None if step is None else step.to_json()}

    def describe(self) -> str:
        """The verdict in words (markdown): the grade and what it promises, each reason, then the next step when one
        is known."""
        said = f"Evidence: **{self.grade}** ({MEANINGS[self.grade]})"
        if not self.reasons:
            return said + "."
        step = self.next_step
        return (f"{said}. Why: " + "; ".join(r.message for r in self.ordered) + "."
                + (f" Next: {step.text}." if step is not None else ""))

    def lines(self) -> list[str]:
        """The verdict as plain-text lines (the CLI's): ``evidence: GRADE (what it promises)``, one indented line per
        reason, then the next step when one is known."""
        step = self.next_step
        return ([f"evidence: {self.grade} ({MEANINGS[self.grade]})"] + [f"  - {r.grade}: {r.message}"
                                                                        for r in self.ordered]
                + ([f"next: {step.text}"] if step is not None else []))
