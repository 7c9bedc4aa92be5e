"""How far a fitted curve supports its answer: the grade, its reasons, and what would make it sound.

A grade is a promise measured on curves of known truth (``benchmarks/calibrate_verdicts.py``; README, "What the
grades promise"):

- ``sound``: the stated 95% interval of the answer's figure covers the truth at least 93% of the time, and no
  answer is off by more than 25%;
- ``weak``: the answer stands, with a reason and a next measurement that would make it sound; its interval still
  covers at least 85% of the time;
- ``unusable``: the data cannot support the figure; the answer says what they do support (a lower bound) instead.

The figure's interval is its range over the likelihood region (capmodel.models.usl.region), which carries the scatter,
the curvature of the model and, for a model chosen by comparison, the choice itself. The grade follows from it and
from what the curve says against any answer:

- **the figure's interval** (``check_interval``): without an upper end (a curve that keeps rising fits the data as
  well) the figure is unusable and the answer is its lower end; wider than ``SOUND_SPAN`` = 1.25 (high / low) it is
  weak. A 95% interval narrower than that keeps a covered answer within 25% of the truth; the study measures how
  often one is not covered, and by how much.
- **the figure beyond the data** (``check_reach``): where the data have not clearly passed the fitted peak (the
  largest measured concurrency below ``PASSED`` = 1.5 times the peak's), an interval whose upper end lies more than
  ``REACH`` = 1.1 times above the most the fitted curve shows over the measured concurrencies claims more than the
  data show; such an answer rests on the model's shape past the data (a fit to early data puts its peak where the
  data stop, and the truth lies beyond): weak, however narrow the interval.
- **the peak below the data** (``check_peak_below``): a peak whose concurrency interval lies wholly below the
  smallest measured concurrency is extrapolated downwards (the data start past it): unusable.
- **the curve's own columns** (capmodel.models.usl.verdict.curve_rules): client-bound steps, idle points, Little's law
  against the concurrency both ways (units), a throughput spanning six orders of magnitude.
- **the fit against the data**: R² below 0 (the model explains less than the mean: unusable), the measured best
  above the model's peak or ceiling beyond the scatter (``check_past_peak``: unusable), a model that cannot fall on
  data that fall (``check_measured_fall``: unusable), the replicates' lack-of-fit F test at ``LACK_OF_FIT_ALPHA`` =
  0.05 (Draper & Smith 1998, sec. 2.1: weak), one point that contradicts the others and decides the answer
  (capmodel.models.usl.verdict.influence: weak), superlinear contention (σ below 0: weak).
- an answer at a given concurrency (nodes, shards) is judged by that concurrency against the largest measured:
  ``EXTRAPOLATION_WEAK`` = 2x weak, ``EXTRAPOLATION_UNUSABLE`` = 4x unusable.
"""
from __future__ import annotations

import math

import numpy as np

from capmodel.formatting import number, r_squared
from capmodel.models.evidence import SOUND_SPAN, Evidence, Reason
from capmodel.models.usl.labels import model_label
from capmodel.models.usl.verdict.curve_rules import curve_reasons
from capmodel.models.usl.verdict.limits import best_measured, check_past_peak, model_limit
from capmodel.models.usl.verdict.next_step import next_step

EXTRAPOLATION_WEAK = 2.0
EXTRAPOLATION_UNUSABLE = 4.0
LACK_OF_FIT_ALPHA = 0.05
REACH = 1.1
PASSED = 1.5


def check_extrapolation(answer_n: float | None, measured_max: float, what: str = "the answer",
                        unit: str = "clients") -> Reason | None:
    """The answer's concurrency (or node, shard count) over the largest measured one: > 2x weak, > 4x unusable."""
    if answer_n is None or not math.isfinite(answer_n) or not measured_max > 0:
        return None
    factor = answer_n / measured_max
    if factor <= EXTRAPOLATION_WEAK:
        return None
    grade = "unusable" if factor > EXTRAPOLATION_UNUSABLE else "weak"
    return Reason("extrapolation", grade, f"{what} ({number(answer_n)} {unit}) is {factor:.1f}x the largest measured "
                  f"({number(measured_max)}); past {number(EXTRAPOLATION_WEAK)}x it rests on the formula more than on "
                  "the data", float(factor))


