"""No cell capmodel writes from outside text is a spreadsheet formula, and our readers read every cell back as it was
(OWASP "CSV Injection": a cell beginning with = + - @ tab or CR is run as a formula)."""
from __future__ import annotations

import datetime as dt
import json

import numpy as np
import pandas as pd
import pytest

from capmodel.csv_cells import guarded, unguarded

def _formula(cell: str) -> bool:
    """The cell (as the file holds it, quotes and all) begins as a spreadsheet formula does."""
    cell = cell.strip('"')
    return cell != "" and cell[0] in "=+-@\t\r"


HOSTILE = ["=HYPERLINK(\"http://x\")", "+1+1", "-2+3", "@SUM(A1)", "\tcmd", "\rcmd", "'quoted", "''twice", "=",
           "plain", "a=b", "", "-"]


def test_a_cell_beginning_like_a_formula_is_written_as_text_and_reads_back():
    for text in HOSTILE:
        written = guarded(text)
        assert unguarded(written) == text
        assert written == "" or written[0] not in "=+-@\t\r"
        assert (written == text) == (text == "" or text[0] not in "=+-@\t\r'")     # other text is written as it is
    assert guarded(-1.5) == -1.5 and guarded(None) is None           # numbers and missing cells are not text


def test_observes_csv_writer_and_its_reader_round_trip(tmp_path):
    from capmodel.observe.observation import write_tables
    from capmodel.csv_cells import unguard_frame

    table = pd.DataFrame({"member": HOSTILE, "value": np.arange(len(HOSTILE)) - 3.5})
    write_tables(tmp_path, {"members": table}, "test")
    text = (tmp_path / "members.csv").read_text()
    cells = [line.split(",")[0].strip('"') for line in text.splitlines()[1:]]
    assert not any(_formula(c) for c in cells)                          # no cell starts a formula
    raw = pd.read_csv(tmp_path / "members.csv", keep_default_na=False)  # read as written, nothing unguarded
    assert raw["value"].tolist() == table["value"].tolist()             # a negative number stays a number
    back = unguard_frame(pd.read_csv(tmp_path / "members.csv", keep_default_na=False))
    assert back["member"].tolist() == HOSTILE and back["value"].tolist() == table["value"].tolist()


def test_the_live_recordings_csv_round_trips(tmp_path):
    from capmodel.observe.recording import _append, _read_samples

    frame = pd.DataFrame({"time": pd.date_range("2026-11-02", periods=3, freq="s", tz="UTC"),
                          "interval_s": [1.0, 1.0, 1.0], "dropped": ["", "", ""],
                          "member": ["=1+1:27017", "@x:1", "-y:2"]})
    _append(tmp_path / "samples.csv", frame.iloc[:2])
    _append(tmp_path / "samples.csv", frame.iloc[2:])
    assert not any(_formula(line.split(",")[-1]) for line in (tmp_path / "samples.csv").read_text().splitlines())
    assert _read_samples(tmp_path / "samples.csv")["member"].tolist() == frame["member"].tolist()


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


@pytest.fixture(scope="module")
def hostile_set(tmp_path_factory):
    from capmodel.cli import main
    from capmodel.observe import synthetic
    from capmodel.observe.member_folders import folder_name

    parent = tmp_path_factory.mktemp("e9guard")
    hosts = ["=HYPERLINK(1):27017", "@evil:27018"]
    folders = []
    for host in hosts:
        server = synthetic.SyntheticServer(host=host, cores=4, hours=0.1, filler_metrics=5, replica_set="+rs",
                                           start=dt.datetime(2026, 11, 2, tzinfo=dt.timezone.utc))
        folders.append(str(synthetic.write_server(server, parent / folder_name(host) / "diagnostic.data")))
    assert main(["observe", "--ftdc", *folders, "--out", str(parent / "o"), "--json"]) == 0
    return parent / "o", hosts


def test_observes_members_csv_and_samples_guard_the_hosts(hostile_set, capsys):
    out, hosts = hostile_set
    for name in ("members.csv", "samples.csv", "curve.csv"):
        for line in (out / name).read_text().splitlines():
            assert not any(_formula(cell) and not _number(cell) for cell in line.split(",")), (name, line)
    written = pd.read_csv(out / "members.csv")
    assert sorted(written["host"]) == sorted("'" + h for h in hosts)   # guarded as the file holds them


def test_our_readers_read_the_hosts_back_as_they_were(hostile_set, capsys):
    from capmodel.cli import main
    from capmodel.errors import InputError
    from capmodel.observe.member_folders import folder_name
    from capmodel.observe.observation import read_observation

    out, hosts = hostile_set
    with pytest.raises(InputError) as refused:            # the combined samples: each member named as it is
        read_observation(out)
    assert f"({', '.join(sorted(hosts))})" in str(refused.value)
    assert all(str(out / "members" / folder_name(h)) in str(refused.value) for h in hosts)
    assert main(["mva", "--observed", str(out), "--cores", "4", "--bootstrap", "0", "--json"]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert f"({', '.join(sorted(hosts))})" in error
    for host in hosts:                                      # each member's own folder reads as its samples
        member = read_observation(out / "members" / folder_name(host))
        assert len(member.samples) > 0


def test_a_pages_table_download_guards_a_host_named_like_a_formula():
    """formatting.Table.csv (fleet.csv, every report table's CSV download): the outside text guarded, numbers kept,
    and the csv module's reader with csv_cells.unguarded gives every cell back as it was."""
    import csv
    import io

    from capmodel.formatting import Column, table

    frame = pd.DataFrame({"host": ["=HYPERLINK(\"http://x\")", "@evil:27018", "db-1:27017", "-db"],
                          "spare": [-0.25, 0.5, np.nan, 1.0]})
    rows = list(csv.reader(io.StringIO(table(frame, {"host": Column("host", "text"), "spare": "spare"}).csv())))
    assert rows[0] == ["host", "spare"]
    assert [r[0] for r in rows[1:]] == ["'=HYPERLINK(\"http://x\")", "'@evil:27018", "db-1:27017", "'-db"]
    assert [r[1] for r in rows[1:]] == ["-0.25", "0.5", "", "1.0"]            # a negative number stays a number
    assert [unguarded(r[0]) for r in rows[1:]] == list(frame["host"])
