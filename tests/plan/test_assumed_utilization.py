"""A utilization target applied to a fitted peak is an assumption, graded as the bundled study's assumed utilization
is (issue 29, point 3): without ``cpu_util`` on the curve, 80% "utilization" is 80% of the fitted peak, and the plan
is weak for that reason; with ``cpu_util`` measured, or asked as a share of the peak, it is not. What the plan says
of it: test_plan_words.py."""
import numpy as np
import pandas as pd

from capmodel.models.usl.fit import fit_usl
from capmodel.plan import Objectives, capacity_from_fit

N = np.array([1, 2, 4, 8, 16, 24, 32, 48, 64], dtype=float)
X = 1000.0 * N / (1 + 0.03 * (N - 1) + 0.0005 * N * (N - 1))   # a USL curve, no scatter
PEAK_N = np.sqrt(0.97 / 0.0005)
PEAK_X = 1000.0 * PEAK_N / (1 + 0.03 * (PEAK_N - 1) + 0.0005 * PEAK_N * (PEAK_N - 1))


def codes(capacity):
    return [r.code for r in capacity.evidence.reasons]


def test_without_cpu_util_the_target_is_a_share_of_the_peak_and_weak():
    capacity = capacity_from_fit(fit_usl(pd.DataFrame({"concurrency": N, "throughput": X})), Objectives())
    assert abs(capacity.usable_throughput / (0.8 * PEAK_X) - 1) < 1e-3
    assert capacity.utilization_on_peak and capacity.evidence.grade == "weak"
    assert codes(capacity) == ["utilization_assumed"]
    reason = capacity.evidence.reasons[0]
    assert "80% utilization target is taken as 80% of the fitted peak" in reason.message
    assert reason.next_step is not None and "cpu_util" in reason.next_step.text


def test_with_cpu_util_measured_the_target_is_a_utilization_and_no_assumption():
    demand = 0.9 / X.max()           # CPU seconds per operation: 90% busy at the best measured point
    curve = pd.DataFrame({"concurrency": N, "throughput": X, "cpu_util": X * demand})
    capacity = capacity_from_fit(fit_usl(curve), Objectives())
    assert not capacity.utilization_on_peak and "utilization_assumed" not in codes(capacity)
    assert abs(capacity.usable_throughput / (0.8 / demand) - 1) < 1e-6


def test_a_share_of_the_peak_asked_for_is_no_assumption():
    fit = fit_usl(pd.DataFrame({"concurrency": N, "throughput": X}))
    capacity = capacity_from_fit(fit, Objectives(utilization_target=None, peak_fraction=0.8))
    assert abs(capacity.usable_throughput / (0.8 * PEAK_X) - 1) < 1e-3
    assert "utilization_assumed" not in codes(capacity) and capacity.evidence.grade == "sound"


def test_a_latency_bound_plan_does_not_rest_on_the_assumption():
    fit = fit_usl(pd.DataFrame({"concurrency": N, "throughput": X, "latency_mean_ms": N / X * 1000}))
    capacity = capacity_from_fit(fit, Objectives(latency_p95_ms=1.5))
    assert capacity.binding_limit == "latency" and "utilization_assumed" not in codes(capacity)
