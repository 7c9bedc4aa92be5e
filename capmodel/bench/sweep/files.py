"""A sweep's output folder: ``run.json``, ``steps.jsonl`` and ``curve.csv``, each written so that nothing completed is
lost.

- ``run.json``    configuration, versions, host fingerprint, redacted URI, client ceiling, status (rewritten
                  atomically at the start and the end of the sweep);
- ``steps.jsonl`` one JSON line per completed step, appended and fsync'ed the moment the step ends, so Ctrl-C or a
                  server crash loses no completed step; a torn last line (a crash while writing) is dropped on read;
- ``curve.csv``   the curve table (``capmodel fit DIR/curve.csv`` reads it as is), one row per successful step
                  (an SLO search's open-loop rates are not curve points: its closed-loop probe is);
- ``slo.json``    with ``--slo``: the highest rate that met the objectives (``capmodel.bench.sweep.slo.SloAnswer``).

The folder is owned (``capmodel.output_folder``): one run at a time holds its lock, nothing is written through a
symlink, and a file capmodel did not write is never replaced. ``run.json`` and every step carry ``format_version``
(``RUN_FORMAT_VERSION``; a folder written before versions existed is format 1); ``--resume`` refuses a newer one.
capmodel recognises its own files: ``run.json`` by its ``format`` (format 1: a ``config`` object and ``started_at``),
every line of ``steps.jsonl`` as a step, ``curve.csv`` by the SHA-256 that ``run.json`` records (or, when a crash came
between the two writes, by being the curve of the recorded steps).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd

from capmodel.data.curve_columns import LATENCY_NAMES, LATENCY_STATS, OP_COUNT, OP_LATENCY, REQUIRED
from capmodel.errors import BenchError
from capmodel.jsonable import to_jsonable
from capmodel.output_folder import OutputFolderError, append_line, check_format, refuse_foreign, write_atomic

STEPS_FILE, CURVE_FILE, RUN_FILE, SLO_FILE = "steps.jsonl", "curve.csv", "run.json", "slo.json"
RUN_FORMAT_VERSION = 2  # of run.json and steps.jsonl; 1: the records written before they carried a version
RUN_FORMAT = "capmodel-bench-run"
STEP_KEYS = ("concurrency", "status")  # every step has them, in every format


def read_steps(path: Path) -> list[dict]:
    """Completed steps from ``steps.jsonl``; a torn last line (crash while writing) is dropped."""
    if not path.exists():
        return []
    try:
        steps, lines = [], path.read_bytes().decode("utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise BenchError(f"{path} is not text (byte offset {exc.start})") from None
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            step = json.loads(line)
            if not isinstance(step, dict):
                raise json.JSONDecodeError("not an object", line, 0)
        except (json.JSONDecodeError, RecursionError):
            if i == len(lines) - 1:
                break
            raise BenchError(f"{path}: line {i + 1} is not valid JSON") from None
        check_format(step, f"{path} line {i + 1}", RUN_FORMAT_VERSION, "sweep step")
        if not all(key in step for key in STEP_KEYS):
            raise BenchError(f"{path}: line {i + 1} is not a sweep step (no {' or '.join(STEP_KEYS)})")
        steps.append(step)
    return steps


def read_run(out: Path) -> dict:
    """The ``run.json`` of a sweep folder, checked: a BenchError naming the file when it is missing, unreadable, not
    JSON, or not a sweep's record (an object with a ``config`` object)."""
    path = Path(out) / RUN_FILE
    if not path.is_file():
        raise BenchError(f"--resume: {path} does not exist, so there is no recorded sweep to continue; run without "
                         "--resume (into an empty --out)")
    try:
        run = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise BenchError(f"--resume: {path} is not text (byte offset {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise BenchError(f"--resume: {path} is not valid JSON (line {exc.lineno}, column {exc.colno}); it cannot "
                         "say what was measured") from None
    except RecursionError:
        raise BenchError(f"--resume: {path} is nested too deeply to be a sweep's record") from None
    if not isinstance(run, dict) or not isinstance(run.get("config"), dict):
        raise BenchError(f"--resume: {path} is not a sweep's record (no 'config' object)")
    check_format(run, path, RUN_FORMAT_VERSION, "sweep record")
    return run


def _cannot_write(path: Path, exc: OSError) -> BenchError:
    """A failed write (full disk, read-only folder, no permission) as one line naming the file."""
    return BenchError(f"cannot write {path}: {exc.strerror or exc}; the steps completed before are kept in "
                      f"{path.parent} (free space or choose another --out, then --resume)")


def append_step(path: Path, record: dict) -> None:
    """Append one step (with its format version) and force it to disk before the sweep goes on."""
    line = json.dumps(to_jsonable({"format_version": RUN_FORMAT_VERSION, **record}), allow_nan=False) + "\n"
    try:
        append_line(path, line)
    except OSError as exc:
        raise _cannot_write(path, exc) from None


def write_json(path: Path, obj: dict) -> None:
    """Write ``obj`` to ``path`` atomically (a temporary file renamed over it)."""
    text = json.dumps(to_jsonable(obj), indent=2, allow_nan=False) + "\n"
    try:
        write_atomic(path, text)
    except OSError as exc:
        raise _cannot_write(path, exc) from None


