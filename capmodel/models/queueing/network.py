"""A multi-class queueing network, checked once, and the result object every multi-class solver returns.

Notation (Lazowska et al., "Quantitative System Performance", 1984, ch. 7): stations k, classes c, service demand
D[k, c] (time per request of class c at station k: visits x service time), population N_c and think time Z_c of a
closed class, arrival rate lambda_c of an open class. Station kinds:

- ``"queue"``: one server, processor sharing (or FCFS when every class has the same service time there: BCMP);
- ``"delay"``: no queueing (infinite servers), a request stays D[k, c] whatever the load;
- a ``LoadDependent`` (``capmodel.models.queueing.load_dependent``): c servers, a rate function, or a fitted USL.

``servers`` = {station: count | "delay" | LoadDependent}; a count of 1 is a plain queue, more is ``multi_server``.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from capmodel.constraints import with_name
from capmodel.errors import CapmodelError, InputError, shown
from capmodel.formatting import Column, number, table
from capmodel.jsonable import to_jsonable
from capmodel.models.queueing.laws import MAX_POPULATION, MAX_SECONDS, NONNEGATIVE, SECONDS, check_servers
from capmodel.models.queueing.load_dependent import LoadDependent, multi_server

DELAY = "delay"
QUEUE = "queue"
#: bounds checked before any array is built (issue 20): beyond them no solver here answers in useful time and memory
MAX_STATIONS = 1_000
MAX_CLASSES = 100
MAX_SERVERS = 1_000_000


def check_number(value, name: str, high: float | None = None) -> float:
    """A finite number >= 0 that is a number (an int or float, not a bool or the string "0.1"), at most ``high``
    seconds when given (``SECONDS``); ``InputError`` naming ``name``."""
    return (NONNEGATIVE if high is None else with_name(SECONDS, name, high=high)).check(value, InputError, name)


@dataclass(frozen=True)
class Network:
    """A checked network: names, the demand matrix D (stations x classes) and each station's kind."""

    stations: tuple[str, ...]
    classes: tuple[str, ...]
    demands: np.ndarray
    kinds: tuple

    def without(self, k: int) -> Network:
        """The same network with station ``k`` removed (its throughput gives p_k(0 | n) exactly)."""
        keep = [j for j in range(len(self.stations)) if j != k]
        return Network(tuple(self.stations[j] for j in keep), self.classes, self.demands[keep],
                       tuple(self.kinds[j] for j in keep))

    def servers_label(self, k: int) -> str:
        kind = self.kinds[k]
        return kind if isinstance(kind, str) else kind.label


def _station_kind(name: str, value):
    if isinstance(value, LoadDependent):
        return value
    if isinstance(value, str):
        if value.strip().lower() in ("delay", "infinite", "inf"):
            return DELAY
        raise InputError(f"servers[{name}] = {value!r}: give a server count, 'delay' or a load-dependent station")
    if isinstance(value, float) and math.isinf(value):
        return DELAY
    if isinstance(value, str) or isinstance(value, bool):
        raise InputError(f"servers[{name}] must be a whole number >= 1 or 'delay', got {shown(value)}")
    c = check_servers(value, f"servers[{name}]")
    if c > MAX_SERVERS:
        raise InputError(f"servers[{name}] = {c:,} is more than {MAX_SERVERS:,}; a station with that many servers "
                         "never queues: make it a delay station ('delay')")
    return QUEUE if c == 1 else multi_server(c)


