"""Each member's folder under observe's ``members/`` is its own and reads back to its host: ``a:b`` and ``a_b`` (and
``[::1]:27017`` and ``__1_:27017``) get different folders, a unicode host a name no file system folds, ``..`` is not
the parent folder, and ``Db1`` and ``db1`` stay apart on a case-insensitive file system."""
from __future__ import annotations

import datetime as dt
import json
import unicodedata

import pytest

from capmodel.errors import InputError
from capmodel.observe.member_folders import folder_name, member_host

HOSTS = ["db1:27017", "db1:27018", "db1_27017", "db1", "a:b", "a_b", "[::1]:27017", "[::1]:27018", "__1_:27017",
         "Db1:27017", "DB1:27017", "dätabase:27017", "da\u0308tabase:27017", "数据库:27017", "..", ".", "a/b",
         "a%2fb", "../etc:1", ".hidden:1", "-x:1", "a b:1", "a\\b:1", "%", "x%41:1", "xA:1"]


def test_every_host_has_its_own_folder_on_any_file_system_and_it_reads_back():
    names = [folder_name(h) for h in HOSTS]
    assert [member_host(n) for n in names] == HOSTS
    assert len(set(names)) == len(HOSTS)
    folded = {unicodedata.normalize("NFD", n).casefold() for n in names}     # a case-insensitive, normalising view
    assert len(folded) == len(HOSTS)
    for name in names:
        assert name not in (".", "..") and not name.startswith(".") and "/" not in name and "\\" not in name
        assert name.isascii() and name.isprintable() and " " not in name
    assert folder_name("db1:27017") == "db1_27017"               # the common name is unchanged
    assert folder_name("[::1]:27017") == "%5b__1%5d_27017"


def test_the_folders_are_distinct_on_disk(tmp_path):
    for host in HOSTS:
        (tmp_path / folder_name(host)).mkdir()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(folder_name(h) for h in HOSTS)
    assert sorted(member_host(p.name) for p in tmp_path.iterdir()) == sorted(HOSTS)


@pytest.mark.parametrize("name", ["", "%61", "A", "a%2", "%zz", "..", ".x", "a/b", "%ff_1", "%4A"])
def test_a_name_folder_name_never_gives_is_refused(name):
    with pytest.raises(InputError, match="not a member's folder name"):
        member_host(name)


def test_an_empty_host_has_no_folder():
    with pytest.raises(InputError, match="empty host"):
        folder_name("")


def test_observe_writes_two_members_whose_old_names_collided_into_two_folders(tmp_path, capsys):
    from capmodel.cli import main
    from capmodel.observe import synthetic

    folders = []
    for host in ("a_b:27017", "a:b:27017"):                     # both were members/a_b_27017
        server = synthetic.SyntheticServer(host=host, cores=4, hours=0.1, filler_metrics=5, replica_set="rs0",
                                           start=dt.datetime(2026, 11, 2, tzinfo=dt.timezone.utc))
        folders.append(str(synthetic.write_server(server, tmp_path / folder_name(host) / "diagnostic.data")))
    assert main(["observe", "--ftdc", *folders, "--out", str(tmp_path / "o"), "--json"]) == 0
    hosts = {m["host"] for m in json.loads(capsys.readouterr().out)["members"]}
    assert hosts == {"a_b:27017", "a:b:27017"}
    written = sorted(p.name for p in (tmp_path / "o" / "members").iterdir())
    assert written == sorted(folder_name(h) for h in hosts) and len(written) == 2
    assert {member_host(n) for n in written} == hosts