def write_run(out: Path, run: dict) -> None:
    """``run.json`` with its format and version first."""
    write_json(Path(out) / RUN_FILE, {"format": RUN_FORMAT, "format_version": RUN_FORMAT_VERSION, **run})


def curve_text(steps: list[dict]) -> str:
    """``curve.csv``'s exact text for these steps."""
    return curve_table(steps).to_csv(index=False)


def write_curve(out: Path, steps: list[dict]) -> str:
    """Write ``curve.csv`` of ``steps``; returns its SHA-256, for ``run.json`` to record."""
    text = curve_text(steps)
    path = Path(out) / CURVE_FILE
    try:
        write_atomic(path, text)
    except OSError as exc:
        raise _cannot_write(path, exc) from None
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def claim_outputs(out: Path) -> None:
    """Refuse an ``out`` whose ``run.json``, ``steps.jsonl`` or ``curve.csv`` is a symlink or was not written by
    capmodel (see the module's docstring)."""
    out = Path(out)
    refuse_foreign(out / RUN_FILE, _our_run)
    refuse_foreign(out / STEPS_FILE, _our_steps)
    refuse_foreign(out / CURVE_FILE, lambda path: _our_curve(out, path))
    refuse_foreign(out / SLO_FILE, _our_slo)


def write_slo(out: Path, answer: dict) -> None:
    """``slo.json``: an SLO search's answer (``SloAnswer.to_json()``)."""
    path = Path(out) / SLO_FILE
    try:
        write_atomic(path, json.dumps(to_jsonable(answer), indent=2) + "\n")
    except OSError as exc:
        raise _cannot_write(path, exc) from None


def _our_slo(path: Path) -> bool:
    answer = _load_run(path)
    return answer is not None and {"objectives", "stopped_because", "max_rate"} <= set(answer)


def _load_run(path: Path) -> dict | None:
    try:
        run = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return None
    return run if isinstance(run, dict) else None


def _our_run(path: Path) -> bool:
    run = _load_run(path)
    if run is None:
        return False
    if "format_version" in run and run.get("format") == RUN_FORMAT:
        check_format(run, path, RUN_FORMAT_VERSION, "sweep record")  # a newer capmodel's: refused as such
        return True
    if "format_version" in run:
        return False
    return isinstance(run.get("config"), dict) and "started_at" in run  # format 1


def _our_steps(path: Path) -> bool:
    try:
        read_steps(path)  # every complete line a step of a known format
        lines = path.read_bytes().splitlines()
    except (BenchError, OSError):  # a newer format (OutputFolderError) is refused as such
        return False
    return all(line.startswith(b"{") for line in lines if line.strip())  # a torn last line too


def _our_curve(out: Path, path: Path) -> bool:
    try:
        data = path.read_bytes()
    except OSError:
        return False
    run = _load_run(out / RUN_FILE) if (out / RUN_FILE).is_file() else None
    if run is None or not _our_run(out / RUN_FILE):
        return False
    if "format_version" not in run:  # format 1 recorded no checksum: its header is the curve table's
        return data.startswith(b"concurrency,throughput")
    if hashlib.sha256(data).hexdigest() == run.get("curve_sha256"):
        return True
    try:  # a crash between writing curve.csv and run.json: the curve of the recorded steps
        return data.decode("utf-8") == curve_text(read_steps(out / STEPS_FILE))
    except (BenchError, OutputFolderError, OSError, UnicodeDecodeError):
        return False


def curve_table(steps: list[dict]) -> pd.DataFrame:
    """The curve table of the successful steps, in the columns ``capmodel.data.curve_columns`` declares for the bench
    (and in its order): standard columns, labels, and per-operation latency columns."""
    rows = []
    for s in steps:
        if s.get("status") != "ok" or s.get("phase") == "slo":  # an SLO search's open-loop rates are no curve
            continue
        lat = s["latency"]
        row = {"concurrency": s["concurrency"], "throughput": s["throughput"],
               **{name: lat["all"][f"{stat}_ms"] for stat, name in LATENCY_NAMES.items()},
               "errors": s["error_count"]}
        cpu = (s.get("server") or {}).get("cpu_util")
        if cpu is not None:
            row["cpu_util"] = min(max(float(cpu), 0.0), 1.0)
        row.update({"workload": s["workload"], "repeat": s["repeat"], "ops_per_s": s["ops_per_s"],
                    "client_bound": bool(s.get("client_bound")), "client_cpu": s.get("client_cpu")})
        if s.get("effective_concurrency") is not None:
            row["effective_concurrency"] = s["effective_concurrency"]
        for op, summary in lat.items():
            if op == "all":
                continue
            for stat in LATENCY_STATS:
                row[OP_LATENCY.named(op=op, stat=stat)] = summary[f"{stat}_ms"]
            row[OP_COUNT.named(op=op)] = summary["count"]
        rows.append(row)
    if not rows:
        return pd.DataFrame(columns=list(REQUIRED))
    table = pd.DataFrame(rows)
    if "cpu_util" in table and table["cpu_util"].isna().any():
        table = table.drop(columns="cpu_util")
    return table