def build_network(demands, servers=None, classes=None) -> Network:
    """Check ``demands`` = {station: {class: demand}} (missing entries are 0) and ``servers``; see the module doc.

    ``classes``: the class names in order (default: every class named in the demands, in order of appearance).
    """
    if isinstance(demands, pd.DataFrame):
        demands = {str(k): row.to_dict() for k, row in demands.iterrows()}
    if not isinstance(demands, Mapping) or not demands:
        raise InputError("demands must be a non-empty mapping {station: {class: service demand}}")
    if len(demands) > MAX_STATIONS:
        raise InputError(f"{len(demands):,} stations; at most {MAX_STATIONS:,} are solved")
    if classes is not None and len(classes) > MAX_CLASSES:
        raise InputError(f"{len(classes):,} classes; at most {MAX_CLASSES} are solved")
    if servers is not None and not isinstance(servers, Mapping):
        raise InputError(f"servers must be a mapping {{station: count | 'delay'}}, got {type(servers).__name__}")
    servers = dict(servers or {})
    unknown = set(map(str, servers)) - set(map(str, demands))
    ld_only = [s for s in unknown if isinstance(servers[s], LoadDependent) and servers[s].demand is not None]
    if set(unknown) - set(ld_only):
        raise InputError(f"servers names stations {sorted(set(unknown) - set(ld_only))} that have no demands; "
                         f"stations are {sorted(map(str, demands))}")
    stations = [str(s) for s in demands] + sorted(ld_only)
    names = list(classes) if classes is not None else []
    if classes is None:
        for row in demands.values():
            if not isinstance(row, Mapping):
                raise InputError(f"demands must map each station to {{class: demand}}, got {type(row).__name__}")
            seen = dict.fromkeys(names)
            seen.update(dict.fromkeys(str(c) for c in row))
            names = list(seen)
            if len(names) > MAX_CLASSES:
                raise InputError(f"more than {MAX_CLASSES} classes in the demands; at most {MAX_CLASSES} are solved")
    if not names:
        raise InputError("no classes: name at least one class in the demands")
    if len(names) > MAX_CLASSES:
        raise InputError(f"{len(names):,} classes; at most {MAX_CLASSES} are solved")
    d = np.zeros((len(stations), len(names)))
    kinds = []
    for k, station in enumerate(stations):
        kind = _station_kind(station, servers.get(station, 1))
        kinds.append(kind)
        row = demands.get(station)
        if row is None:  # a load-dependent station that knows its own demand (a USL tier): every class visits once
            d[k] = kind.demand
            continue
        if not isinstance(row, Mapping):
            raise InputError(f"demands[{station}] must map class -> demand, got {type(row).__name__}")
        for c, value in row.items():
            if str(c) not in names:
                raise InputError(f"demands[{station}] names class {c!r}, which is not among the classes {names}")
            d[k, names.index(str(c))] = check_number(value, f"demands[{station}][{c}]", MAX_SECONDS)
    return Network(tuple(stations), tuple(names), d, tuple(kinds))


def class_vector(values, classes, what: str, default=None, integer=False, high: float | None = None) -> np.ndarray:
    """{class: value} (or one number for every class) as an array in class order, checked >= 0 (and, with ``high``,
    as seconds up to it: ``check_number``)."""
    if values is None:
        if default is None:
            raise InputError(f"{what} must be given for every class {list(classes)}")
        values = default
    if not isinstance(values, Mapping):
        values = {c: values for c in classes}
    unknown = set(map(str, values)) - set(classes)
    if unknown:
        raise InputError(f"{what} names unknown classes {sorted(unknown)}; classes are {list(classes)}")
    out = []
    for c in classes:
        if c not in values and default is None:
            raise InputError(f"{what} has no value for class {c!r}")
        v = check_number(values.get(c, default), f"{what}[{c}]", high)
        if integer and not float(v).is_integer():
            raise InputError(f"{what}[{c}] must be a whole number of customers, got {values.get(c)!r}")
        if integer and v > MAX_POPULATION:
            raise InputError(f"{what}[{c}] = {shown(values.get(c))} customers is more than {MAX_POPULATION:,}")
        out.append(v)
    return np.array(out, dtype=int if integer else float)


