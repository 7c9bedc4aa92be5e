"""How fast capmodel reads FTDC, side by side with an independent Go decoder, on real-shaped days.

    python benchmarks/bench_ftdc.py [--repeat 3] [--day PATH] [--small-chunks 2706]

Days measured (each in fresh processes, CPU = user + system of the process, peak = its maximum resident set):

- the realistic day (``../shared/data/ftdc-realistic-day``: 86,675 samples of the embedded mongod 6.0.5 in 300 chunks
  of about 300 samples whose layouts differ from one chunk to the next, as real files do);
- the same day written in ``--small-chunks`` chunks (2,706: about 32 samples each), re-chunked here: every small
  chunk's reference document is the original one with that sample's values written in, and tcmalloc's
  ``formattedString`` given a different length in each, so that no two neighbouring chunks share a layout.

For each: ``capmodel observe --ftdc DAY --out TMP`` (the whole command a user runs: decode, intervals, curve, both
CSV files), capmodel's decoder alone (``ftdc.read_metric_columns`` of the metrics observe uses), and the Go decoder in
``../shared/tools/ftdc-reference`` writing a CSV of the same metrics (``-mode csv``; it decodes every metric of every
sample). Ratios are capmodel's over Go's; the targets (issue 28), on each day: the command's CPU at most 1.5x Go's and
its peak resident memory at most 64 MB, every value equal to Go's. Each target is printed PASS or MISS per day, after
the load average at the start (the machine's other work slows both sides, not always alike). The Go decoder is looked
for at ``$FTDCDUMP``, ``/tmp/ftdcdump``, then built with ``go build`` into a temporary folder; with neither, capmodel's
figures are printed alone.

capmodel runs as an installed package does, from compiled bytecode: its processes cache their bytecode in the
temporary folder (``PYTHONPYCACHEPREFIX``, filled by a first run that is not counted), where an environment with
``PYTHONDONTWRITEBYTECODE`` would otherwise compile every module from source in every run (about 0.1 s of CPU).
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared" if (ROOT.parent / "shared").is_dir() else Path("/work/shared")
DAY = SHARED / "data" / "ftdc-realistic-day"
GO_SOURCE = SHARED / "tools" / "ftdc-reference"
CPU_RATIO, PEAK_MB = 1.5, 64.0
TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None      # GNU time

DECODER_ONLY = """
import sys
sys.path.insert(0, {root!r})
from capmodel.observe import ftdc, serverstatus
table = ftdc.read_metric_columns({path!r}, serverstatus.ftdc_metrics(), time_metric=serverstatus.FTDC_TIME)
print(len(table))
"""


# ------------------------------------------------------------------------------------------------ a small-chunk day
def _leb128(codes: np.ndarray) -> bytes:
    """Unsigned LEB128 of every code, vectorised: the byte k of a code is written when the code has bits past 7k."""
    shifts = np.arange(10, dtype=np.uint64) * np.uint64(7)
    parts = (codes[:, None] >> shifts[None, :]) & np.uint64(0x7F)
    more = (codes[:, None] >> (shifts[None, :] + np.uint64(7))) != 0
    width = 1 + more[:, :9].sum(axis=1)
    used = np.arange(10)[None, :] < width[:, None]
    data = (parts | np.where(more, np.uint64(0x80), np.uint64(0))).astype(np.uint8)
    return data[used].tobytes()


def _deltas_stream(deltas: np.ndarray) -> bytes:
    """FTDC's coding of metric-major deltas: varints, and a run of k + 1 zeros as (0, k), runs spanning metrics."""
    flat = deltas.ravel()
    zero = flat == 0
    starts = np.flatnonzero(zero & ~np.concatenate(([False], zero[:-1])))
    ends = np.flatnonzero(zero & ~np.concatenate((zero[1:], [False])))
    keep = ~zero
    keep[starts] = True
    codes = flat[keep]
    where = np.flatnonzero(keep[np.flatnonzero(keep)] & zero[np.flatnonzero(keep)])   # run starts among the codes
    codes = np.insert(codes, where + 1, (ends - starts).astype(np.uint64))
    return _leb128(codes)


