"""A primary's capacity counts its clients' operations, not the replication operations it serves.

The synthetic table is built by hand from chosen clients' and replication operations; the live test counts the
clients' operations itself (its own inserts and finds) on the embedded replica set's primary.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from capmodel.observe.capacity import busy_table, server_capacity
from capmodel.observe.clients import client_classes
from capmodel.observe.columns import Columns
from capmodel.observe.tables import curve_columns, curve_from_samples

N = 12
CLIENT_READS = np.linspace(100.0, 900.0, N)           # the clients' reads vary, so do their shares of the class
CLIENT_COMMANDS = np.linspace(30.0, 80.0, N)
WRITES = np.full(N, 200.0)
GETMORES, POSITIONS = np.full(N, 100.0), np.full(N, 20.0)
# mean latency (s): clients' reads, oplog getMores (awaitData waits), writes, clients' commands, position reports
R_READ, R_GETMORE, R_WRITE, R_COMMAND, R_POSITION = 0.001, 0.2, 0.002, 0.0005, 0.0001
BACKGROUND, DEMAND = 0.1, 0.0005                         # cores; CPU seconds per client operation


def _samples() -> pd.DataFrame:
    reads, commands = CLIENT_READS + GETMORES, CLIENT_COMMANDS + POSITIONS
    clients = CLIENT_READS + WRITES + CLIENT_COMMANDS
    return pd.DataFrame({
        "time": pd.date_range("2026-01-01", periods=N, freq="s", tz="UTC"), "interval_s": np.ones(N),
        "dropped": [""] * N,
        "reads_per_s": reads, "reads_latency_ms": (CLIENT_READS * R_READ + GETMORES * R_GETMORE) / reads * 1000,
        "writes_per_s": WRITES, "writes_latency_ms": np.full(N, R_WRITE * 1000),
        "commands_per_s": commands,
        "commands_latency_ms": (CLIENT_COMMANDS * R_COMMAND + POSITIONS * R_POSITION) / commands * 1000,
        "oplog_getmores_per_s": GETMORES, "repl_update_position_per_s": POSITIONS, "repl_applied_per_s": np.zeros(N),
        "cpu_cores": BACKGROUND + DEMAND * clients, "cores": np.full(N, 4.0),
    })


def test_the_busy_intervals_and_the_curve_count_the_clients_operations_and_their_concurrency():
    samples = _samples()
    clients = CLIENT_READS + WRITES + CLIENT_COMMANDS
    concurrency = CLIENT_READS * R_READ + WRITES * R_WRITE + CLIENT_COMMANDS * R_COMMAND   # Little's law, by hand
    busy = busy_table(samples)
    np.testing.assert_allclose(busy["throughput"], clients)          # before: clients + 120 served a second
    np.testing.assert_allclose(busy["concurrency"], concurrency, rtol=1e-6)   # before: + 100 × 0.2 s of getMores
    np.testing.assert_allclose(busy["replication"], GETMORES + POSITIONS)
    columns = Columns({**{k: samples[k].to_numpy() for k in samples.columns if k != "time"},
                       "time": np.arange(N).astype("datetime64[ms]")})
    for curve in (curve_from_samples(samples), curve_columns(columns)):
        np.testing.assert_allclose(np.asarray(curve["throughput"], float), clients)
        np.testing.assert_allclose(np.asarray(curve["concurrency"], float), concurrency, rtol=1e-6)
        np.testing.assert_allclose(np.asarray(curve["latency_reads_ms"], float), R_READ * 1000, rtol=1e-6)


def test_the_capacity_is_in_client_operations_and_gives_replications_share():
    capacity = server_capacity(_samples(), n_bootstrap=50)
    clients = CLIENT_READS + WRITES + CLIENT_COMMANDS
    assert capacity.service_demand_ms.estimate == pytest.approx(DEMAND * 1000, rel=1e-6)
    assert capacity.background_cores == pytest.approx(BACKGROUND, rel=1e-6)
    assert capacity.observed_peak_throughput == pytest.approx(np.percentile(clients, 95))
    assert capacity.saturation_throughput.estimate == pytest.approx((4 - BACKGROUND) / DEMAND, rel=1e-6)
    share = 120 / (clients.mean() + 120)
    assert capacity.replication_share == pytest.approx(share)
    assert capacity.to_json()["replication_share"] == pytest.approx(share)


def test_samples_without_replication_columns_read_as_before():
    samples = _samples().drop(columns=["oplog_getmores_per_s", "repl_update_position_per_s", "repl_applied_per_s"])
    busy = busy_table(samples)
    every = samples["reads_per_s"] + samples["writes_per_s"] + samples["commands_per_s"]
    np.testing.assert_allclose(busy["throughput"], every)
    n = sum(samples[f"{c}_per_s"] * samples[f"{c}_latency_ms"] / 1000 for c in ("reads", "writes", "commands"))
    np.testing.assert_allclose(busy["concurrency"], n)
    assert server_capacity(samples, n_bootstrap=50).replication_share == 0


def test_a_share_of_replication_below_a_tenth():
    samples = _samples()
    samples["oplog_getmores_per_s"] = 5.0
    samples["repl_update_position_per_s"] = 0.0
    samples["reads_per_s"] = CLIENT_READS + 5.0
    samples["commands_per_s"] = CLIENT_COMMANDS
    samples["commands_latency_ms"] = R_COMMAND * 1000
    # 5 getMores a second beside the clients' operations (the words for it: test_observe_words.py)
    clients = CLIENT_READS + WRITES + CLIENT_COMMANDS
    share = server_capacity(samples, n_bootstrap=50).replication_share
    assert share == pytest.approx(5 / (clients.mean() + 5)) and share < 0.1


def test_served_latency_that_cannot_be_told_leaves_the_class_mean_for_the_clients():
    samples = _samples()
    samples["reads_per_s"] = 500.0 + GETMORES          # a constant share: no regression, no pure intervals
    samples["reads_latency_ms"] = 7.0
    classes, _ = client_classes(samples, np.ones(N, dtype=bool))
    np.testing.assert_allclose(classes["reads"][0], 500.0)
    np.testing.assert_allclose(classes["reads"][1], 7.0)


def test_the_primary_of_the_embedded_set_counts_the_clients_reads_and_writes(replica_set):
    """Snapshots of the primary's serverStatus around inserts and finds this test counts itself: the clients'
    reads and writes are exactly those, while opLatencies' reads also hold the secondaries' oplog getMores."""
    from capmodel.observe.serverstatus import intervals, snapshot

    client = replica_set.client()
    try:
        collection = client.capmodel_estate9.clients
        collection.drop()
        collection.insert_one({"_id": -1})
        rows, counted = [], []
        rows.append(snapshot(client.admin.command("serverStatus")))
        for i in range(4):
            inserts, finds = 40 + 20 * i, 10 + 15 * i
            for k in range(inserts):
                collection.insert_one({"i": i, "k": k})
            for k in range(finds):
                collection.find_one({"_id": -1})
            rows.append(snapshot(client.admin.command("serverStatus")))
            counted.append((inserts, finds))
    finally:
        client.close()
    samples = intervals(pd.DataFrame(rows), own_commands=1)
    classes, replication = client_classes(samples, np.ones(len(samples), dtype=bool))
    seconds = samples["interval_s"].to_numpy()
    np.testing.assert_allclose(classes["writes"][0] * seconds, [c[0] for c in counted], atol=1e-6)
    np.testing.assert_allclose(classes["reads"][0] * seconds, [c[1] for c in counted], atol=1e-6)
    assert (samples["reads_per_s"].to_numpy() * seconds > [c[1] for c in counted]).any()   # getMores were served
    assert (replication > 0).all()
    busy = busy_table(samples)
    clients = sum(classes[c][0] for c in ("reads", "writes", "commands"))
    np.testing.assert_allclose(busy["throughput"], clients[clients > 0])


def _served_latency(summed, clients, served, total):
    """The rule of split_replication computed here with scipy's non-negative least squares: the served operations'
    coefficient where the clients' share varies by 0.1 over 5 intervals and both come out positive, else the mean
    latency where the clients are at most 1 % of the class, over 5 intervals, else NaN."""
    from scipy.optimize import nnls

    ok = np.isfinite(summed) & (served > 0) & (total > 0)
    if ok.sum() >= 5 and np.ptp(clients[ok] / total[ok]) >= 0.1:
        own, theirs = nnls(np.column_stack([clients[ok], served[ok]]), summed[ok])[0]
        if own > 0 and theirs > 0:
            return float(theirs)
    pure = ok & (clients <= 0.01 * total)
    return float(summed[pure].sum() / total[pure].sum()) if pure.sum() >= 5 else float("nan")


def test_the_served_latency_without_scipy_is_the_non_negative_fit():
    """The numpy arithmetic the mix what-if and observe share against scipy's nnls on random tables of every kind:
    shares that vary, pure intervals, too few intervals, noise that makes a coefficient negative."""
    from capmodel.models.mix.served_latency import served_latency

    rng = np.random.default_rng(1)
    told = 0
    for _ in range(300):
        n = int(rng.integers(3, 30))
        clients = rng.uniform(0, 500, n) * (rng.random() < 0.8) * (0.001 if rng.random() < 0.3 else 1.0)
        served = rng.uniform(1, 200, n)
        summed = (clients * rng.uniform(5e-4, 3e-3) + served * rng.uniform(1e-4, 0.3)
                  + rng.normal(0, 0.01, n) * rng.random())
        ours, theirs = (f(summed, clients, served, clients + served) for f in (served_latency, _served_latency))
        assert (np.isnan(ours) and np.isnan(theirs)) or ours == pytest.approx(theirs, rel=1e-6)
        told += np.isfinite(theirs)
    assert 50 < told < 300                                       # both outcomes were met


def test_the_clients_arithmetic_imports_neither_pandas_nor_scipy():
    import subprocess
    import sys

    script = ("import sys, numpy as np; from capmodel.observe.clients import client_classes; "
              "from capmodel.observe.columns import Columns; n = 8; "
              "t = Columns({'reads_per_s': np.linspace(10, 80, n) + 5, 'reads_latency_ms': np.full(n, 2.0), "
              "'oplog_getmores_per_s': np.full(n, 5.0)}); client_classes(t, np.ones(n, bool)); "
              "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pandas', 'scipy')))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def _secondary(applied: float) -> pd.DataFrame:
    """A secondary: a few clients' commands (heartbeats, hello), the oplog entries it applies, CPU mostly theirs."""
    rng = np.random.default_rng(3)
    commands = rng.uniform(1.0, 2.0, N)
    return pd.DataFrame({
        "interval_s": np.ones(N), "dropped": [""] * N, "reads_per_s": np.zeros(N),
        "reads_latency_ms": np.full(N, np.nan), "writes_per_s": np.zeros(N), "writes_latency_ms": np.full(N, np.nan),
        "commands_per_s": commands, "commands_latency_ms": np.full(N, 0.8), "repl_applied_per_s": np.full(N, applied),
        "cpu_cores": 0.02 + 0.001 * applied + 0.0005 * commands + rng.normal(0, 0.003, N), "cores": np.full(N, 2.0)})


