"""What ``fleet`` and ``observe --ftdc`` over members print, and what the fleet's answer, reading table and reasons
say, checked as wording: every row on one line whatever its folder is called (a newline in a name shown as ``\\n``),
hostile names shown literally in report 08's reasons, a spare interval written as a range a reader can parse
("-3% (-5% to -1%)") or as the figure alone when it has no width, the reading table's units and figures without
Python reprs, the answer saying each fact once and naming a saturated server, a negative spare read as "above", a
limit not claimed where an unranked member may be closer, and cut files said. The fleet's values are checked on its
JSON and ``Fleet`` in the other files of this folder."""
from __future__ import annotations

import json
import shutil

import pytest

from capmodel.cli import main
from tests.fleet.test_fleet_folders import write_odd_fleet
from tests.support.fleet_rows import fleet_row, known_table


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
        fleet_row(cluster="rs0", member="a:1", hours=2.0, busiest_ops=1030.0, capacity_ops=1250.0,
             method="operational laws", spare_fraction=-0.03, spare_low=-0.05, spare_high=-0.01, verdict="weak",
             runway_months=0.0, evidence={"grade": "weak", "reasons": []}),
        fleet_row(cluster="rs1", member="b:1", hours=2.0, busiest_ops=500.0, capacity_ops=2000.0,
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
        fleet_row(cluster="rs0", member="rs0-0.example.net:27017", hours=6.0, busiest_ops=28058.0, capacity_ops=33949.4,
             method="operational laws", cpu_ms_per_op=0.2357, cores=8.0, spare_fraction=-0.03, spare_low=-0.05,
             spare_high=-0.01, verdict="weak", runway_months=0.0, reasons=["over_target"], evidence=reasons),
        fleet_row(folder="/x/broken", error="/x/broken/metrics.1: truncated FTDC file"),
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


def test_observe_members_text_words_a_negative_spare_and_gives_runways_and_does_not_crown_a_limit_it_cannot_know(
        generated, tmp_path, capsys):
    # db-a1 peaks near 70% of its capacity: past a 60% target, its spare is negative and must read as "above";
    # a member whose files cannot be read may be the busier one, so the ranked one is not called the set's limit
    from capmodel.formatting import percent

    broken = tmp_path / "copy" / "diagnostic.data"
    shutil.copytree(generated / "db-b1_27017" / "diagnostic.data", broken)
    first = sorted(broken.glob("metrics.*"))[0]
    data = bytearray(first.read_bytes())
    data[2000:2100] = bytes(b ^ 0x5A for b in data[2000:2100])
    first.write_bytes(bytes(data))
    folders = [str(generated / "db-a1_27017" / "diagnostic.data"), str(generated / "db-a2_27018" / "diagnostic.data")]
    argv = ["observe", "--ftdc", *folders, "--growth", "0.05", "--utilization-target", "0.6"]
    assert main([*argv, "--out", str(tmp_path / "j"), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    by_host = {m["host"]: m for m in result["members"]}
    a1, a2 = by_host["db-a1:27017"], by_host["db-a2:27018"]
    # the README's "capacity" and "evidence" of observe --json: for a replica set, the limiting member's
    assert result["limiting_member"] == "db-a1:27017" and result["capacity"] == a1["capacity"]
    assert result["evidence"] == a1["capacity"]["evidence"]
    assert a1["spare_fraction"] < 0 < a2["spare_fraction"]
    assert main([*argv, "--out", str(tmp_path / "t")]) == 0
    lines = capsys.readouterr().out.splitlines()
    line_a1 = next(line for line in lines if line.strip().startswith("db-a1:27017:"))
    line_a2 = next(line for line in lines if line.strip().startswith("db-a2:27018:"))
    assert f"already {percent(-a1['spare_fraction'])} above its planned throughput" in line_a1
    assert "past its target now" in line_a1 and "-" not in line_a1.split("above")[0].split("ops/s,")[-1]
    runway = a2["capacity"]["runway_months"]["estimate"]
    assert f"{percent(a2['spare_fraction'])} of its planned throughput spare" in line_a2   # generated: no width
    assert f"{runway:.1f} months of runway at 5% growth a month" in line_a2
    assert lines[-2].startswith("db-a1:27017 limits the set:")
    assert lines[-2].endswith("the least spare of the 2 members.")
    argv.insert(2 + len(folders), str(broken))
    assert main([*argv, "--out", str(tmp_path / "b")]) == 0
    answer = capsys.readouterr().out.splitlines()[-2]
    assert answer.startswith("db-a1:27017 is the closest to its capacity of the 2 ranked members: ")
    # db-b1 belongs to another replica set (db-b): two sets have no one limit, so no "set's limit" is claimed
    assert "a server that could not be ranked may be closer to its capacity" in answer and "db-b1:27017: " in answer
    assert "the set's limit" not in answer


def test_a_quieter_unranked_member_does_not_hide_the_limit(generated, tmp_path, capsys):
    # db-a2 peaks at 35% of its 4 cores; told it has 0.3 core the laws' verdict is unusable (its load exceeds the
    # saturation computed): it cannot be ranked, but it carried less than db-a1, which still limits the set
    from capmodel.observe.members import assess, observe_ftdc_members

    observed = observe_ftdc_members([generated / "db-a1_27017" / "diagnostic.data",
                                     generated / "db-a2_27018" / "diagnostic.data"])
    quiet = next(m for m in observed.members if m.host == "db-a2:27018")
    quiet.cores = 0.3
    assess(quiet)
    assert not quiet.usable
    busy = next(m for m in observed.members if m.host == "db-a1:27017")
    assert quiet.capacity.observed_peak_throughput < busy.capacity.observed_peak_throughput
    answer = observed.describe()
    assert answer.startswith("db-a1:27017 limits the set: ") and "the members not ranked carried less load" in answer
    assert "Not ranked (verdict unusable or no capacity): db-a2:27018: " in answer


def test_a_spare_interval_without_width_shows_the_figure_alone():
    # an interval with no width as shown (an exactly fitted CPU per operation) is left out; one with width keeps its
    # ends, in the table and in the sentence
    import pandas as pd

    from capmodel.models.estimate import Estimate
    from capmodel.observe.fleet import FLEET_COLUMNS, Fleet
    from capmodel.observe.members import spare_phrase

    def spare_cell(low, high):
        rows = pd.DataFrame([fleet_row(cluster="rs0", member="a:1", busiest_ops=1000.0, capacity_ops=1250.0,
                                  spare_fraction=-0.033, spare_low=low, spare_high=high, verdict="weak")],
                            columns=FLEET_COLUMNS)
        made = Fleet(rows, "1 local Dask worker", None).reading_table()
        return dict(zip([c.header for c in made.columns.values()], made.cells()[0]))["spare of the planned throughput"]

    assert spare_cell(-0.033, -0.033) == "-3.3%"
    assert spare_cell(-0.05, -0.01) == "-3.3% (-5.0% to -1.0%)"     # the interval at the figure's precision

    class Capacity:
        spare_fraction = Estimate(-0.033, -0.033, -0.033)
    assert spare_phrase(Capacity()) == "already 3.3% above its planned throughput"
    Capacity.spare_fraction = Estimate(0.31, 0.25, 0.36)
    assert spare_phrase(Capacity()) == "31% of its planned throughput spare (25% to 36%)"


@pytest.mark.parametrize("busiest, capacity, spare, runway", [
    (1030.0, 1250.0, -0.03, 0.0),       # past the target, below the capacity
    (13325.0, 13266.0, -0.03, 0.0),     # past the capacity: saturated (report 08's generated fleet)
    (1250.0, 1250.0, -0.25, 0.0),       # exactly at the capacity: saturated
    (500.0, 2000.0, 0.6, 18.8),         # room left, a runway
    (800.0, 1000.0, 0.0, 0.0),          # exactly at the target
])
def test_the_fleet_answer_says_each_fact_once_and_names_a_saturated_server(busiest, capacity, spare, runway):
    import pandas as pd

    from capmodel.models.runway import PAST_TARGET_WORDS
    from capmodel.observe.fleet import FLEET_COLUMNS, Fleet

    rows = pd.DataFrame([fleet_row(cluster="rs0", member="a:1", hours=2.0, busiest_ops=busiest, capacity_ops=capacity,
                              method="operational laws", spare_fraction=spare, spare_low=spare, spare_high=spare,
                              verdict="weak", runway_months=runway, runway_low=runway, runway_high=runway,
                              evidence={"grade": "weak", "reasons": []})], columns=FLEET_COLUMNS)
    fleet = Fleet(rows, "1 local Dask worker", 0.05)
    answer = fleet.describe()
    assert answer.count("past its utilization target") == (1 if runway == 0 else 0)
    assert answer.count("already") == 0
    saturated = busiest >= capacity
    assert ("saturated: its busiest load" in answer) == saturated
    if saturated:
        assert f"{busiest:,.0f} ops/s, is at or past its capacity of {capacity:,.0f} ops/s" in answer
    if runway > 0:
        assert f"reaches its target in {runway:.1f} months" in answer
    # the table, the CLI text and the figure say a runway of 0 in one phrase
    cells = dict(zip([c.header for c in fleet.reading_table().columns.values()], fleet.reading_table().cells()[0]))
    assert cells["runway (months)"] == (PAST_TARGET_WORDS if runway == 0 else f"{runway:.1f}")
    row = next(line for line in fleet.summary().splitlines() if line.startswith("rs0 "))
    assert row.endswith(PAST_TARGET_WORDS if runway == 0 else f"{runway:.1f}") and " 0.0" not in row


def test_a_server_read_from_cut_files_says_so_and_a_failed_one_is_named_by_its_folder():
    # report 08 ranked a server whose newest file was cut at a third (1 h of its window read) beside the others and
    # said nothing of the damage that observe --ftdc reports; a failed row showed "—" where its name belongs
    import pandas as pd

    from capmodel.observe.fleet import FLEET_COLUMNS, Fleet

    cut = "/f/a/metrics.2: truncated FTDC file: it ends inside the document at byte offset 299"
    evidence = {"grade": "weak", "reasons": [{"code": "x", "grade": "weak", "value": None, "message": "few"}]}
    rows = pd.DataFrame([
        fleet_row(cluster="rs0", member="a:27017", hours=1.0, busiest_ops=900.0, capacity_ops=1000.0,
             method="operational laws", cpu_ms_per_op=1.0, cores=1.0, spare_fraction=-0.125, spare_low=-0.2,
             spare_high=-0.1, verdict="weak", runway_months=0.0, reasons=["x"], evidence=evidence, notes=cut),
        fleet_row(folder="/f/bad/diagnostic.data", error="/f/bad/diagnostic.data/metrics.x: not an FTDC file"),
    ], columns=FLEET_COLUMNS)
    fleet = Fleet(rows, "1 local Dask worker", None)
    assert fleet.describe().endswith("(weak evidence, from the complete part of its cut files).")
    assert fleet.reasons_text().splitlines()[0] == (
        f"- **rs0 · a:27017** (weak): few; read from the complete part of its files: {cut}")
    made = fleet.reading_table()
    member = [c.header for c in made.columns.values()].index("member")
    assert [row[member] for row in made.cells()] == ["a:27017", "/f/bad/diagnostic.data"]


def test_the_fleet_answer_from_a_known_table_reads_in_full():

    from capmodel.observe.fleet import Fleet, urgency_order

    rows = known_table()
    fleet = Fleet(urgency_order(rows), "2 local Dask workers", 0.05)
    assert fleet.describe() == ("Of 4 servers (1 unreadable; 1 not ranked (verdict unusable)), the most urgent is "
                                "a:1 of rs0: busiest at 1,030 ops/s of a capacity of 1,250 ops/s (operational laws); "
                                "past its utilization target now, 3% above its planned throughput (weak evidence).")


def test_one_servers_observation_from_a_folder_named_with_a_newline_prints_one_line_each(odd_fleet, tmp_path, capsys):
    named = tmp_path / "two\nlines"
    shutil.copytree(odd_fleet / "busy" / "diagnostic.data", named / "diagnostic.data")
    assert main(["observe", "--ftdc", str(named), "--out", str(tmp_path / "o\nut")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"source: FTDC {tmp_path}/two\\nlines/diagnostic.data"
    assert [line for line in out if line.startswith("wrote ")] == [
        f"wrote {tmp_path}/o\\nut/samples.csv and {tmp_path}/o\\nut/curve.csv"]
    assert not [line for line in out if line.startswith(("lines", "ut/"))]


@pytest.mark.parametrize("ranked", [1, 2])
def test_a_copy_is_said_as_counted_once(ranked):
    import pandas as pd

    from capmodel.observe.fleet import FLEET_COLUMNS, Fleet

    rows = [fleet_row(cluster="rs0", member=f"m{i}:27017", hours=1.0, busiest_ops=500.0, capacity_ops=2000.0,
                 method="operational laws", spare_fraction=0.6, spare_low=0.6, spare_high=0.6, verdict="sound",
                 runway_months=18.8, evidence={"grade": "sound", "reasons": []}, folder=f"/f/m{i}")
            for i in range(ranked)]
    rows.append(fleet_row(cluster="rs0", member="m0:27017", folder="/f/copy", duplicate_of="/f/m0",
                     error="a copy of /f/m0"))
    fleet = Fleet(pd.DataFrame(rows, columns=FLEET_COLUMNS), "1 local Dask worker", 0.05)
    servers = "1 server" if ranked == 1 else f"{ranked} servers"
    assert (fleet.copies, fleet.failed) == (1, 0)
    assert fleet.describe().startswith(f"Of {servers} (1 more folder held a copy of one, counted once)")
