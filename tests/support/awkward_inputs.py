"""Awkward inputs for property-based tests (tests/cli/test_fuzz.py, a few hundred examples) and benchmarks/fuzz.py (tens
of thousands): strategies that draw what a careless or hostile user gives capmodel, and a check per target that runs
one example and says how it ended.

Outcomes: ``ok`` (accepted), ``refused`` (a CapmodelError, or exit 2 with one line, that names its input: the file,
or an option given), ``unnamed`` (refused without naming the input), ``noise`` (a Python warning or text on stdout
escaped to the user), ``traceback`` (any other exception). Only ``ok`` and ``refused`` are acceptable.
"""
from __future__ import annotations

import contextlib
import io
import os
import tempfile
import warnings
from pathlib import Path

import yaml
from hypothesis import strategies as st

ACCEPTABLE = ("ok", "refused")
SPECIAL_NUMBERS = ["nan", "inf", "-inf", "1e400", "-1e400", "9" * 400, "0", "-0", "-1", "1e-320", "abc", "",
                   "0x10", "1_000", " 7 ", "1e308", "2**64"]

number_text = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.sampled_from(SPECIAL_NUMBERS),
)
number = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-(10**30), 10**30),
                   st.sampled_from([10**400, -(10**400), True, None, "3", "x", [1], 1.5]))
cell = st.one_of(number_text, st.text(max_size=12), st.sampled_from(["x" * 5000, '"', "a,b", "\x00", "\r"]))
column_name = st.sampled_from(["concurrency", "throughput", "threads", "ops", "latency_p95_ms", "cpu_util", "errors",
                               "workload", "", "concurrency "])


@st.composite
def csv_files(draw) -> bytes:
    """A CSV file as bytes: a header of likely and unlikely names, rows of odd cells, sometimes raw bytes."""
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(st.binary(max_size=300))
    if kind <= 3:  # a plausible curve, perhaps with an odd cell in it
        rows = draw(st.lists(st.tuples(st.integers(1, 1000), st.floats(0, 1e6, allow_nan=False)), min_size=1,
                             max_size=8))
        lines = ["concurrency,throughput"] + [f"{c},{x!r}" for c, x in rows]
        if draw(st.booleans()):
            lines.insert(draw(st.integers(1, len(lines))), f"{draw(cell)},{draw(cell)}")
        return ("\n".join(lines) + "\n").encode("utf-8", errors="replace")
    columns = draw(st.lists(column_name, min_size=1, max_size=4))
    rows = draw(st.lists(st.lists(cell, min_size=len(columns), max_size=len(columns)), max_size=8))
    lines = [",".join(columns)] + [",".join(row) for row in rows]
    return ("\n".join(lines) + "\n").encode("utf-8", errors="replace")


# curves: mostly plausible magnitudes (so that fits run), some of any float at all
_any_float = st.floats(allow_nan=True, allow_infinity=True)
curves = st.one_of(
    st.lists(st.tuples(st.floats(0.5, 1e4), st.floats(0.0, 1e7)), min_size=3, max_size=12),
    st.lists(st.tuples(st.one_of(st.floats(0.5, 1e4), _any_float), st.one_of(st.floats(0.0, 1e7), _any_float)),
             max_size=10))

_yaml_leaf = st.one_of(st.none(), st.booleans(), st.integers(-(10**20), 10**20), st.floats(), st.text(max_size=8),
                       st.sampled_from(["read", "update", "find", "command", "gen", "$out", "drop", "string",
                                        "ping", "usertable", "hashed", "zipfian"]))
yaml_values = st.recursive(_yaml_leaf, lambda children: st.one_of(
    st.lists(children, max_size=4),
    st.dictionaries(st.one_of(st.text(max_size=6), st.sampled_from(
        ["op", "weight", "command", "filter", "pipeline", "gen", "length", "count", "batch", "document", "keys",
         "values", "min", "max", "drop", "find", "$merge", "$lookup", "from"])), children, max_size=4)),
    max_leaves=20)
TOP_KEYS = ["name", "collection", "records", "keys", "fields", "document", "indexes", "readallfields",
            "writeallfields", "scan", "throughput", "operations", "surprise"]


@st.composite
def workload_files(draw) -> bytes:
    """A workload YAML file: mostly a mapping of the real keys with odd values, sometimes a list, text or bytes."""
    kind = draw(st.integers(0, 19))
    if kind == 0:
        return draw(st.binary(max_size=200))
    if kind == 1:
        return draw(st.text(max_size=200)).encode("utf-8", errors="replace")
    if kind == 2:
        return yaml.safe_dump(draw(yaml_values)).encode()
    if kind <= 8:  # a valid workload (YCSB B-like) with one key replaced by an odd value, or left as it is
        spec = {"name": "w", "collection": "usertable", "records": 100, "keys": {"order": "hashed"},
                "fields": {"count": 2, "length": 10}, "operations": {"read": 0.95, "update": 0.05}}
        if kind > 3:
            spec[draw(st.sampled_from(TOP_KEYS))] = draw(yaml_values)
        return yaml.safe_dump(spec).encode()
    spec = draw(st.dictionaries(st.sampled_from(TOP_KEYS), yaml_values, max_size=6))
    if draw(st.booleans()):
        ops = draw(st.lists(st.fixed_dictionaries({"op": st.sampled_from(
            ["read", "update", "insert", "scan", "find", "delete", "aggregate", "command"])},
            optional={"command": yaml_values, "filter": yaml_values, "pipeline": yaml_values,
                      "document": yaml_values, "batch": yaml_values, "weight": yaml_values}), min_size=1, max_size=3))
        spec["operations"] = ops
    return yaml.safe_dump(spec, allow_unicode=True).encode()


