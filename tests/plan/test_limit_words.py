"""The words that name a plan's binding objective: each objective in plain words with the value it was given, the
utilization target said to be a share of the fitted peak when the curve measured no CPU."""
import numpy as np
import pandas as pd
import pytest

from capmodel.models.usl.fit import fit_usl
from capmodel.plan import Objectives, capacity_from_fit


def curve(cpu: bool) -> pd.DataFrame:
    n = np.array([1, 2, 4, 8, 12, 16, 24, 32, 48, 64], dtype=float)
    x = 1000 * n / (1 + 0.05 * (n - 1) + 0.001 * n * (n - 1))
    frame = pd.DataFrame({"concurrency": n, "throughput": x, "latency_p95_ms": 2000 * n / x})
    if cpu:
        frame["cpu_util"] = x * 1e-4
    return frame


@pytest.mark.parametrize(("cpu", "objectives", "binding", "words"), [
    (True, Objectives(utilization_target=0.7), "utilization", "utilization at most 70% CPU"),
    (False, Objectives(utilization_target=0.8), "utilization", "utilization at most 80% of the fitted peak"),
    (True, Objectives(utilization_target=0.9, peak_fraction=0.6), "peak_fraction",
     "throughput at most 60% of the fitted peak"),
    (False, Objectives(utilization_target=0.95, latency_p95_ms=4.0), "latency", "p95 at most 4 ms"),
])
def test_the_binding_objective_is_named_with_its_value(cpu, objectives, binding, words):
    capacity = capacity_from_fit(fit_usl(curve(cpu)), objectives)
    assert capacity.binding_limit == binding
    assert capacity.limit_words() == words
    assert "_" not in " ".join(capacity.limit_words(name) for name in capacity.limits)


def test_a_curve_without_a_peak_names_its_ceiling():
    n = np.array([1, 2, 4, 8, 16, 32], dtype=float)
    flat = pd.DataFrame({"concurrency": n, "throughput": 1000 * n / (1 + 0.1 * (n - 1))})
    capacity = capacity_from_fit(fit_usl(flat), Objectives(utilization_target=None, peak_fraction=0.5))
    assert capacity.limit_words(peak="ceiling") == "throughput at most 50% of the fitted ceiling"