def check_r2(fit) -> Reason | None:
    """R² below 0 or not a number -> unusable (the model explains the data worse than their mean)."""
    r2, x = fit.r2, np.asarray(getattr(fit, "throughput", []), dtype=float)
    if not math.isfinite(r2):      # flat: R² = 1 - RSS/TSS, TSS = 0: undefined (nothing to explain)
        return Reason("r2", "unusable", f"R² is undefined: the throughput is {number(x[0])} ops/s at every point, so "
                      "no curve's shape can be told from these data" if len(x) > 1 and np.ptp(x) == 0 else
                      "R² is not a number: the data or the fitted curve are degenerate", None)
    if r2 < 0:
        return Reason("r2", "unusable", f"R² = {r_squared(r2)}: the {model_label(fit.model)} curve explains the "
                      "data worse than their mean does", float(r2))
    return None


def check_lack_of_fit(fit) -> Reason | None:
    """Where replicates exist, the lack-of-fit F test; rejected at ``LACK_OF_FIT_ALPHA`` -> weak."""
    from capmodel.errors import CapmodelError

    if len(np.unique(fit.concurrency)) == fit.n_points:
        return None
    try:
        test = fit.lack_of_fit()
    except CapmodelError:
        return None
    if not test.p_value < LACK_OF_FIT_ALPHA:
        return None
    return Reason("lack_of_fit", "weak", f"the replicates reject the {model_label(fit.model)} curve's shape "
                  f"(lack-of-fit F = {number(test.f_statistic)}, p = {number(test.p_value, 2)})",
                  float(test.p_value))


def check_superlinear(fit) -> Reason | None:
    """Contention below 0 (allowed by ``allow_superlinear``): more than linear scaling -> weak."""
    if not fit.sigma < 0:
        return None
    return Reason("superlinear", "weak", f"σ = {number(fit.sigma, 4)}, below 0: superlinear scaling (allowed by fit "
                  "--allow-superlinear, allow_superlinear=True in Python); check for cache warm-up or a bad N=1 "
                  "measurement before trusting the peak", float(fit.sigma))


def check_exact(fit) -> Reason | None:
    """No residual degree of freedom for the fitted model: no scatter to measure, no interval (unusable)."""
    if fit.df_resid > 0:
        return None
    return Reason("exactly_determined", "unusable", f"exactly determined: {fit.n_points} points for "
                  f"{fit.n_params} parameters leave no residual degrees of freedom, so nothing measures the "
                  "scatter and no interval can be stated (measure more points)", float(fit.n_points))


def check_measured_fall(fit, comparison=None) -> Reason | None:
    """A model whose curve cannot fall (no peak) on data that fall after their peak beyond noise -> unusable: its
    "no peak" answer is contradicted by the measurements (capmodel.models.usl.measured_fall has the rule; the noise is
    the comparison's USL fit's scatter, as the model choice judges it, else this fit's own)."""
    from capmodel.models.usl.measured_fall import can_fall, measured_fall

    if can_fall(fit):
        return None
    usl = comparison.fits.get("usl") if comparison is not None else None
    rse = usl.rse if usl is not None and usl.df_resid >= 1 else fit.rse
    fall = measured_fall(fit.concurrency, fit.throughput, rse=rse)
    if fall is None or not fall.beyond_noise:
        return None
    return Reason("measured_fall", "unusable", f"the {model_label(fit.model)} curve cannot fall, but "
                  f"{fall.sentence()}: the model misses the measured fall", float(fall.fraction))


def warning_reasons(fit) -> list[Reason]:
    """The fit's own cautions that grade its answer: no residual degree of freedom, superlinear contention, a
    throughput spanning many orders of magnitude, R² not a number (each also among ``fit.warnings``)."""
    from capmodel.models.usl.verdict.curve_rules import check_wide_span

    found = [check_exact(fit), check_superlinear(fit), check_wide_span(fit.throughput)]
    if not math.isfinite(fit.r2):
        found.append(check_r2(fit))
    return [r for r in found if r is not None]


