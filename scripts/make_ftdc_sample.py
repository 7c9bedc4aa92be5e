"""Make the bundled FTDC sample: diagnostic data that capmodel's own embedded mongod wrote while capmodel loaded it,
with the server, not the client, as the bottleneck.

    python scripts/make_ftdc_sample.py [--out data/ftdc_sample] [--light-seconds 8] [--duration 6]

Runs the procedure of ``benchmarks/bench_headroom.py`` on a mongod with FTDC on (one sample a second): the server
pinned to CPU 0 and this process (the mongojet clients) to CPU 1, ``data/ftdc_sample/workload.yaml`` (unindexed range
scans, point finds, updates: about 5x more CPU per operation in mongod than in the client) loaded, then open-loop
light load at about 20%, 30% and 40% of the server's core with a live ``serverStatus`` sampler beside it, then a
closed-loop sweep at 1, 2, 4, 8 and 16 clients up to saturation. The server is stopped cleanly (mongod writes its
last samples into the archive) and ``diagnostic.data`` copied to ``OUT/diagnostic.data``; ``OUT/sample.json`` gets
the window (after the load) and how it was made, ``OUT/client_curve.csv`` the sweep's client-side curve with both
CPU meters. The load is capmodel's; no production data is involved. Run time: about 80 s.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import pandas as pd  # noqa: E402

from bench_headroom import LIGHT_FRACTIONS, measure  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "data" / "ftdc_sample"))
    parser.add_argument("--light-seconds", type=float, default=8.0)
    parser.add_argument("--duration", type=float, default=6.0)
    parser.add_argument("--concurrency", default="1,2,4,8,16")
    args = parser.parse_args(argv)
    out = Path(args.out)
    concurrency = [int(c) for c in args.concurrency.split(",")]
    with tempfile.TemporaryDirectory(prefix="capmodel-ftdc-") as work:
        dbpath = Path(work) / "db"
        r = measure(light_seconds=args.light_seconds, duration=args.duration, concurrency=concurrency,
                    dbpath=dbpath, log=lambda message: None)
        target = out / "diagnostic.data"
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        for file in sorted((dbpath / "diagnostic.data").iterdir()):
            if file.stat().st_size:
                shutil.copy2(file, target / file.name)
    pd.DataFrame(r["client_curve"]).to_csv(out / "client_curve.csv", index=False)
    since = r["loaded_at"] + timedelta(seconds=1)
    (out / "sample.json").write_text(json.dumps({
        "since": since.isoformat(timespec="seconds"), "until": r["finished_at"].isoformat(timespec="seconds"),
        "workload": "workload.yaml", "server_cpus": [0], "client_cpus": [1], "cores": 1,
        "light_load": {"rates_ops_per_s": [round(x, 1) for x in r["rates"]], "fractions_of_core": LIGHT_FRACTIONS,
                       "seconds": args.light_seconds, "clients": 8},
        "concurrency": concurrency, "duration_s": args.duration, "mongod": r["mongod"],
        "made_by": "scripts/make_ftdc_sample.py",
    }, indent=2) + "\n")
    size = sum(f.stat().st_size for f in target.iterdir())
    print(f"wrote {target} ({size:,} bytes), {out / 'client_curve.csv'} and {out / 'sample.json'}")
    print(f"predicted saturation {r['predicted']:,.0f} ops/s, measured {r['measured']:,.0f} ops/s, "
          f"ratio {r['ratio']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
