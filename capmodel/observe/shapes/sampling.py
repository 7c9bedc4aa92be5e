"""What share of the operations a log can have seen: the profiler settings in force over its window.

mongod logs an operation when it took ``slowms`` or more and, of those, a ``sampleRate`` share drawn at random
(``slowOpSampleRate``; ``src/mongo/db/curop.cpp``, ``shouldDBProfile``). With ``slowms`` 0 every operation is
eligible, so the log saw ``sampleRate`` of them and each logged one stands for 1 / ``sampleRate``: rates are then
estimates of every operation's rate. With ``slowms`` above 0 the log saw only the slow ones: how many fast ones ran
is unknown, so no rate is computed from that part of the window. The settings come from the log itself (the command
line's options at a start, each "Profiler settings changed" with what it replaced); before the log shows any they are
the ones the caller states, else the server's defaults (100 ms, all), and the answer says they were assumed.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from capmodel.formatting import number, percent, seconds
from capmodel.jsonable import to_jsonable
from capmodel.models.evidence import Evidence, NextStep, Reason
from capmodel.observe.shapes.entries import DEFAULT_SAMPLE_RATE, DEFAULT_SLOWMS, Settings


@dataclass(frozen=True)
class Segment:
    """A stretch of one file's window under one setting of the profiler."""

    source: str
    start: float
    end: float
    slowms: float
    sample_rate: float
    assumed: bool        # the settings were not in the log (stated by the caller or the server's defaults)

    @property
    def complete(self) -> bool:
        """Every operation was eligible for the log (slowms 0)."""
        return self.slowms <= 0


class SettingsTimeline:
    """The settings through one file, as its entries show them; ``segments(first, last)`` when it has been read."""

    def __init__(self, source: str, slowms: float | None = None, sample_rate: float | None = None):
        self.source = source
        self.assumed = slowms is None and sample_rate is None
        self.current = Settings(None, DEFAULT_SLOWMS if slowms is None else float(slowms),
                                DEFAULT_SAMPLE_RATE if sample_rate is None else float(sample_rate))
        self.changes: list[tuple[Settings, bool]] = [(self.current, self.assumed)]

    def change(self, settings: Settings) -> None:
        """Settings the log shows, from their time on. The first the file shows also says what held before them,
        from its start: a server starting (its options) says it had not been running; a change says what it
        replaced. Later, a server starting again (a restart) brings its options back, whatever was set at runtime."""
        if len(self.changes) == 1 and settings.startup:
            self.changes = [(Settings(None, settings.slowms, settings.sample_rate), False)]
        else:
            if len(self.changes) == 1 and settings.before is not None:
                self.changes = [(Settings(None, *settings.before), False)]
            self.changes.append((settings, False))
        self.assumed = False
        self.current = settings

    @property
    def weight(self) -> float:
        """How many operations one logged now stands for."""
        return 1.0 / self.current.sample_rate if self.current.sample_rate > 0 else 0.0

    @property
    def complete(self) -> bool:
        return self.current.slowms <= 0

    def segments(self, first: float | None, last: float | None) -> list[Segment]:
        if first is None or last is None:
            return []
        out: list[Segment] = []
        for i, (settings, assumed) in enumerate(self.changes):
            start = first if settings.time is None else min(max(settings.time, first), last)
            following = self.changes[i + 1][0].time if i + 1 < len(self.changes) else None
            end = last if following is None else min(max(following, first), last)
            if end > start or (not out and i == len(self.changes) - 1):
                out.append(Segment(self.source, start, end, settings.slowms, settings.sample_rate, assumed))
        return out


def _union(spans) -> float:
    """Seconds covered by the union of (start, end) spans."""
    total, reach = 0.0, None
    for start, end in sorted(spans):
        if reach is None or start > reach:
            total += end - start
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total


@dataclass(frozen=True)
class Coverage:
    """The profiler settings over the logs' windows, and what they let the log see."""

    segments: tuple

    @cached_property
    def window_s(self) -> float:
        """Seconds from first to last entry, over every file (a time two files cover counts once)."""
        return _union((s.start, s.end) for s in self.segments)

    @cached_property
    def complete_s(self) -> float:
        """Seconds of the window in which every operation was eligible for the log (slowms 0): the rates' window."""
        return _union((s.start, s.end) for s in self.segments if s.complete)

    @cached_property
    def share_seen(self) -> float:
        """The share of the operations the log can have seen where every one was eligible: the sample rate, averaged
        over that time (NaN without such time)."""
        spans = [s for s in self.segments if s.complete and s.end > s.start]
        total = sum(s.end - s.start for s in spans)
        if total > 0:
            return sum((s.end - s.start) * min(s.sample_rate, 1.0) for s in spans) / total
        rates = [s.sample_rate for s in self.segments if s.complete]
        return min(min(rates), 1.0) if rates else float("nan")

    @cached_property
    def slowest_threshold_ms(self) -> float:
        """The highest slowms in force anywhere in the window."""
        return max((s.slowms for s in self.segments), default=DEFAULT_SLOWMS)

    @cached_property
    def reasons(self) -> tuple:
        """What the settings take from the answer."""
        out = []
        if not any(s.complete for s in self.segments):
            out.append(Reason("only_slow_operations", "unusable", (
                f"the log saw only operations of {number(self.slowest_threshold_ms)} ms or more (slowms): how many "
                "faster ones ran is unknown, so no shape has a rate"), next_step=NextStep((), 1, (
                    "log every operation for a while: db.setProfilingLevel(0, {slowms: 0}) (or mongod --slowms 0), "
                    "with a sampleRate below 1 on a busy server"))))
        elif self.complete_s < self.window_s:
            out.append(Reason("partly_slow_operations", "weak", (
                f"every operation was eligible for the log over {percent(self.complete_s / self.window_s)} of its "
                f"window; rates are of that part alone, and counts elsewhere are of slow operations only"),
                value=self.complete_s / self.window_s))
        if any(s.assumed for s in self.segments):
            out.append(Reason("settings_assumed", "weak", (
                "the log does not show the profiler settings at its start; the server's defaults (slowms 100, "
                "sampleRate 1) or the ones stated were assumed until it does")))
        return tuple(out)

    @cached_property
    def evidence(self) -> Evidence:
        """The verdict of ``reasons``."""
        return Evidence.of(*self.reasons)

    def describe(self) -> str:
        """What the log can have seen, in one sentence."""
        if not self.segments:
            return "The inputs hold no entry with a time: no window."
        if self.complete_s <= 0 and not any(s.complete for s in self.segments):
            return (f"The log's window is {seconds(self.window_s)}, with slowms at {number(self.slowest_threshold_ms)} "
                    "ms or less: it can have seen only the operations that slow.")
        return (f"The log's window is {seconds(self.window_s)}; over {seconds(self.complete_s)} of it every operation "
                f"was eligible (slowms 0) and the log can have seen {percent(self.share_seen)} of them (sampleRate)"
                + ("." if self.complete_s >= self.window_s else
                   f"; elsewhere only those of {number(self.slowest_threshold_ms)} ms or more."))

    def to_json(self) -> dict:
        """The settings' segments, the window, the part of it with every operation eligible, and the sentence."""
        return to_jsonable({"window_s": self.window_s, "complete_s": self.complete_s, "share_seen": self.share_seen,
                "segments": [{"source": s.source, "start": s.start, "end": s.end, "slowms": s.slowms,
                              "sample_rate": s.sample_rate, "assumed": s.assumed} for s in self.segments],
                "sentence": self.describe()})
