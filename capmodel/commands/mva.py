"""``capmodel mva MODEL.yaml [--json]``: solve a multi-class queueing network described in a YAML or JSON file (its
schema and the dispatch to a solver: ``capmodel.models.queueing.network_spec``), or ``--observed DIR``: the mix what-if
from production (``capmodel.commands._mva_observed``).
"""
from __future__ import annotations

from capmodel.models.queueing.network_spec import SOLVERS


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "mva", help="solve a multi-class queueing network (closed, open or mixed) from a YAML or JSON model file",
        description="Per class: throughput, response time and time at each station; per station: utilization and "
        "queue length by class. Closed classes (population, think_time) are solved by exact MVA (or --solver "
        "linearizer|schweitzer), open classes (arrival_rate) as an open network, both as a mixed network. --json "
        "prints {solver, method, classes: [{class, population, think_time, arrival_rate, throughput, response_time, "
        "residence}], stations: [{station, servers, utilization, queue_length}], notes}.")
    p.add_argument("model", metavar="MODEL.yaml", nargs="?", help="the network: classes, stations, optional solver")
    p.add_argument("--solver", choices=SOLVERS, help="override the file's solver (default exact)")
    what_if = p.add_argument_group("mix what-if from production (instead of MODEL.yaml)")
    what_if.add_argument("--observed", metavar="DIR", action="append",
                         help="a capmodel observe output folder (samples.csv); repeat for each member of a replica set")
    what_if.add_argument("--cores", type=int, help="processors each observed mongod may use (default: each "
                         "member's host cores, as its samples record them; given, it overrides them for every member)")
    what_if.add_argument("--scale", action="append", help="factors of the observed rates per class, e.g. "
                         "reads=1.3,writes=2 (or --scale reads=1.3 --scale writes=2)")
    what_if.add_argument("--rates", action="append", help="or the rates themselves in ops/s, e.g. "
                         "reads=3000,writes=800 (a class not named runs none)")
    what_if.add_argument("--bootstrap", type=int, help="bootstrap resamples for the intervals (200)")
    what_if.add_argument("--level", type=float, help="interval level (0.95, as fit, plan and observe)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args) -> int:
    from capmodel.errors import CapmodelError
    from capmodel.jsonable import print_json

    if args.observed:
        from capmodel.commands._mva_observed import run_observed

        args.bootstrap = 200 if args.bootstrap is None else args.bootstrap   # the defaults --help names
        args.level = 0.95 if args.level is None else args.level
        return run_observed(args)
    from capmodel.errors import InputError

    if args.model is None:
        raise InputError("give a MODEL.yaml, or --observed DIR for the mix what-if from production")
    given = [option for option, value in (("--cores", args.cores), ("--scale", args.scale), ("--rates", args.rates),
                                          ("--bootstrap", args.bootstrap), ("--level", args.level))
             if value is not None]
    if given:   # they were ignored: the file's network solved as written, as if the what-if had been asked
        raise InputError(f"{', '.join(given)} {'goes' if len(given) == 1 else 'go'} with --observed DIR (the what-if "
                         f"from production), not with {args.model}: change the file's populations, rates or servers "
                         "instead")
    from capmodel.data.structured import read_structured
    from capmodel.models.queueing.network_spec import check_model, solve

    try:
        spec = read_structured(args.model)
    except InputError as exc:
        raise InputError(f"{args.model}: (file): {str(exc).removeprefix(f'{args.model}: ')}") from None
    model = check_model(spec, args.model)
    solver = args.solver or model["solver"]
    try:
        result = solve(model, solver)
    except CapmodelError as exc:   # the exact solver's size limits advise the Python call; here it is --solver
        advice = str(exc).replace("use approximate_multiclass_mva (method='linearizer' or 'schweitzer') or raise "
                                  "max_states", "solve it with --solver linearizer or --solver schweitzer")
        advice = advice.replace("use approximate_multiclass_mva (method='linearizer' or 'schweitzer')",
                                "solve it with --solver linearizer or --solver schweitzer")
        advice = advice.replace("use approximate_multiclass_mva (c-server stations by Seidmann's transformation) or "
                                "raise max_cells", "solve it with --solver linearizer or --solver schweitzer "
                                "(c-server stations by Seidmann's transformation)")
        raise type(exc)(f"{args.model}: {advice}") from None
    if args.json:
        print_json({"solver": solver, **result.to_json()})
    else:
        print(f"{args.model}: {result.summary()}")
    return 0
