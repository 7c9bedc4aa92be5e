"""``capmodel nodes``: nodes of type B needed to match an N-node cluster of type A (the Micron brief's multiplier),
by the brief's linear rule and under a USL over node count (assumed sigma/kappa, or fitted to a node-count curve)."""
from __future__ import annotations


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "nodes", help="nodes of one type needed to match a cluster of another (default: the Micron 5100 ECO brief)",
        description="Per workload: multiplier = X_A / X_B of the tested clusters, nodes by the linear rule "
        "n_B x multiplier, and the smallest node count that reaches X_A when B scales by a USL over node count. "
        "Without --table or --reference-ops: the bundled Micron table. --json prints {rows: [...], usl, rounding}.")
    src = p.add_argument_group("inputs (default: the bundled Micron 5100 ECO vs HDD table)")
    src.add_argument("--table", metavar="FILE", help="CSV with workload, reference_ops_per_s, candidate_ops_per_s, "
                     "reference_nodes, candidate_nodes")
    src.add_argument("--reference-ops", type=float, metavar="OPS", help="throughput of the reference cluster (A)")
    src.add_argument("--candidate-ops", type=float, metavar="OPS", help="throughput of the candidate cluster (B)")
    src.add_argument("--reference-nodes", type=float, default=3, metavar="N", help="nodes in the reference cluster")
    src.add_argument("--candidate-nodes", type=float, metavar="N", help="nodes B was measured with (default: as A)")
    src.add_argument("--workload", default="custom", help="label of the single row given by --reference-ops")
    usl = p.add_argument_group("scalability of the candidate over node count (default: linear, sigma = kappa = 0)")
    usl.add_argument("--sigma", type=float, default=0.0, help="contention over node count")
    usl.add_argument("--kappa", type=float, default=0.0, help="coherency over node count")
    usl.add_argument("--node-curve", metavar="FILE", help="measured curve of B over node count (concurrency = "
                     "nodes, throughput): fit the USL instead of assuming sigma/kappa; adds bootstrap intervals")
    usl.add_argument("--bootstrap", type=int, default=200, metavar="N", help="bootstrap samples for --node-curve")
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
    if args.table:
        return read_table(args.table), args.table
    if args.reference_ops is not None or args.candidate_ops is not None:
        if args.reference_ops is None or args.candidate_ops is None:
            raise PlanError("--reference-ops and --candidate-ops go together")
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

        node_curve = read_curve(args.node_curve)
    study = plan_node_study(
        table, sigma=args.sigma, kappa=args.kappa, node_curve=node_curve, bootstrap=args.bootstrap,
        rounding=args.rounding, max_nodes=args.max_nodes, reference_node_cost=args.reference_node_cost,
        candidate_node_cost=args.candidate_node_cost, reference_rack_units=args.reference_rack_units,
        candidate_rack_units=args.candidate_rack_units, source=source, curve_source=args.node_curve)
    rows, source, sigma, kappa, usl_source = study.rows, study.source, study.sigma, study.kappa, study.basis
    if args.json:
        print_json({"source": source, "usl": {"sigma": sigma, "kappa": kappa, "basis": usl_source},
                    "rounding": args.rounding,
                    "rows": rows.astype(object).where(rows.notna(), None).to_dict(orient="records")})
        return 0
    print(f"{source}; candidate scaling over node count: sigma={sigma:.4g}, kappa={kappa:.4g} ({usl_source})")
    print(f"{'workload':<10} {'multiplier':>10} {'linear':>8} {'USL':>8}")
    for _, r in rows.iterrows():
        usl_text = f"{r['nodes_usl']:.0f}" if r["usl_reachable"] else "unreachable"
        print(f"{r['workload']:<10} {r['multiplier']:>10.2f} {r['nodes_linear']:>8d} {usl_text:>8}")
        if not r["usl_reachable"]:
            print(f"{'':<10} {r['usl_note']}")
    return 0