PLAN_OPTIONS = ["--target-users", "--utilization-target", "--growth", "--ops-per-user", "--peak-fraction", "--baseline-users",
                "--baseline-throughput", "--latency-increase", "--current-users", "--level", "--bootstrap"]
NODES_OPTIONS = ["--sigma", "--kappa", "--max-nodes", "--reference-ops", "--candidate-ops", "--reference-nodes",
                 "--candidate-nodes", "--reference-node-cost", "--candidate-node-cost", "--bootstrap"]
SHARDS_OPTIONS = ["--target-rate", "--per-shard-throughput", "--sigma", "--kappa", "--max-shards", "--batch-size",
                  "--batch-latency-ms", "--clients-per-shard", "--min-clients"]
BENCH_FIELDS = ["records", "concurrency", "repeat", "duration", "warmup", "operations", "rate", "tolerance",
                "max_steps", "timeout_ms", "server_selection_timeout_ms", "retries", "error_threshold", "seed",
                "processes", "workers", "arrivals", "on_error", "database"]


def option_sets(options):
    return st.lists(st.tuples(st.sampled_from(options), number_text), min_size=1, max_size=3)


bench_options = st.dictionaries(st.sampled_from(BENCH_FIELDS), st.one_of(number, st.lists(number, max_size=3)),
                                max_size=4)


# --- running one example -------------------------------------------------------------------------------------------

def _plain(text: str) -> str:
    return "".join(c for c in str(text).lower() if c.isalnum() or c in "/.")


def _named(message: str, names) -> bool:
    """Whether the message mentions one of ``names`` (spelling of '-', '_' and spaces aside: --target-users,
    target_users and 'target users' are one name)."""
    text = _plain(message)
    return any(_plain(n) in text for n in names if _plain(n))


def run_python(call, names) -> str:
    """Outcome of ``call()``: names = what the message must mention (a file path, option or column names)."""
    from capmodel.errors import CapmodelError

    out = io.StringIO()
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(out):
        warnings.simplefilter("always")
        try:
            call()
        except CapmodelError as exc:
            outcome = "refused" if _named(str(exc), names) else "unnamed"
        except Exception:  # noqa: BLE001 - exactly what is being counted
            return "traceback"
    noisy = [w for w in caught if issubclass(w.category, (RuntimeWarning, UserWarning))]
    if noisy or out.getvalue():
        return "noise"
    return locals().get("outcome", "ok")


def run_cli(argv, names) -> str:
    """Outcome of ``capmodel ARGV`` run in this process: exit 0, or exit 2 with one line naming an input."""
    from capmodel.cli import main

    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main([str(a) for a in argv])
    except BaseException:  # noqa: BLE001 - exactly what is being counted
        return "traceback"
    lines = err.getvalue().strip().splitlines()
    if code == 0:
        return "ok" if not lines else "noise"
    if code != 2 or len(lines) != 1:
        return "traceback"
    return "refused" if _named(lines[0], names) else "unnamed"


def _file(data: bytes, suffix: str) -> str:
    handle, path = tempfile.mkstemp(suffix=suffix, prefix="capmodel-fuzz-")
    with os.fdopen(handle, "wb") as fh:
        fh.write(data)
    return path


def check_reader(data: bytes) -> str:
    import capmodel

    path = _file(data, ".csv")
    try:
        return run_python(lambda: capmodel.read_curve(path), [path])
    finally:
        Path(path).unlink()


def check_fit(rows) -> str:
    import pandas as pd

    import capmodel

    def call():
        fit = capmodel.fit_usl(pd.DataFrame(rows, columns=["concurrency", "throughput"]))
        fit.warnings, fit.r2, fit.conf_int(0.95), fit.peak_concurrency  # derived figures too

    return run_python(call, ["column", "row", "point", "concurrency", "throughput"])


def check_workload(data: bytes) -> str:
    from capmodel.bench.workload.definition import load_workload

    path = _file(data, ".yaml")
    try:
        return run_python(lambda: load_workload(path), [path])
    finally:
        Path(path).unlink()


ALIASES = {"--utilization-target": ["utilization target"]}  # other spellings of an option in its errors


def check_command(command: str, pairs) -> str:
    argv = [command]
    for option, value in pairs:
        argv += [option, value]
    names = [o for o, _ in pairs] + [a for o, _ in pairs for a in ALIASES.get(o, [])]
    return run_cli(argv + ["--json"], names)


def check_bench_config(kwargs) -> str:
    from capmodel.bench.sweep.config import BenchConfig

    def call():
        BenchConfig(**kwargs).check()

    return run_python(call, list(kwargs) + ["concurrency", "processes"])
