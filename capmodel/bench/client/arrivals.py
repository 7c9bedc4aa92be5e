"""When the open loop's operations are due: at one rate or at a rate that follows a shape, drawn before the step.

The arrivals are evenly spaced (wrk2's constant rate) or a Poisson process (exponential gaps: the arrival process of
M/M/c and of many independent users), seeded. A **load shape** (``capmodel bench --rate-shape``) makes the rate a
function of time over the step's measured window (the warm-up runs at the shape's first rate):

``ramp:FROM:TO``               linear from FROM to TO ops/s
``step:BEFORE:AFTER[:AT]``     BEFORE until the fraction AT of the window (default 0.5), then AFTER
``sine:MEAN:AMPLITUDE[:N]``    MEAN + AMPLITUDE x sin over N whole periods (default 1: a daily cycle compressed)
``spike:BASE:PEAK[:WIDTH]``    BASE, with PEAK for the fraction WIDTH (default 0.1) of the window at its middle
``trace:FILE``                 the rates of a CSV over its time span, compressed or stretched to the window: columns
                               ``time`` (ISO 8601 or seconds) and ``ops_per_s``, or observe's ``samples.csv``
                               (``reads_per_s`` + ``writes_per_s`` + ``commands_per_s``)

Between knots the rate is linear; a varying rate's due times invert its integral (evenly spaced: operation k is due
when the integral reaches k; Poisson: a unit-rate Poisson process mapped through the inverse integral, which is a
Poisson process of that time-varying rate, Cinlar's time change).
"""
from __future__ import annotations

import csv
import math
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from capmodel.errors import BenchError
from capmodel.formatting import number

ARRIVALS = ("uniform", "poisson")
SHAPES = ("ramp", "step", "sine", "spike", "trace")
_GRID = 20_001          # points of a shape's integral over the window
_SINE_KNOTS = 2_001     # knots of a sine per window
_EDGE = 1e-9            # a step's two knots at one instant, this far apart
SAMPLES_RATES = ("reads_per_s", "writes_per_s", "commands_per_s")


@dataclass(frozen=True)
class RateShape:
    """A rate over the measured window: ``rates[k]`` ops/s at the fraction ``fractions[k]`` of it, linear between.

    Parameters
    ----------
    text : str
        As written (``ramp:100:2000``).
    fractions, rates : tuple of float
        The knots: fractions of the window from 0 to 1, increasing, and the rate at each.
    """

    text: str
    fractions: tuple[float, ...]
    rates: tuple[float, ...]

    def rate_at(self, fraction) -> np.ndarray:
        """The rate (ops/s) at fractions of the window."""
        return np.interp(np.asarray(fraction, dtype=float), self.fractions, self.rates)

    @property
    def first_rate(self) -> float:
        return float(self.rates[0])

    def mean_rate(self, start: float = 0.0, end: float = 1.0) -> float:
        """The mean rate between two fractions of the window."""
        grid = np.unique(np.concatenate([[start, end], [f for f in self.fractions if start < f < end]]))
        if end <= start:
            return float(self.rate_at(start))
        rates = self.rate_at(grid)
        return float(np.sum(np.diff(grid) * (rates[1:] + rates[:-1]) / 2) / (end - start))

    def scaled(self, factor: float) -> "RateShape":
        """The same shape at ``factor`` times the rate (one client process's share of it)."""
        return replace(self, rates=tuple(r * factor for r in self.rates))

    def to_json(self) -> dict:
        """The knots, as a client process on another host receives them (a trace's file stays here)."""
        return {"text": self.text, "fractions": list(self.fractions), "rates": list(self.rates)}

    @classmethod
    def from_json(cls, data: dict) -> "RateShape":
        return cls(str(data["text"]), tuple(float(f) for f in data["fractions"]),
                   tuple(float(r) for r in data["rates"]))


