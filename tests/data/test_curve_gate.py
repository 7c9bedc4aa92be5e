"""validate_curve and require_points: the single gate for curve tables, and the messages users see from it."""
import numpy as np
import pandas as pd
import pytest

from capmodel.data.curve import require_points, validate_curve
from capmodel.errors import CapmodelError, InputError


def _curve(**extra):
    data = {"concurrency": [1, 2, 4], "throughput": [100, 190, 350]}
    data.update(extra)
    return pd.DataFrame(data)


def test_clean_table_comes_back_as_floats_in_measured_order():
    df = pd.DataFrame({"concurrency": ["4", "1", "2"], "throughput": [350, 100, 190], "system": ["a", "a", "a"]},
                      index=[10, 11, 12])
    out = validate_curve(df)
    assert out["concurrency"].tolist() == [4.0, 1.0, 2.0]  # order kept, text numbers converted
    assert out["concurrency"].dtype == float and out["throughput"].dtype == float
    assert out.index.tolist() == [0, 1, 2]
    assert out["system"].tolist() == ["a", "a", "a"]
    assert df["concurrency"].tolist() == ["4", "1", "2"]  # the caller's table is not modified


def test_optional_columns_may_have_gaps_but_not_text():
    out = validate_curve(_curve(latency_p99_ms=[1.0, None, 3.0]))
    assert np.isnan(out["latency_p99_ms"].iloc[1])
    with pytest.raises(InputError, match=r"f\.csv: column 'latency_p99_ms', row 3: 'slow' is not a number"):
        validate_curve(_curve(latency_p99_ms=[1.0, 2.0, "slow"]), source="f.csv")


@pytest.mark.parametrize(
    "column, values, message",
    [
        ("concurrency", [1, 0, 4], "column 'concurrency', row 2: 0 must be > 0"),
        ("concurrency", [1, 2, -3], "column 'concurrency', row 3: -3 must be > 0"),
        ("concurrency", [1, None, 4], "column 'concurrency', row 2: value is missing (NaN)"),
        ("throughput", [100, -1, 300], "column 'throughput', row 2: -1 must be >= 0"),
        ("throughput", [np.inf, 1, 2], "column 'throughput', row 1: value is infinite"),
        ("throughput", ["1e3", "fast", 3], "column 'throughput', row 2: 'fast' is not a number"),
    ],
)
def test_required_column_errors_name_source_column_and_row(column, values, message):
    df = _curve()
    df[column] = values
    with pytest.raises(InputError) as err:
        validate_curve(df, source="runs/lab.csv")
    assert str(err.value) == f"runs/lab.csv: {message}"


@pytest.mark.parametrize(
    "column, values, message",
    [
        ("cpu_util", [0.2, 1.5, 0.9], "column 'cpu_util', row 2: 1.5 must be a fraction 0-1"),
        ("latency_mean_ms", [1.0, 2.0, -0.5], "column 'latency_mean_ms', row 3: -0.5 must be >= 0"),
        ("errors", [0, -2, 0], "column 'errors', row 2: -2 must be >= 0"),
        ("latency_read_p99_ms", [1.0, "x", 2.0], "column 'latency_read_p99_ms', row 2: 'x' is not a number"),
        ("latency_update_mean_ms", [-1.0, 1.0, 2.0], "column 'latency_update_mean_ms', row 1: -1 must be >= 0"),
    ],
)
def test_optional_column_errors(column, values, message):
    with pytest.raises(InputError) as err:
        validate_curve(_curve(**{column: values}), source="d")
    assert str(err.value) == f"d: {message}"


def test_missing_required_column_lists_present_columns_and_option():
    df = pd.DataFrame({"threads": [1, 2], "throughput": [1, 2]})
    with pytest.raises(InputError) as err:
        validate_curve(df, source="x.csv")
    assert str(err.value) == ("x.csv: missing column 'concurrency' (columns present: threads, throughput); "
                              "map it with --concurrency COL")


def test_repeated_column_names_are_refused():
    df = pd.DataFrame([[1, 10, 20]], columns=["concurrency", "throughput", "throughput"])
    with pytest.raises(InputError, match=r"x: column name\(s\) 'throughput' appear more than once"):
        validate_curve(df, source="x")


def test_min_points_and_message_without_source():
    with pytest.raises(InputError) as err:
        validate_curve(_curve(), min_points=5)
    assert str(err.value) == "3 data rows, need at least 5"
    assert len(validate_curve(_curve(), min_points=3)) == 3


def test_not_a_table():
    with pytest.raises(InputError, match="expected a table \\(pandas DataFrame\\), got dict"):
        validate_curve({"concurrency": [1]})


def test_errors_belong_to_the_capmodel_family():
    with pytest.raises(CapmodelError):
        validate_curve(_curve(concurrency=[0, 1, 2]))
    with pytest.raises(ValueError):  # InputError is also a ValueError, for callers that catch that
        validate_curve(_curve(concurrency=[0, 1, 2]))


def test_require_points_needs_more_points_than_parameters():
    require_points(_curve(), n_params=2, model="Amdahl")  # 3 points > 2 parameters: fine
    with pytest.raises(InputError) as err:
        require_points(_curve(), n_params=3, model="USL", source="lab.csv")
    assert str(err.value) == "lab.csv: 3 points cannot fit USL with 3 parameters; measure at least 4 points"
