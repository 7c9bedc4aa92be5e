"""report --json when a report fails (hostile round seven).

Before: stdout held two JSON documents, the reports' records and then {"error": ...} (the same class as fleet and
observe's members; see test_hostile7_fleet_json.py). One render (a kernel start, about 20 s on a shared machine):
a flat curve, which the notebook's model comparison refuses.
"""
from __future__ import annotations

import json

from capmodel.cli import main


def test_a_failed_report_is_one_json_object_with_its_error(tmp_path, capsys):
    flat = tmp_path / "flat.csv"
    flat.write_text("concurrency,throughput\n1,100\n2,100\n4,100\n8,100\n")
    out_dir = tmp_path / "rep"
    assert main(["report", "02_fit_curve", "-p", "file", str(flat), "--out", str(out_dir), "--json"]) == 2
    out, err = capsys.readouterr()
    result = json.loads(out)                      # the whole of stdout is one document
    # the error inside the kernel names no file: the line names the parameters the report was given
    assert result["error"].startswith(f"report 02_fit_curve failed (given -p file {flat}): cell ")
    assert "R² is undefined" in result["error"]
    assert result["error"].endswith(f"(the traceback is in {out_dir / '02_fit_curve.log'})")
    assert [r["name"] for r in result["reports"]] == ["02_fit_curve"]
    assert err == f"capmodel: error: {result['error']}\n"
