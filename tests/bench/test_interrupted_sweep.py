"""Interrupting a sweep that runs its clients in processes (``capmodel bench --processes 2``, a local Dask cluster):
Ctrl-C to the process group, or SIGTERM to the coordinator alone, ends the sweep with the steps it completed and
leaves no client process behind."""
from __future__ import annotations

import json
import os
import time

import psutil

from capmodel.bench.sweep.files import read_steps

DB = "capmodel_test_interrupted"


def _sweep_with_a_cluster(mongod, out):
    """A `capmodel bench --processes 2` process in its own session, once its first step is written; returns it and
    its children (the local cluster's nannies and workers)."""
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "capmodel.cli", "bench", "--uri", mongod.uri, "--workload",
                             "ycsb-c", "--records", "200", "--concurrency", "2,4,6,8", "--processes", "2",
                             "--duration", "1", "--warmup", "0.2", "--out", str(out), "--database", DB, "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (out / "steps.jsonl").exists():
        time.sleep(0.05)
    return proc, psutil.Process(proc.pid).children(recursive=True)


def test_ctrl_c_of_a_process_sweep_leaves_no_client_process(mongod, tmp_path):
    """Ctrl-C in a terminal reaches the whole process group: the sweep ends with capmodel's one line, exit 130, and
    no worker process of the local cluster is left."""
    import signal

    out = tmp_path / "interrupted"
    proc, clients = _sweep_with_a_cluster(mongod, out)
    assert len(clients) >= 2
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    # one line, capmodel's: the workers leave Ctrl-C to the coordinator (no worker's KeyboardInterrupt traceback)
    assert proc.returncode == 130 and len(err.splitlines()) == 1 and err.startswith("capmodel: interrupted"), err
    assert len(read_steps(out / "steps.jsonl")) >= 1
    psutil.wait_procs(clients, timeout=10)
    assert not any(c.is_running() and c.status() != psutil.STATUS_ZOMBIE for c in clients)


def test_sigterm_to_the_coordinator_alone_leaves_no_client_process(mongod, tmp_path):
    """SIGTERM sent to capmodel alone (a service manager, ``kill PID``) stops the sweep as Ctrl-C does: the cluster
    is closed, no client process is left, and run.json records the run as interrupted (not 'running')."""
    import signal

    out = tmp_path / "terminated"
    proc, clients = _sweep_with_a_cluster(mongod, out)
    assert len(clients) >= 2
    os.kill(proc.pid, signal.SIGTERM)  # the coordinator only, not its process group
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "interrupted" in err
    assert json.loads((out / "run.json").read_text())["status"] == "interrupted"
    psutil.wait_procs(clients, timeout=15)
    assert not any(c.is_running() and c.status() != psutil.STATUS_ZOMBIE for c in clients)
