"""Printed wording of fits: what ``capmodel fit`` prints for a sweep that measured only the client, and the measured
fall's sentence, whose client counts read with thousands separators at any scale (',.4g' wrote 10,000 clients as
'1e+04'). The figures behind these words are checked in test_fit_command.py and test_measured_fall.py."""
import numpy as np

from capmodel.cli import main
from capmodel.models.usl import measured_fall as M
from tests.usl.test_measured_fall import SCATTER, N


def test_fit_on_an_all_client_bound_sweep_prints_no_fitted_peak_or_ceiling(capsys):
    # a sweep as `capmodel bench` writes curve.csv, every step flagged client_bound
    assert main(["fit", "tests/fixtures/client_bound_sweep/curve.csv"]) == 0
    text = capsys.readouterr().out
    assert "ceiling lambda/sigma" not in text and "peak throughput:" not in text


def test_the_fall_is_said_with_client_counts_for_people_at_any_scale():
    n = N * 100                                   # 100 to 12,800 clients
    x = 100.0 * N / (1 + 0.02 * (N - 1) + 1e-3 * N * (N - 1)) * SCATTER
    top = int(np.argmax(x))
    text = M.measured_fall(n, x).sentence()
    assert f"at {n[top]:,.0f} clients" in text and "ops/s at 12,800 (" in text and "e+" not in text