def parse_rate_shape(text: str) -> RateShape:
    """A load shape from its written form (module docstring); a BenchError naming ``--rate-shape`` otherwise."""
    text = str(text).strip()
    kind, _, rest = text.partition(":")
    if kind not in SHAPES:
        raise BenchError(f"--rate-shape {text[:60]!r}: the shape is one of {', '.join(SHAPES)}, written "
                         "ramp:100:2000, step:500:2000, sine:1000:500, spike:500:5000 or trace:FILE.csv")
    if kind == "trace":
        return _trace(text, rest)
    values = _numbers(text, rest.split(":") if rest else [])
    need = {"ramp": (2, 2), "step": (2, 3), "sine": (2, 3), "spike": (2, 3)}[kind]
    names = {"ramp": "FROM:TO", "step": "BEFORE:AFTER[:AT]", "sine": "MEAN:AMPLITUDE[:PERIODS]",
             "spike": "BASE:PEAK[:WIDTH]"}[kind]
    if not need[0] <= len(values) <= need[1]:
        raise BenchError(f"--rate-shape {text!r}: write {kind}:{names}")
    if kind == "ramp":
        fractions, rates = [0.0, 1.0], values
    elif kind == "step":
        at = values[2] if len(values) > 2 else 0.5
        _fraction(text, "AT", at)
        fractions, rates = [0.0, at, at + _EDGE, 1.0], [values[0], values[0], values[1], values[1]]
    elif kind == "sine":
        mean, amplitude = values[0], values[1]
        periods = values[2] if len(values) > 2 else 1.0
        if amplitude > mean:
            raise BenchError(f"--rate-shape {text!r}: the amplitude {number(amplitude)} is above the mean "
                             f"{number(mean)}, so the rate would go below 0")
        if periods <= 0 or periods != int(periods):
            raise BenchError(f"--rate-shape {text!r}: PERIODS must be a whole number of periods >= 1")
        grid = np.linspace(0.0, 1.0, _SINE_KNOTS)
        fractions, rates = list(grid), list(mean + amplitude * np.sin(2 * math.pi * periods * grid))
    else:
        width = values[2] if len(values) > 2 else 0.1
        _fraction(text, "WIDTH", width)
        a, b = 0.5 - width / 2, 0.5 + width / 2
        base, peak = values[0], values[1]
        fractions, rates = [0.0, a, a + _EDGE, b, b + _EDGE, 1.0], [base, base, peak, peak, base, base]
    return _shape(text, fractions, rates)


def _numbers(text: str, parts: list[str]) -> list[float]:
    try:
        values = [float(p) for p in parts]
    except ValueError:
        raise BenchError(f"--rate-shape {text!r}: {', '.join(repr(p) for p in parts)} must be numbers") from None
    if any(not math.isfinite(v) or v < 0 for v in values):
        raise BenchError(f"--rate-shape {text!r}: rates and fractions must be finite and >= 0")
    return values


def _fraction(text: str, name: str, value: float) -> None:
    if not 0 < value < 1:
        raise BenchError(f"--rate-shape {text!r}: {name} is a fraction of the window, between 0 and 1")


def _shape(text: str, fractions, rates) -> RateShape:
    rates = [float(r) for r in rates]
    if max(rates) <= 0:
        raise BenchError(f"--rate-shape {text!r}: the rate is 0 throughout; nothing would be due")
    return RateShape(text, tuple(float(f) for f in fractions), tuple(max(r, 0.0) for r in rates))


