"""Report 07's answer in one sentence, for the index of reports: where the server saturates, what it carries at the
utilization target, and how its observed peak stands against that; every figure from ``ProductionAnswer``."""
from __future__ import annotations

from capmodel.formatting import number, percent, shows_width


def production_short_answer(result) -> str:
    """One sentence (markdown) from a ``capmodel.plan.production.ProductionAnswer``: the saturation throughput with
    its interval, the planned throughput at the utilization target, and the observed peak's spare or excess; the
    observed peak alone, as a lower bound, when no method states a capacity."""
    observed = f"{number(result.observed_peak_throughput)} ops/s"
    saturation, planned, spare = result.saturation_throughput, result.planned_throughput, result.spare_fraction
    if saturation is None or planned is None or spare is None:
        return (f"At its busiest the server carried **{observed}**, a lower bound on its capacity: the data cannot "
                "say how much more it can take.")
    span = (f" ({percent(result.level)} interval {number(saturation.low)}–{number(saturation.high)} ops/s)"
            if shows_width(saturation.low, saturation.high) else "")
    text = (f"The server saturates at **{number(saturation.estimate)} ops/s**{span}; at the "
            f"{percent(result.utilization_target, 2)} utilization target it carries **{number(planned.estimate)} "
            f"ops/s**, and its observed peak of {observed} ")
    if spare.estimate >= 0:
        return text + f"leaves **{percent(spare.estimate, 3)}** of that spare."
    return text + f"is already **{percent(-spare.estimate, 3)} above** it."
