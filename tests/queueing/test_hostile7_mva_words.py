"""mva's sentences on open networks and empty names (hostile round seven).

Before: every arrival rate 0 on a queueing station with a demand printed "no queueing station carries load: stable
at any arrival rate" (false: 0.01 s of demand saturates at 100 ops/s); a small rate printed "stable up to 1e+05 x
these arrival rates" and a rate at the edge "stable up to 1 x" (said as if it were the limit itself); an overload
"at most 0.0001 x" came from ':.4g' too (exponents below 1e-4); an empty class or station name ('') was refused as
"a name must be text, got '' (str); quote the name in the file", though it was text and quoted.
"""
from __future__ import annotations

import re

import pytest

from capmodel.cli import main

EXPONENT = re.compile(r"\de[+-]?\d")


def _mva(tmp_path, capsys, text):
    path = tmp_path / "m.yaml"
    path.write_text(text)
    status = main(["mva", str(path)])
    out, err = capsys.readouterr()
    return status, out, err


def _open(rate, demand=0.01):
    return f"classes:\n  a: {{arrival_rate: {rate}}}\nstations:\n  cpu: {{demands: {{a: {demand}}}}}\n"


@pytest.mark.parametrize("rate, note", [
    ("0", "every arrival rate is 0: no station carries load"),
    ("0.001", "stable up to 100,000 x these arrival rates (bottleneck cpu)"),       # 1 / (0.001 x 0.01)
    ("0.0001", "stable up to 1,000,000 x these arrival rates (bottleneck cpu)"),
    ("99.99999", "stable up to barely more than 1 x these arrival rates (bottleneck cpu)"),
    ("50", "stable up to 2 x these arrival rates (bottleneck cpu)"),
])
def test_the_stability_note_is_true_and_readable(tmp_path, capsys, rate, note):
    status, out, _ = _mva(tmp_path, capsys, _open(rate))
    assert status == 0 and note in out.splitlines()
    assert "stable at any arrival rate" not in out and not EXPONENT.search(out)


def test_a_delay_station_alone_is_stable_at_any_rate(tmp_path, capsys):
    text = "classes:\n  a: {arrival_rate: 5}\nstations:\n  net: {demands: {a: 0.01}, delay: true}\n"
    status, out, _ = _mva(tmp_path, capsys, text)
    assert status == 0 and "no queueing station carries load: stable at any arrival rate" in out


def test_an_overload_reads_without_exponent(tmp_path, capsys):
    status, out, err = _mva(tmp_path, capsys, _open("1000000"))
    assert status == 2 and "utilization 10,000 >= 1 per server" in err and "at most 0.0001 x" in err
    assert not EXPONENT.search(err)


@pytest.mark.parametrize("text, key, name", [
    ('classes:\n  "": {population: 3}\nstations:\n  cpu: {demands: {"": 1}}\n', "classes", "''"),
    ('classes:\n  a: {population: 3}\nstations:\n  " ": {demands: {a: 1}}\n', "stations", "' '"),
])
def test_an_empty_name_is_called_empty(tmp_path, capsys, text, key, name):
    status, out, err = _mva(tmp_path, capsys, text)
    assert status == 2 and out == ""
    assert err.endswith(f"m.yaml: {key}: a name is empty ({name}); give each a name of letters or digits\n")
    assert "must be text" not in err
