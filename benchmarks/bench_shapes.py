"""The query shapes' CPU per operation against each shape measured alone, and the what-if's saturation against a
measured one, on a real embedded mongod (issue 30, point 4).

    .venv/bin/python benchmarks/bench_shapes.py [--alone 10] [--phases 60] [--repeat 1] [--interval 0.1]
                                                [--saturate SHAPE=FACTOR] [--no-pin]

The lab (tests/support/shape_demand_lab.py, which the suite's test_shape_demands_live shares with looser bounds):
a fresh embedded mongod per run, pinned to core 0 and the clients to core 1 (``--no-pin``: anywhere), every operation
logged, FTDC on; each shape alone for ``--alone`` seconds, then ``--phases`` phases of one second with random mixes;
the log counted in ``--interval`` seconds. Printed per shape: its CPU per operation measured alone and fitted, with
the fit's 95 % interval, and the error (fitted / alone - 1); the fit's verdict.

``--replay 5``: the replay workload written from the phases' shapes (``replay_workload``) runs each operation alone
for that many seconds with ``capmodel bench`` on the same server, and each shape's row gains its replayed operation's
CPU per operation against the shape's alone.

``--saturate scan=3`` (a lab shape's name and a factor): the what-if's mix with that shape scaled runs closed-loop
with the mongod held to half a core (a CPU quota: root and cgroup v1's cpu controller), which clients on one core can
saturate; the row sets the throughput measured against the what-if's saturation held to that quota, and says how much
of the quota the server used and in what share of the quota's periods it was throttled (near all: saturated).
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.shape_demand_lab import run_demand_lab  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--alone", type=float, default=10.0, help="seconds of each shape alone (default 10)")
    parser.add_argument("--phases", type=int, default=60, help="phases of one second with random mixes (default 60)")
    parser.add_argument("--interval", type=float, default=0.1, help="seconds per interval the log is counted in "
                        "(default 0.1: each FTDC sample is a point of the fit, with the rates of its own window)")
    parser.add_argument("--no-pin", action="store_true", help="leave the server and the clients on any core")
    parser.add_argument("--compare", type=float, default=1.0, help="also fit with the log counted in intervals of "
                        "this many seconds, on the same data (default 1: the length of the FTDC's samples; 0: none)")
    parser.add_argument("--replay", type=float, default=5.0, help="seconds each operation of the replay workload "
                        "written from the phases runs alone, its CPU per operation set against its shape's alone "
                        "(default 5; 0: no replay)")
    parser.add_argument("--repeat", type=int, default=1, help="runs, each on a fresh server (default 1)")
    parser.add_argument("--saturate", metavar="SHAPE=FACTOR", help="also measure the saturation throughput at the "
                        "what-if's mix (shapes: scan, range, update, lookup), the server on core 0 alone")
    args = parser.parse_args()
    saturate = None
    if args.saturate:
        name, _, factor = args.saturate.partition("=")
        saturate = (name, float(factor))
    folder = Path(tempfile.mkdtemp(prefix="bench-shapes-"))
    try:
        rows = [row for seed in range(args.repeat)
                for row in run_demand_lab(folder, args.alone, args.phases, seed, saturate, args.interval,
                                          not args.no_pin, compare_interval_s=args.compare or None,
                                          replay_s=args.replay or None).rows]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    table = pd.DataFrame(rows)
    print("rows: a shape's CPU per operation (ms), measured alone and fitted; a saturation row: ops/s measured and "
          "predicted")
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.float_format", "{:.4g}".format):
        print(table.to_string(index=False))
    demands = table[~table["shape"].str.startswith("saturation")]
    inside = int(((demands["low_ms"] <= demands["alone_ms"]) & (demands["alone_ms"] <= demands["high_ms"])).sum())
    print(f"CPU per operation, the log counted in {args.interval:g} s: median |error| "
          f"{demands['error_pct'].abs().median():.1f}%, largest {demands['error_pct'].abs().max():.1f}%; alone inside "
          f"the fitted interval {inside} of {len(demands)}")
    if "compare_error_pct" in demands:
        print(f"the same data, the log counted in {args.compare:g} s: median |error| "
              f"{demands['compare_error_pct'].abs().median():.1f}%, largest "
              f"{demands['compare_error_pct'].abs().max():.1f}%")
    if "replay_error_pct" in demands:
        replayed = demands["replay_error_pct"].abs()
        print(f"the replay's operations alone against their shapes alone: median |error| {replayed.median():.1f}%, "
              f"largest {replayed.max():.1f}%")
    for _, row in table[table["shape"].str.startswith("saturation")].iterrows():
        print(f"{row['shape']}: measured {row['alone_ms']:,.0f} ops/s, predicted {row['fitted_ms']:,.0f} "
              f"({row['low_ms']:,.0f} to {row['high_ms']:,.0f}), error {row['error_pct']:+.1f}%; {row['codes']}")


if __name__ == "__main__":
    main()
