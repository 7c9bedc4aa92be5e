"""What "none" means in plan's VM table: a VM whose fitted curve supports no capacity (flat: the same throughput at
every concurrency) has the binding limit "unsupported", not an objective's, and its verdict says R² is undefined
because the throughput does not vary; report 03 says the same as ``plan``. The printed table's words are checked in
test_plan_words.py."""
from __future__ import annotations

import json

from capmodel.cli import main

CATALOG = "vm,monthly_cost,throughput\nA,100,1000\nB,200,2100\n"
FLAT = "".join(f"A,{n},100\n" for n in (1, 2, 4, 8))
RISING = "B,1,100\nB,2,190\nB,4,340\nB,8,520\nB,16,560\n"


def _plan(tmp_path, capsys, *more):
    (tmp_path / "cat.csv").write_text(CATALOG)
    assert main(["plan", "--catalog", str(tmp_path / "cat.csv"), "--ops-per-user", "0.5", *more]) == 0
    return capsys.readouterr().out


def test_an_unsupported_vm_is_not_said_to_fail_an_objective(tmp_path, capsys):
    (tmp_path / "cat.csv").write_text(CATALOG)
    (tmp_path / "curves.csv").write_text("system,concurrency,throughput\n" + FLAT + RISING)
    # its verdict: R² is undefined because the throughput does not vary (not "R² is not a number")
    assert main(["plan", "--catalog", str(tmp_path / "cat.csv"), "--ops-per-user", "0.5", "--curves",
                 str(tmp_path / "curves.csv"), "--json"]) == 0
    vm = next(v for v in json.loads(capsys.readouterr().out)["vms"] if v["vm"] == "A")
    assert vm["binding_limit"] == "unsupported" and vm["users"] is None
    assert vm["evidence"]["grade"] == "unusable"
    [reason] = vm["evidence"]["reasons"]
    assert reason["code"] == "r2" and reason["value"] is None
    assert reason["message"].startswith("A: R² is undefined: the throughput is 100 ops/s at every point")


def test_report_03_says_the_same_as_plan_of_an_unsupported_vm(tmp_path):
    # report 03's VM table and its runway figure read plan's rows: a VM whose curve is flat carries no users because
    # its curve supports no capacity, not because it fails an objective (its table's note, its bar's label)
    from capmodel.plots.costs import runway_figure
    from capmodel.report.plan_report import plan_report

    (tmp_path / "cat.csv").write_text(CATALOG)
    (tmp_path / "curves.csv").write_text("system,concurrency,throughput\n" + FLAT + RISING)
    report = plan_report(catalog=str(tmp_path / "cat.csv"), curves=str(tmp_path / "curves.csv"), ops_per_user=0.5,
                         current_users=100)
    notes = report.vm_table().footnotes
    assert notes == ['"none": the VM\'s curve supports no capacity (unsupported: see its evidence), so no users are '
                     'planned on it']
    labels = {a.x: a.text for a in runway_figure(report.vms).layout.annotations if a.textangle == -90}
    assert labels["A"] == "unsupported curve"
    assert "B" not in labels