class MulticlassResult:
    """Per-class and per-station figures of a solved multi-class network (closed, open or mixed).

    The solvers (``multiclass_mva``, ``approximate_multiclass_mva``, ``open_network``, ``mixed_network``) build it;
    every other figure is derived from what they fill in.

    Parameters
    ----------
    network : Network
        The checked stations, classes, demands and station kinds.
    throughput : array_like
        Per class, requests per time unit.
    residence : array_like
        Stations × classes: time per request at each station, summed over its visits.
    utilization : array_like
        Per station: per server for queues and c-server stations, the probability of being busy for other
        load-dependent stations; NaN for delay stations (they never saturate).
    method : str
        The solver's name, as ``describe()`` says it.
    populations, think_times, arrival_rates : array_like, optional
        Per class, the closed classes' customers and think times and the open classes' arrival rates.
    notes : sequence of str, optional
        Remarks on the solution (an open network's stability margin).

    Raises
    ------
    CapmodelError
        A throughput or residence time is not finite.
    """

    def __init__(self, network: Network, throughput, residence, utilization, method: str,
                 populations=None, think_times=None, arrival_rates=None, notes=()):
        bad = ~np.isfinite(np.asarray(throughput, float))
        if np.any(bad) or not np.all(np.isfinite(np.asarray(residence, float))):
            which = [c for c, b in zip(network.classes, np.atleast_1d(bad)) if b] or list(network.classes)
            raise CapmodelError(f"{method}: no finite solution for class {which[0]!r} (throughput or response time "
                                "is not a number); the network is outside what this solver handles")
        self.network = network
        self.method = method
        self.throughput = pd.Series(throughput, index=list(network.classes), name="throughput", dtype=float)
        self.residence_time = pd.DataFrame(residence, index=list(network.stations), columns=list(network.classes))
        utilization = np.where([kind == DELAY for kind in network.kinds], np.nan, utilization)
        self.utilization = pd.Series(utilization, index=list(network.stations), name="utilization", dtype=float)
        self.populations = None if populations is None else pd.Series(populations, index=list(network.classes))
        self.think_times = None if think_times is None else pd.Series(think_times, index=list(network.classes))
        self.arrival_rates = None if arrival_rates is None else pd.Series(arrival_rates, index=list(network.classes))
        self.notes = list(notes)

    @cached_property
    def demands(self) -> pd.DataFrame:
        """The service demands D (stations x classes) the network was solved with."""
        return pd.DataFrame(self.network.demands, index=list(self.network.stations), columns=list(self.network.classes))

    @cached_property
    def response_time(self) -> pd.Series:
        """Time per request of each class at the stations (think time excluded)."""
        return self.residence_time.sum(axis=0).rename("response_time")

    @cached_property
    def queue_length(self) -> pd.DataFrame:
        """Mean number of requests of each class at each station (Little's law: X_c R_kc)."""
        return self.residence_time * self.throughput

    @cached_property
    def bottleneck(self) -> str | None:
        """The queueing station with the highest utilization; None when every station is a delay or none carries
        load (the sentence and the JSON say the same)."""
        if self.utilization.isna().all():
            return None
        top = str(self.utilization.idxmax())
        return top if self.utilization[top] > 0 else None

    @property
    def table(self) -> pd.DataFrame:
        """One row per class: population or arrival rate, throughput, response time and per-station residence."""
        out = pd.DataFrame({"throughput": self.throughput, "response_time": self.response_time})
        if self.populations is not None:
            out.insert(0, "population", self.populations)
        if self.think_times is not None:
            out.insert(1 if self.populations is not None else 0, "think_time", self.think_times)
        if self.arrival_rates is not None:
            out.insert(0, "arrival_rate", self.arrival_rates)
        for station in self.network.stations:
            out[f"residence_{station}"] = self.residence_time.loc[station]
        out.index.name = "class"
        return out

    def station_table(self) -> pd.DataFrame:
        """One row per station: its kind, utilization and the mean queue length of each class."""
        out = self.queue_length.add_prefix("queue_")
        out.insert(0, "utilization", self.utilization)
        out.insert(0, "servers", [self.network.servers_label(k) for k in range(len(self.network.stations))])
        out.index.name = "station"
        return out

    def describe(self, time_unit: str = "s") -> str:
        """One sentence per class and the bottleneck, in words: with the model's times in seconds (the default),
        throughput in ops/s and response times in ms, as ``capmodel mva``'s tables show them (``class_figures``);
        the utilization as its station table's column does (one precision per column)."""
        parts = [f"{c}: {class_figures(x, r, time_unit)}" for c, x, r in
                 zip(self.network.classes, self.throughput, self.response_time)]
        if self.utilization.isna().all():
            return f"{self.method}: " + "; ".join(parts) + ". No station queues (delays only)."
        if self.bottleneck is None:
            return f"{self.method}: " + "; ".join(parts) + ". No station carries load, so none is the bottleneck."
        u = self.utilization[self.bottleneck]
        shown = formatted_station_table(self).show_value("utilization", u)   # as its column spells it
        return f"{self.method}: " + "; ".join(parts) + f". Bottleneck: {self.bottleneck} (utilization {shown})."

    def summary(self) -> str:
        """Everything ``capmodel mva`` prints for a model file: the answer, the solver's notes, then the per-class
        table (times in ms) and the per-station table."""
        return "\n".join([self.describe(), *self.notes, "", formatted_class_table(self).text(), "",
                          formatted_station_table(self).text()])

    def to_json(self) -> dict:
        """The JSON of ``capmodel mva --json`` (without the solver's name, which the caller chose): per class its
        figures with the residence at each station, per station its servers, utilization and queues, the
        bottleneck and the notes."""
        rows = []
        for row in self.table.reset_index().to_dict(orient="records"):
            residence = {s: row.pop(f"residence_{s}") for s in self.network.stations}
            rows.append({**row, "residence": residence})
        stations = [{"station": s, "servers": self.network.servers_label(k), "utilization": self.utilization[s],
                     "queue_length": self.queue_length.loc[s].to_dict()}
                    for k, s in enumerate(self.network.stations)]
        return to_jsonable({"method": self.method, "classes": rows, "stations": stations,
                            "bottleneck": self.bottleneck, "notes": self.notes})

    def __repr__(self):
        return f"<MulticlassResult {self.method}: {self.describe()}>"


