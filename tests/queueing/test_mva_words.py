"""The multi-class MVA answer in words: each class sentence shows the tables' figures with their units (throughput in
ops/s, response times in ms, the bottleneck's utilization in the station table's percent format), the stability note
of an open network is true and has no exponent, a network with no load says it has no bottleneck, and an empty class
or station name is called empty; the printed tables show a dash where a figure does not apply, and large figures
(throughputs, response times, a what-if's room factor) read with thousands separators, not exponents."""
from __future__ import annotations

import re

import pytest

from capmodel.cli import main
from capmodel.models.queueing.multiclass import approximate_multiclass_mva, multiclass_mva
from capmodel.models.queueing.network import formatted_class_table, formatted_station_table
from tests.queueing.test_mva_command import MIXED_WITH_DELAY, _model
from tests.queueing.test_mva_multiclass import (
    CHANDY_DEMANDS,
    CHANDY_POPULATIONS,
    LAZOWSKA_DEMANDS,
    LAZOWSKA_POPULATIONS,
    LAZOWSKA_THINK,
)

# a CPU exactly half busy: one class of 1 customer, demand 0.5 s at the cpu, 0.5 s of think time: X = 1 / (0.5 +
# 0.5) = 1 per s, U = X·D = 50%
HALF = ({"cpu": {"a": 0.5}}, {"a": 1}, {"a": 0.5})


def solved():
    yield multiclass_mva(LAZOWSKA_DEMANDS, LAZOWSKA_POPULATIONS, LAZOWSKA_THINK)
    yield multiclass_mva(CHANDY_DEMANDS, CHANDY_POPULATIONS)
    yield approximate_multiclass_mva(CHANDY_DEMANDS, CHANDY_POPULATIONS, method="schweitzer")
    yield multiclass_mva(*HALF)


@pytest.mark.parametrize("result", list(solved()), ids=["lazowska", "chandy", "chandy-schweitzer", "half"])
def test_every_class_sentence_shows_the_tables_figures_with_units(result):
    text = result.describe()
    classes = formatted_class_table(result)
    headers = [c.header for c in classes.columns.values()]
    for cells in classes.cells():
        # the same figures, spelled alike: the column showed 0.1250 above 0.8750 where the sentence said 0.125
        row = dict(zip(headers, cells))
        assert f"{row['class']}: {row['throughput (ops/s)']} ops/s at {row['response time (ms)']} ms" in text
    assert " per s" not in text and not re.search(r"\d s\b", text)
    stations = formatted_station_table(result)
    headers = [c.header for c in stations.columns.values()]
    shown = {dict(zip(headers, cells))["station"]: dict(zip(headers, cells))["utilization"]
             for cells in stations.cells()}
    assert f"Bottleneck: {result.bottleneck} (utilization {shown[result.bottleneck]})." in text


def test_a_network_with_no_load_says_none_is_the_bottleneck():
    result = multiclass_mva({"cpu": {"a": 0}, "disk": {"a": 0}}, {"a": 3}, {"a": 1})
    assert result.bottleneck is None
    text = result.describe()
    assert "No station carries load, so none is the bottleneck." in text and "Bottleneck" not in text


def test_a_half_busy_cpu_reads_50_percent_in_the_sentence_and_the_table():
    result = multiclass_mva(*HALF)
    assert result.utilization["cpu"] == pytest.approx(0.5)
    assert "a: 1 ops/s at 500 ms" in result.describe() and "(utilization 50%)" in result.describe()


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


def test_text_tables_show_a_dash_not_nan_where_a_figure_does_not_apply(tmp_path, capsys):
    # a delay has no utilization; in a mixed network an open class has no population and a closed one no arrival rate
    status, out, err = _mva(tmp_path, capsys, MIXED_WITH_DELAY)
    assert status == 0, err
    assert "NaN" not in out and "nan" not in out.lower().replace("mixed", "")
    station_rows = {line.split()[0]: line.split() for line in out.splitlines() if line.startswith(("cpu ", "net "))}
    assert station_rows["net"][1:3] == ["delay", "—"]     # the formatting layer's dash, explained under the table


def test_large_figures_read_with_separators_not_exponents(tmp_path, capsys):
    n, demand = 100_000_000, 0.0003
    path = _model(tmp_path, {"reads": n}, demand)
    assert main(["mva", str(path), "--solver", "schweitzer"]) == 0
    out, err = capsys.readouterr()
    x = 1 / demand
    response = n / x
    assert f"reads: {round(x):,} ops/s at {round(response * 1000):,} ms" in out, out     # as people read them
    assert "e+" not in out


def test_a_large_room_factor_is_written_with_separators(observed, capsys):
    # --rates writes=1 on a 4-core server leaves room for over a thousand times the load (the factor's value is
    # checked against the cores in tests/queueing/test_mva_observed.py)
    assert main(["mva", "--observed", str(observed), "--cores", "4", "--rates", "writes=1", "--bootstrap", "0"]) == 0
    out = capsys.readouterr().out
    room = re.search(r"room for ([\d,]+)x this load", out)
    assert room and re.fullmatch(r"\d{1,3}(,\d{3})+", room.group(1)), out
    assert not re.search(r"\d{4}", out.replace(room.group(1), ""))   # no other figure without a separator
