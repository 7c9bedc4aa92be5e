"""How far a fitted curve supports its answer (the peak, the ceiling, or a capacity at some concurrency): each check
below returns a ``Reason`` or None, and ``assess_fit`` gathers them into an ``Evidence`` (capmodel.models.evidence).

The thresholds are module constants so that the reports, the CLI and the tests use the same ones:

- ``CLIENT_BOUND_*``: a step the bench flagged ``client_bound`` measured the load generator, not the server. If every
  step is flagged, no server ceiling or peak follows from the curve (unusable); if some are, the fit mixes two
  machines' limits (weak).
- ``EXTRAPOLATION_WEAK`` = 2, ``EXTRAPOLATION_UNUSABLE`` = 4: the answer's concurrency over the largest measured one.
  The USL's coherency term is identified only by the curvature the data show; past twice the measured range the
  quadratic term dominates the denominator by 4x what was observed (N² grows 4x when N doubles), so a small error in
  kappa moves the answer by as much as the measured curvature itself (weak); past 4x it is 16x, and the answer is a
  property of the formula, not of the data (unusable). Gunther (*Guerrilla Capacity Planning*, 2007, ch. 5) makes the
  same point: measure to the knee before trusting the peak. The fit's own warning (``PEAK_EXTRAPOLATION`` in
  capmodel.models.results) uses the first threshold, so warnings and verdict agree.
- ``R2_WEAK`` = 0.9: a scalability curve measured on a quiet machine is smooth (the bundled published curves fit with
  R² of 0.95-1.00); below 0.9 a tenth of the variation is unexplained, the size of the differences the answer turns
  on. Below 0 the model does worse than the mean throughput (unusable).
- ``LACK_OF_FIT_ALPHA`` = 0.05: the conventional level of the lack-of-fit F test (Draper & Smith 1998, sec. 2.1);
  rejected means the curve's shape misses the replicates' level means by more than their scatter (weak).
- ``BELOW_ONE_SHARE_UNUSABLE`` = 0.5: observed server-side concurrency (N = X·R, Little's law) below 1 means the server
  was mostly idle at those points; when half or more of the points are below one operation at once, the curve has
  not reached any contention, and its bend (the peak) cannot be located from it. Any point below 1 makes it weak.
- ``INTERVAL_WIDTH_WEAK`` = 0.5: a confidence interval for lambda whose half-width is over 50% of the estimate (low
  to high spans a factor of 3 when symmetric) does not pin the figure that scales every answer (weak).
- ``PAST_PEAK_TOLERANCE`` = 0.05 and ``PAST_PEAK_RSE`` = 2: a model whose peak (or ceiling) lies below the best
  measured throughput by more than 5% and more than two residual standard errors (outside the measurement scatter)
  is contradicted by the data: the server ran faster than the model says it can (unusable).
- ``FEW_DF`` = 3: fewer residual degrees of freedom than this (points minus parameters: 6 points for the USL's three,
  5 for Amdahl's two) leave the Student t quantile of a 95% interval above 3.18 (12.7 at one, against 1.96 with many)
  and the residual error estimated from one or two numbers: the estimates and their intervals are rough (weak). None
  left is the ``exactly_determined`` reason.
- The fit's own warnings (``warning_reasons``) are reasons too, all weak: a parameter at its bound, the model's own
  cautions, a throughput spanning many orders of magnitude, a peak extrapolated (the extrapolation reason itself, at
  most weak as a warning). ``fit.warnings`` is their messages, so every warning ``capmodel fit`` prints is a reason in
  its verdict (one source for both).
- ``measured_fall``: a model without a peak on data that fall after their peak beyond noise (the rule and how noise is
  judged: capmodel.models.measured_fall) is contradicted by the data: the server did turn down (unusable).
- ``CEILING_REACH_WEAK`` = 0.5: for a model without a peak, the ceiling λ/σ is a limit as N grows without bound; when
  the best measured throughput is below half of it, the curve has not bent enough to show where it levels off (weak).
  ``CEILING_REACH_UNUSABLE`` = 0.1: Amdahl's curve reaches half its ceiling at N ≈ 1/σ; a best rate below a tenth of
  the ceiling puts that N some 9x past the largest measured, beyond the 4x that makes a concurrency extrapolation
  unusable: the ceiling is the formula's, not the data's (a 63,000 ops/s sweep "approaching 30,701,791").
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from capmodel.formatting import number, plural, r_squared
from capmodel.models.evidence import Evidence, Reason
from capmodel.models.labels import model_label
# the limit's checks and thresholds live in capmodel.models.limits (influence reads them without a cycle); they are
# part of the verdict's vocabulary here too, as the docstring above says
from capmodel.models.limits import (CEILING_REACH_UNUSABLE, CEILING_REACH_WEAK, PAST_PEAK_RSE,  # noqa: F401
                                     PAST_PEAK_TOLERANCE, at_most_weak, best_measured, check_ceiling_reach,
                                     check_past_peak, model_limit)

CLIENT_BOUND_COLUMN = "client_bound"
EXTRAPOLATION_WEAK = 2.0   # also the fit's own warning threshold (results.PEAK_EXTRAPOLATION)
EXTRAPOLATION_UNUSABLE = 4.0
R2_WEAK = 0.9
LACK_OF_FIT_ALPHA = 0.05
BELOW_ONE_SHARE_UNUSABLE = 0.5
INTERVAL_WIDTH_WEAK = 0.5
FEW_DF = 3
WIDE_SPAN = 1e6         # largest / smallest positive throughput beyond which one point may decide the fit


def _n(x: float) -> str:
    """A figure for a sentence: thousands separators, at most 3 significant digits below 100."""
    return number(x)


def client_bound_steps(curve) -> list[float]:
    """The concurrencies of the steps the bench flagged ``client_bound`` (empty without the column)."""
    if curve is None or CLIENT_BOUND_COLUMN not in curve.columns:
        return []
    flags = curve[CLIENT_BOUND_COLUMN].map(lambda v: str(v).strip().lower() in ("true", "1", "1.0", "yes"))
    return [float(n) for n in curve.loc[flags.to_numpy(), "concurrency"]]


def check_client_bound(curve) -> Reason | None:
    """Steps measured against the client rather than the server: all -> unusable, some -> weak."""
    bound = client_bound_steps(curve)
    if not bound:
        return None
    if len(bound) == len(curve):
        return Reason("client_bound", "unusable", f"every one of the {len(bound)} steps was client-bound (the load "
                      "generator, not the server, set the pace): the curve describes the client", float(len(bound)))
    steps = ", ".join(f"{number(n, 6)}" for n in sorted(set(bound)))
    return Reason("client_bound", "weak", f"{len(bound)} of {len(curve)} steps were client-bound (at {steps} "
                  "clients): those points measure the load generator, not the server", float(len(bound)))


def check_extrapolation(answer_n: float | None, measured_max: float, what: str = "the answer",
                        unit: str = "clients") -> Reason | None:
    """The answer's concurrency (or node, shard count) over the largest measured one: > 2x weak, > 4x unusable."""
    if answer_n is None or not math.isfinite(answer_n) or not measured_max > 0:
        return None
    factor = answer_n / measured_max
    if factor <= EXTRAPOLATION_WEAK:
        return None
    grade = "unusable" if factor > EXTRAPOLATION_UNUSABLE else "weak"
    return Reason("extrapolation", grade, f"{what} ({_n(answer_n)} {unit}) is {factor:.1f}x the largest measured "
                  f"({_n(measured_max)}); past {number(EXTRAPOLATION_WEAK)}x it rests on the formula more than on the data",
                  float(factor))


