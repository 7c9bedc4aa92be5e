"""Load per user, calibrated: how many operations per second one user generates.

From a baseline (users served, throughput measured at that load, utilization there) or given directly. The benchANT
study's baseline is 25,000 users at "around 6k-7k operations per second" and about 80% CPU: 0.26 ops/s per user
(0.24-0.28 over the stated range).
"""
from __future__ import annotations

from dataclasses import dataclass

from capmodel.errors import PlanError
from capmodel.formatting import interval_words, number
from capmodel.plan.checks import fraction, positive


@dataclass(frozen=True)
class UserLoad:
    """Load per user, with the range it was derived from (``low`` <= ``ops_per_user`` <= ``high``).

    Parameters
    ----------
    ops_per_user, ops_per_user_low, ops_per_user_high : float
        Ops/s per user and its range.
    baseline_users, baseline_throughput : float, optional
        The measurement it came from (None when ops per user was given directly).
    baseline_throughput_low, baseline_throughput_high : float, optional
        The stated throughput range, so that intervals can follow it.
    baseline_utilization : float, optional
        The baseline's utilization.
    """

    ops_per_user: float
    ops_per_user_low: float
    ops_per_user_high: float
    baseline_users: float | None = None
    baseline_throughput: float | None = None
    baseline_throughput_low: float | None = None
    baseline_throughput_high: float | None = None
    baseline_utilization: float | None = None

    def at(self, side: str) -> "UserLoad":
        """The user load with its baseline throughput moved to the 'low' or 'high' end of its range."""
        if side == "value" or self.baseline_throughput is None:
            if side == "value":
                return self
            ops = self.ops_per_user_low if side == "low" else self.ops_per_user_high
            return user_load_from_ops_per_user(ops)
        throughput = self.baseline_throughput_low if side == "low" else self.baseline_throughput_high
        return calibrate_user_load(self.baseline_users, throughput, self.baseline_utilization)

    def summary(self) -> str:
        text = f"{number(self.ops_per_user, 4)} ops/s per user"
        # a range as every range reads (0.24–0.28: a hyphen between figures reads as a minus), only when it has width
        text += interval_words(self.ops_per_user, self.ops_per_user_low, self.ops_per_user_high, lambda x: number(x, 4))
        if self.baseline_users is not None:
            text += f", from {self.baseline_users:,.0f} users at {self.baseline_throughput:,.0f} ops/s"
            if self.baseline_utilization is not None:
                text += f" and {self.baseline_utilization:.0%} utilization"
        return text


def calibrate_user_load(users, throughput, utilization=None, throughput_low=None, throughput_high=None) -> UserLoad:
    """Ops/s per user from a baseline: ``throughput / users``; the throughput range gives the interval.

    Parameters
    ----------
    users : float
        The users the baseline served (> 0).
    throughput : float
        Its ops/s (> 0).
    utilization : float, optional
        Its CPU utilization (0–1).
    throughput_low, throughput_high : float, optional
        The throughput's range; it must contain ``throughput``.

    Returns
    -------
    UserLoad

    Raises
    ------
    PlanError
        A value is out of range or the range does not contain the throughput.

    Examples
    --------
    >>> from capmodel.plan import calibrate_user_load
    >>> calibrate_user_load(users=10_000, throughput=2_500, throughput_low=2_400, throughput_high=2_600).summary()
    '0.25 ops/s per user, between 0.24 and 0.26, from 10,000 users at 2,500 ops/s'
    """
    users = positive(users, "baseline users")
    throughput = positive(throughput, "baseline throughput")
    low = throughput if throughput_low is None else positive(throughput_low, "baseline throughput low")
    high = throughput if throughput_high is None else positive(throughput_high, "baseline throughput high")
    if not low <= throughput <= high:
        raise PlanError(f"baseline throughput range {number(low, 6)}-{number(high, 6)} must contain the value "
                        f"{number(throughput, 6)}")
    if utilization is not None:
        utilization = fraction(utilization, "baseline utilization")
    return UserLoad(
        ops_per_user=throughput / users,
        ops_per_user_low=low / users,
        ops_per_user_high=high / users,
        baseline_users=users,
        baseline_throughput=throughput,
        baseline_throughput_low=low,
        baseline_throughput_high=high,
        baseline_utilization=utilization,
    )


def user_load_from_ops_per_user(ops_per_user, low=None, high=None) -> UserLoad:
    """A load per user given directly as ops/s per user, optionally with a range.

    Parameters
    ----------
    ops_per_user : float
        Ops/s per user (> 0).
    low, high : float, optional
        Its range; it must contain ``ops_per_user``.

    Returns
    -------
    UserLoad

    Raises
    ------
    PlanError
        A value is not > 0 or the range does not contain the value.
    """
    value = positive(ops_per_user, "ops per user")
    low = value if low is None else positive(low, "ops per user low")
    high = value if high is None else positive(high, "ops per user high")
    if not low <= value <= high:
        raise PlanError(f"ops per user range {number(low, 6)}-{number(high, 6)} must contain the value "
                        f"{number(value, 6)}")
    return UserLoad(ops_per_user=value, ops_per_user_low=low, ops_per_user_high=high)
