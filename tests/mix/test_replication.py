"""Replication in the mix what-if (capmodel.models.mix.intervals.split_replication, mix_production): a sync source's
oplog getMores, which ``opLatencies`` counts as reads, are taken out of the clients' reads and follow the writes; a
secondary's replication work is a term of its own, scaled with the set's writes. Synthetic members made with known
figures; every expected value is computed here from those figures. The embedded replica set's check is in
tests/mix/test_production_live.py."""

import numpy as np
import pandas as pd
import pytest

from capmodel.models.mix.intervals import split_replication
from capmodel.models.mix.production import fit_server_demands, mix_what_if

B = 0.02                                                   # background CPU (cores)
D = {"reads": 100e-6, "writes": 150e-6, "commands": 40e-6}  # the clients' CPU per operation (s)
D_GETMORE, D_POSITION, D_APPLY = 30e-6, 15e-6, 60e-6   # an oplog getMore, a position report served; an entry applied
LATENCY = {"reads": 0.08e-3, "writes": 0.4e-3, "commands": 0.02e-3}   # the clients' latency (s): flat
GETMORE_LATENCY, POSITION_LATENCY = 0.16e-3, 0.05e-3


def _row(i, cpu, rates, summed, extra):
    """One interval; ``summed``: class -> seconds of latency per second where it is not the clients' alone."""
    row = {"time": f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}Z", "cpu_cores": cpu, "dropped": "", **extra}
    for c, x in rates.items():
        row[f"{c}_per_s"] = x
        row[f"{c}_latency_ms"] = summed.get(c, x * LATENCY[c]) / x * 1000 if x > 0 else np.nan
    return row


def primary(n=40, seed=2, client_reads=True, secondaries=2, share_varies=True):
    """Writes from the clients; each write fetched by ``secondaries`` members as an oplog getMore and reported back
    as a replSetUpdatePosition command; client reads in every other interval (or none), whose share of the reads
    varies when ``share_varies``."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        writes = rng.uniform(100, 800)
        getmores = positions = secondaries * writes
        clients = (rng.uniform(50, 600) if share_varies else 0.5 * getmores) if client_reads and i % 2 else 0.0
        commands = rng.uniform(2, 20)
        cpu = (B + D["writes"] * writes + D_GETMORE * getmores + D_POSITION * positions + D["reads"] * clients
               + D["commands"] * commands)
        summed = {"reads": clients * LATENCY["reads"] + getmores * GETMORE_LATENCY,
                  "commands": commands * LATENCY["commands"] + positions * POSITION_LATENCY}
        rows.append(_row(i, cpu, {"reads": clients + getmores, "writes": writes, "commands": commands + positions},
                         summed, {"oplog_getmores_per_s": getmores, "repl_update_position_per_s": positions,
                                  "repl_applied_per_s": 0.0}))
    return pd.DataFrame(rows)


def secondary(n=40, seed=3, span=(200, 2500)):
    """Client reads (read preference secondary) and the oplog entries it applies; no client writes."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        reads, applied, commands = rng.uniform(*span), rng.uniform(100, 800), rng.uniform(2, 20)
        cpu = B + D["reads"] * reads + D_APPLY * applied + D["commands"] * commands
        rows.append(_row(i, cpu, {"reads": reads, "writes": 0.0, "commands": commands}, {},
                         {"oplog_getmores_per_s": 0.0, "repl_update_position_per_s": 0.0,
                          "repl_applied_per_s": applied}))
    return pd.DataFrame(rows)