def check_r2(fit) -> Reason | None:
    """R² below 0 -> unusable; below ``R2_WEAK`` -> weak; not a number -> unusable."""
    r2, x = fit.r2, np.asarray(getattr(fit, "throughput", []), dtype=float)
    if not math.isfinite(r2):      # flat: R² = 1 - RSS/TSS, TSS = 0: undefined (nothing to explain)
        return Reason("r2", "unusable", f"R² is undefined: the throughput is {_n(x[0])} ops/s at every point, so no "
                      "curve's shape can be told from these data" if len(x) > 1 and np.ptp(x) == 0 else
                      "R² is not a number: the data or the fitted curve are degenerate", None)
    if r2 < 0:
        return Reason("r2", "unusable", f"R² = {r_squared(r2)}: the {model_label(fit.model)} curve explains the "
                      "data worse than their mean does", float(r2))
    if r2 < R2_WEAK:
        return Reason("r2", "weak", f"R² = {r_squared(r2)} (below {number(R2_WEAK)}): the {model_label(fit.model)} "
                      f"curve leaves {1 - r2:.0%} of the variation unexplained", float(r2))
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
                  "(lack-of-fit "
                  f"F = {number(test.f_statistic)}, p = {number(test.p_value, 2)})", float(test.p_value))


def check_below_one(concurrency) -> Reason | None:
    """Share of points with fewer than one operation in flight (observed curves): >= half unusable, any weak."""
    n = np.asarray(concurrency, dtype=float)
    if not len(n):
        return None
    share = float(np.mean(n < 1))
    if share == 0:
        return None
    grade = "unusable" if share >= BELOW_ONE_SHARE_UNUSABLE else "weak"
    return Reason("below_one", grade, f"{share:.0%} of the points had fewer than one operation in flight (the "
                  f"largest concurrency measured was {_n(float(n.max()))}): the server was mostly idle, so the curve "
                  "shows no contention to locate a peak from", share)


