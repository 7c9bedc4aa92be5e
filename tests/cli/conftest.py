"""Fixtures shared by the cli tests: ``members``, the FTDC folders of two synthetic replica-set members (4 cores,
0.2 and 0.4 ms of CPU per operation), read by the capacity options' tests and their wording tests alike."""
from __future__ import annotations

import datetime as dt

import pytest

from capmodel.observe import synthetic

START = dt.datetime(2026, 11, 2, tzinfo=dt.timezone.utc)


@pytest.fixture(scope="session")
def members(tmp_path_factory):
    parent = tmp_path_factory.mktemp("h5opt")
    return [synthetic.write_server(synthetic.SyntheticServer(
        host=f"m{i}:27017", replica_set="rsO", cores=4, cpu_ms_per_op=demand, mean_rate=1500.0, hours=0.5,
        start=START, seed=i, filler_metrics=5, pid=900 + i), parent / f"m{i}" / "diagnostic.data")
        for i, demand in enumerate((0.2, 0.4))]
