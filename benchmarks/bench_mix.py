"""The mix what-if against a real embedded mongod, repeated: how far its per-class predictions land, and whether the
misses follow the other processes on the server's core (issue 19, point 4).

    .venv/bin/python benchmarks/bench_mix.py [--repeat 5] [--slot 4.5] [--group on|off|alternate] [--out DIR]
    .venv/bin/python benchmarks/bench_mix.py --from DIR      # the model again on runs kept by --out (no server)
    .venv/bin/python benchmarks/bench_mix.py --record        # the lab runs the test's bounds were chosen on

Each run is the lab of tests/mix/test_production_live.py (tests/support/mix_lab.py, shared, not copied): a fresh
embedded mongod pinned to core 0, the load generator (and this process, so the sampler too) on core 1, eight open-loop
slots of ``--slot`` seconds as a palindrome of YCSB C, B, F, A, A, F, B, C; the model (``mix_what_if``) is trained on
the C, B and A intervals and predicts F at its offered rates (reads 800/s, writes 400/s), which is measured. About 50 s
a run, 4.5 minutes for five. ``--group``: the server's autogroup favoured (nice -10, root; the lab's default), left as
it is, or alternately (odd runs favoured), to see the neighbours' effect side by side.

Per run and per class: the predicted and measured throughput (ops/s) and server-side latency (ms, the
operations-weighted mean of opLatencies per interval, disturbed intervals left out by the fit's own rule
``typical``; ``raw``: without that filter) with the errors (predicted / measured - 1); the mongod's CPU (cores)
predicted and measured; the other processes' CPU on the server's core (``other``: core 0's busy time from /proc/stat
less the mongod's own, in cores) over the training and the measured intervals; the server's wait for its core per
operation (its threads' time runnable but not running, /proc/PID/task/*/schedstat) over both; the latency
predicted by the model that also takes that wait (``cpu_wait_per_s``), at the measured window's; and the test's
classification of the run (the server's core quiet of neighbours in both windows, or not: ``mix_lab.neighbours``), the
bounds it applies and whether the run is within them. Then per class over the runs (and over the quiet and the
neighbour-disturbed runs apart, where there are both): the median error and the largest absolute one, and the
correlation (Pearson) of the latency error with the
change of the neighbours' load and with the change of the server's wait, measured window minus training windows.

How to read it: throughput and CPU within a few per cent say the demands are right. Latency errors that change sign
from run to run and follow the change of the server's wait point at the neighbours (the server waits for its core
while they run, which its own CPU time does not show; ``other`` does not show it either where they are CPU-bound and
take whatever the server leaves: core 0 then stays ~100 % busy and ``other`` is 1 minus the server's CPU). Errors of
one sign in every run point at the model or the measure. On a quiet machine the wait is small and steady and the
errors should be too.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support import mix_lab  # noqa: E402


def one_run(samples, sweeps) -> dict:
    """The figures of one run (see the module doc), as a flat dict."""
    waited = "cpu_wait_per_s" in samples or "server_wait_per_s" in samples
    training, measured, result, rows = mix_lab.predict_f(samples, sweeps, wait=False)
    p = result.predicted.loc["embedded"]
    low, high = result.low.loc["embedded"], result.high.loc["embedded"]
    out = {"cpu_pred": p["cpu_cores"], "cpu_meas": measured["cpu_cores"].mean(),
           "other_train": training["other_cpu_cores"].mean(), "other_meas": measured["other_cpu_cores"].mean(),
           "describe": result.describe()}
    out["quiet"], out["neighbours"] = mix_lab.neighbours(training, measured)
    if any(w == "ycsb-b" for w, *_ in sweeps):   # side by side: the same run trained without B (C and A only)
        for c, _, _, r_pred, r_meas in mix_lab.predict_f(samples, sweeps, n_bootstrap=0, wait=False,
                                                         train=("ycsb-c", "ycsb-a"))[3]:
            out[c + "_no_b"] = {"r_pred": r_pred, "r_err": r_pred / r_meas - 1}
    if waited:     # the server's threads' time waiting for a core, per operation (us), and the model that knows it
        training, measured, _, with_wait = mix_lab.predict_f(samples, sweeps, n_bootstrap=0, wait=True)
        out["wait_train"], out["wait_meas"] = mix_lab.window_wait(training) * 1e6, mix_lab.window_wait(measured) * 1e6
        for c, _, _, r_pred, r_meas in with_wait:
            out[c + "_wait"] = {"r_pred": r_pred, "r_err": r_pred / r_meas - 1}
    for c, x_pred, x_meas, r_pred, r_meas in rows:
        out[c] = {"x_pred": x_pred, "x_meas": x_meas, "x_err": x_pred / x_meas - 1, "r_pred": r_pred,
                  "r_meas": r_meas, "r_raw": mix_lab.measured_latency_ms(measured, c, filtered=False),
                  "r_err": r_pred / r_meas - 1, "r_low": low[f"{c}_latency_ms"], "r_high": high[f"{c}_latency_ms"]}
    out["block"] = result.blocks["embedded"]
    out["spread"] = result.spread["embedded"]
    return out


def evaluate(i, samples, sweeps):
    """``one_run`` shown, or None (said) where a mix has too few steady intervals (a stalled server, a starved
    client)."""
    try:
        run = one_run(samples, sweeps)
    except AssertionError as error:
        print(f"run {i}: not usable: {str(error).splitlines()[0]}")
        return None
    show(i, run)
    return run


def show(i: int, run: dict) -> None:
    print(f"run {i}: CPU predicted {run['cpu_pred']:.3f} measured {run['cpu_meas']:.3f} cores "
          f"({(run['cpu_pred'] / run['cpu_meas'] - 1) * 100:+.1f} %); other processes on the server's core "
          f"{run['other_train']:.2f} cores while training, {run['other_meas']:.2f} while measured"
          + (f"; the server waited for its core {run['wait_train']:.1f} us per operation while training, "
             f"{run['wait_meas']:.1f} while measured" if "wait_train" in run else ""))
    _, said = mix_lab.demands(run["cpu_pred"], run["cpu_meas"])
    within = all(abs(run[c]["x_err"]) <= mix_lab.BOUND and run[c].get("r_low", -np.inf) <= run[c]["r_meas"]
                 <= run[c].get("r_high", np.inf) for c in ("reads", "writes")) \
        and abs(run["cpu_pred"] / run["cpu_meas"] - 1) <= mix_lab.CPU_BOUND
    print(f"  {run['neighbours']}; {said}: the test holds throughput to {mix_lab.BOUND:.0%}, the CPU to "
          f"{mix_lab.CPU_BOUND:.0%} and the latency to its {mix_lab.LEVEL:.0%} interval; "
          f"this run's classes {'within them' if within else 'NOT within them'}")
    for line in run["describe"].splitlines():     # the latency's terms in the mix, fitted where they explain it
        if "take longer as the share" in line or "extrapolat" in line or "observed only where" in line:
            print("  model: " + line.split(": ", 1)[1])
    for c in ("reads", "writes"):
        r = run[c]
        print(f"  {c:6s} throughput {r['x_pred']:7.1f} predicted {r['x_meas']:7.1f} measured "
              f"({r['x_err'] * 100:+5.1f} %)"
              f"   latency {r['r_pred']:.4f} predicted {r['r_meas']:.4f} measured ms ({r['r_err'] * 100:+5.1f} %;"
              f" raw {r['r_raw']:.4f})")
        if "r_low" in r:
            inside = r["r_low"] <= r["r_meas"] <= r["r_high"]
            s, windows = run.get("spread", {}).get(c, (np.nan, 0))
            print(f"  {c:6s} latency's {mix_lab.LEVEL:.0%} interval {r['r_low']:.4f} to {r['r_high']:.4f} ms (runs of "
                  f"{run['block'][0]} intervals, widened {run['block'][1]:.2f}x; window to window "
                  f"±{np.expm1(s) * 100:.1f} % over {windows}): the measured {'inside' if inside else 'OUTSIDE'}")
        if c + "_no_b" in run:
            print(f"  {c:6s} trained on C and A only (without B): latency {run[c + '_no_b']['r_pred']:.4f} predicted "
                  f"({run[c + '_no_b']['r_err'] * 100:+5.1f} %)")
        if c + "_wait" in run:
            w = run[c + "_wait"]
            print(f"  {c:6s} with the wait for the core in the model, at the measured window's: latency "
                  f"{w['r_pred']:.4f} predicted ({w['r_err'] * 100:+5.1f} %)")


def summary(runs: list[dict], title="") -> None:
    groups = {r.get("group") for r in runs}
    quiet = {r["quiet"] for r in runs}
    if not title and len(quiet) > 1:
        summary(runs, " (all)")
        for q in (True, False):
            summary([r for r in runs if r["quiet"] == q], " with the server's core " + ("quiet" if q else
                                                                                        "shared with neighbours"))
        return
    if len(groups) > 1:
        for group in (True, False):
            summary([r for r in runs if r.get("group") == group], " with the server's autogroup "
                    + ("favoured" if group else "as it is"))
        return
    print(f"\nover {len(runs)} runs{title}: error median (largest absolute); quiet core in "
          f"{sum(r['quiet'] for r in runs)} of them")
    for c in ("reads", "writes"):
        x = np.array([r[c]["x_err"] for r in runs]) * 100
        e = np.array([r[c]["r_err"] for r in runs]) * 100
        print(f"  {c:6s} throughput {np.median(x):+5.1f} % ({np.abs(x).max():.1f} %)   latency {np.median(e):+5.1f} %"
              f" ({np.abs(e).max():.1f} %)")
        if all(c + "_no_b" in r for r in runs):
            e = np.array([r[c + "_no_b"]["r_err"] for r in runs]) * 100
            print(f"  {c:6s} latency trained without B {np.median(e):+5.1f} % ({np.abs(e).max():.1f} %)")
        if all(c + "_wait" in r for r in runs):
            e = np.array([r[c + "_wait"]["r_err"] for r in runs]) * 100
            print(f"  {c:6s} latency with the wait in the model {np.median(e):+5.1f} % ({np.abs(e).max():.1f} %)")
    cpu = np.array([r["cpu_pred"] / r["cpu_meas"] - 1 for r in runs]) * 100
    print(f"  CPU {np.median(cpu):+5.1f} % ({np.abs(cpu).max():.1f} %)")
    for c in ("reads", "writes"):
        held = [r[c]["r_low"] <= r[c]["r_meas"] <= r[c]["r_high"] for r in runs if "r_low" in r[c]]
        if held:
            up = np.median([r[c]["r_high"] / r[c]["r_pred"] - 1 for r in runs if "r_low" in r[c]]) * 100
            down = np.median([1 - r[c]["r_low"] / r[c]["r_pred"] for r in runs if "r_low" in r[c]]) * 100
            print(f"  {c:6s} measured latency inside the predicted {mix_lab.LEVEL:.0%} interval in {sum(held)} of {len(held)} runs "
                  f"(its ends a median -{down:.0f} % and +{up:.0f} % from the prediction)")
    diff = np.array([r["other_meas"] - r["other_train"] for r in runs])
    if len(runs) >= 3 and np.ptp(diff) > 0:
        for c in ("reads", "writes"):
            e = np.array([r[c]["r_err"] for r in runs])
            print(f"  correlation of the {c} latency error with the neighbours' load (measured - training, "
                  f"{diff.min():+.2f} to {diff.max():+.2f} cores): {np.corrcoef(e, diff)[0, 1]:+.2f}")
    wait = np.array([r.get("wait_meas", np.nan) - r.get("wait_train", np.nan) for r in runs])
    if len(runs) >= 3 and np.isfinite(wait).all() and np.ptp(wait) > 0:
        for c in ("reads", "writes"):
            e = np.array([r[c]["r_err"] for r in runs])
            print(f"  correlation of the {c} latency error with the server's wait for its core per operation "
                  f"(measured - training, {wait.min():+.1f} to {wait.max():+.1f} us): "
                  f"{np.corrcoef(e, wait)[0, 1]:+.2f}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--slot", type=float, default=mix_lab.SLOT, help="seconds of load per slot after warm-up")
    parser.add_argument("--group", choices=("on", "off", "alternate"), default="on",
                        help="favour the server's autogroup (mix_lab.favour_group); alternate: odd runs on, even off")
    parser.add_argument("--out", help="keep each run's samples and sweeps here")
    parser.add_argument("--from", dest="source", help="re-evaluate the runs kept in this folder (no server)")
    parser.add_argument("--record", action="store_true",
                        help="print the recorded lab runs the test's bounds were chosen on (records/mix_lab.md)")
    args = parser.parse_args(argv)
    if args.record:
        print((Path(__file__).resolve().parent / "records" / "mix_lab.md").read_text(encoding="utf-8"), end="")
        return 0
    sys.stdout.reconfigure(line_buffering=True)
    runs = []
    if args.source:
        folder = Path(args.source)
        for i in range(1, 1000):
            if not (folder / f"run-{i}-samples.csv").exists():
                break
            samples = pd.read_csv(folder / f"run-{i}-samples.csv")
            sweeps = json.loads((folder / f"run-{i}-sweeps.json").read_text())
            run = evaluate(i, samples, sweeps)
            if run:
                runs.append(run)
    else:
        if not mix_lab.can_pin():
            print("CPU affinity (Linux) and two cores are needed", file=sys.stderr)
            return 2
        mix_lab.pin_self()
        out = Path(args.out) if args.out else None
        if out:
            out.mkdir(parents=True, exist_ok=True)
        for i in range(1, args.repeat + 1):
            started = time.time()
            with tempfile.TemporaryDirectory(prefix="capmodel-mix-") as work:
                group = args.group == "on" or (args.group == "alternate" and i % 2 == 1)
                samples, sweeps = mix_lab.run_lab(work, args.slot, group=group)
            if out:
                samples.to_csv(out / f"run-{i}-samples.csv", index=False)
                (out / f"run-{i}-sweeps.json").write_text(json.dumps(sweeps))
            print(f"[{time.time() - started:.0f} s, load average {os.getloadavg()[0]:.1f}, server's autogroup "
                  f"{'favoured' if group else 'as it is'}]", end=" ")
            run = evaluate(i, samples, sweeps)
            if run:
                run["group"] = group
                runs.append(run)
    if runs:
        summary(runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