def check_exact(fit) -> Reason | None:
    """No residual degrees of freedom: the curve passes through every point, with no interval (weak)."""
    if fit.df_resid > 0:
        return None
    return Reason("exactly_determined", "weak", f"exactly determined: {fit.n_points} points for {fit.n_params} "
                  "parameters leave no residual degrees of freedom; no standard errors or intervals (measure more "
                  "points)", float(fit.n_points))


def check_few_points(fit) -> Reason | None:
    """One to ``FEW_DF - 1`` residual degrees of freedom: the estimates and intervals are rough (weak)."""
    if not 0 < fit.df_resid < FEW_DF:
        return None
    return Reason("few_points", "weak", f"only {fit.n_points} points for {fit.n_params} parameters "
                  f"({plural(fit.df_resid, 'degree of freedom', 'degrees of freedom')} left, fewer than {FEW_DF}): "
                  "the estimates and their intervals are rough; measure more concurrency levels",
                  float(fit.df_resid))


def _bound_meaning(name: str, side: str) -> str:
    if name == "kappa" and side == "lower":
        return "a coherency (retrograde) effect, so the fit reduces to Amdahl's law"
    if name == "sigma" and side == "lower":
        return ("any contention (fit --allow-superlinear, allow_superlinear=True in Python, lets σ go below 0: "
                "superlinear scaling)")
    if name == "sigma" and side == "upper":
        return "any parallelism: the work is fully serialised, extra clients add no throughput"
    return "a value inside the allowed range"


def warning_reasons(fit) -> list[Reason]:
    """The fit's warnings as reasons (``fit.warnings`` is their messages): too few points, parameters at a bound, the
    model's own cautions, a huge throughput span, R² not a number, a peak extrapolated past ``EXTRAPOLATION_WEAK``x."""
    found = [check_exact(fit), check_few_points(fit)]
    for i, name in enumerate(fit.names):
        if fit.at_bound[i]:
            p = fit.estimates[i]
            side = "lower" if abs(p - fit.lower[i]) <= abs(p - fit.upper[i]) else "upper"
            bound = fit.lower[i] if side == "lower" else fit.upper[i]
            found.append(Reason("at_bound", "weak", f"{name} is at its {side} bound {number(bound, 6)}: the data "
                                f"do not support {_bound_meaning(name, side)}; its standard error and interval are not "
                                "reliable", float(bound)))
    found += [Reason("model_caution", "weak", text) for text in fit._model_warnings()]
    positive = fit.throughput[fit.throughput > 0]
    if len(positive) and positive.max() > WIDE_SPAN * positive.min():
        orders = math.log10(positive.max() / positive.min())
        found.append(Reason("wide_span", "weak", f"the throughput spans {orders:.0f}"
                            " orders of magnitude (a unit error or an outlier?): one point may decide the whole fit",
                            float(positive.max() / positive.min())))
    if not math.isfinite(fit.r2):
        found.append(check_r2(fit))
    if math.isfinite(fit.peak_concurrency):
        peak = check_extrapolation(fit.peak_concurrency, float(np.max(fit.concurrency)), "the peak")
        # a warning about the peak; when the answer is the peak, assess_fit's own check grades it in full
        found.append(peak and dataclasses.replace(peak, grade="weak"))
    return [r for r in found if r is not None]


