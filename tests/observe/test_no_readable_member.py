"""``observe`` with several members' FTDC, none of them readable: nothing is written (an existing --out folder is
left as found), no "wrote" line, with --json one JSON object carrying the rows and the error, exit 2."""
from __future__ import annotations

import json

import pytest

from capmodel.cli import main

GARBAGE = b"junk, not BSON"


@pytest.fixture
def unreadable(tmp_path):
    """Two members' folders whose only FTDC file is not FTDC (garbage, then an empty one)."""
    folders = []
    for name, data in (("a", GARBAGE), ("b", b"")):
        folder = tmp_path / name / "diagnostic.data"
        folder.mkdir(parents=True)
        (folder / "metrics.2026-11-02T00-00-00Z-00000").write_bytes(data)
        folders.append(str(folder))
    return folders


def test_no_wrote_line_and_nothing_written(unreadable, tmp_path, capsys):
    out_dir = tmp_path / "o"
    assert main(["observe", "--ftdc", *unreadable, "--out", str(out_dir)]) == 2
    out, err = capsys.readouterr()
    assert not any(line.startswith("wrote") for line in out.splitlines())
    assert err.count("\n") == 1 and "none of the 2 members' FTDC could be read" in err
    assert not out_dir.exists()


def test_an_existing_out_folder_is_left_as_found(unreadable, tmp_path, capsys):
    out_dir = tmp_path / "o"
    out_dir.mkdir()
    assert main(["observe", "--ftdc", *unreadable, "--out", str(out_dir)]) == 2
    capsys.readouterr()
    assert list(out_dir.iterdir()) == []


def test_json_is_one_object_with_the_rows_and_the_error(unreadable, tmp_path, capsys):
    assert main(["observe", "--ftdc", *unreadable, "--out", str(tmp_path / "o"), "--json"]) == 2
    out, err = capsys.readouterr()
    result = json.loads(out)                          # one document: the whole of stdout
    assert "none of the 2 members' FTDC could be read" in result["error"]
    assert [m["intervals"] for m in result["members"]] == [0, 0]
    assert all(m["error"] for m in result["members"]) and result["files"] is None
    assert err.count("\n") == 1 and result["error"] in err
    assert not (tmp_path / "o").exists()
