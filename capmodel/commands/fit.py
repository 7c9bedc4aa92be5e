"""``capmodel fit FILE``: fit the USL (or Amdahl, or the best rival) to a measured curve; text or JSON."""
from __future__ import annotations


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
    # the choices are checked by check_request (capmodel.models.usl.selection.MODEL_CHOICES), not here: importing the
    # family to list them would load numpy and scipy for every command's start
    p.add_argument("--model", default="usl", metavar="MODEL",
                   help="usl (default), amdahl (kappa = 0), linear, log_coherency, or auto (the one the data support "
                        "best: AICc, fewest parameters within 2 units, a falling curve only by a model that can fall)")
    p.add_argument("--level", type=float, default=0.95, metavar="P", help="confidence level (default 0.95)")
    p.add_argument("--weights", choices=("none", "replicates"), default="none",
                   help="replicates: weight each point by the inverse variance of its concurrency level's replicates")
    p.add_argument("--allow-superlinear", action="store_true", help="let sigma go below 0 (superlinear scaling)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the text summary")
    p.set_defaults(func=run)


def run(args) -> int:
    from capmodel.data.readers import read_curve
    from capmodel.errors import CapmodelError, FitError, InputError
    from capmodel.jsonable import print_json
    from capmodel.models.usl.answer import check_request, fit_curve

    try:         # before the file is read; the parameter's name becomes the option's
        check_request(args.model, args.level, args.allow_superlinear)
    except InputError as exc:
        raise InputError("--" + str(exc).replace("allow_superlinear:", "allow-superlinear:", 1)) from None
    curve = read_curve(args.file, concurrency=args.concurrency, throughput=args.throughput)
    weights = "replicates" if args.weights == "replicates" else None
    where = f"{args.file}: "
    try:
        answer = fit_curve(curve, args.model, level=args.level, weights=weights,
                           allow_superlinear=args.allow_superlinear)
    except CapmodelError as exc:
        raise type(exc)(where + str(exc)) from None
    except Exception as exc:  # a numerical failure deep in the solver: one line, not a traceback
        raise FitError(f"{where}the {args.model} fit failed: {exc}") from exc
    if args.json:
        print_json(answer.to_json())
    else:
        print(answer.summary())
    return 0
