"""Do the evidence grades keep their promise? A calibration study on curves and servers whose truth is known.

    python benchmarks/calibrate_verdicts.py                    # 1,200 curves and 400 servers, seed 0
    python benchmarks/calibrate_verdicts.py --curves 300 --servers 40 --seed 7 --jobs 2

Curves are drawn from known truths — the USL with κ > 0, Amdahl (κ = 0) and linear scaling — over the designs
analysts meet: 4 to 12 concurrency levels spaced evenly or geometrically from 1, 2, 4 or 8 clients, 1 to 3
replicates, noise of 1% to 15% of the rate (multiplicative for most curves, partly additive for some), ranges that
stop well before the peak, reach it or run past it, an occasional outlier (one point 0.5-0.7x or 1.5-2x) and an
occasional unit mistake (throughput in ops/ms or ops/min, latency in seconds). Each curve carries the latency
columns a closed-loop client writes (mean = N/X by Little's law, p95 a fixed multiple of it). Servers are synthetic
FTDC days (``capmodel.observe.synthetic``) of known capacity: busy or light days, background CPU, and a CPU per
operation that changes with load (``benchmarks/calibrate_observe.py`` draws them and runs observe on them).

For every public answer — the fit (``capmodel.fit_usl``, the default), the model the comparison chooses (``fit
--model auto``), the capacity a plan reads off the fit (``capacity_from_fit``, 80% of the fitted peak), the
capacity under a p95 latency target, and ``observe``'s capacity from the server's own telemetry — it prints, per
grade: the share of the answers, the coverage of each stated 95% interval (the answer's figure; a fit's peak
concurrency too), the median and 90th-percentile error of the figure where the answer states one, and the share
off by more than 25%. Then it checks the grades' promises (README, "What the grades promise"): sound covers at
least 93% and is never off by more than 25%; weak covers at least 85%; on the clean designs (past the peak, at least
8 levels, noise at most 5%) at least 80% of the fits are sound. The run is deterministic for a seed.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

GRADES = ("sound", "weak", "unusable")
SOUND_COVERAGE, WEAK_COVERAGE, SOUND_WORST, CLEAN_SOUND = 0.93, 0.85, 0.25, 0.80


# --- the truths -----------------------------------------------------------------------------------------------------

def usl_x(n, sigma, kappa, lambda_):
    n = np.asarray(n, dtype=float)
    return lambda_ * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))


@dataclass(frozen=True)
class Truth:
    """A curve's true parameters and the design it was measured with."""

    kind: str               # usl | amdahl | linear
    sigma: float
    kappa: float
    lambda_: float
    reach: str              # early | reach | past (linear: none)
    levels: int
    replicates: int
    noise: float
    noise_form: str         # relative | mixed
    outlier: bool
    mistake: str            # "" | ops_per_ms | ops_per_min | latency_seconds
    p95_ratio: float

    @property
    def peak_concurrency(self) -> float:
        return math.sqrt((1 - self.sigma) / self.kappa) if self.kappa > 0 else math.inf

    @property
    def limit(self) -> float:
        """The most throughput the server delivers: the peak, the ceiling λ/σ, or inf."""
        if self.kappa > 0:
            return float(usl_x(self.peak_concurrency, self.sigma, self.kappa, self.lambda_))
        return self.lambda_ / self.sigma if self.sigma > 0 else math.inf

    @property
    def clean(self) -> bool:
        """Data past a peak (a USL truth), at least 8 levels, noise at most 5%, no outlier or unit mistake."""
        return (self.kind == "usl" and self.reach == "past" and self.levels >= 8 and self.noise <= 0.05
                and not self.outlier and not self.mistake)


#: the share of curves drawn from the clean designs alone (a USL truth measured past its peak, 8 or more levels, noise
#: at most 5%, no outlier, no unit mistake), so that the promise on them rests on enough curves
CLEAN_SHARE = 0.2


