"""How fast ``capmodel fleet`` analyses a fleet: server-days per minute with 1 and 2 local Dask workers, side by side
in one run, and the peak memory of each worker.

    python benchmarks/bench_fleet.py [--servers 6] [--hours 24]

The fleet is generated first (``capmodel.observe.synthetic``: each server a day of one-second FTDC samples in
mongod's chunks of 300, layouts varying between chunks) into a temporary folder. Each configuration then starts its
own LocalCluster of single-threaded worker processes (as ``capmodel fleet`` does), analyses every server (one task
each: decode, samples, capacity with its bootstrap; only the summary row comes back), and reads each worker's peak
resident memory (``ru_maxrss``) before the cluster closes. The ratio of the two throughputs is the figure to read: on
a shared machine absolute times move with the neighbours' load.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0      # Linux: kilobytes


def measure(folders, workers: int) -> dict:
    from capmodel.observe.fleet import analyse_on
    from capmodel.observe.fleet_cluster import dask_client

    with dask_client(None, workers) as (client, _):
        client.run(_peak_rss_mb)                                              # workers up before the clock starts
        start = time.perf_counter()
        rows = analyse_on(client, folders)
        seconds = time.perf_counter() - start
        memory = sorted(client.run(_peak_rss_mb).values())
    failed = int(rows["error"].notna().sum())
    if failed:
        raise SystemExit(f"{failed} server(s) failed: {rows['error'].dropna().iloc[0]}")
    return {"workers": workers, "seconds": seconds, "rows": len(rows), "memory_mb": memory}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--servers", type=int, default=6, help="servers in the generated fleet (default 6)")
    parser.add_argument("--hours", type=float, default=24.0, help="hours of FTDC per server (default 24)")
    args = parser.parse_args()

    from capmodel.observe import synthetic

    with tempfile.TemporaryDirectory(prefix="capmodel-bench-fleet-") as tmp:
        servers = synthetic.fleet_servers(clusters=-(-args.servers // 3), members=3, hours=args.hours)[:args.servers]
        start = time.perf_counter()
        folders = synthetic.write_fleet(servers, tmp)
        print(f"generated {len(folders)} servers x {args.hours:g} h of FTDC in {time.perf_counter() - start:.1f} s")
        days = len(folders) * args.hours / 24.0
        results = [measure(folders, workers) for workers in (1, 2)]
    print(f"{'workers':>7} {'seconds':>8} {'server-days/min':>16} {'peak MB per worker':>24}")
    for r in results:
        print(f"{r['workers']:>7} {r['seconds']:>8.1f} {days / r['seconds'] * 60:>16.1f} "
              f"{', '.join(f'{m:.0f}' for m in r['memory_mb']):>24}")
    print(f"2 workers / 1 worker throughput: {results[0]['seconds'] / results[1]['seconds']:.2f}x "
          f"(the machine's cores and its other load bound this)")


if __name__ == "__main__":
    main()
