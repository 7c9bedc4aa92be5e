"""capmodel observe on real mongod output: an embedded mongod with FTDC on (one sample a second) is loaded by counted
client threads in separate windows while the live sampler runs beside it; then restarted once. The FTDC reader and
the sampler must agree with the client's own counts, with each other, and with the clock. Damaged files must fail
clearly, naming the file and the byte offset.

Format facts checked here come from MongoDB's source (mongodb/mongo, src/mongo/db/ftdc/decompressor.cpp: a zero
delta is followed by the count of further zeros; README.md: LEB128 varints from S2, files are BSON documents).
"""
from __future__ import annotations

import json
import shutil
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.support.ftdc_bytes import leb128  # unsigned LEB128 from its definition (tests/support/ftdc_bytes.py)

from capmodel.cli import main
from capmodel.errors import InputError
from capmodel.observe import observe_ftdc, observe_uri
from capmodel.observe import ftdc, varint
from capmodel.observe.serverstatus import COUNTER_RESET, ftdc_metrics, FTDC_TIME

WINDOWS = (1, 4, 8)          # client threads per load window
WINDOW_S = 2.0               # seconds of load per window (the counts are compared, not their length)
IDLE_S = 2.5                 # idle seconds around each window (at least two FTDC samples with no reads or writes)
PASSWORD = "obs3rve-s3cret"


def _load(collection, threads: int, seconds: float) -> int:
    """Closed-loop point reads and updates by _id from ``threads`` threads; the operations completed, counted."""
    counts = [0] * threads
    stop = time.monotonic() + seconds

    def work(slot):
        rng = np.random.default_rng(slot)
        n = 0
        while time.monotonic() < stop:
            key = int(rng.integers(0, 1000))
            collection.find_one({"_id": key})
            collection.update_one({"_id": key}, {"$inc": {"n": 1}})
            n += 2
        counts[slot] = n

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return sum(counts)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """Load windows on a diagnostic-data mongod with the live sampler running; then one restart."""
    from capmodel.bench.server import embedded_server

    dbpath = tmp_path_factory.mktemp("ftdc") / "db"
    windows = []
    with embedded_server(dbpath=dbpath, diagnostic_data=True) as server:
        client = server.client()
        collection = client.observe_test.items
        collection.insert_many([{"_id": i, "n": 0} for i in range(1000)])
        stop = threading.Event()
        live = {}
        sampler = threading.Thread(target=lambda: live.setdefault("obs", observe_uri(
            server.uri, interval=1.0, duration=300, should_stop=stop.is_set)))
        sampler.start()
        begun = pd.Timestamp.now(tz="UTC")
        time.sleep(IDLE_S)
        for threads in WINDOWS:
            start = pd.Timestamp.now(tz="UTC")
            ops = _load(collection, threads, WINDOW_S)
            windows.append({"threads": threads, "start": start, "end": pd.Timestamp.now(tz="UTC"), "ops": ops})
            time.sleep(IDLE_S)
        ended = pd.Timestamp.now(tz="UTC")
        running = tmp_path_factory.mktemp("running") / "diagnostic.data"   # as a running server leaves it
        shutil.copytree(dbpath / "diagnostic.data", running)
        stop.set()
        sampler.join()
        client.close()
    with embedded_server(dbpath=dbpath, diagnostic_data=True) as server:   # a restart: counters start again
        client = server.client()
        client.observe_test.items.find_one({"_id": 1})
        time.sleep(3)
        client.close()
    return {"dbpath": dbpath, "windows": windows, "live": live["obs"], "begun": begun, "ended": ended,
            "running": running}


def _window_ops(samples: pd.DataFrame, window: dict) -> tuple[float, float]:
    """Reads + writes and their summed latency (s) over the intervals from the last sample before the window to the
    first after it (the idle gaps around it carry no reads or writes)."""
    times = samples["time"]
    first_after = times[times >= window["end"]].iloc[0]
    last_before = times[times <= window["start"]].iloc[-1]
    inside = samples[(times > last_before) & (times <= first_after)]
    ops = ((inside["reads_per_s"] + inside["writes_per_s"]) * inside["interval_s"]).sum()
    latency = ((inside["reads_per_s"] * inside["reads_latency_ms"].fillna(0)
                + inside["writes_per_s"] * inside["writes_latency_ms"].fillna(0)) * inside["interval_s"]).sum() / 1000
    return ops, latency


