"""A concurrency column that counts fewer clients than ran (threads x hosts), or a mean latency not in ms, checked
against Little's law on the curve's own columns (capmodel.models.usl.verdict.little)."""
import json

import pytest

from capmodel.cli import main

NS = (4, 8, 16, 32, 64, 128, 256, 512)


def usl(n, lam=250.0, sigma=0.05, kappa=0.0001):
    return lam * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))


def write(tmp_path, hosts=1, latency_unit=1.0):
    """A closed loop of N clients, no think time: mean latency N/X (Little's law). The file's concurrency column
    holds N / hosts (one load-generator host's threads); the latency is written in ms x ``latency_unit``."""
    path = tmp_path / "curve.csv"
    rows = [f"{n // hosts},{usl(n):.3f},{n / usl(n) * 1000.0 * latency_unit:.6f}" for n in NS]
    path.write_text("concurrency,throughput,latency_mean_ms\n" + "\n".join(rows) + "\n")
    return path


def reasons(capsys, path):
    assert main(["fit", str(path), "--json"]) == 0
    return {r["code"]: r for r in json.loads(capsys.readouterr().out)["evidence"]["reasons"]}


@pytest.mark.parametrize("hosts, unit, factor, grade", [(4, 1.0, 4.0, "weak"), (1, 1000.0, 1000.0, "unusable"),
                                                       (1, 0.3, 0.3, "weak"), (1, 0.001, 0.001, "unusable")])
def test_more_or_fewer_in_flight_than_clients_is_said(tmp_path, capsys, hosts, unit, factor, grade):
    """Four hosts' sweep written with one host's thread counts: the fit's peak concurrency is a quarter of the
    clients that ran (weak: up to 20x more in flight than clients a short count or a percentile explains); a latency
    in microseconds under latency_mean_ms, 1,000x (unusable: a unit); clients that wait between operations, 0.3 in
    flight each (weak: below 0.5); a latency in seconds, 1,000x fewer in flight than clients (unusable: below
    0.05)."""
    found = reasons(capsys, write(tmp_path, hosts, unit))
    assert found["in_flight"]["grade"] == grade
    assert found["in_flight"]["value"] == pytest.approx(factor, rel=0.01)
    if grade == "unusable":
        assert main(["fit", str(write(tmp_path, hosts, unit))]) == 0
        answer = capsys.readouterr().out.splitlines()[0]
        assert answer.startswith("Answer: no peak or ceiling is supported by these data")
        assert "fix the units of the throughput or latency column" in answer


def test_a_consistent_curve_is_not_flagged(tmp_path, capsys):
    assert "in_flight" not in reasons(capsys, write(tmp_path))