def draw_curve(rng: np.random.Generator) -> tuple[pd.DataFrame, Truth]:
    """One curve of known truth and its measured table."""
    clean = bool(rng.random() < CLEAN_SHARE)
    kind = "usl" if clean else rng.choice(["usl", "usl", "usl", "amdahl", "linear"])
    lam = float(10 ** rng.uniform(1, 4.7))
    if kind == "usl":
        n_star = float(10 ** rng.uniform(math.log10(4), math.log10(400)))
        sigma = 0.0 if rng.random() < 0.2 else float(10 ** rng.uniform(-3, math.log10(0.3)))
        kappa = (1 - sigma) / n_star ** 2
    elif kind == "amdahl":
        sigma, kappa, n_star = float(10 ** rng.uniform(-2.5, math.log10(0.3))), 0.0, math.inf
    else:
        sigma, kappa, n_star = 0.0, 0.0, math.inf
    reach = "past" if clean else str(rng.choice(["early", "reach", "past"])) if kind != "linear" else "none"
    if kind == "usl":
        share = {"early": (0.25, 0.6), "reach": (0.7, 1.4), "past": (1.5, 4.0)}[reach]
        n_max = rng.uniform(*share) * n_star
    elif kind == "amdahl":          # the share of the ceiling reached at the largest concurrency
        frac = rng.uniform(*{"early": (0.2, 0.5), "reach": (0.5, 0.8), "past": (0.8, 0.95)}[reach])
        n_max = frac * (1 - sigma) / (sigma * (1 - frac))
    else:
        n_max = 10 ** rng.uniform(0.8, 2.7)
    levels = int(rng.integers(8 if clean else 4, 13))
    start = float(rng.choice([1, 2, 4, 8]))
    n_max = max(n_max, start + levels - 1)
    grid = (np.geomspace(start, n_max, levels) if rng.random() < 0.6 else np.linspace(start, n_max, levels))
    grid = np.unique(np.round(grid))
    if len(grid) < levels:      # rounding merged levels: fill evenly
        grid = np.unique(np.round(np.linspace(start, max(n_max, start + levels - 1), levels)))
    replicates = int(rng.integers(1, 4))
    noise = float(10 ** rng.uniform(-2, math.log10(0.05 if clean else 0.15)))
    form = "relative" if rng.random() < 0.75 else "mixed"
    n = np.repeat(grid, replicates)
    true_x = usl_x(n, sigma, kappa, lam)
    if form == "relative":
        x = true_x * np.exp(rng.normal(0, noise, len(n)))
    else:                       # the scatter grows with the square root of the rate times the largest rate
        x = np.maximum(true_x + rng.normal(0, noise, len(n)) * np.sqrt(true_x * true_x.max()), 0.02 * true_x)
    outlier = not clean and bool(rng.random() < 0.08)
    if outlier:
        i = int(rng.integers(len(n)))
        x[i] *= rng.uniform(0.5, 0.7) if rng.random() < 0.5 else rng.uniform(1.5, 2.0)
    ratio = float(rng.uniform(1.8, 3.2))
    mean_ms = 1000.0 * n / true_x * np.exp(rng.normal(0, noise / 2, len(n)))
    p95_ms = ratio * mean_ms * np.exp(rng.normal(0, noise / 2, len(n)))
    mistake = ""
    if not clean and rng.random() < 0.04:
        mistake = str(rng.choice(["ops_per_ms", "ops_per_min", "latency_seconds"]))
        if mistake == "ops_per_ms":
            x = x / 1000.0
        elif mistake == "ops_per_min":
            x = x * 60.0
        else:
            mean_ms, p95_ms = mean_ms / 1000.0, p95_ms / 1000.0
    table = pd.DataFrame({"concurrency": n, "throughput": x, "latency_mean_ms": mean_ms, "latency_p95_ms": p95_ms})
    return table, Truth(str(kind), sigma, kappa, lam, reach, len(grid), replicates, noise, form, outlier, mistake,
                        ratio)


