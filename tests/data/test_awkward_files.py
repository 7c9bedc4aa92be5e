"""Curve files as a careless user saves them: classic Mac OS line ends, UTF-16 from a spreadsheet, a NUL byte,
throughputs of 1e-300, and node curves with fractional node counts.

Reference figures are independent: the same rows written with plain line ends, fitted by the same CLI, must give
the same parameters bit for bit (the bytes differ, the numbers must not).
"""
from __future__ import annotations

import codecs
import json

import pytest
from tests.support.cli_output import error_only

from capmodel.cli import main

ROWS = [(1, 1000), (2, 1900), (4, 3500), (8, 5800), (16, 7600), (32, 8000), (64, 7400)]
PLAIN = "concurrency,throughput\n" + "".join(f"{c},{x}\n" for c, x in ROWS)


def _cli(capsys, *argv):
    status = main([*map(str, argv)])
    out, err = capsys.readouterr()
    return status, out, err


def _fit(tmp_path, capsys, name, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return _cli(capsys, "fit", path, "--json")


@pytest.mark.parametrize("newline", ["\r", "\r\n"])
def test_lines_ending_in_a_bare_cr_or_crlf_fit_as_plain_lines_do(tmp_path, capsys, newline):
    # before: a CR-only file (classic Mac OS, some exporters) gave a traceback from the csv module
    status, out, err = _fit(tmp_path, capsys, "plain.csv", PLAIN.encode())
    assert status == 0, err
    plain = json.loads(out)
    status, out, err = _fit(tmp_path, capsys, "odd.csv", PLAIN.replace("\n", newline).encode())
    assert status == 0, err
    odd = json.loads(out)
    assert odd["n_points"] == plain["n_points"] == len(ROWS)
    assert (odd["sigma"], odd["kappa"], odd["lambda"]) == (plain["sigma"], plain["kappa"], plain["lambda"])


@pytest.mark.parametrize("encoding, bom", [("utf-16-le", codecs.BOM_UTF16_LE), ("utf-16-be", codecs.BOM_UTF16_BE),
                                           ("utf-16-le", b""), ("utf-16-be", b"")])
def test_utf16_is_named_as_utf16_not_read_as_garbled_columns(tmp_path, capsys, encoding, bom):
    # before: with a BOM "'utf-8' codec can't decode byte 0xff"; without, a column named 'c\x00o\x00n...'
    status, out, err = _fit(tmp_path, capsys, "sheet.csv", bom + PLAIN.encode(encoding))
    assert status == 2 and error_only(out, err)
    assert "sheet.csv: UTF-16 (or UTF-32) text; save it as UTF-8" in err and err.count("\n") == 1


def test_a_nul_byte_is_refused_with_its_offset(tmp_path, capsys):
    data = PLAIN.encode()
    at = data.index(b"1900") + 2
    status, out, err = _fit(tmp_path, capsys, "nul.csv", data[:at] + b"\0" + data[at:])
    assert status == 2 and f"NUL byte at byte offset {at}" in err


@pytest.mark.parametrize("scale, refused", [(1e-300, True), (1e-12, True), (1e-3, False)])
def test_throughputs_below_a_millionth_per_second_are_a_unit_error(tmp_path, capsys, scale, refused):
    # before: 1e-300 gave a ZeroDivisionError traceback; 1e-12 a lambda printed as 0
    rows = "".join(f"{c},{x * scale!r}\n" for c, x in ROWS)
    status, out, err = _fit(tmp_path, capsys, "tiny.csv", ("concurrency,throughput\n" + rows).encode())
    if refused:
        assert status == 2 and error_only(out, err)
        assert "column 'throughput', row 1:" in err and "above 0 but below 0.000001 (a unit error?)" in err
        return
    assert status == 0, err
    fitted = json.loads(out)
    status, out, err = _fit(tmp_path, capsys, "plain.csv", PLAIN.encode())
    plain = json.loads(out)
    # the USL is scale-free in X: sigma and kappa the same, lambda scaled
    assert fitted["sigma"] == pytest.approx(plain["sigma"], rel=1e-4, abs=1e-9)
    assert fitted["kappa"] == pytest.approx(plain["kappa"], rel=1e-4, abs=1e-9)
    assert fitted["lambda"] == pytest.approx(plain["lambda"] * scale, rel=1e-4)


def test_a_node_curve_with_fractional_node_counts_is_refused(tmp_path, capsys):
    path = tmp_path / "nodes.csv"
    path.write_text("concurrency,throughput\n0.5,1000\n1.5,1900\n2.5,3500\n8,5800\n")
    status, out, err = _cli(capsys, "nodes", "--node-curve", path)
    assert status == 2 and out == ""
    assert f"{path}: row 1: a node count is a whole number, got 0.5" in err


def test_a_node_curve_that_cannot_be_fitted_names_its_file(tmp_path, capsys):
    path = tmp_path / "two.csv"
    path.write_text("concurrency,throughput\n1,1000\n2,1900\n")
    status, out, err = _cli(capsys, "nodes", "--node-curve", path)
    assert status == 2 and err.startswith(f"capmodel: error: {path}: 2 points cannot fit")
