"""Does observe's capacity keep the grades' promises? The calibration study on synthetic servers of known capacity.

    python benchmarks/calibrate_observe.py                     # 120 servers, seed 0
    python benchmarks/calibrate_observe.py --servers 400 --seed 3 --jobs 2 --out observe.csv

Each server is drawn from its (seed, index) alone (``server_answers``): 1, 2, 4 or 8 cores, a CPU per operation of
0.05-2 ms at saturation, background CPU of 0.3-10% of the cores, and a CPU per operation that changes with load or
not (``capmodel.observe.synthetic``: 40% constant, 45% falling towards saturation by up to the assumed 80% at no
load, 15% rising towards it by up to the assumed 10%), a light day (busiest at 5-45% of its capacity) or a busy one
(50-97%), a whole day sampled every minute or one to four hours sampled every 10 s (its load cycling within the
window, or nearly even), a per-sample CPU scatter of 0-8% that lasts a while or not. Its FTDC is written by the real
writer into a temporary folder and read back the way ``capmodel observe --ftdc`` and report 07 read it
(``observe_ftdc``, then ``production_answer``); the answer's saturation throughput and its throughput at the 80%
utilization target are set against the server's truths (``SyntheticServer.capacity`` and ``throughput_at_cpu``).

It prints, per grade, the share of servers, the coverage of each figure's stated 95% interval, the median and
90th-percentile error and the share off by more than 25% (``calibrate_verdicts.summary``), then the promises: sound
covers at least 93% and is never off by more than 25%; weak covers at least 85%. Unusable answers state a lower bound
only; their "coverage" is how often the truth lies above it. Then the grades by design (light or busy day, a day's
window or a few hours) and each grade's main reason.
"""
from __future__ import annotations

import argparse
import datetime as dt
import math
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from calibrate_verdicts import Answer, answers_of, print_report  # noqa: E402

TARGET = 0.8
#: the shares of servers whose CPU per operation is constant, falls towards saturation, rises towards it
CHANGES = (("constant", 0.40), ("falls", 0.45), ("rises", 0.15))


def draw_server(seed: int, index: int):
    """One synthetic server and its design (a dict), from (seed, index) alone."""
    from capmodel.observe.demand_change import CONTENTION_MAX, LIGHT_EXTRA_MAX
    from capmodel.observe.synthetic import SyntheticServer

    rng = np.random.default_rng([seed, index, 26])
    cores = int(rng.choice([1, 2, 4, 8]))
    demand_ms = float(10 ** rng.uniform(math.log10(0.05), math.log10(2.0)))
    background = cores * float(10 ** rng.uniform(-2.5, -1.0))
    change = str(rng.choice([c for c, _ in CHANGES], p=[p for _, p in CHANGES]))
    light_extra = float(rng.uniform(0, LIGHT_EXTRA_MAX)) if change == "falls" else 0.0
    contention = float(rng.uniform(0, CONTENTION_MAX)) if change == "rises" else 0.0
    day = "light" if rng.random() < 0.5 else "busy"
    peak = float(rng.uniform(0.05, 0.45) if day == "light" else rng.uniform(0.5, 0.97))
    window = "day" if rng.random() < 0.5 else "hours"
    if window == "day":
        hours, period, cycle = 24.0, 60.0, 24.0
        amplitude = float(rng.uniform(0.2, 0.7))
    else:
        hours, period = float(rng.uniform(1.0, 4.0)), 10.0
        even = rng.random() < 0.3
        cycle = 24.0 if even else hours * float(rng.uniform(0.5, 1.5))
        amplitude = float(rng.uniform(0.0, 0.15) if even else rng.uniform(0.3, 0.7))
    noise = float(rng.uniform(0.0, 0.08))
    memory = float(rng.choice([0.0, 0.5, 0.9]))
    start_hour = float(rng.uniform(0, 24))
    capacity = (cores - background) * 1000.0 / demand_ms
    server = SyntheticServer(
        host=f"calibrate-{index}.example.net:27017", cores=cores, cpu_ms_per_op=demand_ms,
        mean_rate=peak * capacity / (1.0 + amplitude), daily_amplitude=amplitude,
        peak_hour=(start_hour + hours * float(rng.uniform(0.2, 0.8))) % 24.0, hours=hours, seed=seed * 100_003 + index,
        start=dt.datetime(2026, 11, 2, tzinfo=dt.timezone.utc) + dt.timedelta(hours=start_hour),
        light_extra=light_extra, contention=contention, background_cores=background, period_s=period,
        cycle_hours=cycle, cpu_noise=noise, cpu_noise_memory=memory, filler_metrics=5)
    design = {"server": index, "cores": cores, "change": change, "m": light_extra - contention, "day": day,
              "peak": peak, "window": window, "noise": noise, "memory": memory}
    return server, design


def server_answers(seed: int, index: int) -> list:
    """observe's answer on server ``index`` of the study drawn with ``seed``: one ``Answer`` named "observe" with the
    figures "saturation_capacity" and "planned_capacity" (80% of the cores), each (estimate, low, high) as the
    production answer states it; an unusable answer states no estimate, only its lower bound (nan, low, inf)."""
    from capmodel.observe import observe_ftdc
    from capmodel.observe.synthetic import write_server
    from capmodel.plan.production import production_answer

    server, design = draw_server(seed, index)
    truths = {"saturation_capacity": server.capacity,
              "planned_capacity": server.throughput_at_cpu(TARGET * server.cores)}
    with tempfile.TemporaryDirectory(prefix="capmodel-calibrate-") as folder, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        write_server(server, Path(folder) / "diagnostic.data")
        observation = observe_ftdc(Path(folder) / "diagnostic.data")
        answer = production_answer(observation.samples, observation.curve, utilization_target=TARGET)
    evidence = answer.evidence
    # the reason that sets the grade: the laws' own where they state the capacity or the lower bound
    main = (answer.capacity.evidence if answer.capacity is not None else evidence).main_reason
    design.update(method=answer.method, reason=main.code if main is not None else "-")
    if evidence.usable:
        sat, plan = answer.saturation_throughput, answer.planned_throughput
        figures = {"saturation_capacity": (sat.estimate, sat.low, sat.high),
                   "planned_capacity": (plan.estimate, plan.low, plan.high)}
    else:
        planned = answer.planned_at_least
        figures = {"saturation_capacity": (math.nan, answer.at_least, math.inf),
                   "planned_capacity": (math.nan, math.nan if planned is None else planned, math.inf)}
    return [Answer("observe", evidence.grade, figures, truths, False, design)]


def _task(args) -> list:
    return server_answers(*args)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--servers", type=int, default=120)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", help="write every answer's row to this CSV")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    frame = answers_of(_task, [(args.seed, i) for i in range(args.servers)], args.jobs)
    if args.out:
        frame.to_csv(args.out, index=False)
    kept = print_report(frame, time.perf_counter() - started, args.seed)
    saturation = frame[frame["figure"] == "saturation_capacity"]
    print("\nthe grades by design (servers):")
    print(saturation.groupby(["day", "window", "grade"]).size().unstack(fill_value=0).to_string())
    print("\nthe main reason of each grade (servers):")
    print(saturation.groupby(["grade", "reason"]).size().to_string())
    return 0 if kept else 1


if __name__ == "__main__":
    sys.exit(main())
