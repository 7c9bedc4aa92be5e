"""The newest FTDC file cut inside a document (mongod killed while writing it): its complete chunks and every older
file are read, the cut is named (file, byte offset); a cut in an older file stays an error naming both."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from capmodel.errors import InputError
from capmodel.observe.ftdc import iter_documents
from capmodel.observe.observation import observe_ftdc
from tests.support.cli_run import run

SOURCE = Path(__file__).resolve().parents[1] / "fixtures" / "ftdc_idle" / "metrics.2026-11-24T03-50-37Z-00000"


def _offsets():
    return [offset for offset, _ in iter_documents(SOURCE)]


@pytest.mark.parametrize("into", [3, 100, -1], ids=["stray-bytes", "mid-document", "one-byte-short"])
def test_a_cut_newest_file_keeps_what_is_complete(tmp_path, into):
    offsets, size = _offsets(), SOURCE.stat().st_size
    cut_at = offsets[-1]                                # the last document: where the cut falls
    end = size - 1 if into == -1 else cut_at + into
    folder = tmp_path / "diagnostic.data"             # a complete archive, then the interim file cut
    folder.mkdir()
    shutil.copy(SOURCE, folder / SOURCE.name)
    (folder / "metrics.interim").write_bytes(SOURCE.read_bytes()[:end])
    got, expected = observe_ftdc(folder), observe_ftdc(SOURCE)
    assert len(got.tables["samples"]) == len(expected.tables["samples"]) > 0
    assert len(got.notes) == 1 and str(folder / "metrics.interim") in got.notes[0]
    assert f"byte offset {cut_at}" in got.notes[0]
    done = run("observe", "--ftdc", folder, "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert f"byte offset {cut_at}" in done.stderr and "metrics.interim" in done.stderr


def test_a_cut_older_file_is_still_an_error(tmp_path):
    offsets = _offsets()
    folder = tmp_path / "diagnostic.data"
    folder.mkdir()
    (folder / "metrics.2026-11-24T03-00-00Z-00000").write_bytes(SOURCE.read_bytes()[:offsets[-1] + 50])
    shutil.copy(SOURCE, folder / "metrics.interim")
    with pytest.raises(InputError, match=f"byte offset {offsets[-1]}") as info:
        observe_ftdc(folder)
    assert "metrics.2026-11-24T03-00-00Z-00000" in str(info.value)


def test_fleet_keeps_a_server_whose_newest_file_is_cut(tmp_path):
    offsets = _offsets()
    folder = tmp_path / "fleet" / "a" / "diagnostic.data"
    folder.mkdir(parents=True)
    shutil.copy(SOURCE, folder / SOURCE.name)
    (folder / "metrics.interim").write_bytes(SOURCE.read_bytes()[:offsets[-1] + 100])
    whole = tmp_path / "whole" / "a" / "diagnostic.data"  # the complete archive alone: what the fleet must say
    whole.mkdir(parents=True)
    shutil.copy(SOURCE, whole / SOURCE.name)
    from capmodel.observe.fleet import analyse_server

    got, expected = analyse_server(folder), analyse_server(whole)
    assert "truncated" not in str(got["error"]), got["error"]
    for column in ("member", "error", "busiest_ops", "spare_fraction"):
        assert str(got[column]).replace(str(folder), "F") == str(expected[column]).replace(str(whole), "F")
    done = run("fleet", tmp_path / "fleet", "--json")
    result = json.loads(done.stdout)
    (row,) = result["rows"]                       # the server kept and ranked as the complete archive alone is
    assert result["failed"] == 0 and row["error"] is None, row
    assert row["busiest_ops"] == expected["busiest_ops"] and row["verdict"] == expected["verdict"]
