"""Awkward output folders and oversized curve files, for tests/cli/test_fuzz.py and benchmarks/fuzz.py.

- ``folder_states``: what ``--out`` may already hold when a run starts: each of ``run.json``, ``steps.jsonl``,
  ``curve.csv`` and the lock file absent, capmodel's own (written by its writers, perhaps torn, edited or of a newer
  format), foreign bytes, a symlink to a victim file outside, a folder or a FIFO; and perhaps another run holding the
  lock. ``check_output_folder`` runs what a sweep does to its folder (lock, claim, read, append a step, write the curve
  and run.json) with no server, and says how it ended: ``ok``, ``refused`` (one error naming the folder or the entry),
  ``unnamed``, ``traceback``, or ``overwrote`` when the victim or a file capmodel did not write changed.
- ``wide_csv_files``: CSV files at and beyond the reader's bounds (columns, line length, size), with repeated names,
  semicolons and decimal commas; ``check_bounded_reader`` also counts an error line over 400 characters as noise.
"""
from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
from pathlib import Path

from hypothesis import strategies as st

from tests.support.awkward_inputs import run_python

ENTRIES = ("run.json", "steps.jsonl", "curve.csv", ".capmodel.lock")
KINDS = ("absent", "ours", "ours-torn", "ours-edited", "ours-newer", "foreign", "empty", "symlink", "folder", "fifo")
VICTIM = b"a file outside --out that nobody may touch\n"

folder_states = st.fixed_dictionaries({
    "entries": st.fixed_dictionaries({name: st.sampled_from(KINDS) for name in ENTRIES}),
    "foreign": st.binary(max_size=80),
    "locked": st.booleans(),
})


def _ours(out: Path, name: str, kind: str) -> None:
    from capmodel.bench.sweep.files import RUN_FORMAT_VERSION, append_step, write_curve, write_run

    step = {"step": 1, "concurrency": 1, "repeat": 1, "status": "failed", "failure": "fuzz"}
    if name == "run.json":
        write_run(out, {"config": {"workload": "ycsb-c"}, "started_at": "2026-01-01T00:00:00+00:00"})
    elif name == "steps.jsonl":
        append_step(out / name, step)
    elif name == "curve.csv":
        write_curve(out, [step])
    else:
        (out / name).write_text("12345\n")
    path = out / name
    if kind == "ours-torn":
        data = path.read_bytes()
        path.write_bytes(data[: max(1, len(data) // 2)])
    elif kind == "ours-edited":
        path.write_bytes(path.read_bytes() + b"1,2\n")
    elif kind == "ours-newer" and name in ("run.json", "steps.jsonl"):
        path.write_text(path.read_text().replace(f'"format_version": {RUN_FORMAT_VERSION}',
                                                 f'"format_version": {RUN_FORMAT_VERSION + 1}'))


def _build(out: Path, victim: Path, state: dict) -> None:
    for name, kind in state["entries"].items():
        path = out / name
        if kind.startswith("ours"):
            _ours(out, name, kind)
        elif kind == "foreign":
            path.write_bytes(state["foreign"] or b"x")
        elif kind == "empty":
            path.write_bytes(b"")
        elif kind == "symlink":
            path.symlink_to(victim)
        elif kind == "folder":
            path.mkdir()
        elif kind == "fifo":
            os.mkfifo(path)


def _fingerprint(path: Path):
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISREG(info.st_mode):
        return "file", path.read_bytes()
    return stat.S_IFMT(info.st_mode), None


def check_output_folder(state: dict) -> str:
    from capmodel.bench.sweep.files import STEPS_FILE, append_step, claim_outputs, read_steps, write_curve, write_run
    from capmodel.output_folder import FolderLock

    root = Path(tempfile.mkdtemp(prefix="capmodel-fuzz-out-"))
    out, victim = root / "out", root / "victim.txt"
    try:
        out.mkdir()
        victim.write_bytes(VICTIM)
        _build(out, victim, state)
        # bytes in the lock file's own format (a positive PID and a newline) are a lock a run left behind, which the
        # next run takes; any other foreign bytes there must be left alone
        pid_line = re.fullmatch(rb"[1-9][0-9]*\n", state["foreign"] or b"x")
        untouchable = {name: _fingerprint(out / name) for name, kind in state["entries"].items()
                       if kind in ("foreign", "symlink", "folder", "fifo")
                       and not (name == ".capmodel.lock" and kind == "foreign" and pid_line)}

        def call():
            holder = FolderLock(out) if state["locked"] else None
            if holder is not None:
                holder.__enter__()
            try:
                with FolderLock(out):
                    claim_outputs(out)
                    steps = read_steps(out / STEPS_FILE)
                    record = {"step": len(steps) + 1, "concurrency": 2, "repeat": 1, "status": "failed",
                              "failure": "fuzz"}
                    append_step(out / STEPS_FILE, record)
                    write_run(out, {"config": {"workload": "ycsb-c"}, "started_at": "2026-01-01T00:00:00+00:00",
                                    "curve_sha256": write_curve(out, [*steps, record])})
            finally:
                if holder is not None:
                    holder.__exit__(None, None, None)

        outcome = run_python(call, [str(out)])
        changed = [n for n, before in untouchable.items() if _fingerprint(out / n) != before]
        if victim.read_bytes() != VICTIM or changed:
            return "overwrote"
        return outcome
    finally:
        shutil.rmtree(root, ignore_errors=True)


@st.composite
def wide_csv_files(draw) -> tuple[bytes, int]:
    """(a CSV file's bytes, a size in bytes it is grown to with a sparse tail, or 0)."""
    from capmodel.data.input_limits import MAX_COLUMNS, MAX_FILE_BYTES, MAX_LINE_BYTES

    sep = draw(st.sampled_from([",", ";", "\t"]))
    count = draw(st.sampled_from([1, 2, 3, MAX_COLUMNS - 1, MAX_COLUMNS, MAX_COLUMNS + 1, 5000]))
    names = ["concurrency", "throughput"][:count] + [f"c{i}" for i in range(max(0, count - 2))]
    if count > 1 and draw(st.booleans()):
        names[draw(st.integers(1, count - 1))] = draw(st.sampled_from(names[:1] + ["concurrency", "throughput"]))
    rows = []
    for _ in range(draw(st.integers(0, 4))):
        value = draw(st.sampled_from(["1", "2,5", "1.234,5", "3.5", "x", "", "9" * 30]))
        rows.append(sep.join([str(draw(st.integers(1, 64))), value] + ["0"] * max(0, count - 2)))
    if draw(st.integers(0, 4)) == 0:  # one line at or beyond the line bound
        rows.append("1" + sep + "7" * draw(st.sampled_from([MAX_LINE_BYTES - 10, MAX_LINE_BYTES + 10])))
    text = "\n".join([sep.join(names)] + rows) + "\n"
    grow = MAX_FILE_BYTES + draw(st.integers(1, 10)) if draw(st.integers(0, 9)) == 0 else 0
    return text.encode(), grow


def check_bounded_reader(example) -> str:
    import capmodel

    data, grow = example
    handle, path = tempfile.mkstemp(suffix=".csv", prefix="capmodel-fuzz-")
    with os.fdopen(handle, "wb") as fh:
        fh.write(data)
        if grow:
            fh.truncate(grow)  # sparse: no disk used, nothing a bounded reader reads

    caught = {}

    def call():
        try:
            capmodel.read_curve(path)
        except Exception as exc:
            caught["message"] = str(exc)
            raise

    try:
        outcome = run_python(call, [path])
    finally:
        Path(path).unlink()
    if len(caught.get("message", "")) > 400:
        return "noise"
    return outcome
