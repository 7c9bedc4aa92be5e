"""Fixtures shared by the queueing tests: ``observed``, a capmodel observe folder of a synthetic 4-core server,
read by the mva what-if tests and their wording tests alike."""
from __future__ import annotations

import datetime as dt

import pytest

from capmodel.cli import main
from capmodel.observe import synthetic


@pytest.fixture(scope="session")
def observed(tmp_path_factory):
    parent = tmp_path_factory.mktemp("h5mva")
    server = synthetic.SyntheticServer(host="m1:27017", cores=4, hours=0.5, filler_metrics=5,
                                       start=dt.datetime(2026, 11, 2, tzinfo=dt.timezone.utc))
    folder = synthetic.write_server(server, parent / "ftdc" / "diagnostic.data")
    assert main(["observe", "--ftdc", str(folder), "--out", str(parent / "obs")]) == 0
    return parent / "obs"
