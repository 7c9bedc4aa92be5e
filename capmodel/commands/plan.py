"""``capmodel plan``: users per VM, cost per user and a recommendation per target user count.

The options map onto ``capmodel.plan.study.plan_study`` (which, without ``--catalog``, runs the bundled benchANT OTC
study); this module reads the files and prints the result as text or JSON.
"""
from __future__ import annotations


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "plan", help="users per VM, cost per user and the cheapest VM per target (default: the benchANT OTC study)",
        description="Plan VMs from a catalog (name, monthly cost ...) and what was measured on each (throughput or "
        "relative throughput, utilization, latency) or fitted curves per VM. Without --catalog: the bundled benchANT "
        "OTC study. --json prints {vms: [...], recommendations: [...], workload, objectives, notes, evidence}; each VM "
        "row has its own evidence {grade, reasons}.")
    src = p.add_argument_group("inputs (default: the bundled benchANT study)")
    src.add_argument("--catalog", metavar="FILE", help="VM table: vm, monthly_cost [, family, vcpu, ram_gb, storage, "
                     "currency]; may also hold the measurement columns. Common spellings (VM, Monthly cost, price "
                     "...), currency symbols ($420.00) and thousands separators are read, with commas or semicolons")
    src.add_argument("--measurements", metavar="FILE", help="per-VM measurements joined by vm: throughput (ops/s) or "
                     "relative_throughput (x baseline) [, _low, _high, cpu_util, latency_p95_ms, "
                     "<op>_latency_vs_baseline]")
    src.add_argument("--curves", metavar="FILE", help="measured curves of several VMs (concurrency, throughput "
                     "[, latency_p95_ms, cpu_util]) with a column naming the VM; a USL is fitted per VM")
    src.add_argument("--vm-column", metavar="COL", default="vm", help="column of --curves naming the VM (default: "
                     "vm; as in the catalog, its other spellings such as system, VM or instance type are found too)")
    src.add_argument("--concurrency", metavar="COL", help="column of --curves holding the concurrency")
    src.add_argument("--throughput", metavar="COL", help="column of --curves holding the throughput (ops/s)")
    base = p.add_argument_group("workload calibration")
    base.add_argument("--baseline-vm", metavar="NAME", help="VM the baseline was measured on (reference for relative "
                      "throughput, utilization and relative latency)")
    base.add_argument("--baseline-users", type=float, metavar="N", help="users served at the baseline")
    base.add_argument("--baseline-throughput", type=float, metavar="OPS",
                      help="ops/s measured at the baseline (default: the baseline VM's measured throughput)")
    base.add_argument("--baseline-range", metavar="LOW,HIGH", help="range of the baseline throughput, for intervals")
    base.add_argument("--baseline-utilization", type=float, metavar="U", help="utilization at the baseline (0-1)")
    base.add_argument("--ops-per-user", type=float, metavar="R", help="ops/s per user, instead of a baseline")
    src.add_argument("--model", choices=("usl", "recommended"), default="usl",
                     help="model of --curves: usl (default; flagged when the comparison of linear/amdahl/usl prefers "
                     "another) or recommended (plan each VM from the model its comparison recommends)")
    obj = p.add_argument_group("objectives")
    obj.add_argument("--utilization-target", dest="utilization_target", type=float, default=0.8, metavar="U",
                     help="utilization target, fraction 0-1 (default 0.8)")
    obj.add_argument("--peak-fraction", type=float, metavar="F", help="fitted curves: at most F x the USL peak")
    obj.add_argument("--latency-p95-ms", type=float, metavar="MS", help="absolute latency target: p95 at most MS")
    obj.add_argument("--latency-increase", type=float, metavar="F", help="relative latency target: p95 at most F "
                     "above the baseline's (0.05 = 5%%; the bundled study's default)")
    obj.add_argument("--no-latency", action="store_true", help="no latency objective (also for the bundled study)")
    out = p.add_argument_group("targets and output")
    out.add_argument("--target-users", type=float, nargs="+", action="extend", metavar="N",
                     help="user counts to recommend a VM for")
    out.add_argument("--growth", type=float, metavar="G", help="monthly user growth (0.05 = 5%%): adds runway months")
    out.add_argument("--current-users", type=float, metavar="N", help="users today (default: the baseline users)")
    out.add_argument("--level", type=float, default=0.95, metavar="P", help="interval level (default 0.95)")
    out.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def _range(text: str | None, option: str):
    if text is None:
        return None
    from capmodel.commands import parse_number_list
    from capmodel.errors import PlanError

    values = parse_number_list(text, option)
    if len(values) != 2:
        raise PlanError(f"{option}: expected LOW,HIGH, got {text!r}")
    return tuple(values)


