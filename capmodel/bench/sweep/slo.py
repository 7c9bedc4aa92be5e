"""Capacity under service-level objectives, measured: the highest open-loop rate whose steps meet every objective.

An **objective** (``capmodel bench --slo``, repeatable) bounds one figure of a step: a latency percentile a step
records (``p50``, ``p95``, ``p99``, ``p99.9``) or the ``mean``, in ``us``, ``ms`` or ``s`` (``p95<=5ms``); the share of
failed operations (``errors<=0.1%``); or a latency relative to a **baseline** step run first at a light load (a tenth
of the probe's throughput): ``p95<=+5%`` is at most 5% above the baseline's p95. Every step must also complete at
least ``KEEP_UP`` of the operations it was asked for: a server that falls behind its arrivals meets no objective.

The **search** (``search``) is open loop, latency counted from each operation's intended start (no coordinated
omission). A closed-loop probe at the largest ``--concurrency`` gives the throughput X the clients can drive; rates
then start at X/2, double while every objective holds and halve while one fails, until a rate that met and a rate
that missed bracket the answer; then bisection, until the bracket's high end is within ``--tolerance`` of its low
end. Every rate is measured ``MEASUREMENTS`` times (``REPEATS`` when a figure lands within ``CLOSE`` of its bound)
and judged on the medians; each step lasts ``--duration`` or longer, long enough for ``TAIL_SAMPLES`` operations
beyond its most extreme percentile and for an error share to show. ``--max-steps`` caps the rates.

The **answer** (``SloAnswer``) is the highest rate met, ``max_rate``. Its interval counts only sure verdicts: from
the highest rate met with every latency figure ``SURE_Z`` noise deviations under its bound to the lowest rate missed
by that much (or by falling behind, failing, or errors over their bound), the noise being the spread of the log
figures between measurements of one rate near the answer, at its upper 95% confidence bound. While an end of the
interval is open the search measures further out (``confirming_rate``). The grade: unusable when no rate met (the
capacity is below the lowest tried) or none above the answer missed (at least the answer); weak when an end stays
open or the interval is wider than ``SOUND_SPAN``; sound otherwise. ``tests/bench/test_slo_search.py`` holds the
grades to their promise (``capmodel.models.evidence.MEANINGS``) on simulated M/M/1 servers of known capacity.
"""
from __future__ import annotations

import math
import re
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field

from capmodel.bench.client.measurements import PERCENTILES
from capmodel.errors import BenchError
from capmodel.formatting import number
from capmodel.models.evidence import SOUND_SPAN, Evidence, NextStep, Reason

#: the latency percentiles a step records (``capmodel.bench.client.measurements.PERCENTILES``), as an objective names
#: them: level and the step record's key
QUANTILES = {("p99.9" if name == "p999" else name): (level / 100.0, f"{name}_ms") for name, level in PERCENTILES}
UNITS_MS = {"us": 1e-3, "ms": 1.0, "s": 1000.0}
TAIL_SAMPLES = 20   # operations a step must see beyond its most extreme percentile
ERROR_SAMPLES = 3   # failed operations a step must be able to see at the error bound
KEEP_UP = 0.95      # the share of the asked rate a step must complete
CLOSE = 0.10        # a figure within 10% of its bound is measured again
MEASUREMENTS = 2    # every rate is measured at least twice: the pairs' spread is the figures' noise
REPEATS = 3         # the most measurements of one rate
SURE_Z = 2.0        # a verdict is sure when its figure is this many noise deviations from the bound
NEAR = 0.8          # the noise is measured on the rates from this share of the answer up
BASELINE_SHARE = 0.1  # the baseline step's rate, as a share of the probe's throughput
_FORM = re.compile(r"^\s*(p50|p95|p99|p99\.9|mean|errors)\s*<=\s*(\+)?\s*([0-9]*\.?[0-9]+)\s*(us|ms|s|%)\s*$")


