"""``observe --ftdc`` (and the fleet) on a day whose server clock was set back while mongod ran: the uptime runs on
regardless of the clock, and where the two disagree the interval across the change is dropped and said (not joined
into one interval of hundreds of thousands of ops/s on a server generated at 1,000 ops/s)."""
from __future__ import annotations

import datetime as dt
import json

import numpy as np
import pytest

from capmodel.cli import main
from capmodel.observe import synthetic

START = dt.datetime(2026, 11, 2, tzinfo=dt.timezone.utc)
RATE = 1000.0
BACK_MS = 600_000            # the clock set back ten minutes ...
AT = 900                     # ... after the 900th second


@pytest.fixture(scope="module")
def clock_set_back(tmp_path_factory):
    day = synthetic._day

    def set_back(server):
        seconds = day(server)
        seconds.times_ms[AT:] -= BACK_MS
        return seconds

    folder = tmp_path_factory.mktemp("h8clock") / "clk" / "diagnostic.data"
    with pytest.MonkeyPatch.context() as patch:        # the generator's clock, not the reader, is changed
        patch.setattr(synthetic, "_day", set_back)
        synthetic.write_server(synthetic.SyntheticServer(
            host="clk:27017", hours=0.5, start=START, mean_rate=RATE, daily_amplitude=0.0, filler_metrics=3,
            chunks_per_file=2, seed=3), folder)
    return folder


def test_the_interval_across_a_clock_set_back_is_dropped_and_said(clock_set_back, tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["observe", "--ftdc", str(clock_set_back), "--out", str(out), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["dropped"] == {"clock_jump": 1}
    said = [n for n in result["notes"] if "clock moved otherwise than its uptime" in n]
    assert said and "the uptime ran 601 s, the clock 1 s" in said[0]
    import pandas as pd

    curve = pd.read_csv(out / "curve.csv")
    # every kept interval is one second of Poisson arrivals at 1,000 ops/s: far below 2,000 (before: 655,334)
    assert curve["throughput"].max() < 2 * RATE
    assert np.isclose(curve["throughput"].median(), RATE, rtol=0.05)


def test_a_clean_day_and_a_restart_are_not_called_clock_changes(tmp_path, capsys):
    for i in range(2):          # a restart after 15 minutes: the uptime falls, which the counters already say
        synthetic.write_server(synthetic.SyntheticServer(
            host="rst:27017", hours=0.25, start=START + dt.timedelta(minutes=20 * i), filler_metrics=3,
            chunks_per_file=2, seed=3 + i, pid=100 + i), tmp_path / "rst")
    assert main(["observe", "--ftdc", str(tmp_path / "rst"), "--out", str(tmp_path / "o"), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["dropped"] == {"counter_reset": 1} and not result["notes"]