def _string_at(raw: bytes, path: list[str]):
    """(offsets of the documents enclosing it, offset of its int32 length) of the string at ``path``, or None."""
    start, parents = 0, []
    for key in path:
        parents.append(start)
        end, pos, found = start + struct.unpack_from("<i", raw, start)[0] - 1, start + 4, None
        while pos < end:
            kind, key_end = raw[pos], raw.index(b"\x00", pos + 1)
            name, pos = raw[pos + 1:key_end].decode(), key_end + 1
            if name == key:
                found = pos
                break
            pos = _skip(raw, kind, pos)
        if found is None:
            return None
        start = found
    return parents, start


def _skip(raw: bytes, kind: int, pos: int) -> int:
    """The offset after one element's value (the types a serverStatus reference document holds)."""
    sizes = {0x01: 8, 0x09: 8, 0x12: 8, 0x11: 8, 0x10: 4, 0x08: 1, 0x13: 16, 0x07: 12, 0x0A: 0, 0x06: 0}
    if kind in sizes:
        return pos + sizes[kind]
    if kind in (0x03, 0x04):
        return pos + struct.unpack_from("<i", raw, pos)[0]
    if kind in (0x02, 0x0D, 0x0E):
        return pos + 4 + struct.unpack_from("<i", raw, pos)[0]
    if kind == 0x05:
        return pos + 5 + struct.unpack_from("<i", raw, pos)[0]
    raise ValueError(f"BSON type 0x{kind:02x} not expected in a serverStatus reference document")


def _longer_string(raw: bytes, path: list[str], extra: int) -> bytes:
    """``raw`` with the string at ``path`` ``extra`` bytes longer (spaces), every enclosing length adjusted."""
    found = _string_at(raw, path)
    if found is None or not extra:
        return raw
    parents, at = found
    (length,) = struct.unpack_from("<i", raw, at)
    out = bytearray(raw[:at + 3 + length] + b" " * extra + raw[at + 3 + length:])
    struct.pack_into("<i", out, at, length + extra)
    for start in parents:
        struct.pack_into("<i", out, start, struct.unpack_from("<i", out, start)[0] + extra)
    return bytes(out)


def _patched(reference: bytes, entries: list, values: np.ndarray) -> bytes:
    """The reference document with every metric's value replaced (written back in its own BSON type), vectorised
    per type: doubles as doubles, int32 clamped, Timestamp halves as uint32, bools as 0/1 (decimals are left)."""
    from capmodel.observe import ftdc_bson as fb

    out = np.frombuffer(bytearray(reference), dtype=np.uint8).copy()
    codings = np.array([coding for _, coding, _ in entries])
    offsets = np.array([at for _, _, at in entries], dtype=np.int64)
    signed = values.view(np.int64)
    for coding, dtype, convert in ((fb.F8, "<f8", lambda v: v.astype(np.float64)),
                                   (fb.I4, "<i4", lambda v: np.clip(v, -2 ** 31, 2 ** 31 - 1)),
                                   (fb.I8, "<i8", lambda v: v), (fb.DATE, "<i8", lambda v: v),
                                   (fb.U4, "<u4", lambda v: v & 0xFFFFFFFF), (fb.BOOL, "u1", lambda v: v != 0)):
        chosen = codings == coding
        if chosen.any():
            data = np.ascontiguousarray(convert(signed[chosen]).astype(dtype)).view(np.uint8)
            width = np.dtype(dtype).itemsize
            out[(offsets[chosen][:, None] + np.arange(width)).ravel()] = data
    return out.tobytes()


def small_chunk_day(source: Path, out: Path, chunks: int) -> tuple[int, int]:
    """Write ``out``: ``source``'s samples in about ``chunks`` chunks (see the module docstring); (chunks, samples)."""
    import bson
    from bson.binary import Binary
    from bson.son import SON

    from capmodel.observe import ftdc

    files = ftdc.ftdc_files(source)
    cache = ftdc.LayoutCache()
    total = sum(c.samples for f in files for c in ftdc.iter_chunks(f, cache))
    written = samples = 0
    with out.open("wb") as handle:
        for file in files:
            for offset, document in ftdc.iter_documents(file):
                if document["type"] != ftdc.METRIC_CHUNK:
                    with file.open("rb") as f:                 # metadata, copied as it is
                        f.seek(offset)
                        size = struct.unpack("<i", f.read(4))[0]
                        f.seek(offset)
                        handle.write(f.read(size))
                    continue
                chunk = ftdc.decode_chunk(document["data"], str(file), offset, cache)
                entries = chunk.layout.entries()
                values = np.empty((len(entries), chunk.samples), dtype=np.uint64)
                values[:, 0] = chunk.reference
                np.cumsum(chunk.deltas, axis=1, out=values[:, 1:])
                values[:, 1:] += values[:, :1]
                start_row = next(i for i, (name, _, _) in enumerate(entries) if name == "start")
                reference = chunk.raw[:chunk.layout.size]
                pieces = max(1, round((samples + chunk.samples) * chunks / total) - written)
                bounds = np.linspace(0, chunk.samples, min(pieces, chunk.samples) + 1).round().astype(int)
                for first, last in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
                    ref = _patched(reference, entries, values[:, first])
                    ref = _longer_string(ref, ["serverStatus", "tcmalloc", "tcmalloc", "formattedString"],
                                         1 + written % 97)
                    deltas = values[:, first + 1:last] - values[:, first:last - 1]
                    body = ref + struct.pack("<II", len(entries), last - first - 1) + _deltas_stream(deltas)
                    data = struct.pack("<I", len(body)) + zlib.compress(body)
                    handle.write(bson.encode(SON([("_id", bson.DatetimeMS(int(values[start_row, first]))),
                                                  ("type", 1), ("data", Binary(data))])))
                    written += 1
                    samples += last - first
    return written, samples


