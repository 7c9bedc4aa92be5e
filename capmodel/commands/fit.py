"""``capmodel fit FILE``: fit the USL (or Amdahl, or the best rival) to a measured curve; text or JSON."""
from __future__ import annotations

import math

FIT_MODELS = ("usl", "amdahl", "auto")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "fit", help="fit the Universal Scalability Law (or Amdahl, or the best rival) to a measured curve",
        description="Read a concurrency-vs-throughput curve and fit a scalability model. Prints a summary, or with "
        "--json one object: model, sigma, kappa, lambda, peak_concurrency, peak_throughput, ceiling, r2, "
        "n_points, ci (name -> [low, high]), warnings, evidence {grade: sound|weak|unusable, reasons}; when the "
        "evidence is unusable the text prints what the data support instead of a peak or ceiling.")
    p.add_argument("file", metavar="FILE", help="the curve: CSV, TSV, Parquet, JSON, markdown table or YCSB output")
    p.add_argument("--concurrency", metavar="COL", help="column holding the concurrency (threads, clients ...)")
    p.add_argument("--throughput", metavar="COL", help="column holding the throughput (ops/s)")
    p.add_argument("--model", choices=FIT_MODELS, default="usl",
                   help="usl (default), amdahl (kappa = 0), or auto (best of linear/amdahl/usl/log-coherency by AICc)")
    p.add_argument("--level", type=float, default=0.95, metavar="P", help="confidence level (default 0.95)")
    p.add_argument("--weights", choices=("none", "replicates"), default="none",
                   help="replicates: weight each point by the inverse variance of its concurrency level's replicates")
    p.add_argument("--allow-superlinear", action="store_true", help="let sigma go below 0 (superlinear scaling)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the text summary")
    p.set_defaults(func=run)


def _finite_or_none(value):
    return value if value is not None and math.isfinite(value) else None


def fit_record(fit, level: float, comparison=None, evidence=None) -> dict:
    """The JSON contract of ``capmodel fit --json`` for a fitted USL-family model; ``evidence`` defaults to
    ``fit_verdict(fit, comparison)`` (the one ``fit.evidence`` gives). ``ci`` holds one interval per figure: the
    parameters' and the figures' (``peak_throughput``, ``peak_concurrency``, ``ceiling``) ranges over the answer's
    likelihood region (an end the data do not bound is null). ``supported`` says what the data support when the
    evidence is unusable."""
    from capmodel.models.usl.verdict.assessment import answer_region, fit_verdict, supported_instead

    if evidence is None:
        evidence = fit_verdict(fit, comparison, level=level)
    region = answer_region(fit, comparison, level)
    ci = {name: [_finite_or_none(float(row.low)), _finite_or_none(float(row.high))]
          for name, row in fit.conf_int(level, method="profile").iterrows()}
    params = fit.params
    sigma = params.get("sigma", 0.0)
    kappa = params.get("kappa", 0.0)
    for fixed in ("sigma", "kappa"):
        ci.setdefault(fixed, [0.0, 0.0])   # held at 0 by the model (amdahl: kappa; linear: both)
    figures = fit.figure_intervals(level, region=region)
    for name, figure in figures.items():
        ci[name] = [_finite_or_none(figure.low), _finite_or_none(figure.high)]
    record = {
        "model": fit.model,
        "sigma": sigma,
        "kappa": kappa,
        "lambda": params["lambda"],
        "peak_concurrency": _finite_or_none(fit.peak_concurrency),
        "recommended_concurrency": getattr(fit, "recommended_concurrency", None),
        "peak_throughput": _finite_or_none(fit.peak_throughput),
        "ceiling": _finite_or_none(figures["ceiling"].estimate),
        "r2": fit.r2,
        "rse": fit.rse,
        "aic": fit.aic,
        "n_points": fit.n_points,
        "level": level,
        "interval_method": "profile likelihood over the answer's likelihood region (capmodel.models.usl.region)",
        "se": fit.se,
        "ci": ci,
        "warnings": list(fit.warnings),
        "evidence": evidence.to_json(),
        "supported": None if evidence.usable else supported_instead(fit, evidence),
    }
    if comparison is not None:
        record["selection"] = {"criterion": comparison.criterion, "reason": comparison.reason,
                               "table": comparison.table.drop(columns=["params"])}
    return record


def run(args) -> int:
    from capmodel.data.readers import read_curve
    from capmodel.errors import InputError
    from capmodel.jsonable import print_json
    from capmodel.models.usl import rivals
    from capmodel.models.usl.fit import fit_usl

    if not 0 < args.level < 1:
        raise InputError(f"--level: expected a confidence level between 0 and 1, got {args.level}")
    curve = read_curve(args.file, concurrency=args.concurrency, throughput=args.throughput)
    weights = "replicates" if args.weights == "replicates" else None
    comparison = None
    where = f"{args.file}: "
    try:
        if args.model == "usl":
            fit = fit_usl(curve, allow_superlinear=args.allow_superlinear, weights=weights)
        elif args.model == "amdahl":
            fit = rivals.fit_amdahl(curve, weights=weights)
        else:
            from capmodel.models.usl.selection import compare_models

            comparison = compare_models(curve, weights=weights)
            fit = comparison.best_fit
    except InputError as exc:
        raise InputError(where + str(exc)) from None
    except Exception as exc:  # a numerical failure deep in the solver: one line, not a traceback
        from capmodel.errors import CapmodelError, FitError

        if isinstance(exc, CapmodelError):
            raise type(exc)(where + str(exc)) from None
        raise FitError(f"{where}the {args.model} fit failed: {exc}") from exc
    from capmodel.models.usl.verdict.assessment import fit_verdict

    evidence = fit_verdict(fit, comparison, level=args.level)
    if args.json:
        print_json(fit_record(fit, args.level, comparison, evidence))
    else:
        from capmodel.commands._fit_text import fit_text

        print(fit_text(fit, args.level, evidence, comparison))
    return 0

