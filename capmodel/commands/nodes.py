"""``capmodel nodes``: nodes of type B needed to match an N-node cluster of type A (the Micron brief's multiplier),
by the brief's linear rule and under a USL over node count (assumed sigma/kappa, or fitted to a node-count curve)."""
from __future__ import annotations


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "nodes", help="nodes of one type needed to match a cluster of another (default: the Micron 5100 ECO brief)",
        description="Per workload: multiplier = X_A / X_B of the tested clusters, nodes by the linear rule "
        "n_B x multiplier, and the smallest node count that reaches X_A when B scales by a USL over node count. "
        "Without --table or --reference-ops: the bundled Micron table. --json prints {rows: [...], usl, rounding, "
        "rounding_note, evidence}; each row has its own evidence {grade, reasons}.")
    src = p.add_argument_group("inputs (default: the bundled Micron 5100 ECO vs HDD table)")
    src.add_argument("--table", metavar="FILE", help="CSV with workload, reference_ops_per_s, candidate_ops_per_s, "
                     "reference_nodes, candidate_nodes")
    src.add_argument("--reference-ops", type=float, metavar="OPS", help="throughput of the reference cluster (A)")
    src.add_argument("--candidate-ops", type=float, metavar="OPS", help="throughput of the candidate cluster (B)")
    src.add_argument("--reference-nodes", type=float, default=3, metavar="N", help="nodes in the reference cluster")
    src.add_argument("--candidate-nodes", type=float, metavar="N", help="nodes B was measured with (default: as A)")
    src.add_argument("--workload", default="custom", help="label of the single row given by --reference-ops")
    usl = p.add_argument_group("scalability of the candidate over node count (default: linear, sigma = kappa = 0)")
    usl.add_argument("--sigma", type=float, help="contention over node count (default 0)")
    usl.add_argument("--kappa", type=float, help="coherency over node count (default 0)")
    usl.add_argument("--node-curve", metavar="FILE", help="measured curve of B over node count (concurrency = "
                     "nodes, throughput): fit the USL instead of assuming sigma/kappa; adds bootstrap intervals")
    usl.add_argument("--concurrency", metavar="COL", help="column of --node-curve holding the node count")
    usl.add_argument("--throughput", metavar="COL", help="column of --node-curve holding the throughput")
    usl.add_argument("--bootstrap", type=int, metavar="N", help="bootstrap samples for --node-curve (default 200)")
    usl.add_argument("--max-nodes", type=float, default=1000, metavar="N", help="largest cluster considered")
    cost = p.add_argument_group("cost and rack space per node")
    cost.add_argument("--reference-node-cost", type=float, metavar="C")
    cost.add_argument("--candidate-node-cost", type=float, metavar="C")
    cost.add_argument("--reference-rack-units", type=float, metavar="U")
    cost.add_argument("--candidate-rack-units", type=float, metavar="U")
    p.add_argument("--rounding", choices=("nearest", "up"), default="nearest",
                   help="linear rule: nearest whole node, as the brief does (default), or up")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def _table(args):
    """The node table the options give (None: the bundled Micron brief) and its name."""
    import pandas as pd

    from capmodel.data.readers import read_table
    from capmodel.errors import PlanError

    if args.table and args.reference_ops is not None:
        raise PlanError("give either --table or --reference-ops/--candidate-ops, not both")
    single = args.reference_ops is not None or args.candidate_ops is not None
    row_options = [flag for flag, value, default in (
        ("--reference-nodes", args.reference_nodes, 3), ("--candidate-nodes", args.candidate_nodes, None),
        ("--workload", args.workload, "custom")) if value != default]
    if row_options and not single:   # said, and would be ignored: the table (or the Micron brief) has its own
        raise PlanError(f"{row_options[0]} describes the single row given by --reference-ops/--candidate-ops; "
                        "give those too (a --table carries its own column)")
    if args.table:
        return read_table(args.table), args.table
    if single:
        if args.reference_ops is None or args.candidate_ops is None:
            raise PlanError("--reference-ops and --candidate-ops go together")
        from capmodel.constraints import Number

        count = Number(int, 1, 1_000_000, text=False)
        for flag in ("--reference-nodes", "--candidate-nodes"):
            count.check(getattr(args, flag[2:].replace("-", "_")), PlanError, f"{flag} (a node count)")
        candidate_nodes = args.candidate_nodes if args.candidate_nodes is not None else args.reference_nodes
        return pd.DataFrame([{
            "workload": args.workload, "reference_ops_per_s": args.reference_ops,
            "candidate_ops_per_s": args.candidate_ops, "reference_nodes": args.reference_nodes,
            "candidate_nodes": candidate_nodes}]), "command line"
    return None, None


def run(args) -> int:
    from capmodel.jsonable import print_json
    from capmodel.plan.nodes import plan_node_study

    table, source = _table(args)
    node_curve = None
    if args.node_curve:
        from capmodel.data.readers import read_curve

        node_curve = read_curve(args.node_curve, concurrency=args.concurrency, throughput=args.throughput)
        counts = node_curve["concurrency"].to_numpy(float)
        if (counts != counts.round()).any():
            from capmodel.constraints import typed
            from capmodel.errors import InputError

            row = int((counts != counts.round()).argmax())
            raise InputError(f"{args.node_curve}: row {row + 1}: a node count is a whole number, got "
                             f"{typed(counts[row])} (is --concurrency the node-count column?)")
    elif args.concurrency or args.throughput or args.bootstrap is not None:
        from capmodel.errors import PlanError
        from capmodel.plan.nodes import BOOTSTRAP_SAMPLES

        BOOTSTRAP_SAMPLES.check(args.bootstrap, PlanError)   # a bad value is named as such, applicable or not

        raise PlanError("--concurrency, --throughput and --bootstrap apply to --node-curve; give --node-curve FILE")
    if node_curve is not None and (args.sigma is not None or args.kappa is not None):
        from capmodel.errors import PlanError

        given = " and ".join(o for o, v in (("--sigma", args.sigma), ("--kappa", args.kappa)) if v is not None)
        raise PlanError(f"{given} assume the candidate's scaling, --node-curve fits it from measurements; give one")
    args.sigma = 0.0 if args.sigma is None else args.sigma
    args.kappa = 0.0 if args.kappa is None else args.kappa
    args.bootstrap = 200 if args.bootstrap is None else args.bootstrap
    from capmodel.errors import CapmodelError

    try:
        study = plan_node_study(
            table, sigma=args.sigma, kappa=args.kappa, node_curve=node_curve, bootstrap=args.bootstrap,
            rounding=args.rounding, max_nodes=args.max_nodes, reference_node_cost=args.reference_node_cost,
            candidate_node_cost=args.candidate_node_cost, reference_rack_units=args.reference_rack_units,
            candidate_rack_units=args.candidate_rack_units, source=source, curve_source=args.node_curve)
    except CapmodelError as exc:  # a fit of --node-curve that cannot be made names the file
        if node_curve is None or str(args.node_curve) in str(exc):
            raise
        raise type(exc)(f"{args.node_curve}: {exc}") from None
    if args.json:
        print_json(study.to_json())
    else:
        print(study.summary())
    return 0
