"""read_curve: every file format, column mapping (explicit and automatic), and the error messages users see."""
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import capmodel
from capmodel.data.readers import detect_format, read_curve
from capmodel.errors import InputError

FIX = Path(__file__).resolve().parents[1] / "fixtures"


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


def test_column_named_as_the_curve_table_wants_beats_an_alias(tmp_path):
    p = _csv(tmp_path, "concurrency,throughput,ops/sec\n1,10,11\n2,19,20\n")
    curve = read_curve(p)
    assert curve["throughput"].tolist() == [10.0, 19.0]
    assert curve["ops/sec"].tolist() == [11, 20]  # left as it is, not renamed


def test_mapping_onto_an_existing_curve_column_is_refused(tmp_path):
    p = _csv(tmp_path, "concurrency,threads,throughput\n1,2,10\n", name="both.csv")
    with pytest.raises(InputError, match=r"both\.csv: column 'threads' is mapped to concurrency, but the file already"):
        read_curve(p, concurrency="threads")


def test_quoted_thousands_in_csv(tmp_path):
    p = _csv(tmp_path, 'threads,throughput\n4,"2,635"\n8,"13,018.5"\n')
    assert read_curve(p)["throughput"].tolist() == [2635.0, 13018.5]


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


# --- other table formats --------------------------------------------------------------------------------------------

EXPECTED_THROUGHPUT = [980.5, 1890.0, 3520.25, 6010.0, 8100.0, 8650.5]  # tests/fixtures/curve_threads.csv


def test_parquet_round_trip(tmp_path):
    source = pd.read_csv(FIX / "curve_threads.csv")
    p = tmp_path / "curve.parquet"
    source.to_parquet(p)
    curve = read_curve(p, latency_p95_ms="p95")
    assert curve["throughput"].tolist() == EXPECTED_THROUGHPUT
    assert curve["latency_p95_ms"].tolist() == source["p95"].tolist()
    assert curve["system"].tolist() == ["lab"] * 6


def test_tsv(tmp_path):
    p = _csv(tmp_path, "Workers (Threads)\tThroughput (Ops/Sec)\n4\t2635\n8\t6493\n", name="sweep.tsv")
    assert read_curve(p)["throughput"].tolist() == [2635.0, 6493.0]


@pytest.mark.parametrize("orient", ["records", "list", "dict"])
def test_json_records_and_columns(tmp_path, orient):
    source = pd.read_csv(FIX / "curve_threads.csv")
    p = tmp_path / "curve.json"
    p.write_text(json.dumps(source.to_dict(orient=orient)))
    curve = read_curve(p)
    assert curve["throughput"].tolist() == EXPECTED_THROUGHPUT
    assert curve["concurrency"].tolist() == [1, 2, 4, 8, 16, 32]


@pytest.mark.parametrize("name", ["curve.jsonl", "curve.json"])
def test_json_lines(tmp_path, name):
    source = pd.read_csv(FIX / "curve_threads.csv")
    p = tmp_path / name
    p.write_text("\n".join(json.dumps(r) for r in source.to_dict(orient="records")) + "\n")
    assert read_curve(p)["throughput"].tolist() == EXPECTED_THROUGHPUT


@pytest.mark.parametrize(
    "name, content, options, message",
    [
        ("broken.json", b'[{"concurrency": 1, "throughput": 10},\n {"concurrency": 2, ', {},
         r"broken\.json: not valid JSON \(line 2"),
        ("damaged.parquet", b"PAR1 this is not a parquet file", {}, r"damaged\.parquet: cannot read as parquet"),
        ("empty.csv", b"", {}, r"empty\.csv: cannot read as csv"),
        ("header_only.csv", b"concurrency,throughput\n", {}, r"header_only\.csv: no data rows"),
        ("scalar.json", b"42", {}, r"scalar\.json: JSON must be a list of row objects or an object of columns"),
        ("bad.md", "| Threads | Throughput (Ops/Sec) |\n|---|---|\n| 4 | 2,635 |\n| 8 | n/a |\n".encode(), {},
         r"bad\.md: column 'Throughput \(Ops/Sec\)' \(throughput\), row 2: 'n/a' is not a number"),
        ("notable.md", b"# just prose\n", {}, r"notable\.md: no pipe table found"),
        ("cut_t8.txt", b"[READ], Operations, 10\n[OVERALL], RunTime(ms), 100\n", {"format": "ycsb"},
         r"cut_t8\.txt: no '\[OVERALL\], Throughput\(ops/sec\)"),
        ("two_runs.txt", b"[OVERALL], Throughput(ops/sec), 10\n[OVERALL], Throughput(ops/sec), 20\n", {"format": "ycsb"},
         r"two_runs\.txt: holds 2 YCSB runs"),
    ],
)
def test_unreadable_files_raise_naming_the_file(tmp_path, name, content, options, message):
    p = tmp_path / name
    p.write_bytes(content)
    with pytest.raises(InputError, match=message):
        read_curve(p, **options)


