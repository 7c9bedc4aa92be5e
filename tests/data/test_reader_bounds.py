"""A curve file is bounded before it is parsed (size, columns, line length: a 2 GB file or 10^6 columns are refused
in bounded time and memory with a short error line), a repeated column name is an error, and semicolon-separated
CSV with decimal commas (what European spreadsheets write) is read."""
from __future__ import annotations

import json

import pytest

from capmodel.cli import main
from capmodel.data.input_limits import MAX_COLUMNS, MAX_FILE_BYTES, MAX_LINE_BYTES
from capmodel.data.readers import read_curve
from capmodel.errors import InputError


def _write(path, text):
    path.write_text(text)
    return str(path)


def _one_line(capsys, args):
    code = main(args)
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err[:500]
    assert len(err) < 400, f"an error line of {len(err):,} characters"
    return err


@pytest.mark.parametrize("name", ["huge.csv", "huge.txt", "huge.json", "huge.parquet"])
def test_a_file_beyond_the_size_bound_is_refused_without_reading_it(tmp_path, capsys, name):
    path = tmp_path / name
    with open(path, "wb") as fh:
        fh.truncate(2 * 2**30)  # 2 GB, sparse: nothing to read, and a reader that tried would take minutes
    err = _one_line(capsys, ["fit", str(path)])
    assert f"{path}: {2 * 2**30:,} bytes is more than a curve file may have ({MAX_FILE_BYTES:,} bytes" in err


def test_a_million_columns_are_refused_in_one_short_line(tmp_path, capsys):
    header = ",".join(f"c{i}" for i in range(10**6))
    path = _write(tmp_path / "wide.csv", header + "\n" + ",".join("1" for _ in range(10**6)) + "\n")
    err = _one_line(capsys, ["fit", path])
    assert f"{path}: line 1 (byte offset 0) is longer than {MAX_LINE_BYTES:,} bytes" in err


def test_more_columns_than_the_bound_in_a_short_header_are_refused(tmp_path, capsys):
    count = MAX_COLUMNS + 1
    path = _write(tmp_path / "wide.csv", ",".join(f"c{i}" for i in range(count)) + "\n" + ",".join(["1"] * count))
    err = _one_line(capsys, ["fit", path])
    assert f"{path}: {count:,} columns is more than a curve table may have ({MAX_COLUMNS:,})" in err


def test_a_missing_column_among_many_is_named_in_a_short_line(tmp_path, capsys):
    path = _write(tmp_path / "many.csv", ",".join(f"metric_{i}" for i in range(900)) + "\n" + ",".join(["1"] * 900))
    err = _one_line(capsys, ["fit", path])
    assert "missing column 'concurrency'" in err and "metric_0, metric_1" in err and "(900 in all)" in err


def test_a_long_line_after_the_first_block_is_found(tmp_path):
    rows = "".join(f"{i},{i * 10}\n" for i in range(1, 200_000))
    path = _write(tmp_path / "late.csv", "concurrency,throughput\n" + rows + "1," + "9" * (MAX_LINE_BYTES + 1) + "\n")
    with pytest.raises(InputError, match=r"line 200,001 \(byte offset [\d,]+\) is longer than") as info:
        read_curve(path)
    offset = int(str(info.value).split("byte offset ")[1].split(")")[0].replace(",", ""))
    assert offset == len(("concurrency,throughput\n" + rows).encode())


@pytest.mark.parametrize("name, text, column", [
    ("dup.csv", "concurrency,throughput,throughput\n1,100,5\n2,190,6\n", "throughput"),
    ("dup.csv", "threads,ops/sec,threads\n1,100,5\n2,190,6\n", "threads"),
    ("dup.csv", "concurrency, throughput,throughput\n1,100,5\n2,190,6\n", "throughput"),
    ("dup.tsv", "concurrency\tthroughput\tconcurrency\n1\t100\t5\n", "concurrency"),
    ("dup.csv", "concurrency;throughput;throughput\n1;100;5\n", "throughput"),
])
def test_a_repeated_column_name_is_an_error_naming_file_and_column(tmp_path, capsys, name, text, column):
    path = _write(tmp_path / name, text)
    err = _one_line(capsys, ["fit", path])
    assert f"{path}: column '{column}' appears twice in the header" in err


