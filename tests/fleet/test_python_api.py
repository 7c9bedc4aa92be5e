"""The estate's Python API (``fleet_table``, ``observe_ftdc_members``) given one folder as a string takes it as that
folder, not as its characters; given no folder it is refused before any work (no Dask cluster started)."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from capmodel.errors import InputError
from capmodel.observe import synthetic
from capmodel.observe.fleet import fleet_table
from capmodel.observe.folders import server_folders
from capmodel.observe.members import observe_ftdc_members


@pytest.fixture(scope="module")
def parent(tmp_path_factory):
    parent = tmp_path_factory.mktemp("h8api")
    for i, rate in enumerate((1500.0, 600.0)):
        synthetic.write_server(synthetic.SyntheticServer(
            host=f"m{i}:27017", replica_set="rs", hours=0.1, start=dt.datetime(2026, 11, 2, tzinfo=dt.timezone.utc),
            mean_rate=rate, filler_metrics=3, chunks_per_file=2, seed=i), parent / f"m{i}" / "diagnostic.data")
    return parent


@pytest.mark.parametrize("given", [str, Path])
def test_one_folder_given_as_itself_is_that_folder(parent, given):
    assert server_folders(given(parent)) == [parent / "m0" / "diagnostic.data", parent / "m1" / "diagnostic.data"]
    observed = observe_ftdc_members(given(parent))
    assert [m.host for m in observed.members] == ["m0:27017", "m1:27017"]
    assert observed.limiting.host == "m0:27017"          # generated 2.5 times as busy on the same cores and demand


@pytest.mark.parametrize("call", [server_folders, observe_ftdc_members, fleet_table])
def test_no_folder_is_refused_before_any_work(call):
    with pytest.raises(InputError, match="no folder given"):
        call([])
