"""``nodes --node-curve`` and ``shards --curve`` on a curve that does not grow with the count: said as a curve that
does not scale, naming the file, not as a parameter (sigma = 1) the user never gave."""
from __future__ import annotations

import json

import pytest

from capmodel.cli import main

FLAT = "concurrency,throughput\n1,100\n2,100\n4,100\n8,100\n"
FALLING = "concurrency,throughput\n1,100\n2,90\n4,80\n8,60\n"


@pytest.mark.parametrize("command, option, unit", [("nodes", "--node-curve", "node"), ("shards", "--curve", "shard")])
@pytest.mark.parametrize("curve", [FLAT, FALLING])
def test_a_curve_that_does_not_scale_is_said_so_naming_the_file(tmp_path, capsys, command, option, unit, curve):
    path = tmp_path / "c.csv"
    path.write_text(curve)
    assert main([command, option, str(path), "--json"]) == 2
    out, err = capsys.readouterr()
    error = json.loads(out)["error"]
    assert error == (f"{path}: the throughput does not grow with the {unit} count (the USL fit's sigma is 1: no "
                     f"scaling at all), so no {unit} count can be planned from this curve")
    assert err == f"capmodel: error: {error}\n" and "1.0" not in err