@pytest.mark.parametrize("name, text", [
    ("dup.json", '[{"concurrency": 1, "throughput": 100, "throughput": 5}]'),
    ("dup.jsonl", '{"concurrency": 1, "throughput": 100}\n{"concurrency": 2, "concurrency": 3, "throughput": 1}\n'),
])
def test_a_repeated_json_key_is_an_error(tmp_path, name, text):
    path = _write(tmp_path / name, text)
    with pytest.raises(InputError, match=r"key '(throughput|concurrency)' appears twice in one object"):
        read_curve(path)


def test_semicolons_with_decimal_commas_are_read(tmp_path):
    path = _write(tmp_path / "eu.csv", "Threads;Throughput (ops/s);p95 latency (ms)\n"
                                        "1;1.234,5;0,8\n2;2.301,25;1,1\n4;4.050;2,75\n")
    curve = read_curve(path)
    assert curve["concurrency"].tolist() == [1, 2, 4]
    assert curve["throughput"].tolist() == [1234.5, 2301.25, 4050.0]
    assert curve["latency_p95_ms"].tolist() == [0.8, 1.1, 2.75]


def test_semicolons_with_decimal_points_are_read(tmp_path):
    path = _write(tmp_path / "sc.csv", "concurrency;throughput\n1;100.5\n2;190.25\n")
    assert read_curve(path)["throughput"].tolist() == [100.5, 190.25]


def test_semicolons_with_both_decimal_marks_are_named(tmp_path, capsys):
    path = _write(tmp_path / "mixed.csv", "concurrency;throughput\n1;100,5\n2;190.25\n")
    err = _one_line(capsys, ["fit", path])
    assert "semicolon-separated with both decimal commas and decimal points" in err and path in err


def test_the_bundled_comma_files_read_as_before(tmp_path):
    path = _write(tmp_path / "c.csv", 'concurrency,throughput,note\n1,"2,635",a;b\n2,5000,c\n')
    assert read_curve(path)["throughput"].tolist() == [2635.0, 5000.0]


@pytest.mark.parametrize("call, message", [
    (lambda p: read_curve(123), "a file path is a string or a path, not int"),
    (lambda p: read_curve(p, concurrency=1), "concurrency= names a column (a string), not int"),
    (lambda p: read_curve(p, latency_p95_ms=["p95"]), "latency_p95_ms= names a column (a string), not list"),
    (lambda p: read_curve(p, min_points="2"), "min_points= is a whole number, not str"),
    (lambda p: read_curve(p, table=True), "table= is a whole number, not bool"),
    (lambda p: read_curve(p, format=3), "format"),
])
def test_argument_types_are_checked(tmp_path, call, message):
    path = _write(tmp_path / "ok.csv", "concurrency,throughput\n1,100\n")
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call(path)


def test_json_records_within_the_bounds_still_read(tmp_path):
    path = tmp_path / "ok.json"
    path.write_text(json.dumps([{"concurrency": c, "throughput": 100.0 * c} for c in (1, 2, 4)]))
    assert read_curve(path)["throughput"].tolist() == [100.0, 200.0, 400.0]


def test_the_advice_names_only_options_the_command_line_has(tmp_path, capsys):
    path = _write(tmp_path / "two.csv", "concurrency,throughput,p95 latency (ms),p95 (ms)\n1,100,1,2\n2,190,1,2\n")
    err = _one_line(capsys, ["fit", path])
    assert "could each be latency_p95_ms" in err and "--latency_p95_ms" not in err
    path = _write(tmp_path / "two_c.csv", "threads,clients,throughput\n1,1,100\n2,2,190\n")
    err = _one_line(capsys, ["fit", path])
    assert "--concurrency COL" in err  # capmodel fit has --concurrency
