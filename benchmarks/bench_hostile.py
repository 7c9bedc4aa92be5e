"""Bounds under hostile input that are about time and memory (issue 11), measured, not asserted in tests.

    python benchmarks/bench_hostile.py

1. A 'billion laughs' workload file (nine levels of nine YAML aliases, about 550 bytes, 387 million strings
   expanded): how long ``load_workload`` takes to refuse it and how much the process's peak memory grows, in a fresh
   interpreter each of 5 times, against the bounds of the issue (1 s, 100 MB).
2. An unreachable MongoDB host (127.0.0.1, a closed port): how long the coordinator's first ``ping`` takes to fail
   with the default options, against the README's 5 s of server selection.
3. Curve files beyond the readers' bounds (issue 20): a CSV of 10^6 columns (9 MB), one of 10^5 columns (also run
   with ``--before DIR``, a checkout without the bounds, e.g. /work/main, for the ratio) and a 2 GB file (sparse: no
   disk used), each refused by ``read_curve`` in a fresh interpreter: seconds and peak memory growth.
4. A Dask scheduler address that accepts and never answers, and one that answers garbage claiming 3 EiB: seconds
   until ``capmodel bench --scheduler`` ends with its one line (README: within 10 s).

    python benchmarks/bench_hostile.py [--before /work/main]
"""
from __future__ import annotations

import argparse
import os
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def bomb() -> str:
    lines = ["name: bomb", "collection: c", "l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, 9)]
    return "\n".join(lines + ["operations: [{op: find, filter: {x: *l8}}]"]) + "\n"


BOMB_CHILD = """
import resource, sys, time
from capmodel.bench.workload.definition import load_workload
from capmodel.errors import InputError
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.perf_counter()
try:
    load_workload(sys.argv[1])
    outcome = "accepted (!)"
except InputError as exc:
    outcome = "refused: " + str(exc).split(": ", 1)[1]
print(time.perf_counter() - started, (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024, outcome)
"""

UNREACHABLE_CHILD = """
import time
from capmodel.bench.sweep.config import BenchConfig
from capmodel.bench.cluster.connection import make_client, ping
from capmodel.errors import BenchError
uri = "mongodb://127.0.0.1:1/"
started = time.perf_counter()
try:
    ping(make_client(uri, BenchConfig().check(), pool=16), uri)
except BenchError:
    pass
print(time.perf_counter() - started)
"""


READER_CHILD = """
import resource, sys, time
import capmodel
import capmodel.data.readers  # the imports (pandas) before the clock starts
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.perf_counter()
try:
    capmodel.read_curve(sys.argv[1])
    outcome = "accepted (!)"
except Exception as exc:
    outcome = f"{type(exc).__name__}, an error line of {len(str(exc)):,} characters"
print(time.perf_counter() - started, (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024, outcome)
"""


def child(code: str, *args, root: Path = ROOT) -> list[str]:
    """Run ``code`` in a fresh interpreter (``root``'s checkout first on the path); its printed words."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    out = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, check=True,
                         cwd=root)  # 'python -c' puts the working folder first on the path
    return out.stdout.split(maxsplit=2)


def wide_csv(path: Path, columns: int) -> Path:
    header = ",".join(f"c{i}" for i in range(columns))
    path.write_text(header + "\n" + ",".join("1" for _ in range(columns)) + "\n")
    return path


def readers(before: Path | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        cases = [("10^6 columns", wide_csv(Path(tmp) / "wide6.csv", 10**6)),
                 ("10^5 columns", wide_csv(Path(tmp) / "wide5.csv", 10**5))]
        huge = Path(tmp) / "huge.csv"
        with open(huge, "wb") as fh:
            fh.truncate(2 * 2**30)
        cases.append(("2 GB (sparse)", huge))
        for label, path in cases:
            seconds, grown, outcome = child(READER_CHILD, str(path))
            line = (f"{label:<14} {path.stat().st_size / 2**20:9,.1f} MB: {float(seconds):7.3f} s, peak memory "
                    f"+{float(grown):8,.1f} MB ({outcome.strip()})")
            if before is not None and label == "10^5 columns":
                b_seconds, b_grown, b_outcome = child(READER_CHILD, str(path), root=before)
                line += (f"\n{'':<14} {'before':>12}: {float(b_seconds):7.3f} s, peak memory +{float(b_grown):8,.1f} "
                         f"MB ({b_outcome.strip()}); time ratio before/now {float(b_seconds) / float(seconds):,.0f}x")
            print(line)


def _peer(reply: bytes | None) -> tuple[socket.socket, str]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(4)
    import threading

    def serve():
        conns = []
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            conns.append(conn)
            if reply:
                conn.sendall(reply)

    threading.Thread(target=serve, daemon=True).start()
    return sock, f"tcp://127.0.0.1:{sock.getsockname()[1]}"


def schedulers() -> None:
    import time

    capmodel = str(Path(sys.executable).with_name("capmodel"))
    for label, reply in (("silent", None), ("garbage, 3 EiB", struct.pack("<Q", 3 * 2**60) + b"HTTP/1.1 400\r\n")):
        sock, address = _peer(reply)
        with tempfile.TemporaryDirectory() as tmp:
            started = time.perf_counter()
            proc = subprocess.run([capmodel, "bench", "--uri", "mongodb://127.0.0.1:9/", "--scheduler", address,
                                   "--out", tmp, "--quiet"], env={**os.environ, "PYTHONPATH": str(ROOT)},
                                  capture_output=True, text=True, timeout=300)
            waited = time.perf_counter() - started
        sock.close()
        lines = proc.stderr.strip().splitlines()
        print(f"scheduler {label:<15} exit {proc.returncode}, {len(lines)} line(s) after {waited:5.2f} s "
              f"(README: within 10 s): {lines[0][:110] if lines else ''}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, default=None, help="a checkout without the readers' bounds")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bomb.yaml"
        path.write_text(bomb())
        runs = [child(BOMB_CHILD, str(path)) for _ in range(5)]
        seconds = statistics.median(float(r[0]) for r in runs)
        grown = max(float(r[1]) for r in runs)
        print(f"bomb ({path.stat().st_size} bytes): {runs[0][2].strip()}")
        print(f"  median {seconds * 1000:.1f} ms to refuse (bound 1 s); peak memory grew by at most {grown:.1f} MB "
              "(bound 100 MB)")
    waited = float(child(UNREACHABLE_CHILD)[0])
    print(f"unreachable host: failed after {waited:.2f} s (README: server selection 5 s; --timeout-ms is 10 s)")
    readers(args.before)
    schedulers()
    return 0


if __name__ == "__main__":
    sys.exit(main())