@dataclass(frozen=True)
class Objective:
    """One bound a step must meet.

    Parameters
    ----------
    metric : str
        ``p50``, ``p95``, ``p99``, ``p99.9``, ``mean`` (latency) or ``errors`` (failed share).
    limit : float
        Milliseconds for a latency; a share (0.001 for 0.1%) for errors; a share above the baseline (0.05 for +5%)
        when ``relative``.
    relative : bool
        The bound is the baseline step's figure times (1 + limit).
    text : str
        As written.
    """

    metric: str
    limit: float
    relative: bool
    text: str

    @property
    def quantile(self) -> float:
        """The percentile's level (0.5 for the mean and errors: they need no tail)."""
        return QUANTILES[self.metric][0] if self.metric in QUANTILES else 0.5

    def figure(self, step: dict) -> float:
        """This objective's figure in a step's record: milliseconds, or the failed share."""
        if self.metric == "errors":
            total = step["operations"] + step["error_count"]
            return step["error_count"] / total if total else 1.0
        key = QUANTILES[self.metric][1] if self.metric in QUANTILES else "mean_ms"
        value = step["latency"]["all"][key]
        return math.inf if value is None or math.isnan(value) else float(value)

    def bound(self, baseline: dict | None) -> float:
        """The bound in the figure's unit (the baseline step's figure times 1 + limit when relative)."""
        if not self.relative:
            return self.limit
        if baseline is None:
            raise BenchError(f"--slo {self.text}: a relative objective needs the baseline step")
        return self.figure(baseline) * (1.0 + self.limit)

    def steps_needed(self, bound: float) -> int:
        """Operations a step needs to judge this objective."""
        if self.metric == "errors":
            return math.ceil(ERROR_SAMPLES / max(bound, 1e-9))
        return math.ceil(TAIL_SAMPLES / (1.0 - self.quantile))

    def said(self, bound: float) -> str:
        """``p95 <= 5 ms``, ``errors <= 0.1%``."""
        return f"{self.metric} <= {_shown(self, bound)}"

    def to_json(self) -> dict:
        return {"metric": self.metric, "limit": self.limit, "relative": self.relative, "text": self.text}


def parse_objective(text: str) -> Objective:
    """An objective from its written form (``p95<=5ms``, ``errors<=0.1%``, ``p95<=+5%``); a BenchError naming
    ``--slo`` and the accepted forms otherwise."""
    match = _FORM.match(str(text))
    forms = "p95<=5ms, p99<=20ms, mean<=2ms, errors<=0.1%, or relative to a light-load baseline, p95<=+5%"
    if match is None:
        raise BenchError(f"--slo {str(text)[:40]!r}: write a bound as METRIC<=VALUE, e.g. {forms} (metrics: "
                         f"{', '.join(QUANTILES)}, mean, errors)")
    metric, plus, value, unit = match.groups()
    limit = float(value)
    if metric == "errors":
        if plus or unit != "%":
            raise BenchError(f"--slo {text!r}: an error bound is a share in %, e.g. errors<=0.1%")
        return Objective(metric, limit / 100.0, False, text.strip())
    if plus or unit == "%":
        if not (plus and unit == "%"):
            raise BenchError(f"--slo {text!r}: a relative latency bound is written with + and %, e.g. {metric}<=+5%")
        return Objective(metric, limit / 100.0, True, text.strip())
    if limit <= 0:
        raise BenchError(f"--slo {text!r}: a latency bound must be above 0")
    return Objective(metric, limit * UNITS_MS[unit], False, text.strip())


def objectives_in(text: str) -> list[str]:
    """The objectives of one line, separated by ``;`` (report 06's ``slo`` parameter: ``p95<=5ms; errors<=0.1%``)."""
    return [part.strip() for part in str(text).split(";") if part.strip()]


