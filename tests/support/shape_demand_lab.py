"""The lab of the shapes' demands on a real embedded mongod: each shape measured alone against the demand fitted from
phases of random mixes, and the what-if's saturation against a measured one (issue 30, point 4), shared by
tests/observe/test_shape_demands_live.py (bounds a shared machine holds) and benchmarks/bench_shapes.py (the figures).

A run: a fresh embedded mongod with FTDC on (one sample a second) and every operation logged (slowms 0 from the
start, so the logging's own CPU is in every figure alike), pinned to core 0 and this process (the clients) to core 1
(``pin``); the lab of tests/support/shapes_lab.py (a collection scan, an indexed range query, an update, an ``_id``
lookup on 2,000 documents); 3 s idle, then each shape alone for ``alone_s`` seconds, then ``phases`` phases of one
second, each with its own random mix and load (``shapes_lab.phase``: busy 20 to 100 % of it). Measured alone: the
process CPU (FTDC, the samples wholly inside the shape's window, less the idle window's) over the shape's operations
per second (the client's count). Fitted: ``query_shapes`` on the log's lines of the phased part only (cut at its
start; ``slowms=0`` stated, as the cut log no longer shows it), counted in ``interval_s`` seconds (0.1: each FTDC
sample is a point of the fit with the rates of its own window), and ``shapes_what_if`` with the FTDC.

``saturate`` = (a lab shape's name, a factor): after the phases, the what-if's mix (the phases' operations per shape,
that shape's times the factor) runs closed-loop on 8 client threads for ``saturate_s`` seconds with the mongod held to
``QUOTA`` of a core (tests/support/cpu_quota.py), which clients on one core can saturate; the what-if's saturation
held to that quota is (QUOTA - B) / CPU asked, B the fitted background.
"""
from __future__ import annotations

import os
import random
import time
from dataclasses import dataclass
from pathlib import Path

from capmodel.bench.server import embedded_server
from capmodel.observe import observe_ftdc, query_shapes
from capmodel.observe.shapes.fidelity import alone_cpu, log_window, window_cpu
from capmodel.observe.shapes.what_if import shapes_what_if
from tests.support.cpu_quota import quota, throttled_share
from tests.support.shapes_lab import SHAPES, phase, phased_lab, run_for

QUOTA = 0.5     # the server's cores in the saturation run (a CPU quota): what clients on one core can saturate
SERVER_CORE, CLIENT_CORE = 0, 1
EDGE_S = 0.25   # a replayed operation's window: from this long after its first entry to this long before its last
GAP_S = 0.05    # between the shapes alone and the phases: the log cut between them holds the phases' operations


def _saturate(server, database_name: str, collection: str, weights: dict, seconds: float, threads: int = 8) -> int:
    """Operations the lab's shapes, drawn by ``weights``, complete on ``threads`` closed-loop clients in ``seconds``."""
    import threading

    client = server.client(maxPoolSize=threads + 2)
    _, calls = phased_lab(client[database_name], collection=collection, load=False)
    done = [0] * threads

    def work(i):
        done[i] = sum(run_for(calls, weights, seconds, random.Random(i)).values())

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    client.close()
    return sum(done)


@dataclass
class DemandLab:
    """One run's record: ``rows`` (a row per shape: ``shape``, ``alone_ms``, ``fitted_ms`` with ``low_ms``/``high_ms``,
    ``error_pct``, ``grade``, ``codes``; with ``saturate`` a last row of ops/s measured (``alone_ms``) and predicted
    (``fitted_ms``), the server's CPU ``cpu_cores`` and the quota's ``throttled`` share while measured), the phased
    part's log (``log``, cut), the server's FTDC folder, the lab's namespace and each phase's operations per shape."""

    rows: list
    log: Path
    ftdc: Path
    namespace: str
    phases: list


