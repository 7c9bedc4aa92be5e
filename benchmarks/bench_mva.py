"""Speed of the multi-class MVA solvers, against the issue's targets.

    python benchmarks/bench_mva.py [--repeat 5]

Prints the median time of exact multi-class MVA for 2 classes x 100 customers on 5 stations (target <= 1 s) and of
approximate MVA (Bard-Schweitzer and Linearizer) for 3 classes x 10,000 customers on 5 stations (target <= 0.1 s),
each with its ratio to the target, measured side by side in one run.
"""
from __future__ import annotations

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from capmodel.models.queueing.multiclass import approximate_multiclass_mva, multiclass_mva  # noqa: E402
from timing import median_time  # noqa: E402 - benchmarks/timing.py, beside this script

TARGET_EXACT_S = 1.0
TARGET_APPROXIMATE_S = 0.1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed repetitions (median reported)")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    two = {f"station{k + 1}": {"a": rng.uniform(0.01, 0.1), "b": rng.uniform(0.01, 0.1)} for k in range(5)}
    three = {f"station{k + 1}": {c: rng.uniform(0.01, 0.1) for c in "abc"} for k in range(5)}
    cases = [
        ("exact, 2 classes x 100 customers, 5 stations", TARGET_EXACT_S,
         lambda: multiclass_mva(two, {"a": 100, "b": 100}, {"a": 1.0, "b": 0.0})),
        ("Bard-Schweitzer, 3 classes x 10,000 customers, 5 stations", TARGET_APPROXIMATE_S,
         lambda: approximate_multiclass_mva(three, dict.fromkeys("abc", 10_000), method="schweitzer")),
        ("Linearizer, 3 classes x 10,000 customers, 5 stations", TARGET_APPROXIMATE_S,
         lambda: approximate_multiclass_mva(three, dict.fromkeys("abc", 10_000), method="linearizer")),
    ]
    for label, target, func in cases:
        func()  # warm-up
        seconds = median_time(func, args.repeat)
        print(f"{label}: {seconds * 1000:.1f} ms (target {target * 1000:.0f} ms, {seconds / target:.2f} x target)")


if __name__ == "__main__":
    main()