def test_markdown_table_with_thousands_separators():
    # Numbers as printed in Percona's plgm article, Workload #1 table (see data/README.md)
    curve = read_curve(FIX / "plgm_workload1_table.md")
    assert curve["concurrency"].tolist() == [4, 8, 16, 32, 48, 64, 80, 96, 128]
    assert curve["throughput"].tolist() == [2635, 6493, 10678, 13018, 12322, 13548, 13610, 12573, 13309]
    assert curve["latency_mean_ms"].tolist() == [1.51, 1.23, 1.49, 2.45, 3.89, 4.71, 5.86, 7.62, 9.60]
    assert curve["Efficiency Verdict"].iloc[3] == "Sweet Spot"


def test_markdown_with_several_tables_needs_a_choice(tmp_path):
    p = tmp_path / "two.md"
    p.write_text("| threads | qps |\n|---|---|\n| 1 | 1,000 |\n| 2 | 1,900 |\n\ntext\n\n"
                 "| threads | qps |\n| --- | --- |\n| 4 | 3,100 |\n| 8 | 4,000 |\n")
    with pytest.raises(InputError, match=r"two\.md: 2 tables found, pick one with table=N"):
        read_curve(p)
    assert read_curve(p, table=1)["throughput"].tolist() == [3100, 4000]
    assert read_curve(p, table=0)["throughput"].tolist() == [1000, 1900]


def test_text_file_is_recognised_by_content(tmp_path):
    p = tmp_path / "notes.txt"
    p.write_text("| clients | ops/s |\n|--|--|\n| 1 | 10 |\n")
    assert detect_format(p) == "markdown"
    p.write_text("no table here\n")
    with pytest.raises(InputError, match=r"notes\.txt: neither YCSB client output nor a markdown table"):
        read_curve(p)


def test_glob_and_list_combine_files_sorted_by_concurrency(tmp_path):
    _csv(tmp_path, "concurrency,throughput\n8,80\n1,10\n", name="b.csv")
    _csv(tmp_path, "concurrency,throughput\n4,40\n", name="a.csv")
    for path in (str(tmp_path / "*.csv"), [tmp_path / "a.csv", tmp_path / "b.csv"]):
        curve = read_curve(path)
        assert curve["concurrency"].tolist() == [1, 4, 8]
        assert curve["throughput"].tolist() == [10, 40, 80]
    with pytest.raises(InputError, match=r"nomatch\*\.csv: no file matches"):
        read_curve(str(tmp_path / "nomatch*.csv"))


def test_error_in_one_of_several_files_names_that_file(tmp_path):
    _csv(tmp_path, "concurrency,throughput\n1,10\n", name="good.csv")
    _csv(tmp_path, "concurrency,throughput\n2,20\n-4,30\n", name="worse.csv")
    with pytest.raises(InputError, match=r"worse\.csv: column 'concurrency', row 2: -4 must be > 0"):
        read_curve(tmp_path)


# --- YCSB client output ---------------------------------------------------------------------------------------------
# Fixture format per YCSB's wiki, "Running a Workload", step 6 (https://github.com/brianfrankcooper/YCSB/wiki/
# Running-a-Workload): "[SECTION], metric, value" lines; latencies in microseconds unless the label says (ms).