@dataclass
class Judged:
    """A rate and its verdict: the step records measured at it, each objective's median figure and bound."""

    rate: float
    steps: list[dict]
    figures: dict[str, float]
    bounds: dict[str, float]
    met: bool
    misses: list[str]
    split: bool  # its measurements disagreed on the verdict
    fell_behind: bool  # failed, or completed under KEEP_UP of the rate

    def to_json(self) -> dict:
        return {"rate": self.rate, "met": self.met, "misses": self.misses, "repeats": len(self.steps),
                "repeats_disagreed": self.split, "figures": self.figures, "bounds": self.bounds,
                "completed_ops_per_s": statistics.median(s["ops_per_s"] for s in self.steps),
                "steps": [s["step"] for s in self.steps if "step" in s]}


def judge(rate: float, steps: list[dict], objectives: list[Objective], baseline: dict | None) -> Judged:
    """The verdict at ``rate`` on the median of its steps' figures; a failed step (errors over the sweep's threshold,
    a stall) or one that completed under ``KEEP_UP`` of the rate misses."""
    figures, bounds, misses = {}, {}, []
    for objective in objectives:
        bound = objective.bound(baseline)
        value = statistics.median(objective.figure(s) if s.get("status") == "ok" or objective.metric == "errors"
                                  else math.inf for s in steps)
        figures[objective.text], bounds[objective.text] = value, bound
        if not value <= bound:
            misses.append(f"{objective.metric} {_shown(objective, value)} > {_shown(objective, bound)}")
    completed = statistics.median(s["ops_per_s"] for s in steps)
    behind = completed < KEEP_UP * rate
    if behind:
        misses.append(f"completed {number(completed, 4)} of {number(rate, 4)} ops/s asked")
    failed = [s for s in steps if s.get("status") != "ok"]
    if failed and len(failed) * 2 > len(steps):
        behind = True
        misses.append(f"the step failed: {failed[0].get('failure')}")
    verdicts = {_step_met(s, objectives, bounds, rate) for s in steps}
    return Judged(rate, steps, figures, bounds, not misses, misses, len(verdicts) > 1, behind)


def _step_met(step: dict, objectives: list[Objective], bounds: dict, rate: float) -> bool:
    if step.get("status") != "ok" or step["ops_per_s"] < KEEP_UP * rate:
        return False
    return all(o.figure(step) <= bounds[o.text] for o in objectives)


def _shown(objective: Objective, value: float) -> str:
    if objective.metric == "errors":
        return f"{number(value * 100, 3)}%"
    return "none completed" if math.isinf(value) else f"{number(value, 3)} ms"


def is_close(judged: Judged) -> bool:
    """Some figure lies within ``CLOSE`` of its bound: one more measurement may turn the verdict."""
    return any(math.isfinite(v) and abs(v - judged.bounds[k]) <= CLOSE * judged.bounds[k]
               for k, v in judged.figures.items())


def step_seconds(objectives: list[Objective], bounds: dict[str, float], rate: float, duration: float) -> float:
    """A step's measured seconds at ``rate``: ``duration``, or longer when an objective needs more operations."""
    needed = max(o.steps_needed(bounds.get(o.text, o.limit)) for o in objectives)
    return max(duration, needed / rate)


def next_rate(met: list[float], missed: list[float], probe: float, tolerance: float) -> float | None:
    """The next rate to measure, None when the bracket is narrow enough (``missed / met - 1 <= tolerance``).

    Bracketing from ``probe / 2`` by doubling (all met so far) or halving (all missed), then bisection between the
    highest rate met and the lowest missed above it.
    """
    if not met and not missed:
        return probe / 2.0
    if not missed:
        return max(met) * 2.0
    if not met:
        return min(missed) / 2.0
    low = max(met)
    above = [r for r in missed if r > low]
    if not above:  # only rates below the highest met missed (noise turned a verdict): go on upwards
        return low * 2.0
    high = min(above)
    if high / low - 1.0 <= tolerance:
        return None
    return (low + high) / 2.0


