"""Load from several hosts: a real ``dask scheduler`` and ``dask worker`` processes on distinct loopback addresses
(127.0.0.2 and 127.0.0.3 stand in for two load hosts; every byte goes to addresses on this machine), the embedded
mongod, and sweeps through ``--scheduler``. No mocks of Dask or MongoDB.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from capmodel.bench.client.measurements import decode_histogram
from capmodel.bench.client.runner import StepResult
from capmodel.bench.cluster.executor import (
    RECONNECT_ENV,
    RECONNECT_S,
    START_LEAD_ENV,
    START_LEAD_S,
    DaskExecutor,
    reconnect_seconds,
    start_lead_seconds,
)
from capmodel.bench.sweep import verdict
from capmodel.bench.sweep.config import BenchConfig
from capmodel.bench.sweep.files import read_steps
from capmodel.bench.sweep.sweep import run_sweep
from capmodel.bench.workload.definition import load_workload
from capmodel.cli import main
from capmodel.errors import BenchError
from tests.support.auth_server import auth_mongod as server_with_auth
from tests.support.auth_server import free_port

REPO = Path(__file__).resolve().parents[2]
DASK = str(Path(sys.executable).with_name("dask"))
DB = "capmodel_test_hosts"
SECRET = "Pw-of-the-Bench-8812"




class Cluster:
    """A scheduler and workers started as their own processes, with their logs in files."""

    def __init__(self, folder: Path, hosts=("127.0.0.2", "127.0.0.3"), pythonpath: str | None = None):
        self.folder, self.procs, self.logs = folder, [], []
        folder.mkdir(parents=True, exist_ok=True)
        port = free_port()
        self.address = f"tcp://127.0.0.1:{port}"
        self._start("scheduler", [DASK, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"])
        for host in hosts:
            self.add_worker(host, pythonpath)
        self.wait_for(len(hosts))

    def _start(self, name, argv, pythonpath=None):
        log = self.folder / f"{name}.log"
        env = {**os.environ, "PYTHONPATH": pythonpath or str(REPO)}
        self.procs.append(subprocess.Popen(argv, stdout=open(log, "w"), stderr=subprocess.STDOUT, env=env,
                                           stdin=subprocess.DEVNULL))
        self.logs.append(log)
        return self.procs[-1]

    def add_worker(self, host, pythonpath=None):
        return self._start(f"worker-{host}-{len(self.procs)}", [DASK, "worker", self.address, "--host", host,
                                                                "--nthreads", "1", "--nworkers", "1",
                                                                "--no-dashboard"], pythonpath)

    def client(self):
        from distributed import Client

        return Client(self.address, timeout=30, set_as_default=False)

    def wait_for(self, n, timeout=90):
        with self.client() as c:
            c.wait_for_workers(n, timeout=timeout)

    def worker_pids(self) -> dict:
        with self.client() as c:
            return c.run(os.getpid)

    def text(self) -> str:
        return "".join(p.read_text(errors="replace") for p in self.logs)

    def stop(self):
        """The workers first, then the scheduler: a worker stopped with its scheduler gone waits out its reconnect
        timeouts (about 8 s here against 2-3 s)."""
        for group in (self.procs[1:], self.procs[:1]):
            for p in group:
                if p.poll() is None:
                    p.terminate()
            for p in group:
                try:
                    p.wait(20)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("dask"))
    yield c
    c.stop()


@pytest.fixture(scope="module")
def auth_mongod(tmp_path_factory):
    """A mongod started with --auth and one user: its URI (with the password) and its process."""
    with server_with_auth(tmp_path_factory.mktemp("authdb"), SECRET) as (port, proc):
        yield f"mongodb://bench:{SECRET}@127.0.0.1:{port}/?authSource=admin", proc


def test_a_sweep_through_the_scheduler_spreads_over_two_hosts_and_leaks_no_password(cluster, auth_mongod, tmp_path,
                                                                                      capsys):
    uri, mongod = auth_mongod
    out = tmp_path / "hosts"
    code = main(["bench", "--uri", uri, "--scheduler", cluster.address, "--workload", "ycsb-c", "--records", "300",
                 "--concurrency", "2,5", "--duration", "1", "--warmup", "0.2", "--database", DB, "--out", str(out),
                 "--json"])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    steps = read_steps(out / "steps.jsonl")
    assert [s["status"] for s in steps] == ["ok", "ok"]
    for s in steps:
        # the coordinator's merged histogram holds exactly the operations the workers report, worker by worker
        merged = decode_histogram(s["histograms"]["read"]).get_total_count()
        assert merged == s["operations"] == sum(w["operations"] for w in s["workers"])
        assert sum(w["clients"] for w in s["workers"]) == s["concurrency"]
        assert s["effective_concurrency"] == pytest.approx(s["ops_per_s"] * s["latency"]["all"]["mean_ms"] / 1000)
    hosts = {w["address"].split("://")[1].rsplit(":", 1)[0] for w in steps[1]["workers"]}
    assert hosts == {"127.0.0.2", "127.0.0.3"}
    assert len(steps[1]["client_hosts"]) == 2 and all(h["server_on_host"] for h in steps[1]["client_hosts"].values())
    run = json.loads((out / "run.json").read_text())
    assert "2 Dask workers on 2 hosts" in run["clients"] and run["config"]["scheduler"] == cluster.address
    assert "shared_host_warning" in run  # the server runs on the load hosts' machine, and the run says so
    # the password is nowhere: not in the scheduler's or the workers' logs, the output files or what was printed
    assert SECRET not in cluster.text()
    for path in out.rglob("*"):
        assert SECRET not in path.read_text(errors="replace")
    assert SECRET not in printed.out + printed.err
    assert "bench:***@" in run["uri"]


def test_a_worker_without_a_route_to_the_server_names_itself_and_its_host(cluster, tmp_path):
    closed = free_port()
    cfg = BenchConfig(scheduler=cluster.address, server_selection_timeout_ms=500, timeout_ms=1000).check()
    executor = DaskExecutor(f"mongodb://bench:{SECRET}@127.0.0.1:{closed}/", cfg).start()
    try:
        w = load_workload("ycsb-c", records=10)
        result = executor.runner(DB, w.collection, w, 10).run(2, duration=0.5, warmup=0.0)
    finally:
        executor.close()
    assert result.runner_failures == 2 and result.operations == 0
    sample = result.error_samples["RunnerFailure"]
    assert "on host" in sample and "cannot reach MongoDB" in sample and f"127.0.0.1:{closed}" in sample
    assert any(f"tcp://127.0.0.{h}:" in sample for h in (2, 3)) and SECRET not in sample


def test_a_worker_killed_mid_step_fails_that_step_and_the_sweep_goes_on(cluster, mongod, tmp_path):
    cfg = BenchConfig(workload="ycsb-c", records=200, concurrency=[2, 4, 6], duration=1.5, warmup=0.2,
                      database=DB, scheduler=cluster.address, on_error="continue", calibrate=False)
    outcome = {}
    thread = threading.Thread(target=lambda: outcome.update(result=run_sweep(mongod.uri, cfg, tmp_path,
                                                                             progress=False)), daemon=True)
    thread.start()
    steps_path = tmp_path / "steps.jsonl"
    deadline = time.monotonic() + 90
    while not (steps_path.exists() and steps_path.read_text().count("\n") >= 1) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.8)  # inside the second step's 1.5 s window (1 s start lead + 0.2 s warm-up: 1.2 to 2.7 s)
    address, victim = max(cluster.worker_pids().items())
    os.kill(victim, signal.SIGKILL)
    thread.join(180)
    assert not thread.is_alive()
    steps = read_steps(steps_path)
    assert [s["concurrency"] for s in steps] == [2, 4, 6]
    assert steps[0]["status"] == "ok" and steps[2]["status"] == "ok"
    assert steps[1]["status"] == "failed" and "RunnerFailure" in steps[1]["errors"]
    assert address in steps[1]["failure"]
    cluster.wait_for(2)  # the nanny brought the worker back for the tests after this one


def test_a_worker_with_another_capmodel_version_is_named(tmp_path, mongod):
    other = tmp_path / "other"
    shutil.copytree(REPO / "capmodel", other / "capmodel", ignore=shutil.ignore_patterns("__pycache__", "_bundled"))
    init = other / "capmodel" / "__init__.py"
    init.write_text(init.read_text().replace('__version__ = "', '__version__ = "0.0.0-other+', 1))
    c = Cluster(tmp_path / "dask", hosts=("127.0.0.4",), pythonpath=str(other))
    try:
        with pytest.raises(BenchError) as info:
            DaskExecutor(mongod.uri, BenchConfig(scheduler=c.address).check()).start()
    finally:
        c.stop()
    message = str(info.value)
    assert "127.0.0.4" in message and "runs capmodel 0.0.0-other+" in message and "on host" in message


def test_a_lost_scheduler_ends_the_run_with_its_steps_kept(tmp_path, mongod):
    """``capmodel bench --scheduler`` as a user runs it: the scheduler killed after the first step ends the run with
    capmodel's one line on stderr (exit 2), Dask's CommClosedError tracebacks kept out of it, the steps kept."""
    c = Cluster(tmp_path / "dask", hosts=("127.0.0.5",))
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "capmodel.cli", "bench", "--uri", mongod.uri, "--workload", "ycsb-c", "--records",
            "200", "--concurrency", "2,3,4,5", "--duration", "1.5", "--warmup", "0.2", "--database", DB,
            "--scheduler", c.address, "--quiet", "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(REPO), RECONNECT_ENV: "3"}   # Dask reconnects 3 s, not 15 s (loopback)
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                stdin=subprocess.DEVNULL)
        steps_path = out / "steps.jsonl"
        deadline = time.monotonic() + 90
        while not (steps_path.exists() and steps_path.read_text().count("\n") >= 1) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1.0)
        c.procs[0].kill()  # the scheduler
        try:
            _, err = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            pytest.fail("the sweep hung after the scheduler died")
    finally:
        c.stop()
    assert proc.returncode == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("capmodel: error: "), err     # no Traceback, no CommClosedError
    assert "lost the Dask scheduler" in lines[0] and "--resume" in lines[0]
    steps = read_steps(steps_path)
    assert steps[0]["status"] == "ok"
    assert json.loads((out / "run.json").read_text())["status"] == "failed"


@pytest.mark.parametrize("name, read, default, good, bads, bounds", [
    (RECONNECT_ENV, reconnect_seconds, RECONNECT_S, (" 2.5 ", 2.5), ("0", "0.4", "601", "soon", "nan", "inf"),
     "from 0.5 to 600"),
    (START_LEAD_ENV, start_lead_seconds, START_LEAD_S, ("0.3", 0.3), ("0", "0.05", "61", "-1", "later", "nan"),
     "from 0.1 to 60"),
])
def test_the_dask_waits_are_read_from_the_environment_and_checked(monkeypatch, name, read, default, good, bads,
                                                                   bounds):
    monkeypatch.delenv(name, raising=False)
    assert read() == default == {RECONNECT_ENV: 15.0, START_LEAD_ENV: 1.0}[name]
    monkeypatch.setenv(name, good[0])
    assert read() == good[1]
    for bad in bads:
        monkeypatch.setenv(name, bad)
        with pytest.raises(BenchError, match=rf"\${name} must be a number of seconds {bounds}, got '{bad}'"):
            read()


def test_a_bad_start_lead_is_refused_before_a_cluster_starts(monkeypatch, mongod):
    monkeypatch.setenv(START_LEAD_ENV, "61")
    # refused before a cluster starts: the executor never reaches the (closed) scheduler address
    with pytest.raises(BenchError, match="START_LEAD_S must be"):
        DaskExecutor(mongod.uri, BenchConfig(scheduler=f"tcp://127.0.0.1:{free_port()}").check()).start()


# --- the verdict, on figures computed by hand ------------------------------------------------------------------------

def _result(concurrency=16, ops_per_s=1000.0, mean_ms=10.0, workers=()):
    return StepResult(concurrency=concurrency, mode="closed", seconds=2.0, operations=2000, documents=2000,
                      throughput=ops_per_s, ops_per_s=ops_per_s, errors={}, latency={"all": {"mean_ms": mean_ms}},
                      histograms={}, started_at="", wall_seconds=3.0, workers=list(workers))


def _worker(host="a", cpu=0.3, host_cpu=0.3, server=False):
    return {"address": f"tcp://{host}:1", "host": host, "clients": 8, "cpu_cores": cpu, "host_cpu": host_cpu,
            "host_cores": 4, "server_on_host": server, "operations": 1000}


def test_littles_law_flags_clients_that_were_not_in_flight():
    # 1,000 ops/s x 10 ms = 10 clients in flight on average, of 16: 62.5% (< 80%)
    little = verdict.effective_concurrency(_result())
    assert little["effective_concurrency"] == pytest.approx(10.0) and little["ratio"] == pytest.approx(0.625)
    assert any("Little's law" in r and "10.0 of 16" in r for r in verdict.client_bound_reasons(_result(), None))
    # 1,000 ops/s x 15 ms = 15 of 16 (94%): no flag
    assert not verdict.client_bound_reasons(_result(mean_ms=15.0, workers=[_worker()]), None)


def test_client_bound_per_process_and_per_host():
    gil = verdict.client_bound_reasons(_result(mean_ms=16.0, workers=[_worker(cpu=0.9), _worker(cpu=0.2)]), None)
    assert len(gil) == 1 and "1 of 2 client processes" in gil[0] and "0.90" in gil[0]
    busy = verdict.client_bound_reasons(_result(mean_ms=16.0, workers=[_worker(host="b", host_cpu=0.95,
                                                                               server=True)]), None)
    assert len(busy) == 1 and "client host b" in busy[0] and "shared with the server" in busy[0] and "95%" in busy[0]
    ceiling = verdict.client_bound_reasons(_result(mean_ms=16.0, workers=[_worker()]), ceiling=1200.0)
    assert len(ceiling) == 1 and "client ceiling 1,200" in ceiling[0]  # 1,000 >= 80% of 1,200


def test_a_long_silence_fails_a_closed_loop_step():
    r = _result()
    r.seconds, r.longest_silence_s, r.in_flight_at_end = 8.0, 4.5, 16
    assert "no operation completed for 4.5 s of the 8.0 s window" in verdict.failure(r, 0.05, {})
    r.longest_silence_s = 1.9  # under both 2 s and a quarter of the window
    assert verdict.failure(r, 0.05, {}) is None


def test_the_cli_quiets_dasks_loggers_unless_debugging(monkeypatch):
    """``fleet`` calls it as ``bench`` does (the run above shows the effect on a real lost scheduler)."""
    import logging

    from capmodel.bench.cluster.dask_logs import DASK_LOGGERS, quiet_dask_logs

    before = {name: logging.getLogger(name).level for name in DASK_LOGGERS}
    try:
        # Dask's own set-up (WARNING), as a fresh process has it: an earlier in-process CLI call of this session
        # may have quieted them already
        import distributed  # noqa: F401

        for name in DASK_LOGGERS:
            logging.getLogger(name).setLevel(logging.WARNING)
        monkeypatch.setenv("CAPMODEL_DEBUG", "1")
        assert quiet_dask_logs() is False
        assert all(logging.getLogger(name).level == logging.WARNING for name in DASK_LOGGERS)
        monkeypatch.delenv("CAPMODEL_DEBUG")
        assert quiet_dask_logs() is True
        assert all(logging.getLogger(name).getEffectiveLevel() == logging.CRITICAL
                   for name in (*DASK_LOGGERS, "distributed.comm", "distributed.worker"))
    finally:
        for name, level in before.items():
            logging.getLogger(name).setLevel(level)
