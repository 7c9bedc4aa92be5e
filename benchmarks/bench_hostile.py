"""Bounds under hostile input that are about time and memory (issue 11), measured, not asserted in tests.

    python benchmarks/bench_hostile.py

1. A 'billion laughs' workload file (nine levels of nine YAML aliases, about 550 bytes, 387 million strings
   expanded): how long ``load_workload`` takes to refuse it and how much the process's peak memory grows, in a fresh
   interpreter each of 5 times, against the bounds of the issue (1 s, 100 MB).
2. An unreachable MongoDB host (127.0.0.1, a closed port): how long the coordinator's first ``ping`` takes to fail
   with the default options, against the README's 5 s of server selection.
"""
from __future__ import annotations

import os
import statistics
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
from capmodel.bench.workloads import load_workload
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
from capmodel.bench.config import BenchConfig
from capmodel.bench.connection import make_client, ping
from capmodel.errors import BenchError
uri = "mongodb://127.0.0.1:1/"
started = time.perf_counter()
try:
    ping(make_client(uri, BenchConfig().check(), pool=16), uri)
except BenchError:
    pass
print(time.perf_counter() - started)
"""


def child(code: str, *args) -> list[str]:
    """Run ``code`` in a fresh interpreter (this checkout first on the path); its printed words."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, check=True)
    return out.stdout.split(maxsplit=2)


def main() -> int:
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
