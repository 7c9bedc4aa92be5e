"""Fuzzing capmodel's inputs: the hypothesis strategies of ``tests/support/awkward_inputs.py`` on many examples.

    python benchmarks/fuzz.py [--examples 10000] [--seed 0] [--only reader,fit,...]

Targets: the curve reader (CSV files of odd cells and bytes; and files at and beyond its bounds: columns, line length,
size, repeated names, semicolons), ``fit_usl`` (curves of any floats), workload YAML files, ``BenchConfig`` options,
output folders (``--out`` holding foreign files, symlinks, folders, FIFOs, torn or newer records, a held lock), the
``plan``, ``nodes`` and ``shards`` command lines, ``mva`` model files (``tests/support/awkward_models.py``) and the FTDC
reader (``ftdc``: real chunks mutated, crafted counts and varint streams, truncations;
``tests/support/awkward_ftdc.py``).
``--examples`` is the total, split evenly over the targets. Prints, per target and in all, how many examples were
accepted (ok) or refused with one error naming the input (refused), and the counts that must all be 0: tracebacks (any
exception outside the CapmodelError family, or a CLI exit that is not 0 or one line with status 2), hangs (one example
over 30 s), errors that do not name their input (unnamed), warnings or stray output (noise), files outside capmodel's
own that changed (overwrote: a symlink's target, a foreign file), and examples whose traced allocations pass their
target's bound (memory: 600 MB for an mva model, 64 MB for an FTDC read). Exit status 1 when any is not 0; the
first few offending examples are printed so they can be replayed.
"""
from __future__ import annotations

import argparse
import signal
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402

from tests.support import awkward_folders as hf  # noqa: E402
from tests.support import awkward_ftdc as hftdc  # noqa: E402
from tests.support import awkward_inputs as hi  # noqa: E402
from tests.support import awkward_models as hm  # noqa: E402

HANG_SECONDS = 30
BAD = ("traceback", "hang", "unnamed", "noise", "overwrote", "memory")
TARGETS = {
    "reader": (hi.csv_files(), hi.check_reader),
    "reader-bounds": (hf.wide_csv_files(), hf.check_bounded_reader),
    "out-folder": (hf.folder_states, hf.check_output_folder),
    "fit": (hi.curves, hi.check_fit),
    "workload": (hi.workload_files(), hi.check_workload),
    "bench-options": (hi.bench_options, hi.check_bench_config),
    "plan": (hi.option_sets(hi.PLAN_OPTIONS), lambda pairs: hi.check_command("plan", pairs)),
    "nodes": (hi.option_sets(hi.NODES_OPTIONS), lambda pairs: hi.check_command("nodes", pairs)),
    "shards": (hi.option_sets(hi.SHARDS_OPTIONS), lambda pairs: hi.check_command("shards", pairs)),
    "mva": (hm.model_files(), hm.check_model),
    "ftdc": (hftdc.ftdc_files, hftdc.check_ftdc),
}


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


def fuzz(name: str, examples: int, rng_seed: int) -> tuple[Counter, list]:
    strategy, check = TARGETS[name]
    counts, offenders = Counter(), []

    @seed(rng_seed)
    @settings(max_examples=examples, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(example=strategy)
    def run(example):
        signal.alarm(HANG_SECONDS)
        try:
            outcome = check(example)
        except Hang:
            outcome = "hang"
        finally:
            signal.alarm(0)
        counts[outcome] += 1
        if outcome in BAD and len(offenders) < 5:
            offenders.append((outcome, repr(example)[:300]))

    run()
    return counts, offenders


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=10_000, help="examples in all, split over the targets")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", default=",".join(TARGETS), help="comma-separated targets")
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n]
    per = max(1, -(-args.examples // len(names)))
    signal.signal(signal.SIGALRM, _alarm)
    total, bad_examples = Counter(), []
    print(f"{'target':<14} {'examples':>8} {'ok':>7} {'refused':>8} " + " ".join(f"{b:>9}" for b in BAD)
          + "  seconds")
    for name in names:
        started = time.perf_counter()
        counts, offenders = fuzz(name, per, args.seed)
        total.update(counts)
        bad_examples += [(name, *o) for o in offenders]
        print(f"{name:<14} {sum(counts.values()):>8} {counts['ok']:>7} {counts['refused']:>8} "
              + " ".join(f"{counts[b]:>9}" for b in BAD) + f"  {time.perf_counter() - started:7.1f}")
    print(f"{'all':<14} {sum(total.values()):>8} {total['ok']:>7} {total['refused']:>8} "
          + " ".join(f"{total[b]:>9}" for b in BAD))
    for name, outcome, example in bad_examples:
        print(f"  {name}: {outcome}: {example}")
    return 1 if any(total[b] for b in BAD) else 0


if __name__ == "__main__":
    sys.exit(main())
