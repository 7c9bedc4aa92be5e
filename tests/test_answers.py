"""fit.describe() (capmodel.models.describe): the answer sentence the reports print, checked against figures computed here by hand.

Reference figures: the R package ``usl`` (Moeding) on its specsdm91 data, tests/summary.Rout.save (alpha 2.773e-02,
beta 1.044e-04, gamma 90.00, "Multiple R-squared: 0.9896") and tests/peak-scalability.Rout.save (peak 97 clients).
"""
import math

import numpy as np
import pandas as pd
import pytest

from capmodel import datasets
from capmodel.models.rivals import fit_amdahl, fit_linear
from capmodel.models.selection import compare_models
from capmodel.models.usl import fit_usl


def test_usl_answer_names_the_peak_the_parameters_and_the_best_point():
    curve = datasets.load_curve("usl_specsdm91")
    fit = fit_usl(curve)
    text = fit.describe(source="SPEC SDM91")
    # the peak N* = sqrt((1 - sigma)/kappa) with R's rounded figures: sqrt(0.97227 / 1.044e-4) = 96.5 -> "97"
    assert round(math.sqrt((1 - 2.773e-02) / 1.044e-04)) == 97
    assert "throughput peaks at about **97 concurrent clients**" in text
    x_peak = 90.0 * 96.5 / (1 + 2.773e-02 * 95.5 + 1.044e-04 * 96.5 * 95.5)   # X(N*) from R's coefficients
    shown = float(text.split("clients** with **")[1].split(" ops/s")[0].replace(",", ""))
    assert shown == pytest.approx(x_peak, rel=2e-3)
    best = curve.loc[curve["throughput"].idxmax()]
    assert text.startswith(f"SPEC SDM91 measured 7 steps from 1 to 216 clients; the best measured rate was "
                           f"{best['throughput']:,.0f} ops/s (at {best['concurrency']:g} clients). Fitted, the **usl** "
                           "model was fitted.")
    assert "R² = 0.990" in text and "sigma = 0.02773" in text and "no warnings from the fit" in text


def test_amdahl_and_linear_answers_name_the_ceiling_or_the_growth():
    n = np.array([1, 2, 4, 8, 16, 32.0])
    x = 100 * n / (1 + 0.05 * (n - 1))
    amdahl = fit_amdahl(pd.DataFrame({"concurrency": n, "throughput": x}))
    assert "never passes the ceiling **λ/σ = 2,000 ops/s**" in amdahl.describe()   # 100 / 0.05
    linear = fit_linear(pd.DataFrame({"concurrency": n, "throughput": 50 * n}))
    assert "keeps growing in proportion to concurrency" in linear.describe()


def test_answer_with_a_comparison_says_how_the_model_was_chosen():
    curve = datasets.load_curve("usl_raytracer")
    comparison = compare_models(curve)
    chosen = comparison.best_fit.describe(comparison=comparison)
    assert f"the data support the **{comparison.recommended}** model ({comparison.reason})" in chosen
    assert "ΔAICc of the others from the best:" in chosen
    asked = fit_usl(curve).describe(comparison=comparison)
    assert "the **usl** model was fitted as asked; the comparison recommends **amdahl**" in asked
    assert "warning: kappa is at its lower bound 0" in asked


def test_exactly_determined_answer_has_no_intervals():
    n = np.array([1, 2, 4.0])
    fit = fit_usl(pd.DataFrame({"concurrency": n, "throughput": 10 * n / (1 + 0.05 * (n - 1) + 0.002 * n * (n - 1))}))
    text = fit.describe()
    assert "Its parameters (exactly determined, no intervals): sigma = 0.05, kappa = 0.002, lambda = 10;" in text
