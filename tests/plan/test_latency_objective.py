"""A plan's latency answers against their evidence (``capmodel plan --curves`` with a latency objective): a p95
target against a mean response time is weak per VM, a p95 not measured is said, a latency column in the wrong unit
is said (in ms it is not flagged)."""
import json

import pytest

from capmodel.cli import main


def usl(n, lam, sigma=0.05, kappa=0.0005):
    return lam * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))


def write_curves(tmp_path, p95_factor=None, unit=1.0):
    """Two VMs' USL curves (lambda 500 and 1,000 ops/s per client); with ``p95_factor`` a latency_p95_ms column of
    p95 = factor x N/X (ms), divided by ``unit`` (1,000: the column holds seconds)."""
    lines = ["system,concurrency,throughput" + (",latency_p95_ms" if p95_factor else "")]
    for vm, lam in (("small", 500.0), ("big", 1000.0)):
        for n in (1, 2, 4, 8, 16, 32, 64, 128):
            x = usl(n, lam)
            extra = f",{p95_factor * n / x * 1000.0 / unit:.9f}" if p95_factor else ""
            lines.append(f"{vm},{n},{x:.3f}{extra}")
    curves = tmp_path / "curves.csv"
    curves.write_text("\n".join(lines) + "\n")
    catalog = tmp_path / "catalog.csv"
    catalog.write_text("vm,monthly_cost\nsmall,100\nbig,180\n")
    return catalog, curves


def plan_json(capsys, catalog, curves, *extra):
    assert main(["plan", "--catalog", str(catalog), "--curves", str(curves), "--ops-per-user", "0.5",
                 "--target-users", "5000", *extra, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_p95_target_against_mean_response_time_is_weak_per_vm(tmp_path, capsys):
    """No p95 measured: the 3 ms p95 target is held against the mean N/X (small: 2 ms at one client, so it binds).
    The capacity's own verdict says so (p95_not_measured); the plan printed each VM and the answer 'sound'."""
    catalog, curves = write_curves(tmp_path)
    out = plan_json(capsys, catalog, curves, "--latency-p95-ms", "3")
    small = next(r for r in out["vms"] if r["vm"] == "small")
    assert small["binding_limit"] == "latency"
    codes = [r["code"] for r in small["evidence"]["reasons"]]
    assert "p95_not_measured" in codes and small["evidence"]["grade"] == "weak"
    assert out["evidence"]["grade"] == "weak"


def test_p95_not_measured_is_said_in_the_verdict(tmp_path, capsys):
    """small's verdict is weak, and its reason says no p95 latency was measured."""
    catalog, curves = write_curves(tmp_path)
    assert main(["plan", "--catalog", str(catalog), "--curves", str(curves), "--ops-per-user", "0.5",
                 "--latency-p95-ms", "3", "--json"]) == 0
    small = next(r for r in json.loads(capsys.readouterr().out)["vms"] if r["vm"] == "small")
    assert small["evidence"]["grade"] == "weak"
    reasons = {r["code"]: r["message"] for r in small["evidence"]["reasons"]}
    assert "no p95 latency was measured" in reasons["p95_not_measured"]


def test_without_a_latency_objective_no_latency_reason(tmp_path, capsys):
    """The reason belongs to the latency objective: without one, the same curves stay sound."""
    catalog, curves = write_curves(tmp_path)
    out = plan_json(capsys, catalog, curves)
    assert all("p95_not_measured" not in [r["code"] for r in row["evidence"]["reasons"]] for row in out["vms"])


def scale_reasons(row):
    return [r for r in row["evidence"]["reasons"] if r["code"] == "latency_scale"]


@pytest.mark.parametrize("unit, target, words", [(1000.0, "0.003", "seconds"), (0.001, "3000", "microseconds")])
def test_latency_column_in_the_wrong_unit_is_said(tmp_path, capsys, unit, target, words):
    """p95 = 1.8 x N/X written in seconds (or microseconds) under latency_p95_ms: the ratio the plan scales the target
    by reads 0.0018 (or 1,800), which no closed-loop curve shows; the plan held the target against it as 'sound'.
    The target, 3 ms in the column's unit, is unreachable on small, whose one client alone takes a p95 of
    1.8 x 1/500 s = 3.6 ms (unusable); big's 1.8 ms meets it (weak, for the unit)."""
    catalog, curves = write_curves(tmp_path, p95_factor=1.8, unit=unit)
    out = plan_json(capsys, catalog, curves, "--latency-p95-ms", target)
    for row in out["vms"]:
        found = scale_reasons(row)
        assert len(found) == 1 and found[0]["grade"] == "weak"
        assert found[0]["value"] == pytest.approx(1.8 / unit, rel=1e-3)
        assert words in found[0]["message"]
        fastest_ms = 1.8 * 1000.0 / {"small": 500.0, "big": 1000.0}[row["vm"]]
        unreachable = fastest_ms > 3.0
        assert row["evidence"]["grade"] == ("unusable" if unreachable else "weak")
        assert ("latency_unreachable" in [r["code"] for r in row["evidence"]["reasons"]]) == unreachable


def test_latency_column_in_ms_is_not_flagged(tmp_path, capsys):
    catalog, curves = write_curves(tmp_path, p95_factor=1.8)
    out = plan_json(capsys, catalog, curves, "--latency-p95-ms", "3")
    assert all(not scale_reasons(row) for row in out["vms"])


def measured_plan(capsys, tmp_path, p95s, *extra):
    catalog = tmp_path / "catalog.csv"
    catalog.write_text("vm,monthly_cost\nsmall,100\nbig,180\n")
    measurements = tmp_path / "measurements.csv"
    measurements.write_text("vm,throughput,cpu_util,latency_p95_ms\n"
                            f"small,4000,0.7,{p95s[0]}\nbig,8000,0.7,{p95s[1]}\n")
    assert main(["plan", "--catalog", str(catalog), "--measurements", str(measurements), "--ops-per-user", "0.5",
                 *extra, "--json"]) == 0
    return {row["vm"]: row for row in json.loads(capsys.readouterr().out)["vms"]}


def test_measured_p95_in_seconds_is_said(tmp_path, capsys):
    """latency_p95_ms written in seconds (0.004 for 4 ms): every ms target passes; the plan said 'sound'."""
    rows = measured_plan(capsys, tmp_path, ("0.004", "0.0035"), "--latency-p95-ms", "10")
    for vm, p95 in (("small", 0.004), ("big", 0.0035)):
        found = scale_reasons(rows[vm])
        assert len(found) == 1 and found[0]["value"] == pytest.approx(p95) and "seconds" in found[0]["message"]
    rows = measured_plan(capsys, tmp_path, ("4", "3.5"), "--latency-p95-ms", "10")
    assert all(not scale_reasons(row) for row in rows.values())
    rows = measured_plan(capsys, tmp_path, ("0.004", "0.0035"), "--no-latency")   # no objective: the column unused
    assert all(not scale_reasons(row) for row in rows.values())
