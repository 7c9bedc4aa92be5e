"""read_curve: every file format, column mapping (explicit and automatic), and the error messages users see."""
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import capmodel
from capmodel.data.readers import detect_format, read_curve
from capmodel.errors import InputError

FIX = Path(__file__).parent / "fixtures"


def _csv(tmp_path, text, name="curve.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


# --- CSV and mapping ------------------------------------------------------------------------------------------------

def test_explicit_mapping_renames_columns_to_curve_names():
    curve = read_curve(FIX / "curve_threads.csv", concurrency="threads", throughput="ops_per_sec",
                       latency_p95_ms="p95", latency_p99_ms="p99")
    assert list(curve.columns) == ["concurrency", "throughput", "latency_p95_ms", "latency_p99_ms", "system"]
    np.testing.assert_array_equal(curve["concurrency"], [1, 2, 4, 8, 16, 32])
    np.testing.assert_array_equal(curve["throughput"], [980.5, 1890.0, 3520.25, 6010.0, 8100.0, 8650.5])
    np.testing.assert_array_equal(curve["latency_p99_ms"], [2.0, 2.4, 3.1, 4.8, 9.5, 19.0])
    assert (curve["system"] == "lab").all()
    assert "repeat" not in curve.columns  # no replicates, no repeat label


def test_top_level_export_is_the_reader():
    assert capmodel.read_curve is read_curve


def test_automatic_mapping_of_common_spellings():
    # "threads" and "ops_per_sec" are common spellings; p95/p99 are not mapped without being asked
    curve = read_curve(FIX / "curve_threads.csv")
    assert {"concurrency", "throughput", "p95", "p99"} <= set(curve.columns)
    curve = read_curve(FIX / "curve_replicates.csv")
    assert list(curve.columns[:3]) == ["concurrency", "throughput", "latency_mean_ms"]


def test_mapping_is_case_and_space_insensitive(tmp_path):
    p = _csv(tmp_path, "Thread Count,OPS PER SEC\n1,10\n2,19\n")
    curve = read_curve(p, concurrency="thread count", throughput="ops per sec")
    assert curve["throughput"].tolist() == [10.0, 19.0]


def test_ambiguous_automatic_mapping_raises_naming_both_columns():
    with pytest.raises(InputError) as err:
        read_curve(FIX / "curve_ambiguous.csv")
    msg = str(err.value)
    assert "curve_ambiguous.csv" in msg and "'threads'" in msg and "'clients'" in msg and "concurrency" in msg
    # naming one resolves it
    curve = read_curve(FIX / "curve_ambiguous.csv", concurrency="clients")
    assert curve["concurrency"].tolist() == [1.0, 2.0]


def test_mapping_to_missing_column_names_file_and_column():
    with pytest.raises(InputError, match=r"curve_threads\.csv: column 'users' given for concurrency not found"):
        read_curve(FIX / "curve_threads.csv", concurrency="users")


def test_unknown_mapping_target_is_refused():
    with pytest.raises(InputError, match="unknown curve column 'latency_p97'"):
        read_curve(FIX / "curve_threads.csv", latency_p97="p95")


def test_replicates_kept_and_numbered_within_each_concurrency():
    curve = read_curve(FIX / "curve_replicates.csv")
    assert len(curve) == 6
    assert curve["concurrency"].tolist() == [1, 1, 2, 2, 2, 4]
    assert curve["repeat"].tolist() == [1, 2, 1, 2, 3, 1]
    assert curve["throughput"].tolist() == [1000, 1010, 1950, 1930, 1970, 3600]


def test_existing_repeat_label_is_kept(tmp_path):
    p = _csv(tmp_path, "concurrency,throughput,repeat\n1,10,7\n1,11,9\n")
    assert read_curve(p)["repeat"].tolist() == [7, 9]


# --- validation errors: file + column + row -------------------------------------------------------------------------

@pytest.mark.parametrize(
    "text, column, row, what",
    [
        ("concurrency,throughput\n1,100\n2,abc\n4,300\n", "throughput", 2, "'abc' is not a number"),
        ("concurrency,throughput\n1,100\n,200\n", "concurrency", 2, "missing (NaN)"),
        ("concurrency,throughput\n1,100\n2,200\n0,250\n", "concurrency", 3, "must be > 0"),
        ("concurrency,throughput\n1,100\n2,-5\n", "throughput", 2, "must be >= 0"),
        ("concurrency,throughput,cpu_util\n1,100,0.5\n2,200,85\n", "cpu_util", 2, "fraction"),
    ],
)
def test_validation_errors_name_file_column_and_row(tmp_path, text, column, row, what):
    p = _csv(tmp_path, text, name="bad.csv")
    with pytest.raises(InputError) as err:
        read_curve(p)
    msg = str(err.value)
    assert str(p) in msg
    assert f"column '{column}', row {row}" in msg
    assert what in msg


def test_validation_error_names_the_curve_column_after_mapping(tmp_path):
    p = _csv(tmp_path, "threads,ops\n1,100\n2,oops\n", name="mapped.csv")
    with pytest.raises(InputError, match=r"mapped\.csv: column 'throughput', row 2: 'oops' is not a number"):
        read_curve(p, concurrency="threads", throughput="ops")


def test_missing_column_error_lists_what_is_there(tmp_path):
    p = _csv(tmp_path, "size,speed\n1,2\n", name="nothing.csv")
    with pytest.raises(InputError, match=r"nothing\.csv: missing column 'concurrency' \(columns present: size, speed\)"):
        read_curve(p)


def test_missing_file():
    with pytest.raises(InputError, match=r"no_such_curve\.csv: no such file"):
        read_curve(FIX / "no_such_curve.csv")


def test_too_few_points(tmp_path):
    p = _csv(tmp_path, "concurrency,throughput\n1,10\n2,19\n", name="short.csv")
    with pytest.raises(InputError, match=r"short\.csv: 2 data rows, need at least 4"):
        read_curve(p, min_points=4)


def test_unknown_extension_and_format_override(tmp_path):
    p = _csv(tmp_path, "concurrency,throughput\n1,10\n2,19\n", name="curve.dat")
    with pytest.raises(InputError, match=r"curve\.dat: cannot tell the format from the extension '\.dat'"):
        read_curve(p)
    assert read_curve(p, format="csv")["throughput"].tolist() == [10.0, 19.0]
    with pytest.raises(InputError, match="unknown format 'xls'"):
        read_curve(p, format="xls")
