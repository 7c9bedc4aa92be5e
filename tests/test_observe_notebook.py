"""Report 07 (production capacity) rendered from the bundled FTDC sample: its answer against numbers computed here.

The peak is refitted independently with scipy's curve_fit on the same bins (USL definition: Gunther, *Guerrilla
Capacity Planning*, 2007, X(N) = lambda N / (1 + sigma (N - 1) + kappa N (N - 1)); its peak at
N* = sqrt((1 - sigma) / kappa)); the interval count is the FTDC sample count in the sample's window, minus one.
"""
from __future__ import annotations

import math
import re

import nbformat
import numpy as np
import pytest
from scipy.optimize import curve_fit

from capmodel.observe import bundled_sample, observe_ftdc
from capmodel.observe.ftdc import read_metrics
from capmodel.observe.serverstatus import FTDC_TIME, ftdc_metrics
from rendered_reports import SMALL, render_small

pytestmark = pytest.mark.notebooks
NAME = "07_production_capacity"


@pytest.fixture(scope="module")
def answer(tmp_path_factory, mongod):
    out, _ = render_small(tmp_path_factory, mongod.uri)
    last = nbformat.read(out / f"{NAME}.ipynb", as_version=4).cells[-1]
    texts = [o["data"]["text/markdown"] for o in last.outputs if "text/markdown" in o.get("data", {})]
    assert texts, "report 07 shows no answer"
    return re.sub(r"\s+", " ", texts[0])


def test_report_answers_with_the_independently_fitted_peak(answer):
    sample = bundled_sample()
    curve = observe_ftdc(sample["path"], sample["since"], sample["until"]).curve
    n, x = curve["concurrency"].to_numpy(), curve["throughput"].to_numpy()
    edges = np.geomspace(n.min(), n.max(), 9)                  # the notebook's 8 geometric bins
    which = np.clip(np.searchsorted(edges, n, side="right") - 1, 0, 7)
    groups = [k for k in range(8) if (which == k).any()]
    bn = np.array([n[which == k].mean() for k in groups])
    bx = np.array([x[which == k].mean() for k in groups])
    counts = np.array([(which == k).sum() for k in groups])

    def usl(n, sigma, kappa, lambda_):
        return lambda_ * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))

    (sigma, kappa, lambda_), _ = curve_fit(usl, bn, bx, p0=[0.5, 0.01, bx.max()], sigma=1 / np.sqrt(counts),
                                           bounds=([0, 0, 0], [1, 1, np.inf]))
    n_star = max(1.0, math.sqrt((1 - sigma) / kappa)) if kappa > 0 else math.inf
    peak = usl(n_star, sigma, kappa, lambda_) if math.isfinite(n_star) else lambda_ / sigma
    stated = float(re.search(r"puts the peak at \*\*([\d,]+) ops/s\*\*", answer).group(1).replace(",", ""))
    assert stated == pytest.approx(peak, rel=0.01)


def test_report_counts_every_interval_of_the_sample_window(answer):
    sample = bundled_sample()
    raw = read_metrics(sample["path"], {"reads": ftdc_metrics()["reads_ops"]}, time_metric=FTDC_TIME,
                       since=sample["since"], until=sample["until"])
    assert f"({len(raw) - 1} intervals" in answer
    assert "bundled FTDC sample" in answer and "/" + "work" not in answer
    assert SMALL[NAME]["bootstrap"] > 0