def _bound_meaning(name: str, side: str) -> str:
    if name == "kappa" and side == "lower":
        return "a coherency (retrograde) effect, so the fit reduces to Amdahl's law"
    if name == "sigma" and side == "lower":
        return ("any contention (superlinear scaling would need fit --allow-superlinear, allow_superlinear=True in "
                "Python)")
    if name == "sigma" and side == "upper":
        return "any parallelism: the work is fully serialised, extra clients add no throughput"
    return "a value inside the allowed range"


def fit_warnings(fit) -> list[str]:
    """What the fit itself remarks, one sentence each (``fit.warnings``): the cautions that grade it
    (``warning_reasons``), then what informs without grading (a parameter at a bound, the model's own cautions, a
    peak far past the data): the answer's interval and verdict already carry their effect."""
    said = [r.message for r in warning_reasons(fit)]
    for i, name in enumerate(fit.names):
        if fit.at_bound[i]:
            p = fit.estimates[i]
            side = "lower" if abs(p - fit.lower[i]) <= abs(p - fit.upper[i]) else "upper"
            bound = fit.lower[i] if side == "lower" else fit.upper[i]
            said.append(f"{name} is at its {side} bound {number(bound, 6)}: the data do not support "
                        f"{_bound_meaning(name, side)}")
    said += fit._model_warnings()
    if math.isfinite(fit.peak_concurrency):
        peak = check_extrapolation(fit.peak_concurrency, float(np.max(fit.concurrency)), "the peak")
        if peak is not None:
            said.append(peak.message)
    return list(dict.fromkeys(said))


def data_reasons(fit, comparison=None) -> list[Reason]:
    """What the curve and the fit say against any answer read off it (not about one figure's interval)."""
    from capmodel.models.usl.verdict.influence import check_single_point

    found = [*curve_reasons(fit.curve, fit.concurrency, fit.throughput), check_r2(fit), check_past_peak(fit),
             check_measured_fall(fit, comparison), *warning_reasons(fit), check_lack_of_fit(fit),
             check_single_point(fit)]
    unique: dict = {}
    for reason in found:
        if reason is not None:
            unique.setdefault((reason.code, reason.message), reason)
    return list(unique.values())


def answer_region(fit, comparison=None, level: float = 0.95):
    """The likelihood region an answer's figures are read over: the compared models' families together when the
    comparison chose ``fit`` (the choice carries its uncertainty), else the fit's own family."""
    if comparison is not None and comparison.recommended == fit.model and comparison.fits.get(fit.model) is fit:
        return comparison.region(level)
    return fit.region(level)


def figure_name(fit) -> str:
    """What the fit's answer states as the most the server delivers: its peak, its ceiling, or its limit."""
    kind, _ = model_limit(fit)
    return {"peak": "the peak throughput", "ceiling": "the ceiling"}.get(kind, "the most the server delivers")


def check_interval(low: float, high: float, what: str, level: float, unit: str = "ops/s",
                   advice=None) -> Reason | None:
    """A figure's interval: no upper end -> unusable (the data support its lower end only); wider than
    ``SOUND_SPAN`` -> weak; ``advice``: the next measurement that would narrow it (a ``NextStep`` or None)."""
    if math.isnan(low):
        return Reason("no_interval", "unusable", f"no {level:.0%} interval of {what} can be stated from these data",
                      None, advice)
    if not math.isfinite(high):
        floor = (f"; they support at least {number(low)} {unit}" if math.isfinite(low) else
                 ": every curve the data allow keeps rising")
        return Reason("unbounded", "unusable", f"the data do not bound {what}: a curve that keeps rising fits them "
                      f"as well, so its {level:.0%} interval has no upper end{floor}", low, advice)
    span = high / low if low > 0 else math.inf
    if span <= SOUND_SPAN:
        return None
    spans = (f"spans {number(span, 3)}x" if math.isfinite(span) else "reaches down to 0")
    return Reason("wide_interval", "weak", f"the {level:.0%} interval of {what} ({number(low)} to {number(high)} "
                  f"{unit}) {spans}, wider than the {number(SOUND_SPAN)}x a sound answer holds", span, advice)


