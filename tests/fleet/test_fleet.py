"""The FTDC writer, the synthetic fleet and ``capmodel fleet`` on a real Dask LocalCluster.

The writer is checked by the project's own decoder (observe/ftdc.py), which follows MongoDB's decompressor.cpp: the
values written come back exactly, wrap-around and zero runs included. The synthetic servers' true parameters (CPU per
operation D, cores, background CPU) come back from the fleet row within a tolerance derived from the generator's own
noise: the CPU of a second is D x (its operations, known exactly) plus a background drawn uniformly from
[0.5, 1.5] x 0.02 cores, so the least-squares slope of CPU on operations has standard error
sigma_U / (sigma_X sqrt(n)) with sigma_U = 0.02 / sqrt(12), and the intercept sigma_U sqrt(1/n + mean_X^2 /
(n sigma_X^2)) (any regression textbook, e.g. Draper & Smith, *Applied Regression Analysis*, ch. 1).
"""
from __future__ import annotations

import datetime as dt
import json
import math
import shutil

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from capmodel.cli import main
from capmodel.observe import ftdc, ftdc_writer, observe_ftdc, synthetic
from capmodel.observe.fleet import fleet_table, server_identity
from capmodel.observe.folders import server_folders
from tests.support.fleet_rows import fleet_row, known_table

START = dt.datetime(2026, 11, 2, tzinfo=dt.timezone.utc)
HOURS = 12.0         # from the trough at 00:00 to the peak at 12:00: the load varies enough to separate background


def test_written_chunks_decode_to_the_values_written():
    rng = np.random.default_rng(7)
    samples = 300
    counters = np.cumsum(rng.poisson(3.0, samples)).astype(np.int64)
    counters[100:180] = counters[99]                          # a run of zero deltas
    wrap = np.array([2 ** 63 - 2 + i for i in range(3)] * 100, dtype=object)  # int64 overflow: the writer wraps
    wrapping = np.array([int(v) - 2 ** 64 if v >= 2 ** 63 else int(v) for v in wrap], dtype=np.int64)
    gauge = rng.integers(-5, 5, samples)
    when = START
    ms = int(when.timestamp() * 1000) + 1000 * np.arange(samples)
    import bson
    reference = {"start": when, "serverStatus": {"host": "h:1", "localTime": when, "c": bson.Int64(int(counters[0])),
                 "w": bson.Int64(int(wrapping[0])), "g": int(gauge[0]), "f": 2.75, "flag": True, "s": "text"},
                 "end": when}
    data = ftdc_writer.encode_chunk(reference, {"serverStatus.localTime": ms, "serverStatus.c": counters,
                                                "serverStatus.w": wrapping, "serverStatus.g": gauge})
    chunk = ftdc.decode_chunk(data)
    assert chunk.names == ["start", "serverStatus.localTime", "serverStatus.c", "serverStatus.w", "serverStatus.g",
                           "serverStatus.f", "serverStatus.flag", "end"]
    assert chunk.samples == samples
    np.testing.assert_array_equal(chunk.values("serverStatus.c"), counters)
    np.testing.assert_array_equal(chunk.values("serverStatus.w"), wrapping)
    np.testing.assert_array_equal(chunk.values("serverStatus.g"), gauge)
    np.testing.assert_array_equal(chunk.values("serverStatus.localTime"), ms)
    assert set(chunk.values("serverStatus.f")) == {2} and set(chunk.values("serverStatus.flag")) == {1}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 6), st.integers(1, 40), st.data())