def run_demand_lab(folder: Path, alone_s: float, phases: int, seed: int = 0, saturate: tuple | None = None,
                   interval_s: float = 0.1, pin: bool = True, n_bootstrap: int = 200,
                   saturate_s: float = 10.0, compare_interval_s: float | None = None,
                   replay_s: float | None = None) -> DemandLab:
    """One run of the lab on a fresh server whose files stay in ``folder`` (the module's docstring); with
    ``compare_interval_s``, each shape's row also has the demand fitted with the log counted in intervals of that
    length (``compare_ms``, ``compare_error_pct``), on the same data; with ``replay_s``, the replay workload written
    from the phases' shapes runs each of its operations alone for that long (``capmodel bench``, its own database)
    and each shape's row has its replayed operation's CPU per operation (``replay_ms``, ``replay_error_pct`` against
    the shape measured alone)."""
    rng = random.Random(seed)
    dbpath = folder / f"db{seed}"
    affinity = os.sched_getaffinity(0)
    if pin:
        os.sched_setaffinity(0, {CLIENT_CORE})
    try:
        with embedded_server(dbpath=dbpath, diagnostic_data=True, cpus=str(SERVER_CORE) if pin else None) as server:
            windows, mixed, namespace, done = _measure(server, alone_s, phases, rng, saturate, saturate_s, replay_s,
                                                       folder)
            log = Path(server.logpaths[0])
    finally:
        os.sched_setaffinity(0, affinity)
    samples = observe_ftdc(dbpath / "diagnostic.data").samples
    cut = log_window(log, *mixed, folder / f"mixed{seed}.log")
    shapes = query_shapes(cut, slowms=0, interval_s=interval_s)
    factors = {}
    if saturate:
        factors = {_shape_id(shapes, namespace, saturate[0]): saturate[1]}
    answer = shapes_what_if(shapes, samples, 1 if pin else 2, factors, n_bootstrap=n_bootstrap)
    table = answer.table.set_index("shape")
    other = None
    if compare_interval_s:
        other = shapes_what_if(query_shapes(cut, slowms=0, interval_s=compare_interval_s), samples, 1 if pin else 2,
                               n_bootstrap=0).table.set_index("shape")
    idle = window_cpu(samples, *windows["idle"][:2])
    rows = []
    for name in SHAPES:
        begin, end, counts = windows[name]
        alone = (window_cpu(samples, begin + 1, end) - idle) / (counts[name] / (end - begin)) * 1000
        fitted = table.loc[_shape_id(shapes, namespace, name)]
        rows.append({"run": seed, "shape": name, "alone_ms": alone, "fitted_ms": fitted["cpu_ms_per_op"],
                     "low_ms": fitted["cpu_ms_per_op_low"], "high_ms": fitted["cpu_ms_per_op_high"],
                     "error_pct": (fitted["cpu_ms_per_op"] / alone - 1) * 100, "grade": answer.evidence.grade,
                     "codes": ",".join(answer.evidence.codes())})
        if other is not None:
            rows[-1]["compare_ms"] = other.loc[_shape_id(shapes, namespace, name), "cpu_ms_per_op"]
            rows[-1]["compare_error_pct"] = (rows[-1]["compare_ms"] / alone - 1) * 100
    if replay_s:
        workload, runs = windows["replay"]
        measured = alone_cpu(shapes, workload, log, samples, runs, windows["idle"][:2],
                             edge_s=EDGE_S).set_index("shape")
        for row in rows:
            sid = _shape_id(shapes, namespace, row["shape"])
            row["replay_ms"] = float(measured.loc[sid, "cpu_ms_per_op"]) if sid in measured.index else float("nan")
            row["replay_error_pct"] = (row["replay_ms"] / row["alone_ms"] - 1) * 100
    if saturate:
        begin, end, (measured, throttled) = windows["saturated"]
        # the what-if's saturation on a whole core, (1 - B) / CPU asked, held to the quota: (QUOTA - B) / CPU asked
        background = answer.demands.background_cores
        asked, held = sum(answer.rates.values()), (QUOTA - background) / (1 - background)
        predicted = answer.load_factor_that_fits * asked * held
        cpu = window_cpu(samples, begin + 1, end)
        rows.append({"run": seed, "shape": f"saturation {saturate[0]} x{saturate[1]:g}",
                     "alone_ms": measured / (end - begin), "fitted_ms": predicted,
                     "low_ms": answer.low["load_factor_that_fits"] * asked * held,
                     "high_ms": answer.high["load_factor_that_fits"] * asked * held,
                     "error_pct": (predicted / (measured / (end - begin)) - 1) * 100,
                     "grade": answer.evidence.grade, "cpu_cores": cpu, "throttled": throttled,
                     "codes": f"server CPU {cpu:.2f} of its {QUOTA:g} cores, quota used up in {throttled:.0%} of "
                              "periods"})
    return DemandLab(rows, cut, dbpath / "diagnostic.data", namespace, done)