def check_peak_below(fit, region, advice=None) -> Reason | None:
    """The peak below the smallest measured concurrency: its concurrency's interval wholly below it -> unusable (the
    data start past the peak, which is extrapolated downwards); the fitted peak below it and its interval reaching
    below -> weak."""
    smallest = float(np.min(fit.concurrency))
    low, high = region.peak_concurrency_interval()
    said = (f"its concurrency's {region.level:.0%} interval ({number(low)} to {number(high)} clients) "
            f"{'lies' if high < smallest else 'reaches'} below the fewest measured ({number(smallest)})")
    if math.isfinite(high) and high < smallest:
        return Reason("peak_below_data", "unusable", f"the data start past the peak: {said}, so the peak is "
                      "extrapolated downwards", high / smallest, advice)
    if float(fit.peak_concurrency) < smallest and low < smallest:
        return Reason("peak_below_data", "weak", f"the fitted peak ({number(float(fit.peak_concurrency))} clients) "
                      f"lies below the data: {said}, so the peak is extrapolated downwards", low / smallest, advice)
    return None


def check_reach(fit, high: float, what: str, level: float, advice=None) -> Reason | None:
    """A figure whose interval reaches more than ``REACH`` above the most the fitted curve shows over the measured
    concurrencies, where the data have not clearly passed the fitted peak (up to ``PASSED`` times its concurrency):
    the answer extrapolates past the data (weak), however narrow its interval."""
    shown = float(np.max(fit.fitted)) if len(fit.fitted) else math.nan
    if not (math.isfinite(high) and shown > 0) or high <= REACH * shown:
        return None
    if PASSED * float(fit.peak_concurrency) <= float(np.max(fit.concurrency)):
        return None
    return Reason("beyond_data", "weak", f"the {level:.0%} interval of {what} reaches {number(high)} ops/s, "
                  f"{high / shown - 1:.0%} above the most the fitted curve shows over the measured concurrencies "
                  f"({number(shown)} ops/s at up to {number(float(np.max(fit.concurrency)))} clients): the answer "
                  "extrapolates past the data", high / shown, advice)


def check_outside(fit, estimate: float, low: float, high: float, level: float) -> Reason | None:
    """The model's own figure outside the likelihood region's interval: the model was chosen (by an information
    criterion's penalty on small samples) although a rival fits the data far better -> weak; the interval is
    widened to reach the estimate."""
    if not (math.isfinite(low) and (estimate < low * (1 - 1e-9) or estimate > high * (1 + 1e-9))):
        return None
    return Reason("model_outside_region", "weak", f"the {model_label(fit.model)} model's "
                  f"{figure_name(fit).removeprefix('the ')} ({number(estimate)} ops/s) lies outside the {level:.0%} "
                  f"interval of the models that fit the data well ({number(low)} to {number(high)} ops/s): a rival "
                  "with more terms fits far better, and the interval is widened to reach the estimate", estimate)


def limit_reasons(fit, region) -> list[Reason]:
    """The reasons about the fit's own figure, the most the server delivers, read over ``region``."""
    if region.empty:
        nothing = check_interval(math.nan, math.nan, figure_name(fit), region.level, advice=next_step(fit, region))
        return [nothing] if nothing is not None else []
    low, high = region.limit_interval()
    advice = next_step(fit, region)
    estimate = float(fit.peak_throughput)
    outside = check_outside(fit, estimate, low, high, region.level)
    low, high = min(low, estimate), max(high, estimate)
    found = [check_interval(low, high, figure_name(fit), region.level, advice=advice),
             check_peak_below(fit, region, advice), outside]
    if found[0] is None:
        found.append(check_reach(fit, high, figure_name(fit), region.level, advice))
    return [r for r in found if r is not None]