@dataclass
class SloAnswer:
    """The highest rate that met every objective, as measured: ``max_rate``, its interval, the objectives, the
    baseline and every rate judged, and the evidence grade. ``to_json()`` is ``slo.json``; ``summary()`` its lines.
    """

    objectives: list[Objective]
    probe: dict
    baseline: dict | None
    judged: list[Judged]
    tolerance: float
    stopped_because: str
    workload: str = ""
    evidence: Evidence = field(init=False)

    def __post_init__(self):
        self.evidence = self._evidence()

    @property
    def met(self) -> list[Judged]:
        return [j for j in self.judged if j.met]

    @property
    def missed(self) -> list[Judged]:
        return [j for j in self.judged if not j.met]

    @property
    def max_rate(self) -> float | None:
        """The highest rate that met every objective (None: none did)."""
        return max((j.rate for j in self.met), default=None)

    @property
    def noise(self) -> float | None:
        """The latency figures' noise near the answer: the pooled standard deviation of the log figure between
        measurements of one rate, over the rates from ``NEAR`` x the highest met upwards (the noise grows with the
        load), taken at its upper 95% confidence bound (few measurements underestimate it as often as not); None
        without a latency objective or a rate measured twice."""
        from scipy import stats

        best = self.max_rate or max((j.rate for j in self.judged), default=0.0)
        squares, freedom = 0.0, 0
        for j in self.judged:
            if j.rate < NEAR * best:
                continue
            for o in self.objectives:
                if o.metric == "errors":
                    continue
                logs = [math.log(v) for v in (o.figure(s) for s in j.steps if s.get("status") == "ok")
                        if math.isfinite(v) and v > 0]
                if len(logs) >= 2:
                    mean = statistics.fmean(logs)
                    squares += sum((v - mean) ** 2 for v in logs)
                    freedom += len(logs) - 1
        if not freedom:
            return None
        return math.sqrt(squares / float(stats.chi2.ppf(0.05, freedom)))

    def surely_met(self, j: Judged) -> bool:
        """Met with every latency figure at least ``SURE_Z`` noise deviations (of a median of its measurements)
        under its bound."""
        margin = SURE_Z * (self.noise or 0.0) / math.sqrt(len(j.steps))
        return j.met and all(j.figures[o.text] * math.exp(margin) <= j.bounds[o.text]
                             for o in self.objectives if o.metric != "errors")

    def surely_missed(self, j: Judged) -> bool:
        """Missed by a failed step, a rate not kept up, an error share over its bound, or a latency figure
        ``SURE_Z`` noise deviations over its bound."""
        if j.met:
            return False
        margin = SURE_Z * (self.noise or 0.0) / math.sqrt(len(j.steps))
        return j.fell_behind or any(
            j.figures[o.text] * (1.0 if o.metric == "errors" else math.exp(-margin)) > j.bounds[o.text]
            for o in self.objectives)

    @property
    def interval(self) -> tuple[float | None, float | None]:
        """The capacity's interval: [the highest rate surely met, the lowest rate surely missed above it], a
        verdict counting as sure when its figure lies ``SURE_Z`` noise deviations from the bound (``noise``); None
        where the search found no such rate (0 and unbounded)."""
        low = max((j.rate for j in self.judged if self.surely_met(j)), default=None)
        above = [j.rate for j in self.judged if self.surely_missed(j) and (low is None or j.rate > low)]
        return low, min(above, default=None)

    def _evidence(self) -> Evidence:
        best = self.max_rate
        if best is None:
            lowest = min((j.rate for j in self.judged), default=None)
            shown = f"{number(lowest, 4)} ops/s" if lowest is not None else "no rate"
            return Evidence.of(Reason("no_rate_met", "unusable",
                                      f"no rate met every objective: the capacity is below {shown}", lowest))
        if not any(j.rate > best for j in self.missed):
            return Evidence.of(Reason(
                "no_rate_missed", "unusable",
                f"every rate tried met the objectives: the capacity is at least {number(best, 4)} ops/s, the most "
                "tried", best, NextStep((), 1, "raise --concurrency so the probe drives the server harder")))
        low, high = self.interval
        if low is None or high is None:
            end = "low" if low is None else "high"
            return Evidence.of(Reason(
                "unsure_verdicts", "weak", f"the {end} end of the capacity's interval is open: no rate "
                f"{'under' if low is None else 'over'} {number(best, 4)} ops/s was judged outside the figures' noise "
                f"(±{(self.noise or 0.0):.0%} between measurements of one rate)", self.noise,
                NextStep((), MEASUREMENTS, "a longer --duration narrows the noise")))
        if high / low > SOUND_SPAN:
            return Evidence.of(Reason(
                "wide_interval", "weak", f"the capacity lies between {number(low, 4)} and {number(high, 4)} ops/s, "
                f"an interval {high / low:.2f}x wide (the figures vary ±{(self.noise or 0.0):.0%} between "
                "measurements of one rate)", high / low,
                NextStep((), MEASUREMENTS, "a longer --duration narrows the noise, more --max-steps the search")))
        return Evidence()

    def to_json(self) -> dict:
        """``slo.json``: ``max_rate``, ``interval``, ``objectives`` (with their bounds), ``baseline``, ``probe``,
        ``met`` and ``missed`` (the rates judged), ``stopped_because``, ``evidence``."""
        low, high = self.interval
        bounds = self.judged[0].bounds if self.judged else {}
        return {
            "workload": self.workload, "max_rate": self.max_rate, "interval": [low, high],
            "objectives": [{**o.to_json(), "bound": bounds.get(o.text)} for o in self.objectives],
            "tolerance": self.tolerance, "probe": self.probe, "baseline": self.baseline,
            "met": [j.to_json() for j in sorted(self.met, key=lambda j: j.rate)],
            "missed": [j.to_json() for j in sorted(self.missed, key=lambda j: j.rate)],
            "stopped_because": self.stopped_because, "evidence": self.evidence.to_json(),
        }

    def summary(self) -> str:
        """The answer in plain lines: the rate, its interval, the objectives, the steps, the evidence."""
        low, high = self.interval
        said = [o.said(self.judged[0].bounds[o.text]) if self.judged else o.text for o in self.objectives]
        best = self.max_rate
        if best is None:
            head = "capacity under the objectives: none of the rates tried met them"
        elif not any(j.rate > best for j in self.missed):
            head = f"capacity under the objectives: at least {number(best, 4)} ops/s (no rate tried missed them)"
        else:
            ends = (f"{number(low, 4)} to {number(high, 4)} ops/s" if low is not None and high is not None else
                    f"up to {number(high, 4)} ops/s" if high is not None else f"from {number(low, 4)} ops/s")
            head = f"capacity under the objectives: {number(best, 4)} ops/s, the highest rate that met them ({ends})"
        lines = [head, f"objectives: {'; '.join(said)}"]
        metrics = [o.metric for o in self.objectives]
        names = {o.text: o.metric if metrics.count(o.metric) == 1 else o.text for o in self.objectives}
        for j in sorted(self.judged, key=lambda j: j.rate):
            figures = ", ".join(f"{names[o.text]} {_shown(o, j.figures[o.text])}" for o in self.objectives)
            verdict = "met" if j.met else "missed: " + "; ".join(j.misses)
            lines.append(f"  {number(j.rate, 4):>10} ops/s asked: {figures}; {verdict}"
                         + (f" ({len(j.steps)} measurements, median)" if len(j.steps) > 1 else ""))
        lines.append(f"search: {self.stopped_because}")
        return "\n".join(lines + self.evidence.lines())