def check_interval_width(fit, level: float = 0.95, bootstrap=None) -> Reason | None:
    """lambda's interval with a half-width over ``INTERVAL_WIDTH_WEAK`` of the estimate -> weak; the message gives
    each end against the estimate ('29% below to 316% above'). With ``bootstrap`` (a
    ``BootstrapResult``, or its ``conf_int(level)`` frame) the wider of the asymptotic and the bootstrap interval is
    judged, so the verdict agrees with the widest interval the page shows."""
    if fit.df_resid < 1 or not fit.lambda_ > 0:
        return None
    candidates = [("asymptotic", fit.conf_int(level).loc["lambda"])]
    if bootstrap is not None:
        frame = bootstrap.conf_int(level) if hasattr(bootstrap, "conf_int") else bootstrap
        if "lambda" in frame.index:
            candidates.append(("bootstrap", frame.loc["lambda"]))
    spans = [(float(ci["high"]) - float(ci["low"]), kind, ci) for kind, ci in candidates
             if math.isfinite(float(ci["high"]) - float(ci["low"]))]
    if not spans:
        return None
    span, kind, ci = max(spans, key=lambda t: t[0])
    half = span / 2 / fit.lambda_
    if not half > INTERVAL_WIDTH_WEAK:
        return None
    which = f"{kind} " if len(candidates) > 1 else ""
    low, high = float(ci["low"]), float(ci["high"])
    return Reason("interval_width", "weak", f"λ's {which}{level:.0%} interval ({_n(low)} to {_n(high)}) runs from "
                  f"{relative_side(low, fit.lambda_)} to {relative_side(high, fit.lambda_)} its estimate of "
                  f"{_n(fit.lambda_)}: too wide to pin the rate that scales every answer",
                  float(half))


def relative_side(end: float, estimate: float) -> str:
    """An interval's end against its estimate, in words: '29% below', '316% above' (an asymmetric interval is
    said side by side, never as one ± figure)."""
    share = end / estimate - 1
    return f"{abs(share):.0%} {'below' if share < 0 else 'above'}"


def check_kappa_interval(fit, level: float = 0.95) -> Reason | None:
    """A peak whose coherency interval reaches 0: the data do not establish that throughput turns down (weak)."""
    if fit.df_resid < 1 or not (fit.kappa > 0 and math.isfinite(fit.peak_concurrency)) or "kappa" not in fit.names:
        return None
    low = float(fit.conf_int(level).loc["kappa", "low"])
    if low > 0:
        return None
    return Reason("kappa_interval", "weak", f"κ's {level:.0%} interval reaches 0: the data do not establish that "
                  "throughput turns down, so the peak may not exist", low)


def check_model_choice(fit, comparison) -> Reason | None:
    """A model used against the comparison's recommendation -> weak, naming the recommended one."""
    if comparison is None or comparison.recommended == fit.model:
        return None
    row = comparison.table.loc[comparison.table["model"] == fit.model]
    delta = float(row["delta"].iloc[0]) if len(row) else math.nan
    criterion = comparison.criterion_label
    used = model_label(fit.model)
    # a model ranked first but passed over (it cannot describe a measured fall) has Δ 0: no figure to give
    by = f" (Δ{criterion} of {used}: {delta:.1f})" if math.isfinite(delta) and delta > 0 else ""
    return Reason("model_choice", "weak", f"the {used} model was used although the comparison prefers "
                  f"{model_label(comparison.recommended)}{by}", delta if math.isfinite(delta) else None)


def check_measured_fall(fit, comparison=None) -> Reason | None:
    """A model whose curve cannot fall (no peak) on data that fall after their peak beyond noise -> unusable: its
    "no peak" answer is contradicted by the measurements (capmodel.models.measured_fall has the rule; the noise is
    the comparison's USL fit's scatter, as the model choice judges it, else this fit's own)."""
    from capmodel.models.measured_fall import can_fall, measured_fall

    if can_fall(fit):
        return None
    usl = comparison.fits.get("usl") if comparison is not None else None
    rse = usl.rse if usl is not None and usl.df_resid >= 1 else fit.rse
    fall = measured_fall(fit.concurrency, fit.throughput, rse=rse)
    if fall is None or not fall.beyond_noise:
        return None
    return Reason("measured_fall", "unusable", f"the {model_label(fit.model)} curve cannot fall, but "
                  f"{fall.sentence()}: the model misses the measured fall", float(fall.fraction))


