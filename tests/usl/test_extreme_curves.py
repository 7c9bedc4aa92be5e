"""Extreme or malformed data give one CapmodelError naming the input, never a traceback, a raw numpy/scipy error,
LAPACK's lines on stdout, or a RuntimeWarning; a curve spanning many orders of magnitude is refused (beyond 12) or
warned about (beyond 6), never fitted silently into lambda = 1e298."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

import capmodel
from capmodel.cli import main
from capmodel.errors import CapmodelError

GOOD = [(1, 100.0), (2, 190.0), (4, 350.0), (8, 600.0), (16, 900.0), (32, 1000.0)]


def _curve(rows):
    return pd.DataFrame(rows, columns=["concurrency", "throughput"])


@pytest.mark.parametrize("rows, message", [
    ([(1, 1e308), (2, 1.7e308), (4, 1e308), (8, 1e308)], "row 1: 1e+308 is more than 1,000,000,000,000,000 per second"),
    ([(1e-300, 100.0)] + GOOD[1:], "column 'concurrency', row 1: 1e-300 is outside 0.000001 to 1,000,000,000"),
    (GOOD[:-1] + [(1e300, 1000.0)], "column 'concurrency', row 6: 1e+300 is outside"),
    (GOOD[:3] + [(8, 1e300)] + GOOD[4:], "column 'throughput', row 4: 1e+300 is more than 1,000,000,000,000,000"),
    ([(1, 1e-10)] + GOOD[1:], "column 'throughput', row 1: 0.0000000001 per second is above 0 but below 0.000001"),
    ([(1, 1e-5)] + GOOD[1:-1] + [(32, 1e8)], "values span more than 12 orders of magnitude (row 1: 0.00001, row 6: 100000000)"),
    ([(1, 100.0), (2, 10**400)], "column 'throughput', row 2: 1000000000"),
])
def test_extreme_values_are_refused_by_the_python_api(capfd, rows, message):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning would fail the test
        with pytest.raises(CapmodelError, match=re.escape(message)):
            capmodel.fit_usl(_curve(rows))
    out = capfd.readouterr()
    assert out.out == "" and out.err == ""  # nothing from LAPACK ("On entry to DLASCL ...")


def test_a_wide_but_legal_curve_fits_with_a_warning():
    # throughput from 0.0001 to 1000 ops/s (7 orders): fitted, but the span is named in the warnings
    curve = _curve([(1, 1e-4), (2, 0.5), (4, 300.0), (8, 600.0), (16, 900.0), (32, 1000.0)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit = capmodel.fit_usl(curve)
    assert any("spans 7 orders of magnitude" in w for w in fit.warnings)
    assert np.isfinite([fit.sigma, fit.kappa, fit.lambda_]).all()


def _write(path, text):
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("command", [["fit"], ["nodes", "--node-curve"], ["shards", "--curve"]])
def test_a_400_digit_cell_is_one_line_naming_file_column_and_row(tmp_path, capsys, command):
    path = _write(tmp_path / "c.csv", "concurrency,throughput\n1,100\n2,190\n4," + "9" * 400 + "\n8,600\n")
    code = main([*command, path])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"{path}: column 'throughput', row 3: 999" in err and "is too large a number" in err
    assert len(err) < 300


def test_a_long_cell_is_cut_in_the_message(tmp_path, capsys):
    path = _write(tmp_path / "c.csv", "concurrency,throughput\n1,100\n2," + "x" * 60_000 + "\n4,350\n")
    assert main(["fit", path]) == 2
    err = capsys.readouterr().err
    assert f"{path}: column 'throughput', row 2: 'xxxx" in err and "is not a number" in err and len(err) < 300


def test_a_one_megabyte_line_is_refused_before_parsing_naming_its_line_and_offset(tmp_path, capsys):
    path = _write(tmp_path / "c.csv", "concurrency,throughput\n1,100\n2," + "x" * 2**20 + "\n4,350\n")
    assert main(["fit", path]) == 2
    err = capsys.readouterr().err
    assert f"{path}: line 3 (byte offset 29) is longer than 65,536 bytes" in err and len(err) < 300


@pytest.mark.parametrize("text, message", [
    ("[" * 100_000 + "]" * 100_000, "nested too deeply to be a table"),
    ('[{"concurrency": [[[[1]]]], "throughput": 1}]', "nested more than 3 levels deep"),
])
def test_deep_json_is_one_line(tmp_path, capsys, text, message):
    path = _write(tmp_path / "c.json", text)
    assert main(["fit", path]) == 2
    err = capsys.readouterr().err
    assert message in err and path in err and len(err.strip().splitlines()) == 1


def test_a_yaml_model_bomb_or_deep_file_is_one_line(tmp_path, capsys):
    lines = ["l0: &l0 [a, a, a, a, a, a, a, a, a]"] + [
        f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, 9)]
    path = _write(tmp_path / "m.yaml", "\n".join(lines) + "\n")
    assert main(["mva", path]) == 2
    err = capsys.readouterr().err
    assert "expands to more than 200,000 values" in err and path in err and len(err.strip().splitlines()) == 1