# --- the answers ------------------------------------------------------------------------------------------------------

@dataclass
class Answer:
    """One public answer on one input: its grade, its figures (name -> (estimate, low, high)) and their truths."""

    answer: str
    grade: str
    figures: dict = field(default_factory=dict)
    truths: dict = field(default_factory=dict)
    clean: bool = False
    design: dict = field(default_factory=dict)
    withheld: dict = field(default_factory=dict)   # name -> the estimate an unusable answer does not state


def _figure(estimate, low=math.nan, high=math.nan) -> tuple[float, float, float]:
    def f(v):
        return math.nan if v is None else float(v)
    return f(estimate), f(low), f(high)


def fit_figures(fit, evidence, level: float, comparison=None) -> dict:
    """What a fit's answer states: its peak (or ceiling) throughput and the peak's concurrency with their intervals;
    an unusable answer states no figure, only the lower end of its interval (at least that much)."""
    from capmodel.models.usl.verdict.assessment import answer_region

    figures = fit.figure_intervals(level, region=answer_region(fit, comparison, level))
    out = {}
    for name in ("peak_throughput", "peak_concurrency"):
        e = figures[name]
        out[name] = _figure(e.estimate, e.low, e.high) if evidence.usable else _figure(math.nan, e.low, math.inf)
    return out


def withheld(fit, evidence) -> dict:
    """The estimates an unusable answer does not state (how far off they would have been is the study's to say)."""
    return {} if evidence.usable else {"peak_throughput": float(fit.peak_throughput),
                                       "peak_concurrency": float(fit.peak_concurrency)}


def fit_answers(table: pd.DataFrame, truth: Truth, level: float = 0.95) -> list[Answer]:
    """The fit's, the chosen model's, the plan's and the latency target's answers on one curve."""
    import capmodel
    from capmodel.errors import CapmodelError
    from capmodel.models.usl.verdict.assessment import fit_verdict
    from capmodel.plan.capacity import Objectives, capacity_from_fit

    design = {k: getattr(truth, k) for k in ("kind", "reach", "levels", "replicates", "noise", "noise_form",
                                              "outlier", "mistake")}
    out = []
    limit = truth.limit
    truths = {"peak_throughput": limit, "peak_concurrency": truth.peak_concurrency}
    try:
        fit = capmodel.fit_usl(table)
    except CapmodelError:
        return [Answer(a, "refused", {}, {}, truth.clean, design) for a in ("fit", "auto", "plan", "latency")]
    evidence = fit.evidence
    out.append(Answer("fit", evidence.grade, fit_figures(fit, evidence, level), truths, truth.clean, design,
                      withheld(fit, evidence)))
    try:
        comparison = capmodel.compare_models(table, extrapolation=False)
        best = comparison.best_fit
        chosen = fit_verdict(best, comparison, level=level)
        out.append(Answer("auto", chosen.grade, fit_figures(best, chosen, level, comparison), truths, truth.clean,
                          design, withheld(best, chosen)))
    except CapmodelError:
        out.append(Answer("auto", "refused", {}, {}, truth.clean, design))
    planned = 0.8 * limit
    try:
        cap = capacity_from_fit(fit, Objectives(utilization_target=None, peak_fraction=0.8), level=level)
        stated = cap.evidence.usable
        out.append(Answer("plan", cap.evidence.grade, {"planned_capacity": _figure(
            cap.usable_throughput if stated else math.nan, cap.usable_throughput_low,
            cap.usable_throughput_high if stated else math.inf)},
            {"planned_capacity": planned}, truth.clean, design,
            {} if stated else {"planned_capacity": cap.usable_throughput}))
    except CapmodelError:
        out.append(Answer("plan", "refused", {}, {"planned_capacity": planned}, truth.clean, design))
    # a p95 target three times the true zero-load p95: reached on the rising side of every curve with a peak
    from capmodel.models.usl.closed_form import latency_limit

    zero_load_s = 1.0 / truth.lambda_
    target_ms = 3.0 * truth.p95_ratio * zero_load_s * 1000.0
    true_limit = latency_limit(target_ms / 1000.0 / truth.p95_ratio, truth.sigma, truth.kappa, truth.lambda_,
                               branch="normal", cap_at_peak=True)
    try:
        cap = capacity_from_fit(fit, Objectives(utilization_target=None, latency_p95_ms=target_ms), level=level)
        stated = cap.evidence.usable
        out.append(Answer("latency", cap.evidence.grade, {"latency_capacity": _figure(
            cap.usable_throughput if stated else math.nan, cap.usable_throughput_low,
            cap.usable_throughput_high if stated else math.inf)},
            {"latency_capacity": true_limit.throughput}, truth.clean, design,
            {} if stated else {"latency_capacity": cap.usable_throughput}))
    except CapmodelError:
        out.append(Answer("latency", "refused", {}, {}, truth.clean, design))
    return out