# ----------------------------------------------------------------------------------------------------- measuring
def measure(command: list[str], env: dict | None = None) -> dict:
    """CPU seconds (user + system), wall seconds and peak RSS (MB) of one fresh process, as GNU time reports them
    (its child starts from GNU time's small process: a child forked from this one would count this process's memory
    in its peak); os.wait4's rusage where GNU time is absent."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as report:
        started = time.perf_counter()
        prefix = [TIME, "-q", "-f", "%U %S %M", "-o", report.name] if TIME else []
        child = subprocess.Popen([*prefix, *command], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        error = child.stderr.read().decode(errors="replace")
        child.stderr.close()
        if child.returncode != 0:
            raise SystemExit(f"{command[0]} failed ({child.returncode}): {error.strip()[-500:]}")
        if TIME:
            user, system, peak_kb = report.read().split()[-3:]
            return {"cpu": float(user) + float(system), "wall": wall, "mb": int(peak_kb) / 1024}
    return {"cpu": usage.ru_utime + usage.ru_stime, "wall": wall, "mb": usage.ru_maxrss / 1024}


def median_of(command: list[str], repeat: int, env: dict | None = None) -> dict:
    runs = [measure(command, env) for _ in range(repeat)]
    return {key: statistics.median(run[key] for run in runs) for key in runs[0]}


def go_decoder(work: Path) -> Path | None:
    """The Go decoder: $FTDCDUMP, /tmp/ftdcdump, or built from its source into ``work``; None without Go."""
    for candidate in (os.environ.get("FTDCDUMP"), "/tmp/ftdcdump"):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return Path(candidate)
    go = shutil.which("go")
    if go is None or not GO_SOURCE.is_dir():
        return None
    target = work / "ftdcdump"
    built = subprocess.run([go, "build", "-o", str(target), "."], cwd=GO_SOURCE, capture_output=True, text=True,
                           env={**os.environ, "GOFLAGS": "-mod=mod"})
    return target if built.returncode == 0 else None


def agreement(day: Path, go: Path, work: Path) -> tuple[int, int]:
    """(values compared, values that differ) between ``ftdc.read_metrics`` and the Go decoder's CSV of the metrics
    ``capmodel observe`` reads, sample by sample (first sample of each time; doubles truncated as numberLong())."""
    import pandas as pd

    from capmodel.observe import ftdc, serverstatus

    metrics = serverstatus.ftdc_metrics()
    names = [serverstatus.FTDC_TIME, *dict.fromkeys(metrics.values())]
    out = work / "go.csv"
    subprocess.run([str(go), "-mode", "csv", "-metrics", ",".join(names), "-o", str(out), str(day)], check=True,
                   capture_output=True)
    theirs = pd.read_csv(out, dtype={name: str for name in names})
    theirs = theirs.assign(time_ms=theirs[serverstatus.FTDC_TIME].astype("int64"))
    theirs = theirs.drop_duplicates("time_ms").sort_values("time_ms", kind="stable").reset_index(drop=True)
    ours = ftdc.read_metrics(day, metrics, time_metric=serverstatus.FTDC_TIME)
    compared = differ = 0
    if len(ours) != len(theirs) or not (ours["time_ms"].to_numpy() == theirs["time_ms"].to_numpy()).all():
        return len(ours), len(ours)
    for column, name in metrics.items():
        expected = pd.to_numeric(theirs[name], errors="coerce").map(
            lambda v: float(int(v)) if v == v else v).to_numpy(dtype=float)
        got = ours[column].to_numpy(dtype=float)
        same = (got == expected) | (np.isnan(got) & np.isnan(expected))
        compared += same.size
        differ += int((~same).sum())
    return compared, differ


def _line(label: str, figures: dict) -> str:
    return f"  {label:<40} {figures['cpu']:7.2f} s CPU {figures['wall']:7.2f} s wall {figures['mb']:7.0f} MB peak"


def _verdict(met: bool) -> str:
    return "PASS" if met else "MISS"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--day", type=Path, default=DAY, help="a diagnostic.data folder or FTDC file")
    parser.add_argument("--small-chunks", type=int, default=2706, help="chunks of the re-chunked day (0: skip it)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each command; the median is printed")
    args = parser.parse_args(argv)
    from capmodel.observe import serverstatus

    metrics = ",".join([serverstatus.FTDC_TIME, *dict.fromkeys(serverstatus.ftdc_metrics().values())])
    env_python = [sys.executable]
    capmodel = [sys.executable, "-m", "capmodel.cli"]
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="capmodel-bench-ftdc-") as work:
        work = Path(work)
        env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(work / "bytecode")          # as installed: compiled once, not every run
        go = go_decoder(work)
        days = [("realistic day", args.day)]
        if args.small_chunks:
            small = work / "small" / "metrics.2026-11-25T00-00-00Z-00000"
            small.parent.mkdir()
            made, samples = small_chunk_day(args.day, small, args.small_chunks)
            days.append((f"small chunks ({made:,} chunks, {samples:,} samples)", small.parent))
        print(f"capmodel observe --ftdc vs the Go decoder ({'absent: capmodel only' if go is None else go}); "
              f"median of {args.repeat} fresh runs each; load average at start {load[0]:.2f} {load[1]:.2f} "
              f"{load[2]:.2f} ({os.cpu_count()} CPUs)")
        measure([*capmodel, "observe", "--ftdc", str(args.day), "--out", str(work / "out")], env)   # fills the cache
        missed = []
        for label, day in days:
            size = sum(f.stat().st_size for f in (day.iterdir() if day.is_dir() else [day])) / 1e6
            print(f"{label}: {day} ({size:.1f} MB)")
            ours = median_of([*capmodel, "observe", "--ftdc", str(day), "--out", str(work / "out")], args.repeat, env)
            decoder = median_of([*env_python, "-c", DECODER_ONLY.format(root=str(ROOT), path=str(day))], args.repeat,
                                env)
            print(_line("capmodel observe --ftdc (command)", ours))
            print(_line("capmodel decoder (read_metric_columns)", decoder))
            verdicts = [f"peak {ours['mb']:.0f} MB <= {PEAK_MB:g} MB {_verdict(ours['mb'] <= PEAK_MB)}"]
            if ours["mb"] > PEAK_MB:
                missed.append(f"{label}: peak {ours['mb']:.0f} MB")
            if go is not None:
                theirs = median_of([str(go), "-mode", "csv", "-metrics", metrics, "-o", os.devnull, str(day)],
                                   args.repeat)
                print(_line("Go ftdcdump -mode csv", theirs))
                ratio = ours["cpu"] / theirs["cpu"]
                print(f"  ratio capmodel/Go: CPU {ratio:.2f}x, decoder alone {decoder['cpu'] / theirs['cpu']:.2f}x; "
                      f"peak memory {ours['mb'] / theirs['mb']:.2f}x ({ours['mb']:.0f} MB vs {theirs['mb']:.0f} MB)")
                compared, differ = agreement(day, go, work)
                print(f"  values of the observed metrics: {compared:,} compared with the Go decoder's, "
                      f"{differ:,} differ")
                verdicts = [f"CPU {ratio:.2f}x Go's <= {CPU_RATIO:g}x {_verdict(ratio <= CPU_RATIO)}", *verdicts,
                            f"values equal to Go's {_verdict(not differ)}"]
                if ratio > CPU_RATIO:
                    missed.append(f"{label}: CPU {ratio:.2f}x Go's")
                if differ:
                    missed.append(f"{label}: {differ:,} values differ from Go's")
            print("  targets: " + "; ".join(verdicts))
        print("all within the targets" if not missed else "not within the targets: " + "; ".join(missed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
