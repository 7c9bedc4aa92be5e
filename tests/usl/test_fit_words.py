"""Printed wording of fits: what ``capmodel fit`` prints for a sweep that measured only the client; the measured
fall's sentence, whose client counts read with thousands separators at any scale (',.4g' wrote 10,000 clients as
'1e+04'); the model choice's reason, which says the criterion, the models left unranked and why, and a fall the
first-ranked model cannot describe; a latency limit's message where the latency does not grow. The figures behind
these words are checked in test_fit_command.py, test_measured_fall.py, test_selection.py and test_fit.py."""
import numpy as np
import pandas as pd

from capmodel import datasets
from capmodel.cli import main
from capmodel.models.usl import measured_fall as M
from capmodel.models.usl.closed_form import usl_throughput
from capmodel.models.usl.fit import fit_usl
from capmodel.models.usl.selection import compare_models
from tests.usl.test_measured_fall import SCATTER, N
from tests.usl.test_selection import noisy


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


def test_the_model_choice_says_its_criterion_and_what_it_left_unranked():
    result = compare_models(noisy(0.03, 8e-4))                       # 10 points, k = 4: AICc
    assert "lowest AICc" in result.reason and "recommended: usl" in result.summary()
    few = pd.DataFrame({"concurrency": [1, 2, 4.0], "throughput": [10, 19, 33.0]})
    assert "not ranked (exactly determined, no residual left): USL, log-coherency" in compare_models(few).reason
    n = np.array([1, 2, 4, 8.0])
    x = usl_throughput(n, 0.1, 0.02, 100.0) * np.array([1, 1.01, 0.99, 1.0])
    reason = compare_models(pd.DataFrame({"concurrency": n, "throughput": x})).reason
    assert "AICc is undefined for Amdahl, USL, log-coherency with 4 points, so ranked by AIC" in reason
    assert "not ranked (R² below 0, worse than the mean): linear" in reason


def test_the_model_choice_says_why_it_passed_over_a_model_that_cannot_fall():
    # specsdm91: 1,853 ops/s at 72 clients, then 1,829, 1,775, 1,702 at 216
    reason = compare_models(datasets.load_curve("usl_specsdm91")).reason
    assert "cannot describe a fall" in reason and "1,853 ops/s at 72 clients" in reason


def test_a_latency_limit_where_the_latency_does_not_grow_says_so():
    n = np.array([1, 2, 4, 8, 16, 32.0])
    linear = fit_usl(pd.DataFrame({"concurrency": n, "throughput": 100.0 * n})).largest_concurrency_within(0.1)
    assert "does not grow with N: a 100 ms target bounds neither N" in linear.message
