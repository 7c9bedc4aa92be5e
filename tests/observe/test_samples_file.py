"""``read_samples``, the one reader of observe's ``samples.csv``: a written observation reads back with its rows,
its times as UTC timestamps and its ``dropped`` cells as text; a size bound and binary content are refused by name.
Report 07 (``read_observation``), a resumed recording and ``mva --observed`` read the file through it."""
from __future__ import annotations

import pandas as pd
import pytest

from capmodel.commands._mva_observed import observed_samples
from capmodel.errors import InputError
from capmodel.observe import bundled_sample, observe_ftdc, read_observation
from capmodel.observe.observation import read_samples


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    sample = bundled_sample()
    observation = observe_ftdc(sample["path"], sample["since"], sample["until"])
    folder = tmp_path_factory.mktemp("observed")
    observation.write(folder)
    return observation, folder


def test_a_written_observation_reads_back(written):
    observation, folder = written
    samples = read_samples(folder / "samples.csv")
    assert len(samples) == len(observation.samples)
    assert str(samples["time"].dt.tz) == "UTC"
    assert (samples["time"] == pd.to_datetime(observation.samples["time"], utc=True)).all()
    assert samples["dropped"].map(type).eq(str).all()
    pd.testing.assert_series_equal(samples["reads_per_s"], observation.samples["reads_per_s"], check_names=False,
                                   rtol=1e-12)


def test_its_callers_read_the_same_table(written):
    _, folder = written
    one = read_samples(folder / "samples.csv")
    pd.testing.assert_frame_equal(read_observation(folder).samples.reset_index(drop=True), one)
    pd.testing.assert_frame_equal(observed_samples(str(folder)), one)


def test_a_size_bound_and_binary_content_are_refused_by_name(written, tmp_path):
    _, folder = written
    path = folder / "samples.csv"
    with pytest.raises(InputError, match=rf"{path}: [\d,]+ bytes is more than the 100 this file may have"):
        read_samples(path, max_bytes=100)
    binary = tmp_path / "samples.csv"
    binary.write_bytes(b"time,interval_s\n\x00\x01")
    with pytest.raises(InputError, match=r"binary content, not text \(NUL byte at byte offset 16\)"):
        read_samples(binary, max_bytes=1000)