def curve_task(args) -> list[Answer]:
    seed, index = args
    warnings.simplefilter("ignore")
    rng = np.random.default_rng([seed, index])
    table, truth = draw_curve(rng)
    answers = fit_answers(table, truth)
    for a in answers:
        a.design["curve"] = index
    return answers


def task(args) -> list[Answer]:
    """One curve's answers (``("curve", seed, index)``) or one synthetic server's (``("server", seed, index)``)."""
    kind, seed, index = args
    if kind == "curve":
        return curve_task((seed, index))
    from calibrate_observe import server_answers

    return server_answers(seed, index)


# --- the table ------------------------------------------------------------------------------------------------------

def covered(truth: float, low: float, high: float) -> bool | None:
    """Whether [low, high] holds the truth (None: no interval stated)."""
    if math.isnan(low) or math.isnan(high):
        return None
    if math.isinf(truth):
        return math.isinf(high)
    return low <= truth <= high


def error(estimate: float, truth: float) -> float:
    """|estimate / truth - 1|; inf where one is infinite and the other not; NaN without an estimate."""
    if math.isnan(estimate) or math.isnan(truth):
        return math.nan
    if math.isinf(truth) or math.isinf(estimate):
        return 0.0 if math.isinf(truth) and math.isinf(estimate) else math.inf
    return abs(estimate / truth - 1.0) if truth > 0 else math.nan


