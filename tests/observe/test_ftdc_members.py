"""``capmodel observe --ftdc`` with several members' folders that do not line up: two containers that both call
themselves mongo:27017 with different FTDC are two members told apart by folder (the analyst cannot rename what a
server's metadata says), a member's folder copied is counted once, one folder named twice is one server (not a set
of one), a blank metadata hostname names the member by its folder, members whose windows do not overlap are said to,
a member of one interval keeps its row, and a second observation into one folder leaves nothing of the first.
"""
from __future__ import annotations

import datetime as dt
import json
import shutil

import pytest

from capmodel.cli import main
from capmodel.observe import synthetic

START = dt.datetime(2026, 11, 2, tzinfo=dt.timezone.utc)


def _server(parent, name, **kw):
    kw = {"hours": 0.25, "start": START, "filler_metrics": 3, "chunks_per_file": 2, "cpu_ms_per_op": 0.3, **kw}
    return str(synthetic.write_server(synthetic.SyntheticServer(**kw), parent / name / "diagnostic.data"))


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    parent = tmp_path_factory.mktemp("h8members")
    made = {
        "a": _server(parent, "a", host="a:27017", replica_set="rsA", seed=1, mean_rate=1500.0),
        "b": _server(parent, "b", host="b:27017", replica_set="rsA", seed=2, mean_rate=700.0),
        "late": _server(parent, "late", host="late:27017", replica_set="rsA", seed=3, mean_rate=700.0,
                        start=START + dt.timedelta(hours=5)),
        "twin1": _server(parent, "twin1", host="mongo:27017", replica_set="rsT", seed=4, mean_rate=1500.0),
        "twin2": _server(parent, "twin2", host="mongo:27017", replica_set="rsT", seed=5, mean_rate=500.0),
        "blank": _server(parent, "blank", host="", seed=6, mean_rate=700.0),
        "one": _server(parent, "one", host="one:27017", replica_set="rsA", seed=7, hours=1 / 3600),
    }
    shutil.copytree(parent / "a", parent / "acopy")
    made["acopy"] = str(parent / "acopy" / "diagnostic.data")
    return made


