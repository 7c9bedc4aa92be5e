"""Start-up cost of the command line: ``capmodel fit`` on a 7-point CSV against ``python -c "import pandas"``.

    python benchmarks/bench_cli.py [--rounds 7] [--file data/usl_specsdm91.csv]

Both are run as fresh processes with the same interpreter, alternating A B A B ... ``rounds`` times each, so that
load from elsewhere on the machine falls on both alike. Prints the median wall time of each, the median of the
paired ratios fit / pandas with its range, and whether it meets the target (ratio <= 2): a fit should cost little
more than reading the table it fits.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_RATIO = 2.0


def wall_time(argv: list[str], env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="pairs of runs (medians reported)")
    parser.add_argument("--file", default=str(ROOT / "data" / "usl_specsdm91.csv"), help="the curve to fit")
    args = parser.parse_args()

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    pandas_cmd = [sys.executable, "-c", "import pandas"]
    fit_cmd = [sys.executable, "-m", "capmodel.cli", "fit", args.file, "--json"]
    wall_time(fit_cmd, env)                      # warm the file cache and the bytecode once, untimed
    wall_time(pandas_cmd, env)
    pandas_times, fit_times = [], []
    for _ in range(args.rounds):
        pandas_times.append(wall_time(pandas_cmd, env))
        fit_times.append(wall_time(fit_cmd, env))
    ratios = [f / p for f, p in zip(fit_times, pandas_times)]
    ratio = statistics.median(ratios)
    print(f"python -c 'import pandas':     {statistics.median(pandas_times):6.3f} s (median of {args.rounds})")
    print(f"capmodel fit {Path(args.file).name} --json: {statistics.median(fit_times):6.3f} s")
    print(f"ratio fit / pandas: {ratio:.2f} (paired runs {min(ratios):.2f}-{max(ratios):.2f})  "
          f"target <= {TARGET_RATIO:g}: {'ok' if ratio <= TARGET_RATIO else 'OVER'}")


if __name__ == "__main__":
    main()