def test_ftdc_ops_per_window_agree_with_the_clients_count(run):
    obs = observe_ftdc(run["dbpath"] / "diagnostic.data", since=run["begun"], until=run["ended"])
    for window in run["windows"]:
        ops, latency = _window_ops(obs.samples, window)
        seconds = (window["end"] - window["start"]).total_seconds()
        assert ops / seconds == pytest.approx(window["ops"] / seconds, rel=0.05), window
        # Little's law over the window: the mean number inside the server cannot exceed the client threads
        assert 0 < latency / seconds <= window["threads"] * 1.05


def test_ftdc_sample_count_matches_the_elapsed_seconds(run):
    raw = ftdc.read_metrics(run["dbpath"] / "diagnostic.data", {"reads": ftdc_metrics()["reads_ops"]},
                            time_metric=FTDC_TIME, since=run["begun"], until=run["ended"])
    elapsed = (run["ended"] - run["begun"]).total_seconds()
    assert abs(len(raw) - elapsed) <= 2, (len(raw), elapsed)
    steps = np.diff(raw["time_ms"].to_numpy()) / 1000
    assert np.median(steps) == pytest.approx(1.0, abs=0.05)


def test_a_running_servers_folder_is_read_with_its_interim_file(run):
    # the newest samples of a running mongod are only in metrics.interim (rewritten every few samples)
    files = ftdc.ftdc_files(run["running"])
    assert files[-1].name == "metrics.interim"
    raw = ftdc.read_metrics(run["running"], {"reads": ftdc_metrics()["reads_ops"]}, time_metric=FTDC_TIME)
    archived = ftdc.read_metrics(files[:-1][0], {"reads": ftdc_metrics()["reads_ops"]}, time_metric=FTDC_TIME)
    assert len(raw) > len(archived)
    newest = pd.to_datetime(raw["time_ms"].iloc[-1], unit="ms", utc=True)
    assert (run["ended"] - newest).total_seconds() < 12
    assert raw["time_ms"].is_unique and raw["time_ms"].is_monotonic_increasing


