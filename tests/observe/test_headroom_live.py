"""Headroom at light load on the real embedded mongod: the server pinned to one core, the clients
to the other, a server-heavy workload observed at 20-40% of the server's core; the operational laws' predicted
saturation must match a closed-loop sweep's measured peak, and its stated interval (which carries the light-load
bias) hold that peak. The machine is shared, so the bounds are loose (40%);
``benchmarks/bench_headroom.py`` runs the same procedure longer and prints the ratio (15% is the target there).
"""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from capmodel.observe.capacity import LAWS

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_headroom.py"

pytestmark = pytest.mark.mongod        # a real server, started by the benchmark's procedure


def _bench():
    spec = importlib.util.spec_from_file_location("bench_headroom", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_light_load_predicts_the_measured_saturation():
    cpus = sorted(os.sched_getaffinity(0))
    assert len(cpus) >= 2, "this test pins the server and the clients to two different CPUs: it needs two"
    before = os.sched_getaffinity(0)
    # 3 light steps of 8 s sampled each second: 24 busy intervals, well above the 10 under which the verdict is weak
    # (5 s steps, 15 intervals, failed once in a CI-like run on the shared machine: kept at 8 s)
    r = _bench().measure(server_cpu=cpus[0], client_cpu=cpus[1], light_seconds=8.0, duration=4.0,
                         concurrency=(2, 4, 8), log=lambda message: None)
    assert os.sched_getaffinity(0) == before                     # the test process gets its CPUs back
    capacity = r["capacity"]
    # usable, or "at least" its figure where the light steps' rates came out too close to separate the background
    unusable = {reason.code for reason in capacity.evidence.reasons if reason.grade == "unusable"}
    assert capacity.method == LAWS and unusable <= {"background_not_separable"}
    assert capacity.cores == 1
    # the light load really was light: every open-loop step under 60% of the server's core (18-34% intended; each
    # step sized on the one before it)
    assert max(r["light_server_cores"]) < 0.6
    # the workload is server-bound: mongod's CPU per operation well above the client's
    assert r["server_ms_per_op"] > 2 * r["client_ms_per_op"]
    # the service demand measured at light load agrees with the CPU per operation at saturation (same law, both ends):
    # within 40% below it; above it up to 2x, the side on which light load errs (the mongod's background work and its
    # per-wake-up costs fall on fewer operations; a checkpoint inside one of three light steps tilts the slope). The
    # runs these bounds were set on: benchmarks/records/headroom.md.
    assert 0.6 * r["server_ms_per_op"] < r["service_demand_ms"] < 2.0 * r["server_ms_per_op"], r
    # the prediction: at most 40% above the measured peak; below it down to half, the side the light-load demand errs
    # on (the bound above allows that demand 2x the saturation's CPU per operation, and the prediction is the core
    # over it).
    assert 0.5 < r["ratio"] < 1.4, r
    # the stated interval holds the measured peak: it carries the CPU per operation's possible change from light load
    # up to saturation (capmodel.observe.demand_change), the bias the bootstrap's interval alone cannot show (that one
    # missed by 31% in one recorded run). A one-sided answer (a load too even to separate the background) states only
    # its lower bound. The 10% allowance at each end is the shared machine's: its neighbours move the light-load CPU
    # per operation beyond any stated assumption (runs on a loaded host measured it 2x the saturation's).
    low, high = r["predicted_low"], r["predicted_high"]
    print(f"\nheadroom: predicted {r['predicted']:,.0f} ({low:,.0f}-{high:,.0f}; noise alone {r['noise_low']:,.0f}-"
          f"{r['noise_high']:,.0f}) ops/s, measured {r['measured']:,.0f}, ratio {r['ratio']:.3f}, verdict "
          f"{r['evidence']}; light-load {r['service_demand_ms']:.3f} ms against {r['server_ms_per_op']:.3f} ms at "
          f"saturation; {r['reasons']}")
    if capacity.evidence.usable:
        assert 0.9 * low <= r["measured"] <= 1.1 * high, r
    else:
        assert 0.9 * r["at_least"] <= r["measured"], r