def _trace(text: str, path_text: str) -> RateShape:
    """A trace's rates over its time span, from a CSV file."""
    path = Path(path_text)
    if not path_text:
        raise BenchError("--rate-shape trace: name the CSV file, e.g. trace:samples.csv")
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise BenchError(f"--rate-shape: cannot read {path}: {exc}") from None
    columns = set(rows[0]) if rows else set()
    if "time" not in columns or not ("ops_per_s" in columns or set(SAMPLES_RATES) <= columns):
        raise BenchError(f"--rate-shape: {path} needs a 'time' column and 'ops_per_s' (or samples.csv's "
                         f"{', '.join(SAMPLES_RATES)}); it has {', '.join(sorted(columns)) or 'no rows'}")
    times, rates = [], []
    for line, row in enumerate(rows, start=2):
        try:
            rate = (float(row["ops_per_s"]) if "ops_per_s" in columns
                    else sum(float(row[c] or 0.0) for c in SAMPLES_RATES))
            times.append(_seconds(row["time"]))
        except (TypeError, ValueError):
            raise BenchError(f"--rate-shape: {path} line {line}: 'time' and the rates must be a time and numbers, "
                             f"got {row.get('time')!r}") from None
        if not math.isfinite(rate) or rate < 0:
            raise BenchError(f"--rate-shape: {path} line {line}: a rate must be finite and >= 0, got {number(rate)}")
        rates.append(rate)
    order = np.argsort(times, kind="stable")
    span = times[order[-1]] - times[order[0]] if len(times) >= 2 else 0.0
    if len(times) < 2 or span <= 0:
        raise BenchError(f"--rate-shape: {path} needs at least two rows at different times")
    t = (np.asarray(times)[order] - times[order[0]]) / span
    keep = np.concatenate([[True], np.diff(t) > 0])   # one rate per instant: the first row of a repeated time
    return _shape(text, t[keep], np.asarray(rates)[order][keep])


def _seconds(value: str) -> float:
    try:
        return float(value)
    except ValueError:
        import datetime as dt

        stamp = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        if stamp.tzinfo is None:
            stamp = stamp.replace(tzinfo=dt.timezone.utc)
        return stamp.timestamp()


def _positions(total: float, arrivals: str, seed: int) -> np.ndarray:
    """Where the operations fall on a rate's integral below ``total`` (the operations due): 0, 1, 2, ... evenly
    spaced, or the points of a unit-rate Poisson process (seeded)."""
    if arrivals not in ARRIVALS:
        raise BenchError(f"arrivals must be one of {', '.join(ARRIVALS)}, got {arrivals!r}")
    if arrivals == "uniform":
        return np.arange(math.ceil(total - 1e-9), dtype=float)
    rng = np.random.default_rng(seed)
    points = np.cumsum(rng.exponential(1.0, size=int(total + 6 * math.sqrt(total) + 16)))
    while points[-1] < total:  # the draw fell short (improbable): extend it
        points = np.concatenate([points, points[-1] + np.cumsum(rng.exponential(1.0, size=len(points)))])
    return points[points < total]


def arrival_schedule(rate: float, seconds: float, arrivals: str = "uniform", seed: int = 0) -> np.ndarray:
    """Due times (seconds from the step's start) of every operation in ``[0, seconds)`` at ``rate`` per second."""
    return _positions(rate * seconds, arrivals, seed) / rate


def shaped_schedule(shape: RateShape, warmup: float, window: float, arrivals: str = "uniform",
                    seed: int = 0) -> np.ndarray:
    """Due times (seconds from the step's start) of a warm-up at the shape's first rate, then ``window`` seconds
    following the shape."""
    fractions = np.unique(np.concatenate([np.linspace(0.0, 1.0, _GRID), shape.fractions]))
    rates = shape.rate_at(fractions)
    t = np.concatenate([[0.0], warmup + window * fractions])
    due = np.concatenate([[0.0], shape.first_rate * warmup + np.concatenate(
        [[0.0], np.cumsum(np.diff(fractions) * window * (rates[1:] + rates[:-1]) / 2)])])
    counts = _positions(due[-1], arrivals, seed)
    # where the rate is 0 the integral is flat: keep the last instant of each flat stretch, so that the operation
    # after it is due where the rate starts again
    rising = np.concatenate([np.diff(due) > 0, [True]])
    return np.interp(counts, due[rising], t[rising])
