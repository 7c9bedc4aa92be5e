"""How fast ``server_capacity`` bootstraps its CPU per operation: the closed-form weighted sums it uses against the
polyfit-per-resample loop it replaced (the reference kept in tests/test_capacity.py), side by side in one run.

    python benchmarks/bench_capacity.py [--intervals 43200] [--repeat 3]

A day of one-second intervals (43,200 points at 12 h, as a fleet member's window) of a varied load with CPU from the
utilization law plus noise; both compute the 400 bootstrap draws of the same seed. The ratio is the figure to read.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--intervals", type=int, default=43_200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)

    from capmodel.observe.capacity import N_BOOTSTRAP, _bootstrap_demands, server_capacity
    from test_capacity import _polyfit_bootstrap_interval, samples
    from timing import median_time

    x = np.linspace(100, 900, args.intervals) * (1 + 0.1 * np.sin(np.arange(args.intervals)))
    table = samples(x, noise=0.01)
    u = table["cpu_cores"].to_numpy()
    old = median_time(lambda: _polyfit_bootstrap_interval(x, u, True, N_BOOTSTRAP, 0, 0.95), args.repeat)
    new = median_time(lambda: _bootstrap_demands(x, u, True, N_BOOTSTRAP, 0), args.repeat)
    whole = median_time(lambda: server_capacity(table, cores=2), args.repeat)
    print(f"{args.intervals:,} intervals, {N_BOOTSTRAP} draws: polyfit loop {old:.3f} s, closed form {new:.3f} s "
          f"({old / new:.1f}x faster); server_capacity now {whole:.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
