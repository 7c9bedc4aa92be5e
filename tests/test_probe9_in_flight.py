"""probe9: a concurrency column that counts fewer clients than ran (threads x hosts), or a mean latency not in ms,
against Little's law on the curve's own columns (capmodel.models.little)."""
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


@pytest.mark.parametrize("hosts, unit, factor", [(4, 1.0, 4.0), (1, 1000.0, 1000.0)])
def test_more_in_flight_than_clients_is_said(tmp_path, capsys, hosts, unit, factor):
    """Four hosts' sweep written with one host's thread counts: the fit's peak concurrency is a quarter of the
    clients that ran, and the verdict was 'sound'; microseconds under latency_mean_ms the same, 1,000x."""
    found = reasons(capsys, write(tmp_path, hosts, unit))
    assert found["in_flight"]["grade"] == "weak"
    assert found["in_flight"]["value"] == pytest.approx(factor, rel=0.01)


def test_a_consistent_curve_is_not_flagged(tmp_path, capsys):
    assert "in_flight" not in reasons(capsys, write(tmp_path))
