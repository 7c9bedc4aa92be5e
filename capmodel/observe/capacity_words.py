"""``ServerCapacity``'s answer in words (``capmodel.observe.capacity``): every number from the object, each figure
with its one interval, a one-sided answer as "at least".
"""
from __future__ import annotations

import math

from capmodel.formatting import aside, fixed, number, percent, shows_width
from capmodel.models.estimate import Estimate
from capmodel.observe.runway_words import HORIZON_MONTHS, HORIZON_WORDS

HOST_CORES = "the host's, as the server reports them"
# the cores' source (``cores_source``, as the JSON gives it) in the answer's words, for one core as for many
CORES_WORDS = {"given": "as given", "assumed": "assumed: the server did not report its cores",
               HOST_CORES: "the host's count, as the server reports it"}
#: said after a capacity interval that carries the possible change of the CPU per operation up to saturation
CHANGE_WORDS = "allowing for the CPU per operation to change up to saturation"


def ops(x: float) -> str:
    return "unbounded" if not math.isfinite(x) else f"{number(x)} ops/s"


def ops_interval(e: Estimate, change: bool = False) -> str:
    """`` (low–high ops/s)`` of an estimate's interval ("" when it has none to show); ``change``: the interval
    carries the CPU per operation's possible change, and says so."""
    if not shows_width(e.low, e.high, finite=False):
        return ""
    why = f", {CHANGE_WORDS}" if change else ""
    if not math.isfinite(e.high):
        return f" ({number(e.low)} ops/s or more{why})"
    return f" ({number(e.low)}–{number(e.high)} ops/s{why})"


def spare_percent(x: float, spare: Estimate) -> str:
    """A share ``x`` of the planned throughput as the spare fraction's table row spells it (-17.0 / -19.1 / -15.0):
    the decimals of ``spare``'s estimate and interval, in per cent; "unbounded" when infinite."""
    row = (100 * spare.estimate, 100 * spare.low, 100 * spare.high)
    return "unbounded" if not math.isfinite(x) else f"{fixed(100 * x, row)}%"


def months_text(x: float) -> str:
    return "never" if math.isinf(x) else HORIZON_WORDS if x > HORIZON_MONTHS else f"{x:,.1f}"


def cores_words(c: float) -> str:
    return f"{number(c)} core" + ("" if c == 1 else "s")


def describe_server_capacity(cap, with_method: bool = True) -> str:
    """The answer of a ``ServerCapacity`` in words (markdown); ``with_method``: end with the method and why."""
    method = f" Method: {cap.method} {aside(cap.why)}." if with_method else ""
    if not cap.evidence.usable:
        return lower_bound_words(cap) + method
    pct = f"{cap.level:.0%}"
    d, sat, plan, spare = cap.service_demand_ms, cap.saturation_throughput, cap.planned_throughput, cap.spare_fraction
    change = cap.change_share > 0.05       # the change, not the noise alone, widens the interval
    row = (d.estimate, d.low, d.high)   # each figure as the capacity table's row shows it (formatting.fixed)
    basis = f"Each operation costs the server **{fixed(d.estimate, row)} ms of CPU**" + (
        f" ({pct} interval {fixed(d.low, row)}–{fixed(d.high, row)} ms)" if shows_width(d.low, d.high) else "")
    basis += " at this window's load" if change else ""
    basis += (f", on top of {fixed(cap.background_cores)} cores of background CPU. " if cap.background_cores > 0
              else ". ")
    basis += (f"With {cores_words(cap.cores)} ({CORES_WORDS.get(cap.cores_source, cap.cores_source)}), the "
              f"bottleneck law puts saturation at **{ops(sat.estimate)}**{ops_interval(sat, change)}.")
    text = (f"{basis} At {cap.utilization_target:.0%} utilization the server carries "
            f"**{ops(plan.estimate)}**{ops_interval(plan)}; the observed peak "
            f"(95th percentile of {cap.busy_intervals:,} busy intervals) is {ops(cap.observed_peak_throughput)}")
    def _pct(x):
        return spare_percent(x, spare)

    bounds = (f"{_pct(spare.low)} to {_pct(spare.high)}" if shows_width(spare.low, spare.high, _pct, finite=False)
              else "")
    if spare.estimate >= 0:
        text += f", so **{_pct(spare.estimate)}** of the planned throughput is spare" + (f" ({bounds})." if bounds
                                                                                        else ".")
    else:
        text += f", already **{_pct(-spare.estimate)} above** the planned throughput" + (
            "." if not bounds else f" ({_pct(-spare.high)} to {_pct(-spare.low)} above)." if spare.high <= 0 else
            f" (spare {bounds}).")   # the interval in the sentence's own sense, while all of it is above
    return text + _runway(cap, spare) + cap.replication_sentence() + method


def _runway(cap, spare: Estimate) -> str:
    months = cap.runway_months
    if months is None:
        return ""
    target = f"{cap.utilization_target:.0%}"
    if months.estimate == 0:
        # past the plan is said just above; at it exactly, say so once here
        return (" No growth fits under the plan." if spare.estimate < 0 else
                f" The {target} target is reached now: no growth fits under it.")
    if math.isinf(months.estimate):
        return (" Without growth the load never reaches it." if cap.monthly_growth == 0 else
                f" At {percent(cap.monthly_growth)} growth a month (a shrinking load) it never reaches it.")
    if months.estimate > HORIZON_MONTHS:
        return f" At {percent(cap.monthly_growth)} growth a month the target is reached in **{HORIZON_WORDS}**"
    text = (f" At {percent(cap.monthly_growth)} growth a month the target is reached in "
            f"**{months.estimate:,.1f} months**")
    return text + (f" ({months_text(months.low)} to {months_text(months.high)})." if shows_width(
        months.low, months.high, months_text, finite=False) else ".")


def lower_bound_words(cap) -> str:
    """What an unusable verdict leaves: the load the server carried, or the laws' lower bound when they give one
    above it, and why no capacity figure can be stated."""
    why = "; ".join(r.message for r in cap.evidence.reasons if r.grade == "unusable")
    where = f"at its busiest (95th percentile of {cap.busy_intervals:,} busy intervals)"
    carried = ops(cap.observed_peak_throughput)
    at_least = cap.at_least
    if at_least > cap.observed_peak_throughput:
        head = (f"The server's capacity is **at least {ops(at_least)}**: its CPU per operation, counting all the CPU "
                f"it used as the operations' work, up to all {cores_words(cap.cores)}; it carried {carried} {where}. "
                f"The data cannot support a capacity figure beyond that: {why}.")
    else:
        head = (f"The server carried **{carried}** {where}: a lower bound on its capacity. The data cannot support a "
                f"capacity figure beyond that: {why}.")
    return head + ("" if "replication_load" in cap.evidence.codes() else cap.replication_sentence())
