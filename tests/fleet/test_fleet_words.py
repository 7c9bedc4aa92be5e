"""What ``fleet`` prints and its reading table and reasons say, checked as wording: every row on one line whatever
its folder is called (a newline in a name is shown as ``\\n``), hostile names shown literally in report 08's reasons,
a spare interval written as a range a reader can parse ("-3% (-5% to -1%)"), and the reading table's units, words
and figures without Python reprs. The fleet's values are checked on its JSON and ``Fleet`` in the other files of
this folder."""
from __future__ import annotations

import pytest

from capmodel.cli import main
from tests.fleet.test_fleet import _row
from tests.fleet.test_fleet_folders import write_odd_fleet


@pytest.fixture(scope="module")
def odd_fleet(tmp_path_factory):
    return write_odd_fleet(tmp_path_factory.mktemp("odd_fleet"))


def test_every_row_is_one_line_whatever_the_folder_is_called(odd_fleet, capsys):
    assert main(["fleet", str(odd_fleet), "--workers", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    bad = [line for line in lines if "bad" in line]
    assert len(bad) == 1 and "bad\\nname/diagnostic.data" in bad[0] and "failed:" in bad[0]
    assert not [line for line in lines if line.startswith("name/")]       # before: the row's second half
    brief = [line for line in lines if "brief:27017" in line]
    assert len(brief) == 1 and "not ranked, verdict unusable: no capacity can be stated: only 1 busy" in brief[0]


def test_observe_members_rows_are_one_line_each(odd_fleet, tmp_path, capsys):
    assert main(["observe", "--ftdc", str(odd_fleet), "--out", str(tmp_path / "o")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("source: FTDC ") and "bad\\nname" in lines[0]
    members = [line for line in lines[1:] if line.startswith("  ")]
    assert len(members) == 3 and any(line.startswith("  bad\\nname: 0 intervals; no capacity:") for line in members)
    assert not [line for line in lines if line.startswith("name")]


def test_the_reports_reasons_show_hostile_names_literally_one_item_each():
    # before: a server whose metadata names its host '<img src=x onerror=alert(1)>' put that element into report
    # 08's page (the reasons are markdown, which passes HTML through); a folder named with a newline split its item
    import mistune
    import pandas as pd

    from capmodel.observe.fleet import FLEET_COLUMNS, Fleet

    evidence = {"grade": "weak", "reasons": [{"code": "x", "grade": "weak", "value": None,
                                              "message": "few *intervals*"}]}
    row = {column: None for column in FLEET_COLUMNS}
    hostile = dict(row, cluster="rs_1", member="<img src=x onerror=alert(1)>:27017", verdict="weak", evidence=evidence,
                   folder="/f/a")
    failed = dict(row, folder="/f/bad\nname", error="/f/bad\nname/metrics.1: not an FTDC file")
    text = Fleet(pd.DataFrame([hostile, failed], columns=FLEET_COLUMNS), "1 local Dask worker", None).reasons_text()
    page = mistune.html(text)
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;:27017" in page
    assert "rs_1" in page and "few *intervals*" in page                    # marks shown as written
    assert page.count("<li>") == 2 and "/f/bad\\nname/metrics.1" in page


def test_fleet_text_gives_each_spare_interval_as_a_range_a_reader_can_parse():
    # a negative spare printed as "-3% (-5%--1%)" reads as a subtraction; the range is written out with "to"
    import pandas as pd

    from capmodel.observe.fleet import FLEET_COLUMNS, Fleet

    rows = pd.DataFrame([
        _row(cluster="rs0", member="a:1", hours=2.0, busiest_ops=1030.0, capacity_ops=1250.0,
             method="operational laws", spare_fraction=-0.03, spare_low=-0.05, spare_high=-0.01, verdict="weak",
             runway_months=0.0, evidence={"grade": "weak", "reasons": []}),
        _row(cluster="rs1", member="b:1", hours=2.0, busiest_ops=500.0, capacity_ops=2000.0,
             method="operational laws", spare_fraction=0.6, spare_low=0.55, spare_high=0.65, verdict="sound",
             runway_months=18.8, evidence={"grade": "sound", "reasons": []}),
    ], columns=FLEET_COLUMNS)
    text = Fleet(rows, "1 local Dask worker(s)", 0.05).summary()
    row_a = next(line for line in text.splitlines() if line.startswith("rs0 ") and "a:1" in line)
    row_b = next(line for line in text.splitlines() if line.startswith("rs1 ") and "b:1" in line)
    assert "-3% (-5% to -1%)" in row_a and "%--" not in text
    assert "60% (55% to 65%)" in row_b
    header = text.splitlines()[2]
    assert header.index("verdict") == row_a.index("weak")             # the columns stay aligned


def test_fleet_reading_table_has_units_words_and_no_python_reprs():
    import pandas as pd

    from capmodel.observe.fleet import FLEET_COLUMNS, Fleet

    reasons = {"grade": "weak", "reasons": [{"code": "over_target", "grade": "weak", "value": 1.03,
                                             "message": "the observed peak is already above the 80% target"}]}
    rows = pd.DataFrame([
        _row(cluster="rs0", member="rs0-0.example.net:27017", hours=6.0, busiest_ops=28058.0, capacity_ops=33949.4,
             method="operational laws", cpu_ms_per_op=0.2357, cores=8.0, spare_fraction=-0.03, spare_low=-0.05,
             spare_high=-0.01, verdict="weak", runway_months=0.0, reasons=["over_target"], evidence=reasons),
        _row(folder="/x/broken", error="/x/broken/metrics.1: truncated FTDC file"),
    ], columns=FLEET_COLUMNS)
    made = Fleet(rows, "2 local Dask worker(s)", None).reading_table()
    headers = [c.header for c in made.columns.values()]
    assert "busiest (ops/s)" in headers and "capacity (ops/s)" in headers and "CPU per operation (ms)" in headers
    first, failed = made.cells()
    by_header = dict(zip(headers, first))
    assert by_header["busiest (ops/s)"] == "28,058" and by_header["capacity (ops/s)"] == "33,949"
    assert by_header["cores"] == "8" and by_header["CPU per operation (ms)"] == "0.236"
    assert by_header["spare of the planned throughput"] == "-3% (-5% to -1%)"
    assert dict(zip(headers, failed))["verdict"] == "failed"
    fleet = Fleet(rows, "2 local Dask worker(s)", None)
    assert fleet.reasons_text().splitlines() == [
        "- **rs0 · rs0-0.example.net:27017** (weak): the observed peak is already above the 80% target",
        "- **/x/broken**: failed: /x/broken/metrics.1: truncated FTDC file"]
    text = made.text()
    for raw in ("['", "nan", "None", "NaN", "_ops"):
        assert raw not in text, raw
