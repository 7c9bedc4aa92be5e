"""``observe_ftdc_into`` (what ``capmodel observe --ftdc`` runs: the tables written a block of intervals at a time as
the FTDC is read) writes the very bytes ``observe_ftdc(...).write`` writes from the whole tables, and its
``Observation`` says the same: on days whose blocks cross a clock set forward, a restart, an interim file repeating an
archive, files out of time order (read whole), a host's cores from the metadata or from ``systemMetrics``, and a
``--since``/``--until`` window. Blocks of 50 intervals make each day many blocks."""
from __future__ import annotations

import datetime as dt
import json
import shutil

import numpy as np
import pytest

from capmodel.observe import ftdc, observation, server_capacity, serverstatus, synthetic
from capmodel.observe.columns import Coded
from capmodel.observe.observation import bundled_sample, observe_ftdc, observe_ftdc_into

START = dt.datetime(2026, 11, 2, tzinfo=dt.timezone.utc)


def _server(folder, seed: int = 3, start=START, hours: float = 0.3, pid: int = 4242, **changes):
    return synthetic.write_server(synthetic.SyntheticServer(
        host="s:27017", hours=hours, start=start, mean_rate=800.0, filler_metrics=3, chunks_per_file=2,
        samples_per_chunk=70, seed=seed, pid=pid, **changes), folder)


def _clock_set_forward(folder):
    day = synthetic._day

    def set_forward(server):
        seconds = day(server)
        seconds.times_ms[500:] += 600_000              # the clock set forward ten minutes after 500 s
        return seconds

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(synthetic, "_day", set_forward)
        return _server(folder)


def _restart(folder):
    _server(folder, seed=3)
    return _server(folder, seed=4, start=START + dt.timedelta(minutes=25), pid=4343)


def _interim_repeating(folder):
    _server(folder)
    archives = ftdc.ftdc_files(folder)
    shutil.copyfile(archives[-1], folder / ftdc.INTERIM_NAME)     # the newest archive's samples, again
    return folder


def _out_of_order(folder):
    _server(folder / "late", start=START + dt.timedelta(hours=1))
    _server(folder / "early", seed=4)
    folder.mkdir(exist_ok=True)
    (late,), (early,) = (ftdc.ftdc_files(folder / name)[:1] for name in ("late", "early"))
    late.rename(folder / "metrics.2026-11-02T00-00-00Z-00000")   # the later hour's file named first
    early.rename(folder / "metrics.2026-11-02T00-00-00Z-00001")
    return folder


DAYS = {"clock set forward": (_clock_set_forward, {}), "restart": (_restart, {}),
        "interim repeating an archive": (_interim_repeating, {}), "files out of time order": (_out_of_order, {}),
        "systemMetrics cores, a window": (None, {"since": "2026-11-24T03:28:40Z", "until": "2026-11-24T03:29:40Z"})}


@pytest.fixture(params=list(DAYS))
def day(request, tmp_path, monkeypatch):
    monkeypatch.setattr(observation, "_BLOCK", 50)
    make, window = DAYS[request.param]
    path = bundled_sample()["path"] if make is None else make(tmp_path / "diagnostic.data")
    return request.param, path, window


def test_the_streamed_tables_are_the_whole_tables_bytes(day, tmp_path):
    name, path, window = day
    whole = observe_ftdc(path, **window)
    whole.write(tmp_path / "whole")
    streamed = observe_ftdc_into(path, tmp_path / "streamed", **window)
    assert len(whole.tables["samples"]) > 2 * observation._BLOCK or window    # several blocks (the window: a few)
    for table in ("samples.csv", "curve.csv"):
        assert (tmp_path / "streamed" / table).read_bytes() == (tmp_path / "whole" / table).read_bytes(), table
    record = {side: json.loads((tmp_path / side / "observe.json").read_text()) for side in ("whole", "streamed")}
    assert record["streamed"] == record["whole"]
    assert streamed.notes == whole.notes
    assert (len(streamed.tables["samples"]), len(streamed.tables["curve"])) == \
        (len(whole.tables["samples"]), len(whole.tables["curve"]))
    assert (streamed.dropped, streamed.start, streamed.end) == (whole.dropped, whole.start, whole.end)
    assert streamed.summary() == whole.summary()
    assert server_capacity(streamed.tables["samples"]).to_json() == server_capacity(whole.tables["samples"]).to_json()
    if name != "files out of time order":       # read whole there: held as observe_ftdc holds them
        held = streamed.tables["samples"]
        narrowed = [isinstance(held.data[column], Coded) or held.data[column].strides == (0,)
                    for column in held.names if column not in ("time", "dropped")]
        assert all(narrowed) and set(held.names) < set(whole.tables["samples"].names)


def test_a_coded_column_gives_back_its_values_and_a_negative_zero_is_not_coded():
    values = np.array([0.5, np.nan, 1e-7, 0.5, 3.0, np.nan])
    coded = Coded.of(values)
    assert isinstance(coded, Coded) and coded.codes.dtype == np.uint16
    assert np.array_equal(coded.decoded(), values, equal_nan=True)
    assert np.array_equal(Coded.of(values, np.array([1e-7, 0.5, 3.0, np.nan])).decoded(), values, equal_nan=True)
    assert Coded.of(values, np.array([0.5, 3.0])) is values          # a value not among those given
    signed = np.array([0.0, -0.0, 1.0])
    assert Coded.of(signed) is signed


def test_the_days_meet_what_they_are_named_for(day):
    name, path, window = day
    whole = observe_ftdc(path, **window)
    if name == "clock set forward":
        assert whole.dropped.get(serverstatus.CLOCK_JUMP) == 1
    if name == "restart":
        assert whole.dropped.get(serverstatus.COUNTER_RESET) == 1
    if name == "interim repeating an archive":
        times = ftdc.read_metric_columns(path, {}, time_metric=serverstatus.FTDC_TIME)["time_ms"]
        repeated = ftdc.read_metric_columns(ftdc.ftdc_files(path)[-1], {}, time_metric=serverstatus.FTDC_TIME)
        assert np.isin(repeated["time_ms"], times).all() and len(whole.tables["samples"]) == len(times) - 1
    blocks = ftdc.metric_blocks(path, serverstatus.ftdc_metrics(), time_metric=serverstatus.FTDC_TIME, rows=50,
                                **window)
    if name == "files out of time order":
        with pytest.raises(ftdc.SamplesOutOfOrder):
            list(blocks)
    else:
        assert sum(len(block) for block in blocks) == len(whole.tables["samples"]) + 1
    cores = whole.tables["samples"]["cores"]
    assert (cores == (1.0 if window else 4.0)).all()     # systemMetrics' count, else the metadata's hostInfo


def test_the_samples_and_curve_read_back_are_the_whole_tables(day, tmp_path):
    """The written files read back: every column, the same values (a column of whole numbers comes back as
    integers, as ``read_observation`` reads it)."""
    name, path, window = day
    whole = observe_ftdc(path, **window)
    streamed = observe_ftdc_into(path, tmp_path / "o", **window)
    for table in ("samples", "curve"):
        theirs, ours = getattr(whole, table), getattr(streamed, table)
        assert list(ours.columns) == list(theirs.columns)
        for column in ours.columns:
            if column == "time":
                assert (ours[column] == theirs[column]).all()
            elif column in ("dropped", "source"):
                assert ours[column].tolist() == theirs[column].tolist(), column
            else:
                assert np.array_equal(ours[column].to_numpy(dtype=float), theirs[column].to_numpy(dtype=float),
                                      equal_nan=True), column