def test_ycsb_directory_combines_runs_with_thread_counts_from_text_and_name():
    curve = read_curve(FIX / "ycsb_sweep")
    # run_a.txt echoes "-threads 4", run_b.log "-p threadcount=8", run_t16.txt only has it in its name
    assert curve["concurrency"].tolist() == [4, 8, 16]
    assert curve["run"].tolist() == ["run_a", "run_b", "run_t16"]
    assert curve["throughput"].tolist() == [2006.1, 3718.3, 5892.9]
    # overall mean = operation-weighted mean of READ and UPDATE averages, microseconds -> ms
    expected_mean = [
        (10030 * 1742.9 + 10031 * 2213.7) / (10030 + 10031) / 1000,
        (18600 * 1996.0 + 18595 * 2280.0) / (18600 + 18595) / 1000,
        (29502 * 2532.25 + 29498 * 2861.75) / (29502 + 29498) / 1000,
    ]
    np.testing.assert_allclose(curve["latency_mean_ms"], expected_mean, rtol=1e-12)
    # p95/p99 = the larger of READ and UPDATE (here UPDATE in every run), in ms
    np.testing.assert_allclose(curve["latency_p95_ms"], [4.211, 4.987, 6.827])
    np.testing.assert_allclose(curve["latency_p99_ms"], [6.071, 8.111, 12.415])
    np.testing.assert_allclose(curve["latency_read_p99_ms"], [5.195, 7.331, 11.087])
    np.testing.assert_allclose(curve["latency_update_mean_ms"], [2.2137, 2.28, 2.86175])
    # errors: READ-FAILED 5 + UPDATE-FAILED 2 in run_b; CLEANUP is not counted anywhere
    assert curve["errors"].tolist() == [0, 7, 0]
    assert curve["ops_read"].tolist() == [10030, 18600, 29502]


def test_ycsb_glob_and_list_give_the_same_table():
    by_dir = read_curve(FIX / "ycsb_sweep")
    by_glob = read_curve(str(FIX / "ycsb_sweep" / "run_*"))
    by_list = read_curve(sorted((FIX / "ycsb_sweep").iterdir()), format="ycsb")
    pd.testing.assert_frame_equal(by_dir, by_glob)
    pd.testing.assert_frame_equal(by_dir, by_list)


def test_ycsb_millisecond_percentiles_of_older_versions():
    curve = read_curve(FIX / "ycsb_other" / "old_histogram_threads-2.txt")
    assert curve["concurrency"].tolist() == [2]
    # AverageLatency is in us, the percentiles in ms (histogram buckets "[READ], 0, 3410" are ignored)
    np.testing.assert_allclose(curve["latency_mean_ms"], [(4910 * 1340.5 + 5080 * 910.25) / 9990 / 1000])
    assert curve["latency_p95_ms"].tolist() == [3.0]
    assert curve["latency_p99_ms"].tolist() == [5.0]
    assert curve["errors"].tolist() == [0]  # "Return=0" is the old spelling of OK


def test_ycsb_without_thread_count_names_the_file():
    with pytest.raises(InputError, match=r"no_threads\.txt: no thread count found"):
        read_curve(FIX / "ycsb_other" / "no_threads.txt")


def test_ycsb_replicates_get_repeat_numbers(tmp_path):
    for name in ("run_t4_a.txt", "run_t4_b.txt", "run_t16.txt"):
        source = FIX / "ycsb_sweep" / ("run_t16.txt" if name == "run_t16.txt" else "run_a.txt")
        shutil.copy(source, tmp_path / name)
    curve = read_curve(tmp_path)
    assert curve["concurrency"].tolist() == [4, 4, 16]
    assert curve["repeat"].tolist() == [1, 2, 1]



def test_errors_name_a_mapped_column_as_the_file_names_it(tmp_path):
    f = tmp_path / "sweep.csv"
    f.write_text("threads,ops/sec\n1,10\n2,x\n4,30\n")
    with pytest.raises(InputError) as err:
        read_curve(f, concurrency="threads", throughput="ops/sec")
    assert str(err.value) == f"{f}: column 'ops/sec' (throughput), row 2: 'x' is not a number"
    f.write_text("threads,ops/sec\n1,10\n0,20\n")
    with pytest.raises(InputError) as err:
        read_curve(f, concurrency="threads", throughput="ops/sec")
    assert str(err.value) == f"{f}: column 'threads' (concurrency), row 2: 0 must be > 0"
