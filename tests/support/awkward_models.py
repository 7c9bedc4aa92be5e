"""Awkward queueing models for ``capmodel mva MODEL.yaml``: a strategy that draws model files a careless user
writes, and a check that runs one under a time and memory guard.

Drawn: mostly well-formed models (1-4 classes, 1-4 stations) with odd numbers in them (negative, huge, NaN, strings,
booleans, 10^20 customers, 10^12 servers), odd solvers, open and mixed classes; sometimes duplicated or colliding
keys, thousands of classes, deep nesting or raw bytes. Acceptable outcomes are those of ``awkward_inputs``: ``ok``,
or ``refused`` with exit 2 and one line naming the file. ``hang`` (over ``HANG_SECONDS``) and ``memory`` (a peak
of traced allocations over ``MAX_TRACED_BYTES``: numpy's arrays are traced) are failures too.
"""
from __future__ import annotations

import signal
import tracemalloc
from pathlib import Path

import yaml
from hypothesis import strategies as st

from tests.support.awkward_inputs import _file, run_cli

HANG_SECONDS = 30
MAX_TRACED_BYTES = 600 * 2**20

odd_number = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True), st.integers(-(10**25), 10**25),
    st.sampled_from([10**20, 10**12, 0, -1, True, False, None, "0.1", "x", [1], {"a": 1}, 1e-300, 2.5]))
small_population = st.integers(0, 6)
small_demand = st.floats(0.0, 2.0)


@st.composite
def model_files(draw) -> bytes:
    """A model file as bytes (YAML, or JSON which YAML also reads)."""
    kind = draw(st.integers(0, 19))
    if kind == 0:
        return draw(st.binary(max_size=200))
    if kind == 1:  # a key written twice, or 1 and '1'
        key = draw(st.sampled_from(["a", "1"]))
        other = "'1'" if key == "1" else "a"
        return (f"classes:\n  {key}: {{population: 2}}\n  {other}: {{population: 3}}\n"
                f"stations: {{cpu: {{demands: {{{key}: 0.1}}}}}}\n").encode()
    if kind == 2:  # many classes
        count = draw(st.sampled_from([101, 500, 2000]))
        classes = "\n".join(f"  c{i}: {{population: 1}}" for i in range(count))
        demands = ", ".join(f"c{i}: 0.1" for i in range(count))
        return f"classes:\n{classes}\nstations:\n  cpu: {{demands: {{{demands}}}}}\n".encode()
    if kind == 3:  # deep nesting
        depth = draw(st.integers(60, 3000))
        return ("classes: " + "[" * depth + "]" * depth + "\n").encode()
    n_classes, n_stations = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    classes = {}
    for c in range(n_classes):
        if draw(st.integers(0, 4)) == 0:
            spec = {"arrival_rate": draw(st.one_of(st.floats(0, 5), odd_number))}
        else:
            spec = {"population": draw(st.one_of(small_population, small_population, small_population, odd_number))}
            if draw(st.booleans()):
                spec["think_time"] = draw(st.one_of(st.floats(0, 3), st.floats(0, 3), odd_number))
        classes[f"c{c}"] = spec
    stations = {}
    for k in range(n_stations):
        odd = draw(st.integers(0, 9)) == 0  # one station in ten has odd demands
        demands = {f"c{c}": draw(odd_number if odd else small_demand) for c in range(n_classes) if draw(st.booleans())}
        spec = {"demands": demands}
        choice = draw(st.integers(0, 5))
        if choice == 0:
            spec["delay"] = True
        elif choice <= 2:
            spec["servers"] = draw(st.one_of(st.integers(1, 4), st.integers(1, 4), odd_number))
        stations[f"s{k}"] = spec
    model = {"classes": classes, "stations": stations}
    if draw(st.booleans()):
        model["solver"] = draw(st.sampled_from(["exact", "linearizer", "schweitzer", "magic", 3]))
    if kind == 4:
        model[draw(st.sampled_from(["surprise", "classes", "stations"]))] = draw(odd_number)
    return yaml.safe_dump(model).encode()


class _Hang(Exception):
    pass


def _prepare() -> None:
    """Import what ``mva`` imports before tracing memory: the first import of pandas and scipy is not the model's."""
    import pandas  # noqa: F401

    import capmodel.commands.mva  # noqa: F401
    import capmodel.models.queueing.multiclass  # noqa: F401
    import capmodel.models.queueing.open_networks  # noqa: F401


def check_model(data: bytes) -> str:
    """Outcome of ``capmodel mva FILE --json`` on ``data``: ok / refused (one line naming the file) / unnamed /
    noise / traceback, or ``hang`` and ``memory`` when a bound is exceeded."""
    _prepare()
    path = _file(data, ".yaml")
    fired = []

    def alarm(signum, frame):
        fired.append(True)
        raise _Hang()

    previous = signal.signal(signal.SIGALRM, alarm)
    tracemalloc.start()
    signal.alarm(HANG_SECONDS)
    try:
        outcome = run_cli(["mva", path, "--json"], [path])
    except _Hang:
        outcome = "hang"
    finally:
        signal.alarm(0)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        signal.signal(signal.SIGALRM, previous)
        Path(path).unlink()
    if fired:
        return "hang"
    return "memory" if peak > MAX_TRACED_BYTES else outcome