def _members(folders, names, tmp_path, capsys):
    code = main(["observe", "--ftdc", *[folders[n] for n in names], "--out", str(tmp_path / "o"), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def test_namesakes_with_different_ftdc_are_two_members_told_apart_by_folder(folders, tmp_path, capsys):
    result = _members(folders, ["twin1", "twin2"], tmp_path, capsys)
    hosts = [m["host"] for m in result["members"]]
    assert hosts == [f"mongo:27017 ({folders['twin1']})", f"mongo:27017 ({folders['twin2']})"]
    # twin1 was generated three times as busy, on the same cores and demand: it is the closer to its capacity
    assert result["limiting_member"] == hosts[0]
    assert "2 folders name the member mongo:27017 (different FTDC): each is named by its folder too" in result["notes"]
    assert len({p.name for p in (tmp_path / "o" / "members").iterdir()}) == 2      # one folder each, none overwritten


def test_a_copied_members_folder_is_counted_once(folders, tmp_path, capsys):
    result = _members(folders, ["a", "acopy", "b"], tmp_path, capsys)
    assert [m["host"] for m in result["members"]] == ["a:27017", "b:27017"]
    assert f"{folders['acopy']} holds a copy of {folders['a']}'s FTDC (the same member and window): counted once" \
        in result["notes"]
    assert result["limiting_member"] == "a:27017" and result["replica_set"] == "rsA"     # the busier of the 2


def test_one_folder_named_twice_is_one_server_not_a_set_of_one(folders, tmp_path, capsys):
    twice = json.loads(_json(["--ftdc", folders["a"], folders["a"], "--out", str(tmp_path / "o2")], capsys))
    assert (tmp_path / "o2" / "samples.csv").is_file() and not (tmp_path / "o2" / "members").exists()
    assert f"--ftdc names one server's folder 2 times ({folders['a']}): read once, as one server" in twice["notes"]
    once = json.loads(_json(["--ftdc", folders["a"], "--out", str(tmp_path / "o3")], capsys))
    # one server's answer: no members and no member limiting a set, the same figures as the folder given once
    assert "members" not in twice and "limiting_member" not in twice
    assert twice["intervals"] == once["intervals"] and twice["capacity"] == once["capacity"]


def _json(argv, capsys) -> str:
    code = main(["observe", *argv, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def test_a_blank_hostname_names_the_member_by_its_folder(folders, tmp_path, capsys):
    result = _members(folders, ["a", "blank"], tmp_path, capsys)
    assert [m["host"] for m in result["members"]] == ["a:27017", "blank"]       # before: ":27017"


def test_members_whose_windows_do_not_overlap_are_said_to(folders, tmp_path, capsys):
    result = _members(folders, ["a", "b", "late"], tmp_path, capsys)
    apart = [n for n in result["notes"] if n.startswith("the members' windows do not overlap")]
    assert apart and "late:27017: 2026-11-02 05:00 to 2026-11-02 05:15 UTC" in apart[0]
    together = _members(folders, ["a", "b"], tmp_path / "2", capsys)
    assert not [n for n in together["notes"] if "windows" in n]


def test_a_member_with_one_interval_has_its_row_and_no_capacity(folders, tmp_path, capsys):
    rows = {m["host"]: m for m in _members(folders, ["a", "one"], tmp_path, capsys)["members"]}
    assert rows["one:27017"]["intervals"] == 1 and rows["one:27017"]["capacity"] is None


def test_a_second_observation_into_one_folder_leaves_nothing_of_the_first(folders, tmp_path, capsys):
    # before: observing a, b, late, then a and b into the same --out left members/late_27017 (read later by
    # 'mva --observed' as if current); then one server left members.csv and every member's folder beside its tables
    out = tmp_path / "o"
    for names in (["a", "b", "late"], ["a", "b"], ["a"]):
        assert main(["observe", "--ftdc", *[folders[n] for n in names], "--out", str(out)]) == 0
        capsys.readouterr()
        if len(names) > 1:
            assert sorted(p.name for p in (out / "members").iterdir()) == [f"{n}_27017" for n in sorted(names)]
    assert sorted(p.name for p in out.iterdir()) == [".capmodel.lock", "curve.csv", "observe.json", "samples.csv"]


def test_a_changed_or_foreign_file_of_the_first_observation_is_left_as_found(folders, tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["observe", "--ftdc", folders["a"], folders["b"], "--out", str(out)]) == 0
    (out / "members" / "b_27017" / "notes.txt").write_text("mine")
    with open(out / "members.csv", "a") as handle:
        handle.write("edited\n")
    assert main(["observe", "--ftdc", folders["a"], "--out", str(out)]) == 0
    capsys.readouterr()
    assert (out / "members.csv").read_text().endswith("edited\n")
    assert sorted(p.name for p in (out / "members" / "b_27017").iterdir()) == ["notes.txt"]


def test_an_ftdc_folder_is_not_offered_to_resume_and_a_live_one_not_overwritten(folders, tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["observe", "--ftdc", folders["a"], "--out", str(out)]) == 0
    capsys.readouterr()
    # before: "already holds observe.json; pass --resume to continue that observation", which --resume refused
    assert main(["observe", "--uri", "mongodb://127.0.0.1:1/", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"holds the observation of FTDC {folders['a']}, which live sampling cannot continue" in err
    assert "--resume" not in err
    live = tmp_path / "live"
    live.mkdir()
    (live / "observe.json").write_text(json.dumps({"format_version": 1, "source": "mongodb://u:***@h:1/",
                                                   "members": ["h:1"], "sessions": []}))
    (live / "samples.csv").write_text("time,interval_s,dropped\n")
    # before: "samples.csv was not written by capmodel (or was changed since)", of a file capmodel wrote
    assert main(["observe", "--ftdc", folders["a"], "--out", str(live)]) == 2
    assert "holds a live observation of mongodb://u:***@h:1/" in capsys.readouterr().err


def test_a_standalones_ftdc_beside_a_sets_members_is_said_and_crowns_no_set_limit(folders, tmp_path, capsys):
    # before: "(replica set rsA)" in the source line and "a:27017 limits the set" with a standalone server among them
    result = _members(folders, ["a", "blank"], tmp_path, capsys)
    assert result["replica_set"] is None
    assert "blank names no replica set in its FTDC (a standalone server), beside members of rsA" in result["notes"]
    assert result["limiting_member"] == "a:27017"      # the closest to its capacity, of no one set