def test_any_values_round_trip_through_the_writer_and_the_decoder(metrics, samples, data):
    # counters, gauges and full-range int64 values, with runs of repeats (zero deltas) of any length
    columns = {}
    for i in range(metrics):
        values = data.draw(st.lists(st.integers(-2 ** 63, 2 ** 63 - 1) | st.sampled_from([0, 1, -1]),
                                    min_size=samples, max_size=samples))
        repeat = data.draw(st.integers(0, samples))
        values[samples - repeat:] = [values[samples - repeat - 1] if samples - repeat > 0 else 0] * repeat
        columns[f"m{i}"] = np.array(values, dtype=np.int64)
    import bson
    reference = {"start": START, "group": {name: bson.Int64(int(v[0])) for name, v in columns.items()}}
    chunk = ftdc.decode_chunk(ftdc_writer.encode_chunk(reference, {f"group.{k}": v for k, v in columns.items()}))
    assert chunk.samples == samples
    for name, values in columns.items():
        np.testing.assert_array_equal(chunk.values(f"group.{name}"), values)


def test_zero_runs_are_coded_as_mongod_does():
    # decompressor.cpp: a zero is followed by the count of further zeros
    coded = ftdc_writer.zero_run_code(np.array([0, 0, 0, 5, 0, 7], dtype=np.uint64))
    assert coded.tolist() == [0, 2, 5, 0, 0, 7]
    assert ftdc_writer.encode_varints(np.array([1, 127, 128, 300], dtype=np.uint64)) == bytes(
        [1, 127, 0x80, 1, 0xAC, 2])                         # LEB128: 300 = 0b10_0101100


def _server(host, replica_set, cores, demand, peak_share, seed, hours=HOURS):
    capacity = (cores - synthetic.BACKGROUND_CORES) * 1000.0 / demand
    amplitude = 0.6
    return synthetic.SyntheticServer(host=host, replica_set=replica_set, cores=cores, cpu_ms_per_op=demand,
                                     mean_rate=capacity * peak_share / (1 + amplitude), daily_amplitude=amplitude,
                                     peak_hour=12.0, hours=hours, start=START, seed=seed, filler_metrics=40)


SERVERS = (_server("db-a1:27017", "rsA", 4, 0.25, 0.7, 1), _server("db-a2:27018", "rsA", 4, 0.25, 0.35, 2),
           _server("db-b1:27017", "rsB", 8, 0.4, 0.5, 3))


def test_generated_files_carry_the_identity_and_vary_their_layout(generated):
    folders = server_folders([generated])
    assert len(folders) == len(SERVERS)
    identities = {server_identity(f)["host"]: server_identity(f) for f in folders}
    for server in SERVERS:
        assert identities[server.host] == {"host": server.host, "replica_set": server.replica_set,
                                           "cores": float(server.cores), "version": "7.0.14"}
    layouts = set()
    for file in ftdc.ftdc_files(folders[0]):
        for chunk in ftdc.iter_chunks(file):
            layouts.add(len(chunk.names))
    assert len(layouts) == 2                        # a counter comes and goes, as in real files


def _tolerances(server, samples):
    """5 standard errors of the slope (D) and of the capacity, from the generator's background noise."""
    x = (samples["reads_per_s"] + samples["writes_per_s"] + samples["commands_per_s"]).to_numpy()
    n, sigma_u = len(x), synthetic.BACKGROUND_CORES / math.sqrt(12)
    se_slope = sigma_u / (x.std() * math.sqrt(n))
    se_intercept = sigma_u * math.sqrt(1 / n + x.mean() ** 2 / (n * x.var()))
    demand = server.cpu_ms_per_op / 1000.0
    capacity_rel = se_slope / demand + se_intercept / (server.cores - synthetic.BACKGROUND_CORES)
    return 5 * se_slope * 1000.0, 5 * capacity_rel