CLASS_NOTE = "—: not a figure of this class (an open class has no population or think time, a closed one no arrival)"
STATION_NOTE = "—: a delay station has no utilization (it never queues)"


def formatted_class_table(result: MulticlassResult):
    """Per class, for people: populations and rates with their units, times in ms (the model's are seconds)."""
    frame = result.table.reset_index()
    times = ["response_time"] + [f"residence_{s}" for s in result.network.stations]
    frame[times] = frame[times] * 1000.0
    columns = {"class": Column("class", "text"), "population": Column("population", "int"),
               "think_time": Column("think time (s)"), "arrival_rate": Column("arrival rate (ops/s)"),
               "throughput": Column("throughput (ops/s)", digits=THROUGHPUT_DIGITS),
               "response_time": Column("response time (ms)", digits=TIME_DIGITS),
               **{f"residence_{s}": Column(f"at {s} (ms)") for s in result.network.stations}}
    return table(frame, columns, footnotes=[CLASS_NOTE])


def formatted_station_table(result: MulticlassResult):
    """Per station: its servers, its utilization as a percentage and the mean queue of each class."""
    frame = result.station_table().reset_index()
    queues = [c for c in frame.columns if c.startswith("queue_")]
    columns = {"station": Column("station", "text"), "servers": Column("servers", "text"),
               "utilization": Column("utilization", "percent", digits=UTILIZATION_DIGITS),
               **{c: Column(f"queue of {c.removeprefix('queue_')}") for c in queues}}
    return table(frame, columns, footnotes=[STATION_NOTE])


# significant digits of a utilization (as a percentage), of a class's throughput and of its response time in ms:
# the describe() sentence and capmodel mva's tables show each figure alike
UTILIZATION_DIGITS = 3
THROUGHPUT_DIGITS = 4
TIME_DIGITS = 3


def class_figures(throughput: float, response_time: float, time_unit: str = "s") -> str:
    """'2,933 ops/s at 3.64 ms' for a class with the model's times in seconds; in another unit the figures as
    given ('2.9 per min at 0.5 min')."""
    if time_unit == "s":
        return (f"{number(throughput, THROUGHPUT_DIGITS)} ops/s at "
                f"{number(response_time * 1000.0, TIME_DIGITS)} ms")
    return (f"{number(throughput, THROUGHPUT_DIGITS)} per {time_unit} at {number(response_time, TIME_DIGITS)} "
            f"{time_unit}")