def search(objectives: list[Objective], measure: Callable[[float, float], dict], probe: Callable[[], dict],
           duration: float, tolerance: float, max_steps: int, log=None) -> SloAnswer:
    """Search the highest open-loop rate that meets every objective.

    Parameters
    ----------
    objectives : list of Objective
        What every step must meet.
    measure : callable
        ``measure(rate, seconds)`` runs one open-loop step and returns its record (``steps.jsonl``'s form:
        ``status``, ``operations``, ``error_count``, ``ops_per_s``, ``latency["all"]``).
    probe : callable
        ``probe()`` runs the closed-loop probe and returns its record.
    duration : float
        The shortest step, in seconds.
    tolerance : float
        Stop when the lowest rate missed is within this share above the highest met.
    max_steps : int
        The most rates to judge (repeats of one rate count once).
    log : callable, optional
        Called with a line per rate judged.

    Returns
    -------
    SloAnswer
    """
    say = log or (lambda line: None)
    probed = probe()
    throughput = float(probed.get("ops_per_s") or 0.0)
    if throughput <= 0:
        raise BenchError(f"the closed-loop probe completed no operation ({probed.get('failure')}): no rate to start "
                         "the search from")
    baseline = None
    if any(o.relative for o in objectives):
        light = throughput * BASELINE_SHARE
        seconds = max(duration, max(o.steps_needed(o.limit) for o in objectives) / light)
        baseline = measure(light, seconds)
        if baseline.get("status") != "ok":
            raise BenchError(f"the baseline step at {number(light, 4)} ops/s failed ({baseline.get('failure')}): "
                             "relative objectives have nothing to compare with")
        say(f"baseline at {number(light, 4)} ops/s: "
            + ", ".join(f"{o.metric} {_shown(o, o.figure(baseline))}" for o in objectives if o.relative))
    bounds = {o.text: o.bound(baseline) for o in objectives}
    judged: list[Judged] = []
    stopped = f"stopped at the step limit ({max_steps} rates)"

    def answer(why: str) -> SloAnswer:
        return SloAnswer(objectives, _probe_json(probed), baseline and _probe_json(baseline), judged, tolerance, why)

    while len(judged) < max_steps:
        rate = next_rate([j.rate for j in judged if j.met], [j.rate for j in judged if not j.met], throughput,
                         tolerance)
        if rate is None:
            rate = confirming_rate(answer(""), tolerance)
            if rate is None:
                stopped = f"the bracket is within {tolerance:.0%} and its ends are judged outside the noise"
                break
        seconds = step_seconds(objectives, bounds, rate, duration)
        steps = [measure(rate, seconds) for _ in range(MEASUREMENTS)]
        verdict = judge(rate, steps, objectives, baseline)
        while is_close(verdict) and len(steps) < REPEATS:
            steps.append(measure(rate, seconds))
            verdict = judge(rate, steps, objectives, baseline)
        judged.append(verdict)
        say(f"{number(rate, 4)} ops/s: " + ("met" if verdict.met else "missed (" + "; ".join(verdict.misses) + ")"))
    return answer(stopped)


def confirming_rate(answer: SloAnswer, tolerance: float) -> float | None:
    """Once the bracket is narrow: a rate that may close an open end of the interval (a verdict inside the noise
    is no end), stepping ``2 x tolerance`` outwards from the furthest unsure rate; None when both ends are closed or
    no rate met or missed."""
    best = answer.max_rate
    if best is None or not any(j.rate > best for j in answer.missed):
        return None
    low, high = answer.interval
    step = 1.0 + 2.0 * tolerance
    if low is None:
        return min(j.rate for j in answer.met) / step
    if high is None:
        return max(j.rate for j in answer.missed) * step
    return None


def _probe_json(step: dict) -> dict:
    latency = step.get("latency", {}).get("all", {})
    return {"concurrency": step.get("concurrency"), "ops_per_s": step.get("ops_per_s"),
            "target_rate": step.get("target_rate"), "p95_ms": latency.get("p95_ms"),
            "p99_ms": latency.get("p99_ms"), "step": step.get("step")}