def test_fleet_on_a_local_cluster_recovers_every_server_and_fails_only_the_corrupt_one(generated, tmp_path):
    parent = tmp_path / "fleet"
    shutil.copytree(generated, parent)
    broken = parent / "broken" / "diagnostic.data"
    broken.mkdir(parents=True)
    source = sorted((parent / "db-a1_27017" / "diagnostic.data").glob("metrics.*"))[0]
    broken.joinpath(source.name).write_bytes(source.read_bytes()[:5000])          # cut inside a chunk
    # a server whose hostInfo claims 1 core while it uses 1.7 in its busiest second: its verdict is unusable
    liar = synthetic.SyntheticServer(host="liar:27017", replica_set="rsL", cores=4, reported_cores=1,
                                     mean_rate=15000, hours=1.0, start=START, filler_metrics=10)
    synthetic.write_server(liar, parent / "liar" / "diagnostic.data")
    fleet = fleet_table([parent], monthly_growth=0.05, workers=2)
    assert fleet.workers == "2 local Dask workers"
    rows = fleet.rows
    assert len(rows) == len(SERVERS) + 2 and fleet.failed == 1
    failed = rows[rows["error"].notna()].iloc[0]
    assert str(broken) in failed["error"] and "truncated FTDC file" in failed["error"]
    assert rows["error"].notna().tolist()[-1]                                    # failed rows sort last
    assert rows.iloc[-2]["member"] == "liar:27017" and rows.iloc[-2]["verdict"] == "unusable"   # then unranked
    assert "above_saturation" in rows.iloc[-2]["reasons"]
    for server in SERVERS:
        row = rows[rows["member"] == server.host].iloc[0]
        samples = observe_ftdc(server_folders([parent / server.host.replace(":", "_")])[0]).samples
        demand_tol, capacity_rel = _tolerances(server, samples)
        assert row["cluster"] == server.replica_set and row["cores"] == server.cores
        assert row["cpu_ms_per_op"] == pytest.approx(server.cpu_ms_per_op, abs=demand_tol)
        assert row["capacity_ops"] == pytest.approx(server.capacity, rel=capacity_rel)
        assert row["hours"] == pytest.approx(HOURS, abs=1 / 3600)
        assert row["method"] == "operational laws" and row["verdict"] in ("sound", "weak")
        x = samples["reads_per_s"] + samples["writes_per_s"] + samples["commands_per_s"]
        assert row["busiest_ops"] == pytest.approx(np.percentile(x, 95))
        planned = (0.8 * server.cores - synthetic.BACKGROUND_CORES) * 1000.0 / server.cpu_ms_per_op
        assert row["spare_fraction"] == pytest.approx(1 - row["busiest_ops"] / planned, abs=0.01)
        assert row["runway_months"] == pytest.approx(math.log(planned / row["busiest_ops"]) / math.log(1.05),
                                                     rel=0.02)
    usable = rows[rows["error"].isna() & (rows["verdict"] != "unusable")]
    assert usable["runway_months"].is_monotonic_increasing
    assert usable.iloc[0]["member"] == "db-a1:27017"             # 70% of its capacity at the peak: least runway
    # 5 servers: 1 unreadable, 1 not ranked (verdict unusable); the most urgent first (its sentence: test_fleet_words.py)
    assert (len(rows), fleet.failed, int((rows["error"].isna() & (rows["verdict"] == "unusable")).sum())) == (5, 1, 1)
    assert (rows.iloc[0]["member"], rows.iloc[0]["cluster"]) == ("db-a1:27017", "rsA")
    assert fleet.evidence.to_json() == rows.iloc[0]["evidence"]
    import pickle

    # only summaries come back from the workers: a row is a few kB, the decoded day it summarises tens of MB
    assert max(len(pickle.dumps(row)) for row in rows.to_dict("records")) < 10_000


