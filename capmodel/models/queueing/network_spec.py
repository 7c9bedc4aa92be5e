"""A queueing network described in a YAML or JSON file, checked and solved: the schema of ``capmodel mva MODEL.yaml``.

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
``check_model(spec, path)`` checks the file's parsed content (every problem names the file and the key; the file is
read by the data layer, ``capmodel.data.structured.read_structured``) and returns the network as plain mappings;
``solve(model, solver)`` dispatches it to the solver its classes call for.
"""
from __future__ import annotations

import math

from capmodel.constraints import Number
from capmodel.errors import InputError
from capmodel.models.queueing.laws import SECONDS  # laws is light: the CLI imports this module to list SOLVERS

#: the largest arrival rate of an open class, requests per second
MAX_ARRIVAL_RATE = 1e9
# What each number of the file may be (capmodel.constraints; times are the solvers' own ``SECONDS``): YAML numbers
# only, no text and no true/false.
POPULATION = Number(int, 0, math.inf, text=False, required=True, wanted_text="a whole number >= 0")
ARRIVAL_RATE = Number(float, 0.0, MAX_ARRIVAL_RATE, text=False, required=True,
                      wanted_text=f"a number of requests per second from 0 to {MAX_ARRIVAL_RATE:,.0f}")
SERVER_COUNT = Number(int, 1, math.inf, text=False, required=True, wanted_text="a whole number >= 1")

SOLVERS = ("exact", "linearizer", "schweitzer")


def _fail(path: str, key: str, problem: str):
    raise InputError(f"{path}: {key}: {problem}")


def _number(path, key, value, constraint: Number):
    """``value`` checked by ``constraint``, the error naming the file and the key. Text that reads as a number is
    refused with a hint: YAML 1.1 (PyYAML) reads 1e-4 and 3e5 as text, only 1.0e-4, 3.0e+5 or 0.0001 as numbers."""
    name = f"{path}: {key}:"
    if isinstance(value, str) and _reads_as_number(value):
        refusal = f"{name} must be {constraint.wanted()}, got the text {value!r}"
        try:
            constraint.check(float(value), InputError, name)
        except InputError:      # out of range as a number too: the range is the news, not how to write it
            raise InputError(refusal) from None
        written = repr(float(value))                        # 0.0003, 2500.0 or 1e+308 (signed exponent)
        written = written.replace("e", ".0e", 1) if "e" in written and "." not in written else written
        raise InputError(f"{refusal} (quoted, or an exponent YAML reads as text: write it unquoted as {written})")
    return constraint.check(value, InputError, name)


def _names(path: str, key: str, mapping: dict) -> None:
    """Refuse a name that is not text: YAML reads ``null:``/``~:`` as None, ``1:`` as a number, ``yes:`` as true."""
    for name in mapping:
        if not isinstance(name, str):
            _fail(path, f"{key}.{name!r}",
                  f"a name must be text, got {name!r} ({type(name).__name__}); quote the name in the file")
        if not name.strip():                 # text already, quoting does not help: it has no characters to show
            _fail(path, key, f"a name is empty ({name!r}); give each a name of letters or digits")


def _reads_as_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def check_model(spec, path: str) -> dict:
    """Check a model file's parsed content (``spec``, what ``capmodel.data.structured.read_structured`` read from
    ``path``) and return the network as plain mappings; every problem names the file and the key."""
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
    for key in ("classes", "stations"):
        _names(path, key, spec[key])
    for name, station in spec["stations"].items():
        if isinstance(station, dict) and isinstance(station.get("demands"), dict):
            _names(path, f"stations.{name}.demands", station["demands"])
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
            model["closed"][str(name)] = _number(path, f"{key}.population", cls["population"], POPULATION)
            model["think"][str(name)] = _number(path, f"{key}.think_time", cls.get("think_time", 0.0), SECONDS)
        else:
            if "think_time" in cls:
                _fail(path, f"{key}.think_time", "an open class (arrival_rate) has no think time")
            model["open"][str(name)] = _number(path, f"{key}.arrival_rate", cls["arrival_rate"], ARRIVAL_RATE)
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
            demands[str(cls)] = _number(path, f"{key}.demands.{cls}", value, SECONDS)
        model["demands"][str(name)] = demands
        if not isinstance(station.get("delay", False), bool):
            _fail(path, f"{key}.delay", f"must be true or false, got {station['delay']!r}")
        if station.get("delay"):
            if "servers" in station:
                _fail(path, f"{key}.servers", "a delay station has no server count")
            model["servers"][str(name)] = "delay"
        else:
            model["servers"][str(name)] = _number(path, f"{key}.servers", station.get("servers", 1), SERVER_COUNT)
    return model


def solve(model: dict, solver: str | None = None):
    """Solve a model checked by ``check_model`` with the solver its classes call for.

    Closed classes only: multi-class MVA (exact or approximate); open only: the open network; both: the mixed
    network.

    Parameters
    ----------
    model : dict
        The network as ``check_model`` returns it (demands, servers, closed and open classes, think times, solver).
    solver : {"exact", "linearizer", "schweitzer"}, optional
        Overrides the model's own ``solver``.

    Returns
    -------
    MulticlassResult

    Raises
    ------
    InputError
        As the solver called raises it.
    CapmodelError
        The solver found no finite solution or did not converge.
    """
    from capmodel.models.queueing.multiclass import approximate_multiclass_mva, multiclass_mva
    from capmodel.models.queueing.open_networks import mixed_network, open_network

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
