"""Whole numbers read as whole numbers (report 08 printed a window of 6 hours as 6.0), one precision per column, and a
figure with its interval may wrap before its bracket (report 08's fleet table was 998 px wide in a 974 px column at a
1,024 px window, its runway column behind a scroll bar)."""
from __future__ import annotations

import pandas as pd

from capmodel.formatting import NOWRAP, Column, table


def _cells(values, **column):
    made = table(pd.DataFrame({"v": values}), {"v": Column("v", **column)})
    return [row[0] for row in made.cells()]


def test_a_fixed_decimals_column_of_whole_numbers_shows_them_whole():
    # 6 h of one-second FTDC spans 21,599 s: 5.99972 h, shown at one decimal as 6.0, so whole
    assert _cells([5.999722222222222, 6.0, None], decimals=1) == ["6", "6", "—"]
    assert _cells([24.0, 36.0, float("inf")], decimals=1, infinite="never") == ["24", "36", "never"]


def test_one_fraction_keeps_the_decimals_for_the_whole_column():
    assert _cells([6.0, 1.5], decimals=1) == ["6.0", "1.5"]
    assert _cells([7.6, 11.8, 38.0], decimals=1) == ["7.6", "11.8", "38.0"]


def test_a_figure_with_its_interval_breaks_only_before_its_bracket():
    made = table(pd.DataFrame({"spare": ["-3.3% (-3.5% to -3.3%)", "85%"], "runway": ["past the target now", "7.6"]}),
                 {"spare": Column("spare", "text"), "runway": Column("runway", "text")})
    page = made._repr_html_()
    assert f'<td class="text">-3.3% {NOWRAP}(-3.5% to -3.3%)</span></td>' in page
    assert "<td class=\"text keep\">85%</td>" in page and "<td class=\"text keep\">past the target now</td>" in page


def test_fleet_table_shows_its_window_whole():
    from capmodel.observe.fleet import FLEET_COLUMNS, Fleet
    from tests.support.fleet_rows import fleet_row

    rows = pd.DataFrame([
        fleet_row(cluster="rs0", member=f"rs0-{i}.example.net:27017", hours=5.999722222222222, busiest_ops=2577.0,
             capacity_ops=21051.0, method="operational laws", cpu_ms_per_op=cpu, cores=8.0, spare_fraction=0.85,
             spare_low=0.84, spare_high=0.88, verdict="weak", runway_months=38.5, reasons=[],
             evidence={"grade": "weak", "reasons": []}) for i, cpu in enumerate([0.2357, 0.38])],
        columns=FLEET_COLUMNS)
    made = Fleet(rows, "2 local Dask worker(s)", None).reading_table()
    headers = [c.header for c in made.columns.values()]
    shown = [dict(zip(headers, row)) for row in made.cells()]
    assert [r["window (h)"] for r in shown] == ["6", "6"]
    # one precision per column (tests/formatting/test_column_precision.py): 0.380 under 0.236, never 0.38
    assert [r["CPU per operation (ms)"] for r in shown] == ["0.236", "0.380"]