def _fits_from_curves(args):
    from capmodel.data.readers import DEFAULT_VM_COLUMN, read_curve
    from capmodel.errors import InputError, PlanError
    from capmodel.plan.study import fit_per_vm

    column = args.vm_column
    # the VM column's name as the user said it, or that the default was used and where to name another
    named = (f"--vm-column {column}: no such column" if column != DEFAULT_VM_COLUMN else
             f"no column '{column}' naming the VM of each row (the default of --vm-column; name yours with "
             "--vm-column COL)")
    try:
        curves = read_curve(args.curves, system=column, concurrency=args.concurrency, throughput=args.throughput)
    except InputError as exc:   # the reader names its keyword; the user typed (or did not type) the option
        text = str(exc)
        if f"column '{column}' given for system" not in text:
            raise
        present = text[text.find("(columns present"):] if "(columns present" in text else ""
        raise InputError(f"{args.curves}: {named}" + (f" {present}" if present else "")) from None
    if "system" not in curves.columns:
        raise PlanError(f"{args.curves}: {named}")
    try:
        return fit_per_vm(curves)
    except InputError as exc:
        raise InputError(f"{args.curves}: {exc}") from None


def _objectives(args):
    """The options' objectives; the bundled study keeps its relative latency objective unless told otherwise."""
    from capmodel.errors import PlanError
    from capmodel.plan import Objectives
    from capmodel.plan.study import BENCHANT_OBJECTIVES

    if args.no_latency and (args.latency_p95_ms is not None or args.latency_increase is not None):
        given = "--latency-p95-ms" if args.latency_p95_ms is not None else "--latency-increase"
        raise PlanError(f"--no-latency and {given} contradict each other (no latency objective, and one); give one")
    latency_increase = args.latency_increase
    if args.catalog is None and args.latency_p95_ms is None and latency_increase is None:
        latency_increase = BENCHANT_OBJECTIVES.latency_increase
    return Objectives(
        utilization_target=args.utilization_target, peak_fraction=args.peak_fraction,
        latency_p95_ms=None if args.no_latency else args.latency_p95_ms,
        latency_increase=None if args.no_latency else latency_increase,
    )


def build_study(args):
    """The PlanStudy for the parsed options: files read here, everything else mapped onto ``plan_study``."""
    from capmodel.data.readers import read_catalog
    from capmodel.errors import PlanError
    from capmodel.plan.study import plan_study

    if args.catalog is None and (args.measurements or args.curves):
        raise PlanError("--measurements and --curves need --catalog (the prices of the VMs)")
    if not args.curves and (args.concurrency or args.throughput or args.model != "usl"):
        raise PlanError("--concurrency, --throughput and --model apply to fitted curves; give --curves FILE")
    catalog = read_catalog(args.catalog) if args.catalog else None
    measurements = read_catalog(args.measurements) if args.measurements else None
    fits = _fits_from_curves(args) if args.curves else {}
    return plan_study(
        catalog=catalog, measurements=measurements, fits=fits, baseline_vm=args.baseline_vm,
        baseline_users=args.baseline_users, baseline_throughput=args.baseline_throughput,
        baseline_range=_range(args.baseline_range, "--baseline-range"),
        baseline_utilization=args.baseline_utilization, ops_per_user=args.ops_per_user,
        targets=args.target_users or [], objectives=_objectives(args), growth=args.growth,
        current_users=args.current_users, level=args.level,
        source=args.catalog, measurements_source=args.measurements, model=args.model)


def run(args) -> int:
    from capmodel.jsonable import print_json

    study = build_study(args)
    if args.json:
        print_json(study.to_json())
    else:
        print(study.summary())
    return 0