def rows_of(answers: list[Answer]) -> pd.DataFrame:
    rows = []
    for a in answers:
        for name, (estimate, low, high) in (a.figures or {"-": (math.nan, math.nan, math.nan)}).items():
            truth = a.truths.get(name, math.nan)
            rows.append({"answer": a.answer, "grade": a.grade, "figure": name, "clean": a.clean, **a.design,
                         "estimate": estimate, "low": low, "high": high, "truth": truth,
                         "covered": covered(truth, low, high), "error": error(estimate, truth),
                         "withheld_error": error(a.withheld.get(name, math.nan), truth),
                         "stated": not (math.isnan(estimate) or (a.grade == "unusable"))})
    return pd.DataFrame(rows)


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per answer, grade and figure: share, coverage, median and 90th-percentile error, share off by > 25%."""
    out = []
    for (answer, grade, figure), g in frame.groupby(["answer", "grade", "figure"], sort=False):
        total = (frame["answer"] == answer) & (frame["figure"] == figure)
        cov = g["covered"].dropna()
        err = g.loc[g["stated"], "error"].dropna()
        out.append({"answer": answer, "grade": grade, "figure": figure, "answers": len(g),
                    "share": len(g) / int(total.sum()),
                    "coverage": float(cov.astype(float).mean()) if len(cov) else math.nan,
                    "median_error": float(err.median()) if len(err) else math.nan,
                    "p90_error": float(err.quantile(0.9)) if len(err) else math.nan,
                    "off_25": float((err > 0.25).mean()) if len(err) else math.nan,
                    "worst": float(err.max()) if len(err) else math.nan,
                    "withheld_median_error": float(g["withheld_error"].dropna().median())
                    if g["withheld_error"].notna().any() else math.nan})
    order = {g: i for i, g in enumerate(GRADES + ("refused",))}
    result = pd.DataFrame(out)
    return result.sort_values(["answer", "figure", "grade"], key=lambda s: s.map(order) if s.name == "grade"
                              else s, kind="stable").reset_index(drop=True)


def promises(frame: pd.DataFrame, table: pd.DataFrame) -> list[tuple[str, bool, str]]:
    """Each promise of the grades, whether the study keeps it, and the figure it rests on."""
    checks = []
    for _, row in table.iterrows():
        if row["grade"] == "sound" and not math.isnan(row["coverage"]):
            checks.append((f"{row['answer']} {row['figure']}: sound covers >= {SOUND_COVERAGE:.0%}",
                           row["coverage"] >= SOUND_COVERAGE, f"{row['coverage']:.3f} of {row['answers']}"))
        if row["grade"] == "sound" and row["figure"] != "peak_concurrency" and not math.isnan(row["worst"]):
            checks.append((f"{row['answer']} {row['figure']}: no sound answer off by more than {SOUND_WORST:.0%}",
                           row["worst"] <= SOUND_WORST, f"worst {row['worst']:.3f}"))
        if row["grade"] == "weak" and not math.isnan(row["coverage"]):
            checks.append((f"{row['answer']} {row['figure']}: weak covers >= {WEAK_COVERAGE:.0%}",
                           row["coverage"] >= WEAK_COVERAGE, f"{row['coverage']:.3f} of {row['answers']}"))
    for answer in ("fit", "auto"):
        clean = frame[(frame["answer"] == answer) & frame["clean"] & (frame["figure"] == "peak_throughput")]
        if len(clean):
            share = float((clean["grade"] == "sound").mean())
            checks.append((f"{answer}: clean designs sound >= {CLEAN_SOUND:.0%}", share >= CLEAN_SOUND,
                           f"{share:.3f} of {len(clean)}"))
    return checks


def print_report(frame: pd.DataFrame, seconds: float, seed: int) -> bool:
    table = summary(frame)
    pd.set_option("display.width", 200)
    print(f"calibration study, seed {seed}: {frame.groupby('answer').size().to_dict()} answers, {seconds:.0f} s")
    shown = table.copy()
    for col in ("share", "coverage", "median_error", "p90_error", "off_25", "worst", "withheld_median_error"):
        shown[col] = shown[col].map(lambda v: "" if isinstance(v, float) and math.isnan(v) else f"{v:.3f}")
    print(shown.to_string(index=False))
    print()
    ok = True
    for what, kept, figure in promises(frame, table):
        ok &= kept
        print(f"{'kept  ' if kept else 'BROKEN'}  {what}: {figure}")
    return ok


def answers_of(function, tasks: list, jobs: int) -> pd.DataFrame:
    """Every task's answers (``function(task)``: a list of ``Answer``), on ``jobs`` processes, as ``rows_of``'s
    table."""
    if jobs > 1:
        from multiprocessing import get_context

        with get_context("fork").Pool(jobs) as pool:
            results = pool.map(function, tasks, chunksize=4)
    else:
        results = [function(t) for t in tasks]
    return rows_of([a for r in results for a in r])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--curves", type=int, default=1200)
    parser.add_argument("--servers", type=int, default=400, help="synthetic servers for observe's capacity")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", help="write every answer's row to this CSV")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    tasks = [("curve", args.seed, i) for i in range(args.curves)] + [("server", args.seed, i)
                                                                       for i in range(args.servers)]
    frame = answers_of(task, tasks, args.jobs)
    if args.out:
        frame.to_csv(args.out, index=False)
    return 0 if print_report(frame, time.perf_counter() - started, args.seed) else 1


if __name__ == "__main__":
    sys.exit(main())