def test_a_secondary_whose_load_is_replication_states_no_capacity_in_client_operations():
    capacity = server_capacity(_secondary(95.0), n_bootstrap=50)
    clients = _secondary(95.0)["commands_per_s"].mean()
    assert capacity.evidence.grade == "unusable" and "replication_load" in capacity.evidence.codes()
    reason = next(r for r in capacity.evidence.reasons if r.code == "replication_load")
    assert reason.value == pytest.approx(95.0 / (95.0 + clients))
    # only a lower bound is stated: the busiest client operations (95th percentile), replication not counted
    assert capacity.at_least == pytest.approx(np.quantile(_secondary(95.0)["commands_per_s"], 0.95))


def test_a_secondary_with_clients_of_its_own_keeps_its_capacity_and_replications_share():
    samples = _secondary(95.0)
    samples["reads_per_s"] = np.linspace(100.0, 400.0, N)             # reads sent to this secondary
    samples["reads_latency_ms"] = 1.0
    samples["cpu_cores"] += 0.0005 * samples["reads_per_s"]
    capacity = server_capacity(samples, n_bootstrap=50)
    assert "replication_load" not in capacity.evidence.codes()
    assert capacity.replication_share >= 0.1 and capacity.saturation_throughput is not None


def test_a_primary_whose_operations_are_mostly_served_replication_keeps_its_capacity():
    samples = _samples()
    samples["oplog_getmores_per_s"] = 40 * GETMORES                    # 10,000 served a second: 93% of them all
    samples["repl_update_position_per_s"] = 60 * GETMORES
    samples["reads_per_s"] = CLIENT_READS + samples["oplog_getmores_per_s"]
    samples["commands_per_s"] = CLIENT_COMMANDS + samples["repl_update_position_per_s"]
    capacity = server_capacity(samples, n_bootstrap=50)
    assert capacity.replication_share > 0.9
    assert "replication_load" not in capacity.evidence.codes() and capacity.evidence.usable
    assert capacity.saturation_throughput.estimate == pytest.approx((4 - BACKGROUND) / DEMAND, rel=1e-6)


def test_an_interval_in_which_a_secondary_only_applied_the_oplog_is_not_dropped_as_idle():
    from capmodel.observe.serverstatus import NO_OPERATIONS, interval_columns

    time_ms = np.array([0, 1000, 2000, 3000], dtype=np.int64)
    figures = {"reads_ops": np.array([5.0, 5, 5, 5]), "writes_ops": np.zeros(4),
               "commands_ops": np.array([9.0, 9, 10, 10]),
               "repl_applied": np.array([100.0, 180, 180, 180]), "uptime_ms": np.array([1.0, 2, 3, 4]),
               "pid": np.ones(4)}
    samples = interval_columns(time_ms, figures)
    assert list(samples["dropped"]) == ["", "", NO_OPERATIONS]      # before: the first was dropped as idle
    assert list(samples["repl_applied_per_s"]) == [80.0, 0.0, 0.0]
