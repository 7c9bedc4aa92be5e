"""What a fitted USL answers in closed form (capmodel.models.usl.closed_form), beyond every model's results: the
whole-number peak, the Amdahl ceiling, where capacity goes, the largest N for a response time. Linear and Amdahl are
USLs with terms held at 0 and share this class.
"""
from __future__ import annotations

import math
from functools import cached_property

import numpy as np
import pandas as pd

from capmodel.errors import PlanError
from capmodel.formatting import number
from capmodel.models.usl.closed_form import LatencyLimit, latency_limit, usl_throughput, whole_peak
from capmodel.models.usl.results import ScalabilityFit


class USLFit(ScalabilityFit):
    """A fitted Universal Scalability Law (also Amdahl, kappa = 0, and linear, sigma = kappa = 0).

    Derives, besides ``ScalabilityFit``'s figures: ``recommended_concurrency`` (whole number), ``ceiling``,
    ``capacity_loss(n)``, ``latency_limit(target)`` and ``max_concurrency_for_latency(target)``.
    """

    @cached_property
    def ceiling(self) -> float:
        """The Amdahl ceiling lambda/sigma (inf when sigma <= 0)."""
        return self.lambda_ / self.sigma if self.sigma > 0 else math.inf

    @cached_property
    def recommended_concurrency(self) -> int | None:
        """The whole number of clients at the peak (floor or ceil, whichever gives more); None without a peak."""
        if self.kappa > 0:
            return whole_peak(self.peak_concurrency, self.predict)
        return None

    def _model_warnings(self) -> list:
        found = []   # superlinear contention is a graded caution: usl.verdict.assessment.check_superlinear
        if self.kappa > 0 and self.peak_concurrency == 1.0:
            found.append("throughput falls from the first client on (sqrt((1 - sigma)/kappa) <= 1): "
                         "the peak is at N = 1")
        return found

    def capacity_loss(self, n) -> pd.DataFrame:
        """Where capacity goes: ideal lambda*N = throughput + contention loss + coherency loss (throughput units).

        lambda*N - X = X*(D - 1) with D - 1 = sigma(N-1) + kappa N(N-1), split by those two terms.
        """
        n = np.atleast_1d(np.asarray(n, dtype=float))
        x = usl_throughput(n, self.sigma, self.kappa, self.lambda_)
        return pd.DataFrame({
            "concurrency": n,
            "ideal": self.lambda_ * n,
            "throughput": x,
            "contention_loss": x * self.sigma * (n - 1),
            "coherency_loss": x * self.kappa * n * (n - 1),
        })

    def latency_limit(self, target_seconds: float, think_time: float = 0.0, *, branch: str = "retrograde",
                      cap_at_peak: bool = False) -> LatencyLimit:
        """The largest N >= 1 client (and its X) whose Little's-law response time N/X(N) - Z meets the target, from
        the one solver (``capmodel.models.usl.closed_form.latency_limit``; its arguments say which branch and whether to
        cap at the peak). Unreachable targets come back named (``.reachable``, ``.reason``, ``.message``)."""
        for name, value in (("latency target (seconds)", target_seconds), ("think time (seconds)", think_time)):
            if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):   # '0.005' was a TypeError
                raise PlanError(f"{name} must be a number, got {value!r}")
        if not (target_seconds > 0) or not (think_time >= 0):
            raise PlanError("latency target must be > 0 and think time >= 0")
        return latency_limit(target_seconds, self.sigma, self.kappa, self.lambda_, branch=branch,
                             cap_at_peak=cap_at_peak, min_concurrency=1.0, think_time=think_time)

    def max_concurrency_for_latency(self, target_seconds: float, think_time: float = 0.0):
        """Largest N whose Little's-law response time N/X(N) - Z meets the target; returns (N, X(N)).

        A thin call of ``latency_limit(target_seconds, think_time)`` (largest N, past the peak if need be, at least
        one client). N is real-valued; floor it for whole clients. Raises ``PlanError`` with the solver's reason
        when even one client misses the target, or when nothing bounds N.
        """
        limit = self.latency_limit(target_seconds, think_time)
        if not limit.reachable or limit.reason == "unbounded":
            raise PlanError(f"latency target {number(target_seconds, 6)} s: {limit.message}")
        return limit.concurrency, limit.throughput
