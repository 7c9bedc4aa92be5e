"""Figures a person reads carry no exponent at realistic scales: a MongoDB server's 100,000 ops/s peak, a 20 s
latency target, 12,000 clients."""
import re

import numpy as np
import pandas as pd

from capmodel.formatting import number
from capmodel.models.usl.fit import fit_usl

EXPONENT = re.compile(r"\de[+-]?\d")


def test_a_fit_summary_of_a_fast_server_reads_its_peak_and_ceiling_in_full():
    n = np.array([1, 2, 4, 8, 16, 32, 64, 128, 256, 512], dtype=float)
    lam, sigma, kappa = 3_000.0, 0.02, 2e-5                 # peak about 104,000 ops/s near 221 clients
    curve = pd.DataFrame({"concurrency": n, "throughput": lam * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))})
    fit = fit_usl(curve)
    text = fit.summary()
    assert fit.peak_throughput > 100_000
    assert f"peak throughput: {number(fit.peak_throughput, 5)}" in text and "," in number(fit.peak_throughput, 5)
    assert f"ceiling lambda/sigma: {number(fit.ceiling, 5)}" in text
    figures = [line for line in text.splitlines() if line.startswith(("peak ", "ceiling "))]
    assert len(figures) == 3 and not any(EXPONENT.search(line) for line in figures), figures
