"""Headroom from production telemetry: how far the busiest observed moment is from the fitted peak (the nose of the
USL's latency form), the throughput where a latency target is crossed, and the months of growth that leave.

Takes a ``LatencyFit`` (``capmodel.fit_usl_latency`` on an observed curve); months are the compound-growth runway
ln(limit / now) / ln(1 + g) of ``runway_months``, with throughput standing in for users (ops per user constant).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from capmodel.plan.growth import runway_months


@dataclass
class ProductionHeadroom:
    """Figures with bootstrap intervals (``table``: estimate, low, high) and the runway they leave."""

    table: pd.DataFrame
    observed_peak_throughput: float
    monthly_growth: float
    latency_target_ms: float | None
    level: float

    def _runway(self, limit: float) -> float:
        if not math.isfinite(limit):
            return math.inf
        if not limit > 0:
            return math.nan
        return runway_months(limit, self.observed_peak_throughput, self.monthly_growth)

    @property
    def limit(self) -> str:
        """What bounds the growth: the latency target when it is crossed before the nose, else the peak."""
        if self.latency_target_ms is not None and "throughput_at_target" in self.table.index:
            at_target = self.table.loc["throughput_at_target", "estimate"]
            if at_target < self.table.loc["peak_throughput", "estimate"]:
                return "latency target"
        return "peak throughput"

    @property
    def runway(self) -> pd.Series:
        """Months of growth until the limit, for its estimate and interval ends (low limit -> fewer months)."""
        row = "throughput_at_target" if self.limit == "latency target" else "peak_throughput"
        return pd.Series({k: self._runway(float(self.table.loc[row, k])) for k in ("estimate", "low", "high")})

    def answer(self) -> str:
        """The answer in words, every number from the table."""
        t = self.table
        peak = t.loc["peak_throughput"]
        head = t.loc["headroom"]
        months = self.runway
        pct = f"{self.level:.0%}"
        text = (f"The observed peak load (95th percentile of the intervals) is {self.observed_peak_throughput:,.0f} "
                f"ops/s. The fitted nose puts the peak at **{peak['estimate']:,.0f} ops/s** ({pct} interval "
                f"{peak['low']:,.0f}–{peak['high']:,.0f}), so today's headroom is **{head['estimate']:.0%}** "
                f"({head['low']:.0%} to {head['high']:.0%})")
        text += ": the busiest intervals already ran past the fitted peak." if head["estimate"] < 0 else "."
        if self.latency_target_ms is not None and "throughput_at_target" in t.index:
            at = t.loc["throughput_at_target"]
            text += (f" Mean latency reaches the {self.latency_target_ms:g} ms target at "
                     f"{at['estimate']:,.0f} ops/s ({at['low']:,.0f}–{at['high']:,.0f}).")
        if months["estimate"] == 0:
            text += f" The {self.limit} is already reached: there is no room to grow."
        else:
            text += (f" At {self.monthly_growth:.0%} growth a month the {self.limit} is reached in "
                     f"**{months['estimate']:.1f} months** ({months['low']:.1f} to {months['high']:.1f}).")
        return text


def production_headroom(latency_fit, monthly_growth: float, latency_target_ms: float | None = None,
                        planned_throughput: float | None = None, level: float = 0.95,
                        n_bootstrap: int = 200) -> ProductionHeadroom:
    """Headroom, the latency target's throughput and the growth runway of an observed server, with intervals."""
    table = latency_fit.conf_int(level, n_bootstrap, planned_throughput=planned_throughput,
                                 latency_target_ms=latency_target_ms)
    return ProductionHeadroom(table, latency_fit.observed_peak_throughput, float(monthly_growth), latency_target_ms,
                              level)
