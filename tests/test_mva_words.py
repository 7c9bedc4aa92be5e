"""The multi-class MVA answer in words shows each figure as ``capmodel mva``'s tables do: throughput in ops/s,
response times in ms, the bottleneck's utilization in the station table's percent format (it read '2,933 per s at
0.00364 s' and '50.0%' beside a table's '50%')."""
import re

import pytest

from capmodel.models.queueing.network import formatted_class_table, formatted_station_table
from capmodel.models.queueing.multiclass import approximate_multiclass_mva, multiclass_mva
from tests.test_mva_multiclass import (CHANDY_DEMANDS, CHANDY_POPULATIONS, LAZOWSKA_DEMANDS,
                                       LAZOWSKA_POPULATIONS, LAZOWSKA_THINK)

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


def test_a_half_busy_cpu_reads_50_percent_in_the_sentence_and_the_table():
    result = multiclass_mva(*HALF)
    assert result.utilization["cpu"] == pytest.approx(0.5)
    assert "a: 1 ops/s at 500 ms" in result.describe() and "(utilization 50%)" in result.describe()
