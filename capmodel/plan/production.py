"""The production answer: how much more load an observed server can carry, by the method its data support.

Two methods, each with its verdict (``capmodel.models.evidence``):

- the **operational laws** (``capmodel.observe.server_capacity``): the server's own CPU per operation, the bottleneck
  law X_max = (cores − background) / D, its interval carrying the CPU per operation's possible change up to
  saturation. They hold at any load, so they answer for a healthy server that never came near its knee, the normal
  input of ``observe``;
- the **USL latency fit** (``capmodel.fit_usl_latency``, the "nose" of Schwartz, *Practical Scalability Analysis with
  the Universal Scalability Law*, 2015): it locates a peak only where the observed concurrency reached the knee, the
  fit describes the points and the throughput is seen falling past the peak. Its verdict
  (``capmodel.plan.usl_observed.usl_verdict``) says so.

The USL answers when its verdict is sound; otherwise the laws do (when the server reports its CPU); when neither
can, the answer says what the data do support (the laws' lower bound where the load was too even to separate the
background, else the observed peak, carried today). A sound USL verdict asks the window to show the throughput
falling past the fitted peak: on synthetic servers of known capacity driven up to 97% of it
(``benchmarks/calibrate_observe.py``), a USL fitted to the throughput levelling off put its peak 7-32% below the
truth with intervals that never held it, and was graded sound; with the rule it answers on none of them, and the
laws (measured to keep the grades' promises there) do. A latency target is checked only by the USL (the laws bound
throughput, not latency), and "reaches the target at X" is said only when the fitted curve does reach it below its
peak.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from capmodel.errors import CapmodelError, InputError, PlanError
from capmodel.formatting import Column, aside, decimals_for, number, percent, shows_width, table
from capmodel.models.estimate import Estimate
from capmodel.models.evidence import Evidence, Reason
from capmodel.models.runway import PAST_TARGET_WORDS, runway
from capmodel.observe.capacity import LAWS, USL, ServerCapacity, TooFewIntervals, server_capacity
from capmodel.plan.usl_observed import usl_verdict

if TYPE_CHECKING:
    from capmodel.models.usl.latency_form import LatencyFit

QUESTION = "How much more load can this MongoDB server carry, judged from its own telemetry?"
NO_METHOD = "no method"
@dataclass(frozen=True)
class ProductionAnswer:
    """Both methods' results and verdicts on one observation, and which one answers (``production_answer``).

    ``method`` names the method that answers, ``evidence`` its verdict; ``describe()``, ``table`` and ``to_json()``
    derive every sentence and figure from the fields below.

    Attributes
    ----------
    capacity : ServerCapacity or None
        The operational laws' answer (None when the samples hold too few busy intervals; ``capacity_error`` says why).
    usl : LatencyFit or None
        The USL's latency form fitted to the curve (None when it could not be fitted).
    usl_evidence : Evidence
        The USL fit's verdict.
    usl_table : pandas.DataFrame or None
        The fit's figures with their bootstrap intervals, where the USL answers.
    observed_peak_throughput : float
        The 95th percentile of the busy intervals' throughput, ops/s.
    max_concurrency : float
        The highest concurrency observed (Little's law).
    utilization_target, latency_target_ms, monthly_growth, level
        The question's parameters.
    source : str
        The data's name.
    intervals, used_intervals : int
        The intervals observed and those in the curve.
    """

    capacity: ServerCapacity | None
    capacity_error: str | None
    usl: LatencyFit | None             # None when it could not be fitted
    usl_evidence: Evidence
    usl_table: pd.DataFrame | None     # estimate/low/high of the fit's figures (bootstrap), where the USL answers
    observed_peak_throughput: float
    max_concurrency: float
    utilization_target: float
    latency_target_ms: float | None
    monthly_growth: float | None
    level: float
    source: str = ""
    intervals: int = 0
    used_intervals: int = 0

    @property
    def _laws(self) -> ServerCapacity:
        """The operational laws' result, where they answer (``method`` is LAWS)."""
        assert self.capacity is not None, "the laws answer only with a capacity"
        return self.capacity

    @property
    def _usl(self) -> LatencyFit:
        """The USL latency fit, where it answers (``method`` is USL)."""
        assert self.usl is not None, "the USL answers only with a fit"
        return self.usl

    @property
    def method(self) -> str:
        """Which method answers: the USL when its verdict is sound (the window showed the throughput falling past
        its peak: a limit the CPU's bottleneck law would overstate), else the laws, else none."""
        if self.usl is not None and self.usl_evidence.grade == "sound":
            return USL
        return LAWS if self.capacity is not None and self.capacity.evidence.usable else NO_METHOD

    @property
    def _laws_problem(self) -> str:
        """Why the operational laws cannot answer (when they cannot)."""
        if self.capacity is not None:
            return "; ".join(r.message for r in self.capacity.evidence.reasons if r.grade == "unusable")
        return self.capacity_error or "the server reports no CPU figures"

    @property
    def evidence(self) -> Evidence:
        """The verdict on the answer given: the answering method's."""
        if self.method == USL:
            return self.usl_evidence
        if self.method == LAWS:
            return self._laws.evidence
        laws = [r for r in self.capacity.evidence.reasons if r.grade == "unusable"] if self.capacity else []
        said = "neither method can state a capacity" + ("" if laws else ": " + self._laws_problem)
        return Evidence.of(Reason("no_method", "unusable", said), *laws, *(
                                      r for r in self.usl_evidence.reasons if r.grade == "unusable"))

    @property
    def why(self) -> str:
        """One sentence: why this method answers."""
        if self.method == USL:
            return "the observed concurrency reached the knee and the USL describes the points"
        usl = "; ".join(r.message for r in self.usl_evidence.reasons if r.grade != "sound") or "it was not fitted"
        if self.method == LAWS:
            return (f"the USL fit is {self.usl_evidence.grade if self.usl is not None else 'not available'} "
                    f"{aside(usl)}, so the server's CPU per operation and the bottleneck law answer")
        return (f"the USL fit cannot answer {aside(usl)} and the operational laws cannot either "
                f"{aside(self._laws_problem)}")

    @property
    def at_least(self) -> float:
        """What the data support as a lower bound on the saturation throughput: the busiest load carried, or the
        laws' lower bound where their answer is one-sided and higher (``ServerCapacity.at_least``)."""
        if self.capacity is not None:
            return max(self.capacity.at_least, self.observed_peak_throughput)
        return self.observed_peak_throughput

    @property
    def planned_at_least(self) -> float | None:
        """The lower bound on the throughput at the utilization target where the laws' answer is one-sided (None
        otherwise: the busiest load carried says nothing of the target)."""
        if self.capacity is None or self.capacity.at_least <= self.capacity.observed_peak_throughput:
            return None
        low = self.capacity.planned_throughput.low
        return low if low > 0 else None

    @property
    def saturation_throughput(self) -> Estimate | None:
        """X_max of the answering method (None without one)."""
        if self.method == USL:
            assert self.usl_table is not None, "a USL answer has its table"
            row = self.usl_table.loc["peak_throughput"]
            return Estimate(float(row["estimate"]), float(row["low"]), float(row["high"]))
        return self._laws.saturation_throughput if self.method == LAWS else None

    @property
    def planned_throughput(self) -> Estimate | None:
        """The throughput to plan to: the laws' X(u), or u times the USL's peak."""
        if self.method == LAWS:
            return self._laws.planned_throughput
        sat = self.saturation_throughput
        if sat is None:
            return None
        u = self.utilization_target
        return Estimate(u * sat.estimate, u * sat.low, u * sat.high)

    @property
    def spare_fraction(self) -> Estimate | None:
        """1 − observed peak / planned throughput (its interval from the planned one's)."""
        plan = self.planned_throughput
        if plan is None:
            return None
        return Estimate(*(1.0 - self.observed_peak_throughput / v if v > 0 else -math.inf
                          for v in (plan.estimate, plan.low, plan.high)))

    @property
    def runway_months(self) -> Estimate | None:
        """Months of compound growth until the observed peak reaches the planned throughput."""
        plan = self.planned_throughput
        if plan is None or self.monthly_growth is None or not self.observed_peak_throughput > 0:
            return None
        return runway(plan, self.observed_peak_throughput, self.monthly_growth, error=PlanError)

    @property
    def latency_outcome(self) -> tuple[str, float | None]:
        """What the latency target does on the fitted curve: ("reached", X) below the peak, ("met_at_peak", peak),
        ("unreachable", None) when even the lightest load is slower, ("not_checked", None) without a USL answer."""
        if self.latency_target_ms is None or self.method != USL:
            return "not_checked", None
        at = float(self._usl.throughput_at_latency(self.latency_target_ms))
        if not math.isfinite(at) or at <= 0:
            return "unreachable", None
        if at >= self._usl.peak_throughput * (1 - 1e-9):
            return "met_at_peak", float(self._usl.peak_throughput)
        return "reached", at

    def describe(self) -> str:
        """The answer in words (markdown), every number from this object; no claim the verdict does not allow."""
        observed = f"**{number(self.observed_peak_throughput)} ops/s**"
        return self._origin() + self._answer(observed)


    def _origin(self) -> str:
        if not self.source:
            return ""
        return (f"Read from {self.source}: {number(self.intervals)} intervals, {number(self.used_intervals)} with "
                "operations. ")

    def _answer(self, observed: str) -> str:
        if self.method == NO_METHOD:
            if self.capacity is not None and self.planned_at_least is not None:     # the laws' lower bound
                return (self.capacity.describe(with_method=False) + " " + self._no_usl()).strip()
            return (f"The server carried {observed} at its busiest (95th percentile of the intervals), with at most "
                    f"{number(self.max_concurrency, 2)} operations inside it at once. That load is a lower bound on "
                    "its capacity; the data cannot say how much more it can take: "
                    + "; ".join(r.message for r in self.evidence.reasons
                                if r.code != "no_method" or self.capacity is None) + ".")   # laws' reasons follow
        if self.method == LAWS:
            text = self._laws.describe(with_method=False)
        else:
            sat, plan, spare = self.saturation_throughput, self.planned_throughput, self.spare_fraction
            assert sat is not None and plan is not None and spare is not None, "a USL answer has its figures"
            pct = f"{self.level:.0%}"
            width = (f"{pct} interval {number(sat.low)}–{number(sat.high)}, "
                     if shows_width(sat.low, sat.high) else "")
            text = (f"The USL latency fit puts the server's peak at **{number(sat.estimate)} ops/s** ({width}at "
                    f"{number(self._usl.peak_concurrency, 2)} operations at once). Planned at "
                    f"{percent(self.utilization_target, 2)} of it, **{number(plan.estimate)} ops/s**; the observed "
                    f"peak is {observed}, ")
            bounds = (f" ({percent(spare.low, 3)} to {percent(spare.high, 3)})"
                      if shows_width(spare.low, spare.high, lambda x: percent(x, 3)) else "")
            text += (f"so **{percent(spare.estimate, 3)}** is spare{bounds}." if spare.estimate >= 0 else
                     f"already **{percent(-spare.estimate, 3)} above** that plan.")
            months = self.runway_months
            if months is not None:
                if months.estimate == 0:
                    text += " No growth fits under the plan."
                elif math.isfinite(months.estimate):
                    bounds = (f" ({_months(months.low)} to {_months(months.high)})"
                              if shows_width(months.low, months.high, _months, finite=False) else "")
                    text += (f" At {percent(self.monthly_growth, 2)} growth a month it is reached in "
                             f"**{number(months.estimate, 2)} months**{bounds}.")
        text += " " + self._latency_sentence()
        return text.strip() + f" Method: {self.method}, because {self.why}."

    def _no_usl(self) -> str:
        """The USL's part when neither method states a figure and the laws give a lower bound."""
        usl = "; ".join(r.message for r in self.usl_evidence.reasons if r.grade == "unusable")
        return f"The USL latency fit cannot say more either {aside(usl)}." if usl else ""

    def _latency_sentence(self) -> str:
        if self.latency_target_ms is None:
            return ""
        target = f"{number(self.latency_target_ms)} ms"
        state, at = self.latency_outcome
        if state == "reached":
            return f"Mean server latency reaches the {target} target at **{number(at)} ops/s**."
        if state == "met_at_peak":
            return (f"Mean server latency stays under the {target} target up to the peak: throughput, not "
                    "latency, is the limit.")
        if state == "unreachable":
            return f"Even the lightest load is slower than the {target} target: no load meets it."
        return (f"The {target} latency target is not checked: the operational laws bound throughput, not latency, "
                "and the USL latency fit is not sound on this window.")

    @property
    def table(self) -> pd.DataFrame:
        """The figures with their intervals, one row each: ``figure``, ``unit``, ``estimate``, ``low``, ``high`` (NaN:
        no interval). Formatted for reading: ``capacity_table()``."""
        return self._figures()

    def capacity_table(self):
        """``table`` formatted for reading (a ``capmodel.formatting.Table``: units, intervals, footnotes)."""
        pct = f"{self.level:.0%}"
        # a figure and its interval in one format: the decimals the estimate needs (three significant digits), the
        # same for its ends (-17.0 / -19.1 / -15.0, not -17 / -19.1 / -15)
        figures = self._figures()
        figures["decimals"] = pd.array([decimals_for(r.estimate, r.low, r.high) for r in figures.itertuples()],
                                        dtype=object)
        # the answer names each figure as its row shows it (formatting.fixed); the runway to a tenth of a month, as the
        # answer and every runway on the pages
        figures.loc[figures["figure"] == "runway", "decimals"] = 1
        # an interval with no width as printed (-20.0 / -20.0 / -20.0 on a member's flat load) is left out, as in the
        # sentences (``shows_width``)
        figures = figures.astype({"low": object, "high": object})
        for i, r in figures.iterrows():
            shown = number if pd.isna(r["decimals"]) else lambda x, d=int(r["decimals"]): f"{float(x):,.{d}f}"
            if not shows_width(r["low"], r["high"], shown, finite=False):
                figures.loc[i, ["low", "high"]] = [None, None]
        months = self.runway_months
        if months is not None and months.estimate == 0:   # in the fleet's and the figures' words, not "0 0 0"
            figures = figures.astype({"estimate": object})
            figures.loc[figures["figure"] == "runway", ["estimate", "low", "high"]] = [PAST_TARGET_WORDS, None, None]
        return table(figures, {"figure": Column("figure", "text"), "unit": Column("unit", "text"),
                               "estimate": Column("estimate", decimals_from="decimals"),
                               "low": Column(f"{pct} low", decimals_from="decimals"),
                               "high": Column(f"{pct} high", decimals_from="decimals")},
                     caption=(f"Capacity by the {self.method}" if self.method != NO_METHOD else
                              "What the data support: lower bounds only" if self.planned_at_least is not None else
                              "What the data support: the observed load only"), csv_name="capacity.csv",
                     footnotes=["—: no interval for this figure", "unreachable: never, at this growth",
                                f"{NOT_SEPARATED}: the load varied too little to tell background CPU from CPU per "
                                "operation (counted in it)"])

    def _figures(self) -> pd.DataFrame:
        rows = []

        def add(name, unit, e: Estimate | None, kind="num"):
            if e is not None:
                rows.append({"figure": name, "unit": unit, "estimate": e.estimate, "low": e.low, "high": e.high})

        if self.method == LAWS:
            add("CPU per operation (service demand)", "ms", self._laws.service_demand_ms)
            separated = all(r.code != "background_not_separable" for r in self._laws.evidence.reasons)
            rows.append({"figure": "background CPU", "unit": "cores",   # a 0 the fit could not measure is no figure
                         "estimate": self._laws.background_cores if separated else NOT_SEPARATED})
            rows.append({"figure": "cores", "unit": "CPUs", "estimate": self._laws.cores})
        add("saturation throughput", "ops/s", self.saturation_throughput)
        add(f"planned throughput ({percent(self.utilization_target, 2)})", "ops/s", self.planned_throughput)
        if self.method == NO_METHOD and self.planned_at_least is not None:     # the laws' one-sided answer
            rows.append({"figure": "saturation throughput, at least", "unit": "ops/s", "estimate": self.at_least})
            rows.append({"figure": f"planned throughput ({percent(self.utilization_target, 2)}), at least",
                         "unit": "ops/s", "estimate": self.planned_at_least})
        rows.append({"figure": "observed peak (95th percentile)", "unit": "ops/s",
                     "estimate": self.observed_peak_throughput})
        spare = self.spare_fraction
        if spare is not None:
            rows.append({"figure": "spare fraction", "unit": "%", "estimate": 100 * spare.estimate,
                         "low": 100 * spare.low, "high": 100 * spare.high})
        add("runway", "months", self.runway_months)
        return pd.DataFrame(rows, columns=["figure", "unit", "estimate", "low", "high"])


NOT_SEPARATED = "not separated"   # the background CPU of a load too even to separate it (counted in the demand)

def _months(x: float) -> str:
    return "never" if not math.isfinite(x) else number(x, 2)


def production_answer(samples: pd.DataFrame, curve: pd.DataFrame, cores: float | None = None,
                      utilization_target: float = 0.8, latency_target_ms: float | None = None,
                      monthly_growth: float | None = None, level: float = 0.95, fit_on: str = "throughput",
                      bins: int | None = 8, n_bootstrap: int = 200, source: str = "") -> ProductionAnswer:
    """How much more load a server can carry, from its own telemetry: both methods and their verdicts.

    The operational laws on the server's CPU per operation (``server_capacity``) and the USL's latency form fitted to
    the curve (``fit_usl_latency``); the USL answers only when its verdict is sound (the window showed the throughput
    falling past its peak), else the laws, else neither.

    Parameters
    ----------
    samples : pandas.DataFrame
        ``observe``'s per-interval table (``Observation.samples``).
    curve : pandas.DataFrame
        The curve table of the same observation (``Observation.curve``).
    cores : float, optional
        As for ``server_capacity``.
    utilization_target : float, default 0.8
        The utilization the planned throughput is set at.
    latency_target_ms : float, optional
        A mean-latency target (> 0), in ms: the USL's throughput at it, where the USL answers.
    monthly_growth : float, optional
        The load's growth a month, for the runway.
    level : float, default 0.95
        The intervals' coverage.
    fit_on : {"throughput", "latency"}, default "throughput"
        What the USL's least squares minimise (``fit_usl_latency``'s ``method``).
    bins : int or None, default 8
        Concurrency bins the curve is averaged into before the USL fit (None: every interval).
    n_bootstrap : int, default 200
        Refits for the USL's intervals, where it answers.
    source : str, default ""
        Names the data in the answer's first words.

    Returns
    -------
    ProductionAnswer

    Raises
    ------
    InputError
        ``latency_target_ms`` is not > 0, ``fit_on`` is unknown, or a parameter of ``server_capacity`` is out of
        range. Too few intervals for a method is a verdict, not an error.

    Examples
    --------
    >>> from capmodel.observe import bundled_sample, observe_ftdc
    >>> from capmodel.plan.production import production_answer
    >>> sample = bundled_sample()
    >>> observation = observe_ftdc(sample["path"], since=sample["since"], until=sample["until"])
    >>> answer = production_answer(observation.samples, observation.curve, n_bootstrap=50)
    >>> answer.method, answer.evidence.grade
    ('operational laws', 'weak')
    """
    from capmodel.models.usl.latency_form import MIN_POINTS, fit_usl_latency

    if latency_target_ms is not None and not latency_target_ms > 0:
        raise InputError(f"latency target must be > 0 ms, got {latency_target_ms!r}")
    from capmodel.constraints import Choice

    # a misspelt method is the user's mistake, said as one; inside the fit it became an "unusable" verdict
    Choice(("throughput", "latency"), name="fit_on", required=True).check(fit_on, InputError)
    capacity, error = None, None
    try:
        capacity = server_capacity(samples, cores=cores, utilization_target=utilization_target,
                                   latency_target_ms=None, monthly_growth=monthly_growth, level=level)
    except TooFewIntervals as exc:
        error = str(exc).removeprefix("samples: ")
    usl, usl_table, verdict = None, None, Evidence()
    try:
        usl = fit_usl_latency(curve, method=fit_on, bins=bins or None)
        verdict = usl_verdict(usl, curve)
        # its figures' intervals (a bootstrap of refits, most of the answer's time) only where it answers
        usl_table = usl.conf_int(level, n_bootstrap) if verdict.grade == "sound" else None
    except CapmodelError as exc:
        why = (f"it needs at least {MIN_POINTS} intervals with operations, the window has {len(curve)}"
               if len(curve) < MIN_POINTS else str(exc))
        verdict = Evidence.of(Reason("usl_not_fitted", "unusable", f"the USL could not be fitted: {why}",
                                     float(len(curve))))
        usl_table = None
        usl = None
    x = pd.to_numeric(curve["throughput"], errors="coerce") if len(curve) else pd.Series([0.0])
    n = pd.to_numeric(curve["concurrency"], errors="coerce") if len(curve) else pd.Series([0.0])
    observed = capacity.observed_peak_throughput if capacity is not None else float(np.quantile(x, 0.95))
    return ProductionAnswer(capacity=capacity, capacity_error=error, usl=usl, usl_evidence=verdict,
                            usl_table=usl_table, observed_peak_throughput=observed, max_concurrency=float(n.max()),
                            utilization_target=float(utilization_target), latency_target_ms=latency_target_ms,
                            monthly_growth=monthly_growth, level=float(level), source=source,
                            intervals=len(samples), used_intervals=len(curve))
