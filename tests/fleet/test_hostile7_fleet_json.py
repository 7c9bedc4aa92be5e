"""fleet --json with every server unreadable (hostile round seven).

Before: stdout held two JSON documents, the fleet's rows and then {"error": ...}: a script's json.loads failed on
the very output meant for it (observe's members had the same; see test_hostile7_observe_members.py).
"""
from __future__ import annotations

import json

from capmodel.cli import main


def test_one_json_object_with_the_rows_and_the_error(tmp_path, capsys):
    for name, data in (("a", b"junk, not BSON"), ("b", b"")):
        folder = tmp_path / "fleet" / name / "diagnostic.data"
        folder.mkdir(parents=True)
        (folder / "metrics.2026-11-02T00-00-00Z-00000").write_bytes(data)
    assert main(["fleet", str(tmp_path / "fleet"), "--workers", "1", "--json"]) == 2
    out, err = capsys.readouterr()
    result = json.loads(out)                       # the whole of stdout is one document
    assert result["error"] == "none of the 2 servers could be read (each server's row says why)"
    assert result["servers"] == 2 and result["failed"] == 2
    assert err == f"capmodel: error: {result['error']}\n"