def test_fleet_cli_json_and_errors(generated, capsys):
    assert main(["fleet", str(generated / "db-b1_27017"), "--json", "--workers", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["servers"] == 1 and out["failed"] == 0 and out["rows"][0]["member"] == "db-b1:27017"
    assert out["rows"][0]["runway_months"] is None                 # no --growth, no runway
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
                      ) as cluster:                                 # an existing cluster, as on other hosts
        assert main(["fleet", str(generated / "db-b1_27017"), "--json", "--scheduler", cluster.scheduler_address,
                     "--growth", "0.05"]) == 0
        by_scheduler = json.loads(capsys.readouterr().out)
    assert by_scheduler["workers"] == f"1 Dask worker at {cluster.scheduler_address}"
    assert by_scheduler["rows"][0]["capacity_ops"] == out["rows"][0]["capacity_ops"]
    assert by_scheduler["rows"][0]["runway_months"] > 0
    assert main(["fleet", str(generated / "nowhere")]) == 2
    assert "nowhere: no such folder" in capsys.readouterr().err
    empty = generated.parent / "empty-fleet-folder"
    empty.mkdir(exist_ok=True)
    assert main(["fleet", str(empty)]) == 2
    assert "no FTDC files" in capsys.readouterr().err


def test_observe_ftdc_of_a_replica_sets_members_names_the_limiting_one_and_says_who_is_unranked(tmp_path, capsys):
    # rsM-2 runs at 60% of its true 4 cores, but its hostInfo says 1 core: the observed peak is above the saturation
    # the laws compute for 1 core, so its verdict is unusable and it cannot be ranked
    members = [_server("m0:27017", "rsM", 4, 0.25, 0.7, 11, 4), _server("m1:27017", "rsM", 4, 0.25, 0.3, 12, 4),
               synthetic.SyntheticServer(**{**_server("m2:27017", "rsM", 4, 0.25, 0.9, 13, 4).__dict__,
                                            "reported_cores": 1})]
    parent = tmp_path / "rsM"
    synthetic.write_fleet(members, parent)
    out = tmp_path / "out"
    assert main(["observe", "--ftdc", str(parent), "--out", str(out), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    by_host = {m["host"]: m for m in result["members"]}
    assert set(by_host) == {"m0:27017", "m1:27017", "m2:27017"} and result["replica_set"] == "rsM"
    assert by_host["m2:27017"]["verdict"] == "unusable" and by_host["m2:27017"]["cores"] == 1
    reasons = [r["code"] for r in by_host["m2:27017"]["capacity"]["evidence"]["reasons"]]
    assert "above_saturation" in reasons
    assert result["limiting_member"] == "m0:27017"                  # 70% of capacity at its peak against 30%
    assert result["evidence"] == by_host["m0:27017"]["capacity"]["evidence"]
    assert by_host["m0:27017"]["spare_fraction"] < by_host["m1:27017"]["spare_fraction"]
    import pandas as pd

    for member in members:
        samples = pd.read_csv(out / "members" / member.host.replace(":", "_") / "samples.csv")
        assert len(samples) == 4 * 3600
    assert len(pd.read_csv(out / "members.csv")) == 3
    combined = pd.read_csv(out / "samples.csv")
    assert combined["member"].value_counts().to_dict() == {m.host: 4 * 3600 for m in members}
    assert main(["observe", "--ftdc", str(parent / "m0_27017" / "diagnostic.data"), "--out",
                 str(tmp_path / "one")]) == 0                     # one member: the single-server outputs as before
    assert (tmp_path / "one" / "samples.csv").exists() and not (tmp_path / "one" / "members.csv").exists()


def test_report_08_renders_a_generated_fleet_and_names_its_busiest_member(tmp_path_factory, mongod):
    # the session's one render of every report (tests/support/rendered_reports.py), not a kernel of its own
    from tests.support.rendered_reports import SMALL, render_small

    rendered, _ = render_small(tmp_path_factory, mongod.uri)
    parameters = SMALL["08_fleet_capacity"]
    import nbformat

    nb = nbformat.read(rendered / "08_fleet_capacity.ipynb", as_version=4)
    assert nb.metadata["capmodel"]["report"]["error"] is None, nb.metadata["capmodel"]["report"]["error"]
    heads = [o["data"]["application/vnd.capmodel.headline+json"] for c in nb.cells for o in c.get("outputs", [])
             if "application/vnd.capmodel.headline+json" in o.get("data", {})]
    assert len(heads) == 1
    answer = heads[0]["answer"]
    assert "generated by capmodel.observe.synthetic because no folders were given" in answer
    assert "/tmp" not in answer and answer.count(" servers") == 1      # no temporary folder, the count said once
    truth = synthetic.fleet_servers(**{k: parameters[k] for k in ("clusters", "members", "hours", "seed")})
    # the generator's truth: the member whose peak load is the largest share of its capacity is the most urgent
    urgent = max(truth, key=lambda s: s.peak_rate / s.capacity)
    assert f"the most urgent is {urgent.host} of rs0: " in heads[0]["details"]
    assert heads[0]["evidence"]["grade"] in ("sound", "weak")
    # the page plans at the report's utilization target (not given: its default, 80% CPU): the load figure's
    # planned bars are that share of each server's saturation
    shown = nb.metadata["papermill"]["parameters"]["capmodel_report"]
    target = {**shown["defaults"], **shown["given"]}["utilization_target"]
    assert target == 0.8
    bars = {trace["name"]: trace["x"] for c in nb.cells for o in c.get("outputs", [])
            for trace in o.get("data", {}).get("application/vnd.plotly.v1+json", {}).get("data", [])}
    planned = next(x for name, x in bars.items() if name.startswith("planned at"))
    assert planned == pytest.approx([target * x for x in bars["saturation (bottleneck law)"]])


def test_fleet_answer_and_runway_figure_from_a_known_table():

    from capmodel.observe.fleet import Fleet, urgency_order
    from capmodel.plots.fleet import fleet_runway_figure, load_figure

    rows = known_table()
    ordered = urgency_order(rows)
    assert ordered["member"].tolist()[:3] == ["a:1", "b:1", "c:1"] and ordered["error"].notna().tolist()[-1]
    fleet = Fleet(ordered, "2 local Dask workers", 0.05)
    assert (fleet.failed, fleet.copies) == (1, 0)                          # the broken folder alone
    figure = fleet_runway_figure(ordered)
    traces = {t.name: t for t in figure.data}
    assert set(traces) == {"sound", "weak", "unusable", "failed"}
    assert list(traces["weak"].text) == ["past the target now"] and list(traces["sound"].text) == ["18.8 months"]
    assert list(traces["unusable"].text) == ["not ranked: verdict unusable"]
    assert list(traces["failed"].text) == ["failed: unreadable FTDC"]
    assert list(traces["sound"].error_x.array) == pytest.approx([20.0 - 18.8])
    assert list(figure.layout.yaxis.categoryarray)[-1] == "rs0 · a:1"        # the most urgent drawn at the top
    assert figure.layout.yaxis.title.text and figure.layout.xaxis.title.text.startswith("runway (months")

    load = load_figure(ordered, utilization_target=0.8)
    bars = {t.name: t for t in load.data}
    order = list(load.layout.yaxis.categoryarray)          # bottom to top, as the runway figure
    assert order == list(figure.layout.yaxis.categoryarray)
    at = {label: i for i, label in enumerate(order)}
    busiest, planned = bars["busiest load (95th percentile)"].x, bars["planned at 80% CPU"].x
    saturation = bars["saturation (bottleneck law)"].x
    assert busiest[at["rs0 · a:1"]] == 1030.0 and planned[at["rs0 · a:1"]] == pytest.approx(0.8 * 1250.0)
    assert saturation[at["rs1 · b:1"]] == 2000.0
    assert math.isnan(saturation[at["rs2 · c:1"]]) and math.isnan(planned[at["rs2 · c:1"]])   # unusable: load alone
    assert "rs2 · c:1 (no usable capacity)" in load.layout.yaxis.ticktext
    assert load.layout.xaxis.title.text == "throughput (ops/s)"


def test_the_embedded_cluster_warns_of_nothing_when_another_holds_the_dashboard_port(recwarn):
    """A Dask scheduler's HTTP server starts even without a dashboard; on its default 8787, held by another cluster,
    it warned ("Port 8787 is already in use") into report 08's page. The fleet's cluster asks for port 0."""
    import socket
    import warnings

    from capmodel.observe.fleet_cluster import dask_client

    holder = socket.socket()
    try:
        holder.bind(("127.0.0.1", 8787))
        holder.listen(1)
    except OSError:
        pass                                         # already held by someone else: the case under test all the same
    try:
        warnings.simplefilter("always")
        with dask_client(None, workers=1) as (client, _):
            assert client.submit(sum, [1, 2], pure=False).result() == 3
    finally:
        holder.close()
    assert not [w for w in recwarn if "already in use" in str(w.message)]


def test_runway_figure_keeps_its_colour_legend_when_every_server_has_the_same_verdict():
    # plotly hides the legend of a one-trace figure: an all-"weak" fleet showed orange bars with no key to the colour
    import pandas as pd

    from capmodel.observe.fleet import FLEET_COLUMNS
    from capmodel.plots.fleet import fleet_runway_figure

    rows = pd.DataFrame([fleet_row(cluster="rs0", member="a:1", spare_fraction=0.3, spare_low=0.2, spare_high=0.4,
                              verdict="weak", runway_months=5.0, runway_low=4.0, runway_high=6.0)], columns=FLEET_COLUMNS)
    figure = fleet_runway_figure(rows)
    assert [t.name for t in figure.data] == ["weak"] and figure.layout.showlegend is True
    assert figure.layout.legend.title.text == "verdict"


def test_two_folders_reporting_one_server_name_get_a_bar_each():
    # a copy of a member's FTDC (damaged) reports the member's host: the two rows shared one bar in report 08, and
    # their labels "33.7 months" and "33.0 months" overprinted each other
    import pandas as pd

    from capmodel.observe.fleet import FLEET_COLUMNS
    from capmodel.plots.fleet import fleet_runway_figure, load_figure

    same = dict(cluster="rs0", member="db-1.example.net:27017", verdict="weak", busiest_ops=100.0,
                capacity_ops=300.0)
    long = "db-1.db.internal-eu-central.example.com_27017"     # a host folder longer than a label's folder part
    rows = pd.DataFrame([fleet_row(**same, folder=f"/srv/{long}/diagnostic.data", runway_months=33.7, runway_low=30.0,
                              runway_high=36.0),
                         fleet_row(**same, folder="/srv/db-1-copy/diagnostic.data", runway_months=33.0, runway_low=30.0,
                              runway_high=36.0)], columns=FLEET_COLUMNS)
    names = list(fleet_runway_figure(rows).layout.yaxis.categoryarray)
    assert set(names) == {"rs0 · db-1.example.net:27017 · db-1-copy", f"rs0 · db-1.example.net:27017 · {long}"}
    assert sorted(load_figure(rows).layout.yaxis.categoryarray) == sorted(names)
    assert fleet_runway_figure(rows).layout.yaxis.ticksuffix == "  "     # "past the target now" clear of the name


def test_observe_of_one_servers_ftdc_takes_the_cores_the_fleet_takes(generated, tmp_path, capsys):
    # FTDC without systemMetrics (a non-Linux host; the generator writes none): the metadata's hostInfo still gives
    # the cores. observe read none and assumed 1 core, so the same files gave half the fleet's capacity on 2 cores
    from capmodel.observe import server_capacity

    folder = generated / "db-b1_27017" / "diagnostic.data"
    observation = observe_ftdc(folder)
    capacity = server_capacity(observation.samples)
    assert capacity.cores == 8.0 and capacity.cores_source == "the host's, as the server reports them"
    assert main(["fleet", str(folder), "--json", "--workers", "1"]) == 0
    row = json.loads(capsys.readouterr().out)["rows"][0]
    assert row["cores"] == 8.0 and row["capacity_ops"] == pytest.approx(capacity.saturation_throughput.estimate)


def test_fleet_refuses_a_utilization_target_outside_0_1_before_any_task(generated, capsys):
    # it ran every task and printed every server as failed, exit 0
    assert main(["fleet", str(generated / "db-b1_27017"), "--utilization-target", "1.5", "--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert "--utilization-target must be a fraction from 0.01 to 1, got 1.5" in err and err.count("\n") == 1