def _shape_id(shapes, namespace: str, name: str) -> str:
    """The id of the lab shape ``name`` among ``shapes``."""
    operation, text, _ = SHAPES[name]
    rows = shapes.rows
    return str(rows[(rows["namespace"] == namespace) & (rows["operation"] == operation)
                    & (rows["filter_shape"] == text)].iloc[0]["shape"])


def _replay_alone(server, log: Path, mixed: tuple, namespace: str, seconds: float, folder: Path):
    """The replay workload of the phases' shapes (``replay_workload``), each operation run alone by bench's sweep
    (``run_sweep``, as ``capmodel bench --workload``: one client, pymongo, its own database ``replay_lab``; without
    the client-ceiling calibration, which pings the server for a second) for ``seconds``: the workload and each
    operation's run ``{name: (start, end)}``."""
    import yaml

    from capmodel.bench.sweep.config import BenchConfig
    from capmodel.bench.sweep.sweep import run_sweep
    from capmodel.observe.shapes.replay import replay_workload

    workload = replay_workload(query_shapes(log_window(log, *mixed, folder / "phases-so-far.log"), slowms=0),
                               namespace=namespace)
    runs = {}
    for operation in workload.spec["operations"]:
        path = folder / f"{operation['name']}.yaml"
        path.write_text(yaml.safe_dump({**workload.spec, "operations": [operation]}, sort_keys=False))
        begin = time.time()
        run_sweep(server.uri, BenchConfig(workload=str(path), database="replay_lab", concurrency=[1], warmup=0.5,
                                          duration=seconds, binding="pymongo", calibrate=False),
                  folder / f"out-{operation['name']}", progress=False)
        runs[operation["name"]] = (begin, time.time())
    return workload, runs


def _measure(server, alone_s, phases, rng, saturate, saturate_s, replay_s, folder):
    """The lab's windows on ``server``: idle, each shape alone, the phases, each replayed operation alone, the
    saturation run."""
    client = server.client()
    try:
        database = client["shapes_bench"]
        database.command("profile", 0, slowms=0)
        namespace, calls = phased_lab(database)
        windows: dict = {}
        start = time.time()
        time.sleep(3)
        windows["idle"] = (start, time.time(), {})
        for name in calls:
            begin = time.time()
            counts = run_for(calls, {name: 1.0}, alone_s, rng)
            windows[name] = (begin, time.time(), counts)
        time.sleep(GAP_S)
        mixed_start = time.time() - GAP_S / 2      # the log's times are whole milliseconds, cut down
        done = [phase(calls, 1.0, rng) for _ in range(phases)]
        mixed = (mixed_start, time.time())
        if replay_s:
            windows["replay"] = _replay_alone(server, Path(server.logpaths[0]), mixed, namespace, replay_s, folder)
        if saturate:
            name, factor = saturate
            totals = {n: sum(c[n] for c in done) * (factor if n == name else 1.0) for n in calls}
            with quota(server.pid, QUOTA) as group:
                begin = time.time()
                measured = _saturate(server, database.name, namespace.split(".", 1)[1], totals, saturate_s)
                windows["saturated"] = (begin, time.time(), (measured, throttled_share(group)))
    finally:
        client.close()
    return windows, mixed, namespace, done