def test_a_primary_s_oplog_getmores_and_position_reports_leave_their_classes_and_go_with_the_writes():
    samples = primary()
    fit = fit_server_demands(samples, cores=2, member="p")
    # the reads' clients share varies (0 to ~40 %): a regression tells the getMores' latency exactly; the commands'
    # clients are under 1 % of them in most intervals, whose mean latency is the reports' (within that 1 % of the
    # clients' shorter latency: 0.6 % at most here)
    for c, column, latency, within in (("reads", "oplog_getmores_per_s", GETMORE_LATENCY, 1e-9),
                                       ("commands", "repl_update_position_per_s", POSITION_LATENCY, 6e-3)):
        clients = (samples[f"{c}_per_s"] - samples[column]).mean()
        assert fit.baseline[c] == pytest.approx(clients, rel=1e-12)
        assert fit.served[c] == pytest.approx(samples[column].mean(), rel=1e-12)
        assert fit.served_latency[c] == pytest.approx(latency, rel=within)
        assert fit.served_latency[c] != pytest.approx(latency, rel=1e-12) or c == "reads"   # the path said above
    # they follow the writes, two of each per write: their CPU is the writes'
    assert fit.cpu_per_op["writes"] == pytest.approx(D["writes"] + 2 * D_GETMORE + 2 * D_POSITION, rel=1e-6)
    assert fit.cpu_per_op["reads"] == pytest.approx(D["reads"], rel=1e-6)
    assert fit.cpu_per_op["commands"] == pytest.approx(D["commands"], rel=1e-6)
    assert fit.background_cores == pytest.approx(B, rel=1e-6)
    split = split_replication(samples)        # the clients' reads' own latency, where there are client reads
    with_clients = split["reads_per_s"] > 0
    assert with_clients.sum() == 20 and split.loc[~with_clients, "reads_latency_ms"].isna().all()
    assert np.allclose(split.loc[with_clients, "reads_latency_ms"], LATENCY["reads"] * 1e3, rtol=1e-9)
    # the commands' clients are ~1 % of them: a 0.3 % error in the reports' latency is ~30 % of theirs, so what holds
    # is the sum: the clients' latency and the reports' together give the latency the server counted
    positions = samples["repl_update_position_per_s"]
    together = split["commands_per_s"] * split["commands_latency_ms"] + positions * fit.served_latency["commands"] * 1e3
    assert np.allclose(together, samples["commands_per_s"] * samples["commands_latency_ms"], rtol=1e-9)
    assert fit.replication_cpu_per_op == 0
    # the one reason: at a light load the stretch hardly varies (not a replication reason)
    assert [r.code for r in fit.reasons] == ["latency_split_assumed"]


def test_the_getmores_latency_is_told_from_the_clients_by_their_changing_shares_or_said_to_be_mixed():
    every = primary(client_reads=True)      # client reads in every interval: no interval of getMores alone
    rng = np.random.default_rng(9)
    clients = rng.uniform(50, 600, len(every))
    getmores = every["oplog_getmores_per_s"].to_numpy()
    every["reads_per_s"] = clients + getmores
    every["reads_latency_ms"] = (clients * LATENCY["reads"] + getmores * GETMORE_LATENCY) / (clients + getmores) * 1e3
    split = split_replication(every)
    assert split.attrs["replication_latency_s"]["reads"] == pytest.approx(GETMORE_LATENCY, rel=1e-9)
    assert np.allclose(split["reads_latency_ms"], LATENCY["reads"] * 1e3, rtol=1e-9)
    assert np.allclose(split["reads_per_s"], clients, rtol=1e-12)
    # the clients' share of the reads the same in every interval: the two latencies cannot be told apart
    same = primary(client_reads=True, share_varies=False)
    same.loc[::2, ["reads_per_s", "reads_latency_ms", "oplog_getmores_per_s"]] = \
        same.loc[1::2, ["reads_per_s", "reads_latency_ms", "oplog_getmores_per_s"]].to_numpy()
    split = split_replication(same)
    assert np.isnan(split.attrs["replication_latency_s"]["reads"])
    reads = same["reads_latency_ms"].to_numpy()
    assert np.allclose(split["reads_latency_ms"], reads, rtol=1e-12)           # the mean over both, as it was
    fit = fit_server_demands(same, cores=2, member="p")
    mixed = [r.message for r in fit.reasons if r.code == "latency_mixed_with_replication"]
    assert mixed == ["p: its reads include the oplog getMores it served to other members, whose latency could not be "
                     "told from the clients' (no intervals without the clients' reads, nor enough change in their "
                     "shares): the reads' latency is the mean over both"]
    assert split_replication(split) is split      # a split table (a bootstrap's resample) is not split again


def test_a_secondary_s_replication_is_a_term_of_its_own():
    samples = secondary()
    fit = fit_server_demands(samples, cores=2, member="s")
    assert fit.replication_cpu_per_op == pytest.approx(D_APPLY, rel=1e-6)
    assert fit.replication_baseline == pytest.approx(samples["repl_applied_per_s"].mean(), rel=1e-12)
    assert fit.cpu_per_op["reads"] == pytest.approx(D["reads"], rel=1e-6)
    assert fit.background_cores == pytest.approx(B, rel=1e-6)
    assert "writes" not in fit.classes and [r.code for r in fit.reasons] == ["latency_split_assumed"]


def _utilization(cores, reads=0.0, writes=0.0, commands=0.0, getmores=0.0, positions=0.0, applied=0.0):
    return (B + D["reads"] * reads + D["writes"] * writes + D["commands"] * commands + D_GETMORE * getmores
            + D_POSITION * positions + D_APPLY * applied) / cores


