"""One precision rule per column: a column of figures shows them all with one number of decimals (report 01's
Little's-law table read 1.52 beside 1.5 and 0.53% beside 0.3%), the fewest that show every figure's significant
digits; a column whose rows are different figures (a figure, its unit, its interval) takes each row's decimals, and
says so in its header cell. Checked on a table built here and on every table of every rendered report."""
from __future__ import annotations

import re
from html.parser import HTMLParser

import pandas as pd
import pytest

from capmodel.formatting import Column, column_figure, table
from capmodel.report import notebooks
from tests.support.rendered_reports import render_small

FIGURE = re.compile(r"-?\d[\d,]*(?:\.(\d+))?%?")


INTERVAL = re.compile(r"(\S+) \((\S+) to (\S+)\)")


def _decimals(text: str) -> int | None:
    """The decimals of a cell's figure, and of its interval's ends when it shows one (None: not a figure); a cell
    whose figure and ends differ gives -1, which no column of one precision holds."""
    spans = found.groups() if (found := INTERVAL.fullmatch(text)) else (text,)
    figures = [FIGURE.fullmatch(span) for span in spans]
    if any(figure is None for figure in figures):
        return None
    places = {len(figure.group(1) or "") for figure in figures if figure is not None}
    return places.pop() if len(places) == 1 else -1


def test_a_column_shows_its_figures_with_the_decimals_its_finest_figure_needs():
    # report 01's Little's-law rows: R = N/X of 1.52 and 1.5 ms, differences 0.53% and 0.3% (two significant digits)
    frame = pd.DataFrame({"r": [1.52, 1.5, 10.9], "d": [0.0053, 0.003, 0.8], "n": [4, 8, 16],
                          "cost": [1180.08, 15.47, 450.0]})
    shown = table(frame, {"r": "R (ms)", "d": Column("difference", "percent"), "n": Column("N", "int"),
                          "cost": Column("cost", "money")}).cells()
    assert [row[0] for row in shown] == ["1.52", "1.50", "10.90"]
    assert [row[1] for row in shown] == ["0.53%", "0.30%", "80.00%"]
    assert [row[2] for row in shown] == ["4", "8", "16"]
    assert [row[3] for row in shown] == ["1,180.08", "15.47", "450.00"]
    # whole numbers stay whole, words stay words
    whole = table(pd.DataFrame({"x": [2.0, 30.0, None, float("inf")]}), {"x": Column("x", missing="none")}).cells()
    assert [row[0] for row in whole] == ["2", "30", "none", "unreachable"]
    # a figure's interval shown beside it is spelled at the column's precision, the figure's and every other row's
    spare = pd.DataFrame({"s": [-0.033, 0.31, 0.5], "lo": [-0.0412, 0.2, 0.5], "hi": [-0.021, 0.4, 0.5]})
    shown = table(spare, {"s": Column("spare", "percent", interval=("lo", "hi"))})
    assert [row[0] for row in shown.cells()] == ["-3.30% (-4.12% to -2.10%)", "31.00% (20.00% to 40.00%)", "50.00%"]
    assert shown.csv().splitlines()[:2] == ["spare,\"spare, low end\",\"spare, high end\"", "-0.033,-0.0412,-0.021"]
    # a sentence naming a figure of the column spells it as the column does
    assert column_figure(0.003, frame["d"], Column("difference", "percent")) == "0.30%"


class _Tables(HTMLParser):
    """Each table's number columns: header text and whether its precision follows its rows, and each row's cells."""

    def __init__(self):
        super().__init__()
        self.tables: list[dict] = []
        self.cell: list[str] | None = None
        self.kind = ""

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table":
            self.tables.append({"heads": [], "rows": []})
        elif tag in ("th", "td") and self.tables:
            self.cell, self.kind = [], (attrs.get("class") or "")
            if tag == "th":
                self.tables[-1]["heads"].append([attrs.get("data-precision") == "per-row", self.kind])
        elif tag == "tr" and self.tables:
            self.tables[-1]["rows"].append([])

    def handle_endtag(self, tag):
        if tag == "td" and self.cell is not None and self.tables:
            self.tables[-1]["rows"][-1].append((self.kind.split()[0] if self.kind else "", "".join(self.cell).strip()))
            self.cell = None
        elif tag == "th":
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


@pytest.fixture(scope="module")
def reports(tmp_path_factory, mongod):
    return render_small(tmp_path_factory, mongod.uri)[0]


@pytest.mark.parametrize("name", notebooks.names())
def test_every_number_column_of_every_page_has_one_precision(reports, name):
    parser = _Tables()
    parser.feed((reports / f"{name}.html").read_text(encoding="utf-8"))
    checked = 0      # number cells under the column rule (report 07's tables are all of per-row figures)
    for found in parser.tables:
        per_row = [head[0] for head in found["heads"]]
        rows = [r for r in found["rows"] if r]
        for at in range(max((len(r) for r in rows), default=0)):
            if at < len(per_row) and per_row[at]:
                continue
            cells = [r[at][1] for r in rows if at < len(r) and r[at][0] == "num"]
            places = {d for d in map(_decimals, cells) if d is not None}
            assert len(places) <= 1, (name, at, cells)
            checked += len(cells)
    assert parser.tables, f"{name}: no table found"
    assert checked or all(any(h[0] for h in t["heads"]) for t in parser.tables), name
