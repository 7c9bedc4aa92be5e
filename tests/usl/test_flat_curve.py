"""``fit --model auto`` on a flat curve (the same throughput at every concurrency, at any scale and any number of
points): refused saying R² is undefined (its total sum of squares is 0), not negative, with every figure readable
(no exponent)."""
from __future__ import annotations

import json
import re

import pytest

from capmodel.cli import main

EXPONENT = re.compile(r"\de[+-]?\d")


@pytest.mark.parametrize("rate, shown, points", [
    ("100", "100", 5), ("1234567.5", "1,234,568", 3), ("0.25", "0.25", 4), ("100", "100", 2),
])
def test_a_flat_curve_says_r2_is_undefined(tmp_path, capsys, rate, shown, points):
    path = tmp_path / "flat.csv"
    path.write_text("concurrency,throughput\n" + "".join(f"{2 ** i},{rate}\n" for i in range(points)))
    assert main(["fit", str(path), "--model", "auto"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1
    assert "below 0" not in err and "R² is undefined" in err
    assert f"the throughput is {shown} ops/s at all {points} points" in err and str(path) in err
    assert not EXPONENT.search(err)


def test_the_json_error_says_the_same(tmp_path, capsys):
    path = tmp_path / "flat.csv"
    path.write_text("concurrency,throughput\n1,50\n2,50\n4,50\n8,50\n")
    assert main(["fit", str(path), "--model", "auto", "--json"]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert "R² is undefined" in error and "below 0" not in error

