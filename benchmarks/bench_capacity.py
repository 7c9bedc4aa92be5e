"""How fast ``server_capacity`` bootstraps its CPU per operation: the circular block bootstrap it uses (block length
chosen from the data, then the closed-form weighted sums) against the ordinary bootstrap of single intervals it
replaced (the same sums, blocks of one) and the polyfit-per-resample loop before that (the reference kept in
tests/observe/test_capacity.py), side by side in one run.

    python benchmarks/bench_capacity.py [--intervals 43200] [--repeat 3] [--phi 0.9] [--no-polyfit]

A day of one-second intervals (43,200 points at 12 h, as a fleet member's window) of a varied load with CPU from the
utilization law plus AR(1) noise of coefficient ``--phi`` (consecutive intervals that move together, so that blocks
longer than one are chosen); each computes the 400 bootstrap draws of the same seed. The ratios are the figures to
read: the block bootstrap (with its block-length choice) is to stay within 1.5x of the ordinary one.
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--intervals", type=int, default=43_200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--phi", type=float, default=0.9, help="AR(1) coefficient of the CPU noise")
    parser.add_argument("--no-polyfit", action="store_true", help="leave out the (slow) polyfit loop")
    args = parser.parse_args(argv)

    from scipy.signal import lfilter
    from timing import median_time

    from capmodel.observe.capacity import N_BOOTSTRAP, server_capacity
    from capmodel.observe.service_demand import bootstrap_demands, demand_interval, fit_demand
    from tests.observe.test_capacity import _polyfit_bootstrap_interval, samples

    n = args.intervals
    x = np.linspace(100, 900, n) * (1 + 0.1 * np.sin(np.arange(n)))
    table = samples(x, noise=0.0)
    z = np.random.default_rng(3).normal(size=n)
    table["cpu_cores"] += 0.01 * lfilter([math.sqrt(1 - args.phi ** 2)], [1.0, -args.phi], z)
    u = table["cpu_cores"].to_numpy()
    background, d = fit_demand(x, u, True)
    chosen = demand_interval(x, u, True, background, d, 0.95, N_BOOTSTRAP, 0)
    iid = median_time(lambda: bootstrap_demands(x, u, True, N_BOOTSTRAP, 0, 1), args.repeat)
    blocks = median_time(lambda: demand_interval(x, u, True, background, d, 0.95, N_BOOTSTRAP, 0), args.repeat)
    whole = median_time(lambda: server_capacity(table, cores=2), args.repeat)
    print(f"{n:,} intervals, {N_BOOTSTRAP} draws, AR(1) noise phi {args.phi:g}: block length chosen "
          f"{chosen.block}, widening {chosen.widening:.2f}")
    print(f"ordinary bootstrap (blocks of one, closed form) {iid:.3f} s; block bootstrap with its block-length "
          f"choice {blocks:.3f} s ({blocks / iid:.2f}x the ordinary one); server_capacity {whole:.3f} s")
    if not args.no_polyfit:
        old = median_time(lambda: _polyfit_bootstrap_interval(x, u, True, N_BOOTSTRAP, 0, 0.95), args.repeat)
        print(f"polyfit loop (one np.polyfit per resample) {old:.3f} s: {old / blocks:.1f}x the block bootstrap")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
