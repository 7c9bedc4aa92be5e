"""``capmodel fleet`` on servers that report one host name over one window (containers all called ``mongo:27017``,
started together): two different servers are two rows, a true copy of one of them is still counted once; and the
embedded cluster's workers log nothing below critical on the user's terminal."""
from __future__ import annotations

import datetime as dt
import json
import shutil

import pytest

from capmodel.cli import main
from capmodel.observe import synthetic

START = dt.datetime(2026, 11, 2, tzinfo=dt.timezone.utc)


def _server(demand, seed):
    return synthetic.SyntheticServer(host="mongo:27017", replica_set="rs0", cores=4, cpu_ms_per_op=demand,
                                     mean_rate=1500.0, hours=0.5, start=START, seed=seed, filler_metrics=5,
                                     pid=1)    # pid 1: a container's mongod


def test_namesakes_over_one_window_are_two_servers_and_a_copy_is_still_one(tmp_path, capsys):
    light, heavy = _server(0.2, 1), _server(0.6, 2)
    folders = {"light": synthetic.write_server(light, tmp_path / "light" / "diagnostic.data"),
               "heavy": synthetic.write_server(heavy, tmp_path / "heavy" / "diagnostic.data")}
    shutil.copytree(folders["light"], tmp_path / "light-copy" / "diagnostic.data")
    assert main(["fleet", str(tmp_path), "--workers", "1", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["servers"], result["copies"], result["failed"]) == (2, 1, 0)
    ranked = {r["folder"]: r for r in result["rows"] if r["error"] is None}
    assert set(ranked) == {str(folders["light"]), str(folders["heavy"])}
    for name, server in (("light", light), ("heavy", heavy)):
        # the operational laws' capacity, a lower bound (the background counted as the operations' work)
        # (0.02 cores of background over ~1,000 ops/s: ~0.02 ms more per operation, ~10% less capacity)
        assert 0.8 * server.capacity <= ranked[str(folders[name])]["capacity_ops"] <= 1.01 * server.capacity
    (copy,) = [r for r in result["rows"] if r["duplicate_of"] is not None]
    assert copy["duplicate_of"] == str(folders["light"]) and copy["folder"].endswith("light-copy/diagnostic.data")
    # the text says which folder is which, since both rows carry one name
    said = [r["notes"] for r in ranked.values() if r["notes"]]
    assert len(said) == 1 and "reports the same name" in said[0]


def test_the_embedded_workers_log_nothing_below_critical_to_the_terminal():
    # before: their handlers passed ERROR, and a heartbeat that failed while the cluster closed printed
    # "distributed.worker - ERROR - Failed to communicate with scheduler during heartbeat" and a traceback
    import logging

    from capmodel.observe.fleet_cluster import dask_client

    def levels():
        return [h.level for h in logging.getLogger("distributed").handlers if isinstance(h, logging.StreamHandler)]

    with dask_client(None, 1) as (client, _):
        (worker_levels,) = client.run(levels).values()
    assert worker_levels and min(worker_levels) >= logging.CRITICAL
