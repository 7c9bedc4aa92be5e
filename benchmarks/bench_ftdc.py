"""How fast capmodel reads FTDC: a synthetic day (86,400 one-second samples) decoded into samples and curve.

    python benchmarks/bench_ftdc.py [--samples 86400]

The day is made of real chunks: the metric chunks of the bundled sample (data/ftdc_sample, written by the embedded
mongod under a capmodel sweep) repeated, each copy re-timed by shifting every Date of its reference document (the
deltas, and so every sample after it, follow), recompressed, and written as one FTDC file behind the original
metadata document. The read then runs in a fresh process (``observe_ftdc``: decode, serverStatus figures, intervals,
curve) so its peak memory is its own. Targets (issue 12): <= 20 s on one core, <= 500 MB.
"""
from __future__ import annotations

import argparse
import json
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TARGET_SECONDS, TARGET_MB = 20.0, 500.0


def synthetic_day(out: Path, samples: int) -> int:
    """Write ``out``: the sample's metadata, then re-timed copies of its chunks until ``samples`` samples."""
    import bson
    from bson.binary import Binary
    from bson.son import SON

    from capmodel.observe import bundled_sample
    from capmodel.observe.ftdc import date_offsets, ftdc_files, iter_documents

    metadata, chunks = None, []
    for file in ftdc_files(bundled_sample()["path"]):
        for offset, document in iter_documents(file):
            if document["type"] == 0 and metadata is None:
                metadata = file.read_bytes()[offset:offset + struct.unpack_from("<i", file.read_bytes(), offset)[0]]
            elif document["type"] == 1:
                raw = zlib.decompress(document["data"][4:])
                size = struct.unpack_from("<i", raw, 0)[0]
                n_metrics, n_deltas = struct.unpack_from("<II", raw, size)
                chunks.append((raw, date_offsets(raw[:size]), n_deltas + 1, int(document["_id"])))
    span = sum(count for _, _, count, _ in chunks) * 1000 + 1000         # ms one pass over the chunks covers
    written = 0
    with out.open("wb") as f:
        f.write(metadata)
        shift = 0
        while written < samples:
            for raw, dates, count, first in chunks:
                patched = bytearray(raw)
                for at in dates:
                    struct.pack_into("<q", patched, at, struct.unpack_from("<q", raw, at)[0] + shift)
                data = struct.pack("<I", len(patched)) + zlib.compress(bytes(patched))
                f.write(bson.encode(SON([("_id", bson.DatetimeMS(first + shift)), ("type", 1),
                                         ("data", Binary(data))])))
                written += count
            shift += span
    return written


CHILD = """
import json, resource, sys, time
sys.path.insert(0, {root!r})
start_cpu, start = time.process_time(), time.perf_counter()
from capmodel.observe import observe_ftdc
obs = observe_ftdc({path!r})
print(json.dumps({{"seconds": time.perf_counter() - start, "cpu_seconds": time.process_time() - start_cpu,
                   "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                   "intervals": len(obs.samples), "curve_points": len(obs.curve)}}))
"""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=86_400)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="capmodel-bench-ftdc-") as work:
        path = Path(work) / "metrics.2024-01-01T00-00-00Z-00000"
        written = synthetic_day(path, args.samples)
        child = subprocess.run([sys.executable, "-c", CHILD.format(root=str(ROOT), path=str(path))],
                               capture_output=True, text=True, check=True)
        result = json.loads(child.stdout)
        size_mb = path.stat().st_size / 1e6
    print(f"FTDC file: {written:,} samples, {size_mb:.1f} MB (re-timed copies of the bundled sample's chunks)")
    print(f"observe_ftdc: {result['seconds']:.2f} s wall, {result['cpu_seconds']:.2f} s CPU, "
          f"peak RSS {result['max_rss_mb']:.0f} MB -> {result['intervals']:,} intervals, "
          f"{result['curve_points']:,} curve points")
    print(f"per 86,400 samples: {result['seconds'] * 86_400 / written:.2f} s "
          f"(target <= {TARGET_SECONDS:g} s: {result['seconds'] * 86_400 / written / TARGET_SECONDS:.2f} of it); "
          f"memory {result['max_rss_mb'] / TARGET_MB:.2f} of the {TARGET_MB:g} MB target")
    return 0


if __name__ == "__main__":
    sys.exit(main())
