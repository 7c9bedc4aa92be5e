"""``capmodel mva MODEL.yaml [--json]``: solve a multi-class queueing network described in a YAML or JSON file.

The file::

    classes:
      reads:  {population: 40, think_time: 0.0}   # closed: customers (client threads) and think time (s)
      writes: {population: 10}
      reports: {arrival_rate: 2.5}                # open: requests per second
    stations:
      cpu:  {servers: 4, demands: {reads: 0.0003, writes: 0.0006, reports: 0.002}}
      disk: {demands: {writes: 0.0008}}
      net:  {delay: true, demands: {reads: 0.001, writes: 0.001}}
    solver: exact          # or linearizer, schweitzer (closed classes)

Closed classes only: multi-class MVA; open only: the open network; both: the mixed network. Demands in seconds.
"""
from __future__ import annotations

SOLVERS = ("exact", "linearizer", "schweitzer")


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
    what_if.add_argument("--cores", type=int, help="processors each observed mongod may use")
    what_if.add_argument("--scale", help="factors of the observed rates per class, e.g. reads=1.3,writes=2")
    what_if.add_argument("--rates", help="or the rates themselves in ops/s, e.g. reads=3000,writes=800")
    what_if.add_argument("--bootstrap", type=int, default=200, help="bootstrap resamples for the intervals (200)")
    what_if.add_argument("--level", type=float, default=0.9, help="interval level (0.9)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def _fail(path: str, key: str, problem: str):
    from capmodel.errors import InputError

    raise InputError(f"{path}: {key}: {problem}")


def _number(path, key, value, integer=False):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value < 0:
        _fail(path, key, f"must be a number >= 0, got {value!r}")
    if integer and not float(value).is_integer():
        _fail(path, key, f"must be a whole number, got {value!r}")
    return int(value) if integer else float(value)


def load_model(path: str) -> dict:
    """Read and check the model file; every problem names the file and the key."""
    from capmodel.data.structured import load_json, load_yaml, read_text

    from capmodel.errors import InputError

    try:
        text = read_text(path)
        spec = load_json(text, path) if path.endswith(".json") else load_yaml(text, path)
    except InputError as exc:
        _fail(path, "(file)", str(exc).removeprefix(f"{path}: "))
    if not isinstance(spec, dict):
        _fail(path, "(file)", "must hold a mapping with 'classes' and 'stations'")
    unknown = set(spec) - {"classes", "stations", "solver"}
    if unknown:
        _fail(path, sorted(unknown)[0], "unknown key (expected classes, stations, solver)")
    for key in ("classes", "stations"):
        if not isinstance(spec.get(key), dict) or not spec[key]:
            _fail(path, key, "missing or empty: give a mapping of names")
    model = {"closed": {}, "think": {}, "open": {}, "demands": {}, "servers": {},
             "solver": spec.get("solver", "exact")}
    if model["solver"] not in SOLVERS:
        _fail(path, "solver", f"must be one of {', '.join(SOLVERS)}, got {model['solver']!r}")
    for name, cls in spec["classes"].items():
        key = f"classes.{name}"
        if not isinstance(cls, dict):
            _fail(path, key, "must be a mapping with population (and think_time) or arrival_rate")
        extra = set(cls) - {"population", "think_time", "arrival_rate"}
        if extra:
            _fail(path, f"{key}.{sorted(extra)[0]}", "unknown key (expected population, think_time, arrival_rate)")
        if ("population" in cls) == ("arrival_rate" in cls):
            _fail(path, key, "give either population (closed class) or arrival_rate (open class)")
        if "population" in cls:
            model["closed"][str(name)] = _number(path, f"{key}.population", cls["population"], integer=True)
            model["think"][str(name)] = _number(path, f"{key}.think_time", cls.get("think_time", 0.0))
        else:
            if "think_time" in cls:
                _fail(path, f"{key}.think_time", "an open class (arrival_rate) has no think time")
            model["open"][str(name)] = _number(path, f"{key}.arrival_rate", cls["arrival_rate"])
    classes = set(model["closed"]) | set(model["open"])
    for name, station in spec["stations"].items():
        key = f"stations.{name}"
        if not isinstance(station, dict) or not isinstance(station.get("demands"), dict):
            _fail(path, f"{key}.demands", "missing: give a mapping {class: service demand in s}")
        extra = set(station) - {"demands", "servers", "delay"}
        if extra:
            _fail(path, f"{key}.{sorted(extra)[0]}", "unknown key (expected demands, servers, delay)")
        demands = {}
        for cls, value in station["demands"].items():
            if str(cls) not in classes:
                _fail(path, f"{key}.demands.{cls}", f"no such class (classes: {', '.join(sorted(classes))})")
            demands[str(cls)] = _number(path, f"{key}.demands.{cls}", value)
        model["demands"][str(name)] = demands
        if station.get("delay"):
            if "servers" in station:
                _fail(path, f"{key}.servers", "a delay station has no server count")
            model["servers"][str(name)] = "delay"
        else:
            servers = _number(path, f"{key}.servers", station.get("servers", 1), integer=True)
            if servers < 1:
                _fail(path, f"{key}.servers", f"must be >= 1, got {servers}")
            model["servers"][str(name)] = servers
    return model


def solve(model: dict, solver: str | None = None):
    """The result object for a checked model: multi-class MVA, open or mixed network."""
    from capmodel.models.mva_multiclass import approximate_multiclass_mva, multiclass_mva
    from capmodel.models.open_networks import mixed_network, open_network

    solver = solver or model["solver"]
    if model["closed"] and model["open"]:
        return mixed_network(model["demands"], model["closed"], model["open"], model["think"], model["servers"],
                             method=solver)
    if model["open"]:
        return open_network(model["open"], model["demands"], model["servers"])
    if solver == "exact":
        return multiclass_mva(model["demands"], model["closed"], model["think"], model["servers"])
    return approximate_multiclass_mva(model["demands"], model["closed"], model["think"], model["servers"],
                                      method=solver)


def _json(result, solver) -> dict:
    classes = result.table().reset_index()
    rows = []
    for row in classes.to_dict(orient="records"):
        residence = {s: row.pop(f"residence_{s}") for s in result.network.stations}
        rows.append({**row, "residence": residence})
    stations = [{"station": s, "servers": result.network.servers_label(k), "utilization": result.utilization[s],
                 "queue_length": result.queue_length.loc[s].to_dict()}
                for k, s in enumerate(result.network.stations)]
    return {"solver": solver, "method": result.method, "classes": rows, "stations": stations,
            "bottleneck": result.bottleneck, "notes": result.notes}


def run(args) -> int:
    import pandas as pd

    from capmodel.jsonable import print_json
    from capmodel.errors import CapmodelError

    if args.observed:
        from capmodel.commands._mva_observed import run_observed

        return run_observed(args)
    if args.model is None:
        from capmodel.errors import InputError

        raise InputError("give a MODEL.yaml, or --observed DIR for the mix what-if from production")
    model = load_model(args.model)
    solver = args.solver or model["solver"]
    try:
        result = solve(model, solver)
    except CapmodelError as exc:
        raise type(exc)(f"{args.model}: {exc}") from None
    if args.json:
        print_json(_json(result, solver))
        return 0
    with pd.option_context("display.width", 120, "display.max_columns", 30, "display.float_format", "{:.6g}".format):
        print(f"{args.model}: {result.method}")
        print(result.table().to_string())
        print()
        print(result.station_table().to_string())
    for note in [result.describe(), *result.notes]:
        print(note)
    return 0
