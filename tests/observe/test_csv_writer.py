"""``capmodel.observe.csv_out.write_csv`` (behind ``Observation.write``): what pandas reads back is the table written,
value for value, exactly (checked against pandas' own ``to_csv`` of the same table), and every float is written as
Arrow's CSV writer (double-conversion's shortest form) writes it, checked against pyarrow itself."""
from __future__ import annotations

import numpy as np
import pandas as pd

import pytest

from capmodel.observe.columns import Columns
from capmodel.observe.csv_out import format_floats, write_csv

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


def _arrow_text(values: np.ndarray) -> list[str]:
    """What pyarrow's CSV writer (C++, double-conversion) writes for each float: the reference for the layout."""
    import io

    pa = pytest.importorskip("pyarrow")
    pacsv = pytest.importorskip("pyarrow.csv")
    out = io.BytesIO()
    pacsv.write_csv(pa.table({"x": pa.array(values, from_pandas=True)}), out,
                    pacsv.WriteOptions(include_header=False, quoting_style="none"))
    return out.getvalue().decode().splitlines()


def test_every_float_is_written_as_arrows_writer_writes_it():
    rng = np.random.default_rng(11)
    mantissas = rng.random(20_000) * 10 * rng.choice([-1.0, 1.0], 20_000)
    values = np.concatenate([
        mantissas * 10.0 ** rng.integers(-320, 308, 20_000),          # every decade a double can reach
        np.round(mantissas * 10.0 ** rng.integers(0, 12, 20_000)),    # whole numbers across the 1e10 boundary
        [0.0, -0.0, 1e-7, 1e-6, 1.5e-5, 1e-4, 9999999999.5, 1e10, 2.0 ** 53, 1e16, 1e21, 5e-324,
         1.7976931348623157e308, np.inf, -np.inf, np.nan, 0.1 + 0.2, 123456.789e3],
    ])
    assert format_floats(values) == ["" if v != v else t for v, t in zip(values, _arrow_text(values))]


def test_a_columns_repeated_values_and_its_negative_zeros_are_written_alike(tmp_path):
    """A column of repeated values is formatted once per distinct value; the text is the same as value by value."""
    repeated = np.tile([0.25, 1 / 3, 1e12, np.nan, 7.0, 1e-7], 500)
    with_negative_zero = repeated.copy()
    with_negative_zero[::7] = -0.0
    for values in (repeated, with_negative_zero):
        write_csv(Columns({"x": values}), tmp_path / "x.csv", FORMAT)
        assert (tmp_path / "x.csv").read_text().splitlines()[1:] == _arrow_text(values)


def test_text_needing_quotes_quotes_every_text_cell_as_arrow_does(tmp_path):
    table = Columns({"time": np.array([0, 1500], dtype="datetime64[ms]"), "n": np.array([1.5, np.nan]),
                     "note": np.array(["a, b", ""], dtype=object), "flag": np.array([True, False])})
    write_csv(table, tmp_path / "q.csv", FORMAT)
    assert (tmp_path / "q.csv").read_text().splitlines() == [
        "time,n,note,flag", '"1970-01-01T00:00:00.000000Z",1.5,"a, b","True"',
        '"1970-01-01T00:00:01.500000Z",,"","False"']
