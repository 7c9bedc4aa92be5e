"""CSV rows read as written: a row wider than its header is refused naming its line (also past the lines the dialect
is sniffed from), a decimal comma in a comma-separated file is said as such instead of shifting every column, a row
ending in a separator fits as the same row written plainly, and a byte that is not UTF-8 is named by its offset and
line in the file. The reference figures are those rows written plainly, fitted by the CLI."""
from __future__ import annotations

import json

import pytest
from tests.support.cli_output import error_only

from capmodel.cli import main

ROWS = [(1, 100), (2, 190), (4, 350), (8, 600), (16, 800), (32, 900)]


def _fit(tmp_path, capsys, name, text):
    path = tmp_path / name
    path.write_text(text)
    status = main(["fit", str(path), "--json"])
    out, err = capsys.readouterr()
    return path, status, out, err


@pytest.mark.parametrize("name, sep", [("c.csv", ","), ("s.csv", ";"), ("t.tsv", "\t")])
@pytest.mark.parametrize("wide_row", [0, 3])
def test_a_row_with_a_field_more_than_the_header_is_refused_naming_its_line(tmp_path, capsys, name, sep, wide_row):
    lines = [f"concurrency{sep}throughput"] + [f"{c}{sep}{x}" for c, x in ROWS]
    lines[1 + wide_row] += f"{sep}5"
    path, status, out, err = _fit(tmp_path, capsys, name, "\n".join(lines) + "\n")
    assert status == 2 and error_only(out, err), out
    assert err.count("\n") == 1 and str(path) in err
    assert f"line {2 + wide_row} has 3 fields but the header names 2 columns" in err, err


def test_a_decimal_comma_in_a_comma_separated_file_is_not_fitted_shifted(tmp_path, capsys):
    text = "concurrency,throughput\n" + "".join(f"{c},{x},5\n" for c, x in ROWS)
    path, status, out, err = _fit(tmp_path, capsys, "eu.csv", text)
    assert status == 2 and "line 2 has 3 fields" in err and "decimal comma" in err


@pytest.mark.parametrize("name, sep", [("c.csv", ","), ("t.tsv", "\t")])
def test_rows_ending_in_a_separator_fit_as_plain_rows_do(tmp_path, capsys, name, sep):
    plain = f"concurrency{sep}throughput\n" + "".join(f"{c}{sep}{x}\n" for c, x in ROWS)
    _, status, out, err = _fit(tmp_path, capsys, "plain" + name, plain)
    assert status == 0, err
    expected = json.loads(out)
    trailing = f"concurrency{sep}throughput\n" + "".join(f"{c}{sep}{x}{sep}\n" for c, x in ROWS)
    _, status, out, err = _fit(tmp_path, capsys, name, trailing)
    assert status == 0, err
    got = json.loads(out)
    assert got["n_points"] == len(ROWS)
    assert (got["sigma"], got["kappa"], got["lambda"]) == (expected["sigma"], expected["kappa"], expected["lambda"])


def test_a_wide_row_past_the_first_lines_is_still_refused_naming_its_line(tmp_path, capsys):
    rows = [(n, 100 * n) for n in range(1, 40)]
    lines = ["concurrency,throughput"] + [f"{c},{x}" for c, x in rows]
    lines[30] += ",5"           # file line 31, beyond the 20 lines the dialect reads first
    path, status, out, err = _fit(tmp_path, capsys, "late.csv", "\n".join(lines) + "\n")
    assert status == 2 and str(path) in err and "line 31" in err, err


@pytest.mark.parametrize("where", ["header", "cell", "late"])
def test_a_latin1_byte_is_named_by_its_offset_in_the_file(tmp_path, capsys, where):
    # before: "'utf-8' codec can't decode byte 0xe8 in position 4", a position inside pandas' read buffer
    rows = [f"{c},{x},a" for c, x in ROWS] * (400 if where == "late" else 1)
    header = "concurrency,throughput," + ("syst\xe8me" if where == "header" else "system")
    if where != "header":
        rows[-1] = rows[-1][:-1] + "\xe9t\xe9"
    data = ("\n".join([header, *rows]) + "\n").encode("latin-1")
    offset = data.index(b"\xe8" if where == "header" else b"\xe9")
    path = tmp_path / "latin.csv"
    path.write_bytes(data)
    status = main(["fit", str(path)])
    out, err = capsys.readouterr()
    line = data.count(b"\n", 0, offset) + 1
    assert status == 2 and out == ""
    assert f"{path}: not UTF-8 text: byte {offset:,} (line {line}) is 0x{data[offset]:02x}; save the file as UTF-8" \
        in err, err
