"""``capmodel.observe.csv_out.write_csv`` (pyarrow's CSV writer behind ``Observation.write``): what pandas reads back
is the table written, value for value, exactly; checked against pandas' own ``to_csv`` of the same table."""
from __future__ import annotations

import numpy as np
import pandas as pd

from capmodel.observe.csv_out import write_csv

FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def _table() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    awkward = [0.1 + 0.2, 1e-300, 1e300, 2.0 ** 53 + 2, -0.0, 5e-324, 1 / 3, np.nan, 123456789.125, -1e-05]
    return pd.DataFrame({
        "time": pd.to_datetime(1_700_000_000_123 + np.arange(10) * 100, unit="ms", utc=True),
        "whole": np.arange(10, dtype=float) * 1e6,
        "awkward": awkward,
        "random": rng.standard_normal(10) * 10.0 ** rng.integers(-30, 30, 10),
        "count": np.arange(10, dtype=np.int64) * (2 ** 40),
        "flag": [True, False] * 5,
        "dropped": ["", "counter_reset", "no_operations", "", "a, b", 'say "x"', "", "", "", ""],
        "member": pd.Categorical(["h1:27017", "h2:27017"] * 5),
        "waited": pd.to_timedelta(np.arange(10), unit="s"),
        "maybe": pd.array([1, None] * 5, dtype="Int64"),
    })


def test_pandas_reads_back_exactly_what_pandas_own_writer_gives(tmp_path):
    table = _table()
    write_csv(table, tmp_path / "fast.csv", FORMAT)
    table.to_csv(tmp_path / "pandas.csv", index=False, date_format=FORMAT)
    fast, slow = pd.read_csv(tmp_path / "fast.csv"), pd.read_csv(tmp_path / "pandas.csv")
    assert list(fast.columns) == list(table.columns)
    pd.testing.assert_frame_equal(fast, slow, check_dtype=False, check_exact=True)
    assert fast["time"].tolist()[:2] == ["2023-11-14T22:13:20.123000Z", "2023-11-14T22:13:20.223000Z"]
    assert np.array_equal(fast["awkward"].to_numpy(float), table["awkward"].to_numpy(), equal_nan=True)


def test_a_table_without_rows_keeps_its_header(tmp_path):
    write_csv(pd.DataFrame(columns=["time", "interval_s", "dropped"]), tmp_path / "empty.csv", FORMAT)
    assert (tmp_path / "empty.csv").read_text().splitlines() == ["time,interval_s,dropped"]