def assess_fit(fit, comparison=None, answer_concurrency: float | None = None, level: float = 0.95,
               unit: str = "clients", what: str = "the answer", bootstrap=None) -> Evidence:
    """The verdict on a fit's answer: the peak (or ceiling), or a capacity at ``answer_concurrency``.

    ``comparison`` (``compare_models``) adds whether the model is the one the data support. Without
    ``answer_concurrency`` the answer is the model's peak (its concurrency is checked for extrapolation). ``unit``
    and ``what`` name the concurrency and the answer in the extrapolation's sentence (e.g. "nodes", "the node count").
    ``bootstrap`` (the fit's ``BootstrapResult`` when the answer shows one) widens the interval check to the wider of
    the asymptotic and the bootstrap interval.
    """
    from capmodel.models.influence import check_single_point
    from capmodel.models.little import check_in_flight

    answer_n = answer_concurrency
    if answer_n is None and math.isfinite(fit.peak_concurrency):
        answer_n, what = fit.peak_concurrency, "the peak"
    found = (
        check_client_bound(fit.curve),
        check_below_one(fit.concurrency),
        check_r2(fit),
        check_past_peak(fit),
        check_measured_fall(fit, comparison),
        answer_extrapolation := check_extrapolation(answer_n, float(np.max(fit.concurrency)), what, unit),
        *warning_reasons(fit),
        check_lack_of_fit(fit),
        check_interval_width(fit, level, bootstrap),
        check_kappa_interval(fit, level),
        # the ceiling far above the data is unusable as the answer itself; a capacity at a concurrency (plan, nodes,
        # shards) is judged by its own extrapolation instead
        check_ceiling_reach(fit) if answer_concurrency is None else at_most_weak(check_ceiling_reach(fit)),
        check_model_choice(fit, comparison),
        check_single_point(fit),
        check_in_flight(fit),
    )
    # a reason found twice (R² not a number, the peak's extrapolation: also warnings) is kept once; the answer's own
    # extrapolation (at the plan's operating N) stands for the peak's, which a warning adds
    found = [r for r in found if r is not None]
    if answer_extrapolation is not None:
        found = [r for r in found if r.code != "extrapolation" or r is answer_extrapolation]
    return Evidence.of(*{(r.code, r.message): r for r in found}.values())


def supported_instead(fit, evidence: Evidence) -> str:
    """When the verdict is unusable: what the data do support, one sentence per unusable reason (no full stops)."""
    best, at = best_measured(fit)
    sentences = []
    codes = {r.code for r in evidence.reasons if r.grade == "unusable"}
    if "client_bound" in codes:
        sentences.append(f"every step was client-bound: the server's ceiling is at least the best measured "
                         f"{_n(best)} ops/s; measure from a separate client host (or with more client processes, "
                         "or without a throughput target)")
    if "below_one" in codes:
        sentences.append(f"the server never ran more than {_n(float(np.max(fit.concurrency)))} operations at once; "
                         f"its peak cannot be located from this window (it sustained at least {_n(best)} ops/s)")
    if "past_peak" in codes:
        sentences.append(f"the server sustained {_n(best)} ops/s at N = {_n(at)}, so its capacity is at least "
                         f"that; the {model_label(fit.model)} curve does not describe these data")
    if "measured_fall" in codes:
        sentences.append(f"the server's throughput peaked at {_n(best)} ops/s at N = {_n(at)} and then fell; "
                         f"the {model_label(fit.model)} curve cannot fall, so fit a model with a coherency term "
                         "(the USL)")
    if "r2" in codes:
        sentences.append(f"the {model_label(fit.model)} curve does not describe these data; what was measured is "
                         "a best rate of "
                         f"{_n(best)} ops/s at N = {_n(at)}")
    if "ceiling_reach" in codes:
        sentences.append(f"the throughput was still rising at the largest concurrency measured (best {_n(best)} "
                         f"ops/s at N = {_n(at)}); where it levels off is not in these data: measure higher "
                         "concurrency")
    if "extrapolation" in codes:
        sentences.append(f"the data reach {_n(float(np.max(fit.concurrency)))} clients; up to there the server "
                         f"sustained {_n(best)} ops/s; measure higher concurrency to locate the peak")
    return "; ".join(sentences) or f"the best measured rate was {_n(best)} ops/s at N = {_n(at)}"


def fit_verdict(fit, comparison=None, level: float = 0.95, bootstrap=None) -> Evidence:
    """The one verdict on a fit's own answer (its peak or ceiling), the one ``capmodel fit``, ``fit.evidence`` and
    ``fit.describe()`` give: ``assess_fit`` with ``comparison``, or without one the rivals' ranking on the same data
    (``rivals_ranking``), so a model the data do not support is weak wherever it is shown."""
    from capmodel.models.ranking import rivals_ranking

    if comparison is None:
        comparison = rivals_ranking(fit)
    return assess_fit(fit, comparison, level=level, bootstrap=bootstrap)
