"""Start-up cost of the command line: ``capmodel fit`` on a 7-point CSV against ``python -c "import pandas"``.

    python benchmarks/bench_cli.py [--rounds 7] [--file data/usl_specsdm91.csv]

Both are run as fresh processes with the same interpreter, alternating A B A B ... ``rounds`` times each, so that
load from elsewhere on the machine falls on both alike. Prints the median wall time of each, the median of the
paired ratios fit / pandas with its range, and whether it meets the target (ratio <= 2): a fit should cost little
more than reading the table it fits. The same for CPU time (user + system of the child), which other load on the
machine moves much less than wall time.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_RATIO = 2.0


def run_timed(argv: list[str], env: dict) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run of ``argv`` as a child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)  # -m puts the cwd first
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def report(label: str, pandas_times: list[float], fit_times: list[float], name: str) -> None:
    ratios = [f / p for f, p in zip(fit_times, pandas_times)]
    ratio = statistics.median(ratios)
    print(f"{label}: import pandas {statistics.median(pandas_times):6.3f} s, capmodel fit {name} "
          f"{statistics.median(fit_times):6.3f} s; ratio {ratio:.2f} (paired runs {min(ratios):.2f}-{max(ratios):.2f})"
          f"  target <= {TARGET_RATIO:g}: {'ok' if ratio <= TARGET_RATIO else 'OVER'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="pairs of runs (medians reported)")
    parser.add_argument("--file", default=str(ROOT / "data" / "usl_specsdm91.csv"), help="the curve to fit")
    args = parser.parse_args()

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    pandas_cmd = [sys.executable, "-c", "import pandas"]
    fit_cmd = [sys.executable, "-m", "capmodel.cli", "fit", args.file, "--json"]
    run_timed(fit_cmd, env)                      # warm the file cache and the bytecode once, untimed
    run_timed(pandas_cmd, env)
    runs = {"pandas": [], "fit": []}
    for _ in range(args.rounds):
        runs["pandas"].append(run_timed(pandas_cmd, env))
        runs["fit"].append(run_timed(fit_cmd, env))
    name = Path(args.file).name
    print(f"{args.rounds} rounds, alternating; medians")
    report("wall", [w for w, _ in runs["pandas"]], [w for w, _ in runs["fit"]], name)
    report("cpu ", [c for _, c in runs["pandas"]], [c for _, c in runs["fit"]], name)

if __name__ == "__main__":
    main()
