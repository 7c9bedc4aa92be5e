"""``capmodel shards``: shards needed for target insert rates under a USL over shard count, and the clients to drive
them (the AWS DocumentDB elastic-cluster insert benchmark's question).

The model is either assumed (``--per-shard-throughput``, ``--sigma``, ``--kappa``) or fitted to a measured curve whose
concurrency column is the shard count (``--curve``); the two are never mixed. Without any input it runs the bundled
study: "over a million inserts per second on the 16-shard elastic cluster", i.e. 62,500 inserts/s per shard under
linear scaling, for a target of 1,000,000 inserts/s (AWS post, seed 004_).
"""
from __future__ import annotations

from capmodel.studies import DOCUMENTDB_SHARDS, DOCUMENTDB_TARGET_RATE  # light: --help needs no pandas


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "shards", help="shards and clients needed for a target insert rate (default: the DocumentDB elastic-cluster "
        "benchmark)",
        description="Per target rate: the smallest shard count whose throughput X(s) = X1 s / (1 + sigma (s-1) + "
        "kappa s (s-1)) reaches it, that throughput, the efficiency vs linear and the client processes to drive it; "
        "unreachable targets say why (beyond the USL peak or ceiling, or more than --max-shards). The model is "
        "assumed (--per-shard-throughput, --sigma, --kappa) or fitted to --curve; not both. Without inputs: the "
        "bundled DocumentDB study (1,000,000 inserts/s; 62,500 per shard, linear). --json prints {source, model, "
        "rows: [{target_rate, shards, throughput, efficiency, linear_shards, clients, reachable, reason, evidence}], "
        "evidence}.")
    p.add_argument("--target-rate", type=float, nargs="+", action="extend", metavar="R",
                   help=f"inserts/s wanted (default: the study's {DOCUMENTDB_TARGET_RATE:,.0f})")
    assumed = p.add_argument_group("assumed scaling (default: the study's per-shard rate, linear)")
    assumed.add_argument("--per-shard-throughput", type=float, metavar="X",
                         help=f"inserts/s of one shard (default: {DOCUMENTDB_TARGET_RATE:,.0f} / {DOCUMENTDB_SHARDS})")
    assumed.add_argument("--sigma", type=float, metavar="S", help="contention over shard count (default 0)")
    assumed.add_argument("--kappa", type=float, metavar="K", help="coherency over shard count (default 0)")
    fitted = p.add_argument_group("fitted scaling: a measured curve over shard count")
    fitted.add_argument("--curve", metavar="FILE", help="curve table whose concurrency column is the shard count; "
                        "the USL fit gives the per-shard throughput (lambda), sigma and kappa")
    fitted.add_argument("--concurrency", metavar="COL", help="column of --curve holding the shard count")
    fitted.add_argument("--throughput", metavar="COL", help="column of --curve holding the throughput")
    fitted.add_argument("--bootstrap", type=int, metavar="N",
                        help="bootstrap samples of the fit, for a shard-count interval (default 200; 0: none)")
    fitted.add_argument("--level", type=float, metavar="P", help="interval level (default 0.95)")
    clients = p.add_argument_group("limits and clients")
    clients.add_argument("--max-shards", type=float, metavar="M", help="largest cluster considered (default: 32, "
                         "the elastic-cluster limit)")
    clients.add_argument("--batch-size", type=int, default=1000, metavar="B", help="documents per insert batch "
                         "(default 1000)")
    clients.add_argument("--batch-latency-ms", type=float, metavar="L", help="measured time per batch: clients by "
                         "Little's law, throughput / batch size x latency")
    clients.add_argument("--clients-per-shard", type=int, metavar="C", help="without --batch-latency-ms: client "
                         "processes per shard (default 64, the post's rule)")
    clients.add_argument("--min-clients", type=int, metavar="C", help="without --batch-latency-ms: at least this "
                         "many clients (default 128, as the post drove 1 and 2 shards)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def _check_options(args) -> None:
    """The one rule of the command line alone (the planning layer checks every number and every mix of inputs)."""
    from capmodel.errors import PlanError

    if not args.curve and (args.concurrency or args.throughput):
        raise PlanError("--concurrency and --throughput name columns of --curve; give --curve FILE")
    from capmodel.plan.shards import SHARD_CONSTRAINTS

    for option, key in (("--bootstrap", "bootstrap"), ("--level", "level")):
        value = getattr(args, key)
        if value is not None:   # a bad value is named as such first, applicable or not
            SHARD_CONSTRAINTS[key].check(value, PlanError)
    if not args.curve and (args.bootstrap is not None or args.level is not None):
        given = " and ".join(o for o, v in (("--bootstrap", args.bootstrap), ("--level", args.level)) if v is not None)
        raise PlanError(f"{given}: the interval is drawn from a fit of --curve; give --curve FILE (an assumed "
                        "scaling has no interval)")
    if args.bootstrap == 0 and args.level is not None:
        raise PlanError("--level sets the interval's level, --bootstrap 0 draws none; give one")


def run(args) -> int:
    from capmodel.jsonable import print_json
    from capmodel.plan.shards import plan_shard_study

    _check_options(args)
    no_inputs = all(getattr(args, o) is None for o in ("target_rate", "per_shard_throughput", "sigma", "kappa",
                                                         "curve"))
    curve = None
    if args.curve:
        from capmodel.data.readers import read_curve
        from capmodel.errors import InputError
        from capmodel.models.usl.verdict.curve_rules import check_curve

        curve = read_curve(args.curve, concurrency=args.concurrency, throughput=args.throughput)
        try:
            check_curve(curve)      # the rules every fit runs, here so that the refusal names the file
        except InputError as exc:
            raise InputError(f"{args.curve}: {exc}") from None
    study = plan_shard_study(
        args.target_rate, per_shard_throughput=args.per_shard_throughput, sigma=args.sigma, kappa=args.kappa,
        curve=curve, bootstrap=200 if args.bootstrap is None else args.bootstrap,
        level=0.95 if args.level is None else args.level, max_shards=args.max_shards,
        batch_size=args.batch_size, batch_latency_ms=args.batch_latency_ms, clients_per_shard=args.clients_per_shard,
        min_clients=args.min_clients, source=args.curve or "command line")
    if args.json:
        print_json(study.to_json())
        return 0
    if no_inputs:
        print(f"No inputs given: ran the bundled DocumentDB study, {DOCUMENTDB_TARGET_RATE:,.0f} inserts/s on "
              f"{DOCUMENTDB_SHARDS} shards.")
    print(study.summary())
    return 0