def test_reads_x10_names_the_secondary_and_writes_x2_grows_the_secondary_s_replication():
    p, s = primary(client_reads=False), secondary(span=(100, 500))
    mean = {name: t.mean(numeric_only=True) for name, t in (("p", p), ("s", s))}
    result = mix_what_if({"p": p, "s": s}, cores=2, scale={"reads": 10}, n_bootstrap=0)
    # the primary serves no client read: its getMores follow the writes, which are not scaled
    positions = mean["p"]["repl_update_position_per_s"]
    expected_p = _utilization(2, writes=mean["p"]["writes_per_s"], commands=mean["p"]["commands_per_s"] - positions,
                              getmores=mean["p"]["oplog_getmores_per_s"], positions=positions)
    expected_s = _utilization(2, reads=10 * mean["s"]["reads_per_s"], commands=mean["s"]["commands_per_s"],
                              applied=mean["s"]["repl_applied_per_s"])
    assert result.predicted.loc["p", "utilization"] == pytest.approx(expected_p, rel=1e-6)
    assert result.predicted.loc["s", "utilization"] == pytest.approx(expected_s, rel=1e-6)
    assert result.limiting_member == "s"
    # without the replication figures (as before them), the getMores count as reads and grow tenfold: the primary
    # is named, wrongly
    blind = mix_what_if({"p": p.drop(columns=["oplog_getmores_per_s", "repl_update_position_per_s",
                                              "repl_applied_per_s"]), "s": s}, cores=2,
                        scale={"reads": 10}, n_bootstrap=0)
    assert blind.limiting_member == "p"
    writes = mix_what_if({"p": p, "s": s}, cores=2, scale={"writes": 2}, n_bootstrap=0)
    expected_s2 = _utilization(2, reads=mean["s"]["reads_per_s"], commands=mean["s"]["commands_per_s"],
                               applied=2 * mean["s"]["repl_applied_per_s"])
    assert writes.predicted.loc["s", "utilization"] == pytest.approx(expected_s2, rel=1e-6)
    assert writes.predicted.loc["s", "replication_per_s"] == pytest.approx(2 * mean["s"]["repl_applied_per_s"])


def test_rates_scale_the_replication_by_the_set_s_writes_asked_over_observed():
    p, s = primary(client_reads=False), secondary()
    observed = p["writes_per_s"].mean()
    result = mix_what_if({"p": p, "s": s}, cores=2, rates={"reads": 500, "writes": 3 * observed}, n_bootstrap=0)
    assert result.writes_factor == pytest.approx(3.0, rel=1e-12)
    assert result.predicted.loc["s", "replication_per_s"] == pytest.approx(3 * s["repl_applied_per_s"].mean())
    alone = mix_what_if({"s": s}, cores=2, rates={"reads": 500, "writes": 100}, n_bootstrap=0)
    assert alone.writes_factor == 1.0     # no member seen serving writes: kept as observed, and said
    assert "replication_kept" in [r.code for r in alone.evidence.reasons]


def test_replication_that_never_varies_stays_in_the_background_and_is_said_to():
    samples = secondary()
    applied = 400.0      # the same every interval: no telling its CPU from the background's
    samples["cpu_cores"] += D_APPLY * (applied - samples["repl_applied_per_s"])
    samples["repl_applied_per_s"] = applied
    fit = fit_server_demands(samples, cores=2, member="s")
    assert fit.replication_cpu_per_op == 0
    assert fit.background_cores == pytest.approx(B + D_APPLY * applied, rel=1e-6)
    reason = [r for r in fit.reasons if r.code == "replication_in_background"][0]
    assert reason.message.startswith("s: the CPU of its replication work (400 oplog entries applied and getMores "
                                     "and position reports served a second) could not be told from the rest")
    assert fit.cpu_per_op["reads"] == pytest.approx(D["reads"], rel=1e-6)


def test_mva_observed_json_gives_each_member_s_replication(tmp_path, capsys):
    import json

    from capmodel.cli import main

    p, s = primary(client_reads=False), secondary(span=(100, 500))
    for name, table in (("p", p), ("s", s)):
        (tmp_path / name).mkdir()
        table.to_csv(tmp_path / name / "samples.csv", index=False)
    assert main(["mva", "--observed", str(tmp_path / "p"), "--observed", str(tmp_path / "s"), "--cores", "2",
                 "--scale", "writes=2", "--bootstrap", "0", "--json"]) == 0
    out = {m["member"]: m["replication"] for m in json.loads(capsys.readouterr().out)["members"]}
    assert out["s"]["cpu_per_op_ms"] == pytest.approx(D_APPLY * 1000, rel=1e-6)
    assert out["s"]["asked_per_s"] == pytest.approx(2 * s["repl_applied_per_s"].mean(), rel=1e-9)
    assert out["s"]["writes_factor"] == 2 and out["s"]["served_per_s"] == {}
    assert out["p"]["served_per_s"]["reads"] == pytest.approx(p["oplog_getmores_per_s"].mean(), rel=1e-12)
    assert out["p"]["served_latency_ms"]["reads"] == pytest.approx(GETMORE_LATENCY * 1000, rel=1e-6)
    assert out["p"]["cpu_per_op_ms"] == 0
