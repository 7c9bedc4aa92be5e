"""Figures near zero, as people read them: ``fit --model auto`` on a curve flat but for one part in 10^8 prints its
RMSE, residual error and extrapolation error without an exponent, an R² that is undefined as undefined, and model
names by their labels, listed as names (not letter by letter)."""
from __future__ import annotations

import re

from capmodel.cli import main
from capmodel.formatting import number, r_squared

EXPONENT = re.compile(r"\de[+-]?\d")


def test_small_figures_are_written_out_and_the_negligible_said_as_such():
    assert number(3.26e-07) == "0.000000326" and number(-5.16e-07) == "-0.000000516"
    assert number(9.99e-07) == "0.000000999" and number(1.5e-11) == "0.000000000015"
    assert number(1e-13) == "about 0" and number(-1e-300) == "about 0"
    assert number(0.000123456, 4) == "0.0001235"              # unchanged above 1e-6


def test_an_r2_far_below_zero_is_not_written_digit_by_digit():
    assert r_squared(-2.7e16) == "below -1,000" and r_squared(-999.5) == "-999.500"
    assert r_squared(-1.1336) == "-1.134"


def test_a_nearly_flat_curve_reads_without_exponents_or_spelled_names(tmp_path, capsys):
    path = tmp_path / "c.csv"
    path.write_text("concurrency,throughput\n1,100\n2,100.000001\n4,100\n8,100\n16,100\n")
    assert main(["fit", str(path), "--model", "auto"]) == 0
    out = capsys.readouterr().out
    assert not EXPONENT.search(out), [line for line in out.splitlines() if EXPONENT.search(line)]
    assert "l, o, g" not in out and "log_coherency" not in out
    assert "below -1,000" in out                      # the linear model through a flat line
    assert "AICc is undefined for log-coherency with 5 points" in out
