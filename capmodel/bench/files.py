"""A sweep's output folder: ``run.json``, ``steps.jsonl`` and ``curve.csv``, each written so that nothing completed is
lost.

- ``run.json``    configuration, versions, host fingerprint, redacted URI, client ceiling, status (rewritten
                  atomically at the start and the end of the sweep);
- ``steps.jsonl`` one JSON line per completed step, appended and fsync'ed the moment the step ends, so Ctrl-C or a
                  server crash loses no completed step; a torn last line (a crash while writing) is dropped on read;
- ``curve.csv``   the curve table (``capmodel fit DIR/curve.csv`` reads it as is), one row per successful step.
"""
from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

import pandas as pd

from capmodel.errors import BenchError
from capmodel.jsonable import to_jsonable

STEPS_FILE, CURVE_FILE, RUN_FILE = "steps.jsonl", "curve.csv", "run.json"


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
            steps.append(step)
        except (json.JSONDecodeError, RecursionError):
            if i == len(lines) - 1:
                break
            raise BenchError(f"{path}: line {i + 1} is not valid JSON") from None
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
    return run


def _cannot_write(path: Path, exc: OSError) -> BenchError:
    """A failed write (full disk, read-only folder, no permission) as one line naming the file."""
    return BenchError(f"cannot write {path}: {exc.strerror or exc}; the steps completed before are kept in "
                      f"{path.parent} (free space or choose another --out, then --resume)")


def append_step(path: Path, record: dict) -> None:
    """Append one step and force it to disk before the sweep goes on."""
    line = json.dumps(to_jsonable(record), allow_nan=False) + "\n"
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as exc:
        raise _cannot_write(path, exc) from None


def write_json(path: Path, obj: dict) -> None:
    """Write ``obj`` to ``path`` atomically (a temporary file renamed over it)."""
    tmp = path.with_suffix(".tmp")
    text = json.dumps(to_jsonable(obj), indent=2, allow_nan=False) + "\n"
    try:
        tmp.write_text(text)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)  # no half-written file left beside run.json
        raise _cannot_write(path, exc) from None


def curve_table(steps: list[dict]) -> pd.DataFrame:
    """The curve table of the successful steps: standard columns, labels, and per-operation latency columns."""
    rows = []
    for s in steps:
        if s.get("status") != "ok":
            continue
        lat = s["latency"]
        row = {
            "concurrency": s["concurrency"], "throughput": s["throughput"],
            "latency_mean_ms": lat["all"]["mean_ms"], "latency_p50_ms": lat["all"]["p50_ms"],
            "latency_p95_ms": lat["all"]["p95_ms"], "latency_p99_ms": lat["all"]["p99_ms"],
            "latency_p999_ms": lat["all"]["p999_ms"], "errors": s["error_count"],
        }
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
            for stat in ("mean", "p50", "p95", "p99", "p999"):
                row[f"latency_{op}_{stat}_ms"] = summary[f"{stat}_ms"]
            row[f"{op}_count"] = summary["count"]
        rows.append(row)
    if not rows:
        return pd.DataFrame(columns=["concurrency", "throughput"])
    table = pd.DataFrame(rows)
    if "cpu_util" in table and table["cpu_util"].isna().any():
        table = table.drop(columns="cpu_util")
    return table