def assess_fit(fit, comparison=None, answer_concurrency: float | None = None, level: float = 0.95,
               unit: str = "clients", what: str = "the answer") -> Evidence:
    """The verdict on a fit's answer: the most the server delivers (its peak or ceiling), or a figure at a concurrency.

    Parameters
    ----------
    fit : ScalabilityFit
        A fitted curve.
    comparison : ModelComparison, optional
        The comparison that chose the model: when it chose ``fit``, the figure's interval is read over all the compared
        families.
    answer_concurrency : float, optional
        A node or shard count the answer is read at: judged by its extrapolation beyond the measured range.
    level : float, default 0.95
        The intervals' coverage.
    unit : str, default "clients"
        What ``answer_concurrency`` counts, in the reasons' words.
    what : str, default "the answer"
        What the answer is, in the reasons' words.

    Returns
    -------
    Evidence
    """
    found: list[Reason | None] = list(data_reasons(fit, comparison))
    if answer_concurrency is None:
        found += limit_reasons(fit, answer_region(fit, comparison, level))
    else:
        found.append(check_extrapolation(answer_concurrency, float(np.max(fit.concurrency)), what, unit))
    return Evidence.of(*found)


def fit_verdict(fit, comparison=None, level: float = 0.95) -> Evidence:
    """The one verdict on a fit's own answer (its peak or ceiling): the one ``capmodel fit``, ``fit.evidence`` and
    ``fit.describe()`` give.

    Parameters
    ----------
    fit : ScalabilityFit
        A fitted curve.
    comparison : ModelComparison, optional
        Default the rivals' ranking on the same data, which judges a measured fall's noise.
    level : float, default 0.95
        The intervals' coverage.

    Returns
    -------
    Evidence
    """
    from capmodel.models.usl.ranking import rivals_ranking

    if comparison is None:
        comparison = rivals_ranking(fit)
    return assess_fit(fit, comparison, level=level)


def supported_instead(fit, evidence: Evidence) -> str:
    """When the verdict is unusable: what the data do support, one sentence per unusable reason (no full stops)."""
    best, at = best_measured(fit)
    reach = float(np.max(fit.concurrency))
    sentences = []
    for reason in (r for r in evidence.reasons if r.grade == "unusable"):
        code = reason.code
        if code == "client_bound":
            sentences.append(f"every step was client-bound: the server's ceiling is at least the best measured "
                             f"{number(best)} ops/s; measure from a separate client host (or with more client "
                             "processes, or without a throughput target)")
        elif code == "below_one":
            sentences.append(f"the server never ran more than {number(reach)} operations at once; its peak cannot be "
                             f"located from this window (it sustained at least {number(best)} ops/s)")
        elif code == "past_peak":
            sentences.append(f"the server sustained {number(best)} ops/s at N = {number(at)}, so its capacity is at "
                             f"least that; the {model_label(fit.model)} curve does not describe these data")
        elif code == "measured_fall":
            sentences.append(f"the server's throughput peaked at {number(best)} ops/s at N = {number(at)} and then "
                             f"fell; the {model_label(fit.model)} curve cannot fall, so fit a model with a coherency "
                             "term (the USL)")
        elif code == "r2":
            sentences.append(f"the {model_label(fit.model)} curve does not describe these data; what was measured "
                             f"is a best rate of {number(best)} ops/s at N = {number(at)}")
        elif code == "unbounded":
            floor = (f"the most it delivers is at least {number(reason.value)} ops/s (the lower end of its interval)"
                     if reason.value is not None and math.isfinite(reason.value) else
                     "every curve the data allow keeps rising past them")
            sentences.append(f"the data reach {number(reach)} clients, where the server sustained {number(best)} "
                             f"ops/s; {floor}")
        elif code == "peak_below_data":
            sentences.append(f"the data start past the peak; the server sustained {number(best)} ops/s at "
                             f"N = {number(at)}, so its peak is at least that")
        elif code == "in_flight":
            sentences.append(f"Little's law puts {number(reason.value, 3)}x as many operations in flight as clients: "
                             "fix the units of the throughput or latency column before reading any figure in ops/s")
        elif code in ("exactly_determined", "no_interval"):
            sentences.append(f"the best measured rate was {number(best)} ops/s at N = {number(at)}; measure more "
                             "concurrency levels for a figure with an interval")
        elif code == "extrapolation":
            sentences.append(f"the data reach {number(reach)} clients; up to there the server sustained "
                             f"{number(best)} ops/s; measure higher concurrency")
    unique = list(dict.fromkeys(sentences))
    return "; ".join(unique) or f"the best measured rate was {number(best)} ops/s at N = {number(at)}"