def test_ctrl_c_keeps_every_complete_interval(mongod, tmp_path):
    import os
    import signal

    out = tmp_path / "interrupted"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.Popen([sys.executable, "-m", "capmodel.cli", "observe", "--uri", mongod.uri, "--interval", "0.5",
                             "--duration", "60", "--out", str(out), "--json"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while "sampling" not in (proc.stderr.readline() or "sampling") and time.monotonic() < deadline:
            pass
        time.sleep(2.6)
        proc.send_signal(signal.SIGINT)
        stdout, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0
    samples = pd.read_csv(out / "samples.csv")
    assert len(samples) >= 3 and json.loads(stdout)["interrupted"] is True


def test_live_sampler_agrees_with_the_ftdc_reader_on_the_same_windows(run):
    live = run["live"]
    assert not live.interrupted or live.samples["time"].iloc[-1] >= run["windows"][-1]["end"]
    ftdc_obs = observe_ftdc(run["dbpath"] / "diagnostic.data", since=run["begun"], until=run["ended"])
    for window in run["windows"]:
        live_ops, live_latency = _window_ops(live.samples, window)
        ftdc_ops, ftdc_latency = _window_ops(ftdc_obs.samples, window)
        assert live_ops == pytest.approx(ftdc_ops, rel=0.05)
        assert live_latency / live_ops == pytest.approx(ftdc_latency / ftdc_ops, rel=0.05)
        assert live_ops == pytest.approx(window["ops"], rel=0.05)


def test_restart_and_idle_intervals_are_dropped_and_counted_not_fitted(run):
    obs = observe_ftdc(run["dbpath"] / "diagnostic.data")
    assert len(ftdc.ftdc_files(run["dbpath"] / "diagnostic.data")) >= 2       # one archive per start
    assert obs.dropped.get(COUNTER_RESET, 0) >= 1
    assert obs.dropped.get("no_operations", 0) >= 1                         # idle seconds after the restart
    assert len(obs.curve) == len(obs.samples) - sum(obs.dropped.values())
    assert (obs.curve["concurrency"] > 0).all() and (obs.curve["source"] == "observed").all()
    reset_time = obs.samples.loc[obs.samples["dropped"] == COUNTER_RESET, "time"]
    assert not reset_time.isin(obs.curve["time"]).any()


def test_cli_writes_both_tables_and_fit_reads_the_curve_as_is(run, tmp_path, capsys):
    out = tmp_path / "obs"
    assert main(["observe", "--ftdc", str(run["dbpath"] / "diagnostic.data"), "--out", str(out), "--json"]) == 0
    samples = pd.read_csv(out / "samples.csv")
    curve = pd.read_csv(out / "curve.csv")
    assert samples["time"].str.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z$").all()
    assert {"time", "concurrency", "throughput", "latency_mean_ms", "source"} <= set(curve.columns)
    capsys.readouterr()
    assert main(["fit", str(out / "curve.csv"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n_points"] == len(curve)


def test_live_cli_on_the_session_mongod_writes_one_row_per_interval(mongod, tmp_path, capsys):
    out = tmp_path / "live"
    assert main(["observe", "--uri", mongod.uri, "--interval", "0.5", "--duration", "1.5", "--out", str(out)]) == 0
    samples = pd.read_csv(out / "samples.csv")
    assert len(samples) == 3
    # fixed-rate schedule: the intervals (server clock) add up to the duration even when one sample is late
    assert (samples["interval_s"] > 0).all() and samples["interval_s"].sum() == pytest.approx(1.5, abs=0.3)
    # the sampler's own serverStatus is not load: on the idle session server the last intervals read as idle
    assert (samples["dropped"].iloc[1:] == "no_operations").all()


def test_uri_password_never_printed_when_the_server_cannot_be_reached(capsys):
    uri = f"mongodb://analyst:{PASSWORD}@127.0.0.1:1/?serverSelectionTimeoutMS=300"
    assert main(["observe", "--uri", uri, "--duration", "1", "--out", "/nonexistent/never"]) == 2
    captured = capsys.readouterr()
    assert PASSWORD not in captured.out + captured.err
    lines = captured.err.strip().splitlines()
    assert lines[-1].startswith("capmodel: error: cannot reach mongodb://analyst:***@127.0.0.1:1/")


# ----------------------------------------------------------------------------------------------- damaged files
@pytest.fixture
def archive(run, tmp_path):
    """A copy of the first real archive file and the byte offsets of its documents."""
    source = ftdc.ftdc_files(run["dbpath"] / "diagnostic.data")[0]
    copy = tmp_path / source.name
    shutil.copy(source, copy)
    blob = copy.read_bytes()
    offsets, at = [], 0
    while at < len(blob):
        offsets.append(at)
        at += struct.unpack_from("<i", blob, at)[0]
    return copy, blob, offsets


def _error(path) -> str:
    with pytest.raises(InputError) as info:
        observe_ftdc(path)
    return str(info.value)


def test_a_window_without_samples_says_what_the_files_cover(run):
    with pytest.raises(InputError, match=r"no FTDC sample .* falls in that window; the files cover 20"):
        observe_ftdc(run["dbpath"] / "diagnostic.data", since="2001-01-01", until="2001-01-02")


def test_truncated_file_names_file_and_offset(archive):
    path, blob, offsets = archive
    path.write_bytes(blob[:offsets[1] + 100])
    message = _error(path)
    assert str(path) in message and f"byte offset {offsets[1]}" in message and "truncated" in message


def test_corrupt_chunk_names_file_and_offset(archive):
    path, blob, offsets = archive
    chunk = offsets[1]                                   # the first metric chunk follows the metadata document
    data = bytearray(blob)
    middle = chunk + (offsets[2] if len(offsets) > 2 else len(blob)) >> 1
    data[middle:middle + 16] = bytes(16)
    path.write_bytes(bytes(data))
    message = _error(path)
    assert str(path) in message and f"byte offset {chunk}" in message and "corrupt" in message


def test_empty_and_foreign_files_name_file_and_offset(tmp_path):
    empty = tmp_path / "metrics.2024-01-01T00-00-00Z-00000"
    empty.write_bytes(b"")
    assert "empty" in _error(empty) and "byte offset 0" in _error(empty)
    csv = tmp_path / "curve.csv"
    csv.write_text("concurrency,throughput\n1,100\n")
    assert "not an FTDC file" in _error(csv) and "byte offset 0" in _error(csv) and str(csv) in _error(csv)


def test_a_failed_read_writes_nothing_over_existing_output(archive, tmp_path, capsys):
    path, blob, offsets = archive
    path.write_bytes(blob[:offsets[1] + 10])
    out = tmp_path / "out"
    out.mkdir()
    (out / "samples.csv").write_text("kept\n")
    assert main(["observe", "--ftdc", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0]
    assert (out / "samples.csv").read_text() == "kept\n" and not (out / "curve.csv").exists()


# ----------------------------------------------------------------------------------------------- the coding itself
def test_varints_decode_as_leb128_including_the_64_bit_extremes():
    values = [0, 1, 127, 128, 300, 16384, 2 ** 32 + 5, 2 ** 63, 2 ** 64 - 1]
    buffer = np.frombuffer(b"".join(leb128(v) for v in values), dtype=np.uint8)
    assert varint.decode_varints(buffer).tolist() == values
    with pytest.raises(ValueError):
        varint.decode_varints(np.frombuffer(leb128(300)[:1], dtype=np.uint8))


def test_zero_runs_expand_as_decompressor_cpp_reads_them():
    # decompressor.cpp: a 0 delta is followed by a varint count of further zeros; counts may themselves be 0
    codes = np.array([5, 0, 2, 7, 0, 0, 0, 1, 9], dtype=np.uint64)
    assert varint.expand_zero_runs(codes, 9).tolist() == [5, 0, 0, 0, 7, 0, 0, 0, 9]
    with pytest.raises(ValueError):
        varint.expand_zero_runs(codes, 10)


def test_the_bundled_sample_decodes_and_its_maker_is_in_the_repository():
    from capmodel._bundled import bundled_dir

    folder = bundled_dir("data") / "ftdc_sample" / "diagnostic.data"
    obs = observe_ftdc(folder)
    assert len(obs.curve) >= 30 and obs.curve["throughput"].max() > 100
    assert sum(f.stat().st_size for f in folder.iterdir()) < 1_000_000
    script = bundled_dir("data").parent / "scripts" / "make_ftdc_sample.py"
    help_text = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True)
    assert help_text.returncode == 0 and "--concurrency" in help_text.stdout


def test_a_reused_layout_reads_the_same_metrics_as_a_full_walk(run):
    cache = ftdc.LayoutCache()
    for file in ftdc.ftdc_files(run["dbpath"] / "diagnostic.data") + ftdc.ftdc_files(run["running"]):
        for _, document in ftdc.iter_documents(file):
            if document["type"] != ftdc.METRIC_CHUNK:
                continue
            raw = ftdc.inflate(document["data"])
            reference = raw[:struct.unpack_from("<i", raw, 0)[0]]
            names, values = ftdc.metric_names(reference, cache)
            walked_names, walked_values = ftdc.metric_names(reference)
            assert names == walked_names and np.array_equal(values, walked_values)
    assert cache.hits >= 1


def test_a_replica_sets_combined_samples_are_not_read_as_one_server(tmp_path, capsys):
    # observe writes every member's intervals into one samples.csv (a member column) beside members/<host_port>/;
    # report 07 and mva --observed read a samples.csv as ONE server: fitting the laws to three members' intervals
    # at once (60 intervals of three servers) gave a capacity of no server at all
    import pandas as pd
    import pytest

    from capmodel.cli import main
    from capmodel.errors import InputError
    from capmodel.observe import read_observation
    from capmodel.report.checks import check_report_parameters

    hosts = ["h1:27017", "h2:27018"]
    rows = []
    for i in range(10):
        for h in hosts:
            rows.append({"member": h, "time": f"2026-01-01T00:00:{i:02d}Z", "interval_s": 1.0, "cpu_cores": 0.1,
                         "reads_per_s": 100.0 + i, "reads_latency_ms": 0.2, "writes_per_s": 10.0 + i % 3,
                         "writes_latency_ms": 0.3, "commands_per_s": 1.0, "commands_latency_ms": 0.1, "dropped": ""})
    folder = tmp_path / "rs"
    folder.mkdir()
    pd.DataFrame(rows).to_csv(folder / "samples.csv", index=False)
    with pytest.raises(InputError) as caught:
        read_observation(folder)
    message = str(caught.value)
    assert "holds 2 replica-set members' intervals (h1:27017, h2:27018)" in message
    assert f"-p observed takes one member's folder: {folder / 'members' / 'h1_27017'}, " in message
    with pytest.raises(InputError, match="holds 2 replica-set members"):
        check_report_parameters({"observed": "", "ftdc": ""}, {"observed": str(folder)})   # before any kernel starts
    with pytest.raises(InputError, match="parameter ftdc: /nothere-ftdc does not exist"):
        check_report_parameters({"observed": "", "ftdc": ""}, {"ftdc": "/nothere-ftdc"})
    assert main(["mva", "--observed", str(folder), "--cores", "1", "--scale", "reads=2"]) == 2
    err = capsys.readouterr().err
    assert "--observed takes one member's folder (repeat it for each)" in err and err.count("\n") == 1
    one = folder / "members" / "h1_27017"
    one.mkdir(parents=True)
    pd.DataFrame([r for r in rows if r["member"] == "h1:27017"]).to_csv(one / "samples.csv", index=False)
    assert len(read_observation(one).samples) == 10                  # one member's folder reads as before


def test_an_unreachable_server_is_one_readable_sentence(capsys):
    # pymongo's ServerSelectionTimeoutError ends in a TopologyDescription repr; it was printed cut mid-token
    from capmodel.cli import main

    # the URI's own serverSelectionTimeoutMS is the wait (capmodel's default, 5 s, otherwise), and the line says it
    uri = "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=1000"
    assert main(["observe", "--uri", uri, "--duration", "2", "--out", "/nonexistent-obs"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith(f"capmodel: error: cannot reach {uri}: no server answered within 1 s (")
    assert "Connection refused" in err and "Topology" not in err and "<" not in err and err.endswith(")")


def test_observe_ftdc_owns_its_out_folder(tmp_path, capsys):
    """observe --ftdc owns its --out: a table capmodel did not write is refused, not replaced; a symlinked table
    leaves its target untouched; the same observation run again replaces its own tables; a held folder is refused."""
    import os

    from capmodel.cli import main
    from capmodel.observe import bundled_sample
    from capmodel.output_folder import FolderLock

    ftdc_dir = str(bundled_sample()["path"])
    out = tmp_path / "obs"
    out.mkdir()
    (out / "curve.csv").write_text("concurrency,throughput\n1,2\n")
    assert main(["observe", "--ftdc", ftdc_dir, "--out", str(out)]) == 2
    assert "curve.csv was not written by capmodel" in capsys.readouterr().err
    assert (out / "curve.csv").read_text() == "concurrency,throughput\n1,2\n" and not (out / "samples.csv").exists()

    (out / "curve.csv").unlink()
    target = tmp_path / "precious.csv"
    target.write_text("keep\n")
    (out / "samples.csv").symlink_to(target)
    assert main(["observe", "--ftdc", ftdc_dir, "--out", str(out)]) == 2
    assert "samples.csv is a symlink" in capsys.readouterr().err and target.read_text() == "keep\n"

    (out / "samples.csv").unlink()
    assert main(["observe", "--ftdc", ftdc_dir, "--out", str(out)]) == 0
    first = (out / "curve.csv").read_bytes()
    assert main(["observe", "--ftdc", ftdc_dir, "--out", str(out)]) == 0          # its own tables: replaced
    assert (out / "curve.csv").read_bytes() == first
    capsys.readouterr()
    with FolderLock(out):
        assert main(["observe", "--ftdc", ftdc_dir, "--out", str(out)]) == 2
    assert f"(PID {os.getpid()})" in capsys.readouterr().err


def test_a_parent_of_one_servers_folder_reads_as_that_folder(tmp_path, capsys):
    """The README's "or a parent of them" holds for a parent of one ``diagnostic.data`` too (the bundled sample's own
    folder was refused: "no FTDC files in this folder"); a parent with none names the folders searched."""
    from capmodel.observe import bundled_sample

    folder = Path(bundled_sample()["path"])
    assert main(["observe", "--ftdc", str(folder), "--out", str(tmp_path / "direct")]) == 0
    assert main(["observe", "--ftdc", str(folder.parent), "--out", str(tmp_path / "parent")]) == 0
    for table in ("samples.csv", "curve.csv"):
        assert (tmp_path / "parent" / table).read_bytes() == (tmp_path / "direct" / table).read_bytes()
    capsys.readouterr()
    (tmp_path / "nothing" / "inner").mkdir(parents=True)
    assert main(["observe", "--ftdc", str(tmp_path / "nothing"), "--out", str(tmp_path / "none")]) == 2
    assert "no FTDC files (metrics.*) in this folder or the folders below it" in capsys.readouterr().err
