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
from capmodel.models.usl.closed_form import LatencyLimit, latency_limit, usl_throughput, whole_peak
from capmodel.models.usl.results import ScalabilityFit


class USLFit(ScalabilityFit):
    """A fitted Universal Scalability Law (also Amdahl's law, κ = 0, and linear scaling, σ = κ = 0).

    Everything ``ScalabilityFit`` derives, and: ``ceiling`` (λ/σ, the limit without coherency),
    ``recommended_concurrency`` (the whole number of clients at the peak), ``capacity_loss(n)``,
    ``latency_limit(target_s)`` (the most throughput within a response time) and
    ``largest_concurrency_within(target_s)`` (the most clients within it, past the peak if need be). ``fit_usl``
    builds it.

    Parameters
    ----------
    spec, curve, estimates, covariance, weights, at_bound, lower, upper, allow_superlinear, concurrency, throughput
        As for ``ScalabilityFit``.

    Examples
    --------
    >>> import capmodel
    >>> fit = capmodel.fit_usl(capmodel.datasets.load_curve("usl_specsdm91"))
    >>> round(fit.ceiling), round(fit.peak_throughput)
    (3246, 1884)
    >>> fit.predict([32, 64]).round(1).tolist()
    [1467.0, 1818.3]
    >>> fit.evidence.codes()
    ['wide_interval']
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

    def _checked_targets(self, target_s, think_time_s) -> None:
        for name, value in (("latency target (seconds)", target_s), ("think time (seconds)", think_time_s)):
            if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):   # '0.005' was a TypeError
                raise PlanError(f"{name} must be a number, got {value!r}")
        if not (target_s > 0) or not (think_time_s >= 0):
            raise PlanError("latency target must be > 0 and think time >= 0")

    def latency_limit(self, target_s: float, think_time_s: float = 0.0) -> LatencyLimit:
        """The most throughput whose Little's-law response time N/X(N) - Z meets ``target_s``: the largest N >= 1
        on the rising side of the curve, capped at the peak (capacity planning's question), from the one solver
        (``capmodel.models.usl.closed_form.latency_limit``). Unreachable targets come back named (``.reachable``,
        ``.reason``, ``.message``)."""
        self._checked_targets(target_s, think_time_s)
        return latency_limit(target_s, self.sigma, self.kappa, self.lambda_, branch="normal", cap_at_peak=True,
                             min_concurrency=1.0, think_time_s=think_time_s)

    def largest_concurrency_within(self, target_s: float, think_time_s: float = 0.0) -> LatencyLimit:
        """The largest N >= 1 (and its X) whose Little's-law response time N/X(N) - Z meets ``target_s``, past the
        peak if need be (on the retrograde branch, where throughput has fallen): how many clients the server holds
        within the target, whatever its throughput. ``.concurrency`` is real-valued; floor it for whole clients."""
        self._checked_targets(target_s, think_time_s)
        return latency_limit(target_s, self.sigma, self.kappa, self.lambda_, branch="retrograde", cap_at_peak=False,
                             min_concurrency=1.0, think_time_s=think_time_s)
