"""The what-if per shape: scale some shapes' rates (``{"3": 3}``: the third shape x3) and get the server's CPU, each
shape's latency, and the load at which the CPU saturates and the shape that takes most of it there.

The model is the mix what-if's (``capmodel.models.mix.production``) with the shapes as its classes: the CPU an
M/M/c station of ``cores`` processors (production traffic is open: a shape's throughput is its offered rate while
the CPU keeps up), each shape's latency its fixed part plus its CPU part stretched by S(U). Saturation: the asked
load (every shape at its asked rate) scaled by ``load_factor_that_fits`` brings the CPU to 1; at that load the shape
with the largest share of the CPU is the one that breaks the server. Intervals: refits on circular-block resamples of
the shared intervals (``capmodel.models.block_bootstrap``), percentiles of their predictions.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from capmodel.errors import InputError
from capmodel.formatting import interval, number, percent, plural
from capmodel.jsonable import to_jsonable
from capmodel.models.block_bootstrap import circular_blocks, dependence
from capmodel.models.evidence import Evidence, Reason
from capmodel.models.mix.production import ServerDemands, cpu_residuals, predict_demands
from capmodel.models.mix.rates import SCALE_FACTOR
from capmodel.models.mix.spread import percentiles
from capmodel.observe.shapes.demand import fit_shape_demands, shape_intervals
from capmodel.observe.shapes.result import RESOLUTION_MS, QueryShapes

#: the columns of shapes.csv a what-if fills in for the shapes the log has no cpuNanos for
CPU_COLUMNS = ("cpu_ms_per_op", "cpu_ms_per_op_low", "cpu_ms_per_op_high", "cpu_source")


@dataclass(frozen=True)
class ShapesWhatIf:
    """The shapes' demands and the server at the asked rates; every figure derives from them.

    ``shapes_what_if`` builds it. ``table`` is one row per shape, ``shapes_table`` the shapes' table with the CPU per
    operation filled in, ``describe()`` the answer in sentences, ``to_json()`` its record.

    Attributes
    ----------
    shapes : QueryShapes
        The log's shapes.
    demands : ServerDemands
        The fitted demands (classes: shape ids).
    factors : dict
        ``{shape id: factor}`` asked (a shape not named keeps its rate).
    predicted, low, high : pandas.Series
        ``predict_demands``'s figures at the asked rates, and their interval's ends.
    demand_low, demand_high : dict
        ``{shape id: s}``, the ends of each shape's CPU per operation's interval.
    level : float
        The intervals' coverage.
    reasons : tuple of Reason
        What weakens the answer besides the fit's own reasons.
    interval_s : float
        The fitted intervals' length (the median): the CPU samples', or the log's intervals (``shape_intervals``).
    """

    shapes: QueryShapes
    demands: ServerDemands
    factors: dict
    predicted: pd.Series
    low: pd.Series
    high: pd.Series
    demand_low: dict = field(default_factory=dict)
    demand_high: dict = field(default_factory=dict)
    level: float = 0.95
    reasons: tuple = ()
    interval_s: float = math.nan

    @cached_property
    def rates(self) -> dict:
        """``{shape id: ops/s}`` asked: the observed mean over the fitted intervals times the factor."""
        return {sid: self.demands.baseline[sid] * self.factors.get(sid, 1.0) for sid in self.demands.classes}

    @cached_property
    def evidence(self) -> Evidence:
        """The log's coverage, the fit's reasons, and saturation where the asked load does not fit."""
        return Evidence.of(*self.shapes.coverage.reasons, *self.demands.reasons, *self.reasons)

    @property
    def utilization(self) -> float:
        """The CPU's utilization per core at the asked rates."""
        return float(self.predicted["utilization"])

    @property
    def load_factor_that_fits(self) -> float:
        """The factor of the asked load (every shape together) at which the CPU saturates."""
        return float(self.predicted["load_factor_that_fits"])

    @cached_property
    def limiting_shape(self) -> str:
        """The shape with the largest share of the CPU at the asked load: the one that breaks the server."""
        cpu = {sid: self.rates[sid] * self.demands.cpu_per_op[sid] for sid in self.demands.classes}
        return max(cpu, key=lambda sid: (cpu[sid], sid))

    @property
    def table(self) -> pd.DataFrame:
        """One row per shape in the fit: its parts, CPU per operation with its interval, observed and asked rate,
        share of the CPU at the asked load, rate at saturation, and latency with its interval (``latency_resolved``
        False: the shape ran under the log's millisecond, so its latency is a lower bound)."""
        rows = self.shapes.rows.set_index("shape")
        used = self.demands.background_cores + sum(self.rates[s] * self.demands.cpu_per_op[s] for s in self.rates)
        out = []
        for sid in self.demands.classes:
            d = self.demands.cpu_per_op[sid]
            out.append({
                "shape": sid, "namespace": rows.loc[sid, "namespace"], "operation": rows.loc[sid, "operation"],
                "filter_shape": rows.loc[sid, "filter_shape"], "cpu_ms_per_op": d * 1000,
                "cpu_ms_per_op_low": self.demand_low.get(sid, np.nan) * 1000,
                "cpu_ms_per_op_high": self.demand_high.get(sid, np.nan) * 1000,
                "cpu_source": "cpuNanos" if rows.loc[sid, "cpu_source"] == "cpuNanos" else "regression",
                "observed_per_s": self.demands.baseline[sid], "factor": self.factors.get(sid, 1.0),
                "asked_per_s": self.rates[sid], "cpu_share": self.rates[sid] * d / used if used > 0 else np.nan,
                "saturation_per_s": self.rates[sid] * self.load_factor_that_fits,
                "latency_ms": self.predicted[f"{sid}_latency_ms"], "latency_ms_low": self.low[f"{sid}_latency_ms"],
                "latency_ms_high": self.high[f"{sid}_latency_ms"],
                "latency_resolved": bool(rows.loc[sid, "latency_p99_ms"] >= RESOLUTION_MS)})
        return pd.DataFrame(out)

    @property
    def cpu_by_shape(self) -> pd.DataFrame:
        """The cores each fitted shape uses at its observed and at its asked rate (rate x CPU per operation), and a
        last row ``background`` with the CPU no shape explains; ``observed_share`` and ``asked_share`` of the total."""
        rows = [{"shape": sid, "observed_cores": self.demands.baseline[sid] * self.demands.cpu_per_op[sid],
                 "asked_cores": self.rates[sid] * self.demands.cpu_per_op[sid]} for sid in self.demands.classes]
        rows.append({"shape": "background", "observed_cores": self.demands.background_cores,
                     "asked_cores": self.demands.background_cores})
        out = pd.DataFrame(rows)
        for kind in ("observed", "asked"):
            total = out[f"{kind}_cores"].sum()
            out[f"{kind}_share"] = out[f"{kind}_cores"] / total if total > 0 else np.nan
        return out

    @property
    def shapes_table(self) -> pd.DataFrame:
        """The shapes' table (``QueryShapes.table``) with each fitted shape's CPU per operation, its interval and
        source where the log had no ``cpuNanos`` for it."""
        table = self.shapes.table
        fitted = self.table.set_index("shape")
        for column in CPU_COLUMNS:
            values = table["shape"].map(fitted[column])
            table[column] = table[column].where(table["cpu_source"] == "cpuNanos", values)
        table["cpu_source"] = table["cpu_source"].fillna("")
        return table

    def to_json(self) -> dict:
        """The answer as a record: cores, background, utilization with its interval, the load factor that fits, the
        limiting shape, per shape its row, the level and the evidence."""
        return to_jsonable({
            "cores": self.demands.cores, "intervals": self.demands.intervals, "interval_s": self.interval_s,
            "background_cores": self.demands.background_cores, "utilization": self.utilization,
            "utilization_interval": [self.low["utilization"], self.high["utilization"]],
            "load_factor_that_fits": self.load_factor_that_fits,
            "load_factor_interval": [self.low["load_factor_that_fits"], self.high["load_factor_that_fits"]],
            "limiting_shape": self.limiting_shape, "factors": self.factors, "shapes": self.table, "level": self.level,
            "evidence": self.evidence.to_json(), "sentence": self.describe()})

    def describe(self, names: Mapping[str, str] | None = None) -> str:
        """The answer in sentences, each shape called by its id, or by ``names[id]`` where given (a report calls
        them by their rank in its table: "shape 3")."""
        def name(sid: str) -> str:
            return str((names or {}).get(sid, sid))

        asked = ", ".join(f"{name(sid)} x{number(f)}" for sid, f in self.factors.items()) or "the observed load"
        cores = plural(self.demands.cores, "core")
        row = self.table.set_index("shape").loc[self.limiting_shape]
        what = f"{row['operation']} on {row['namespace']} {row['filter_shape']}".rstrip()
        lines = []
        if self.utilization >= 1:
            lines.append(f"At {asked} the server needs {percent(self.utilization)} of {cores}: it does not fit; "
                         f"{percent(self.load_factor_that_fits)} of that load does.")
        else:
            lines.append(f"At {asked} the CPU is {percent(self.utilization)} of {cores} ("
                         f"{percent(self.low['utilization'])} to {percent(self.high['utilization'])}); it saturates "
                         f"at {number(self.load_factor_that_fits)}x that load ("
                         f"{number(self.low['load_factor_that_fits'])} to "
                         f"{number(self.high['load_factor_that_fits'])}).")
        lines.append(f"The shape that breaks it: {name(self.limiting_shape)} ({what}), {percent(row['cpu_share'])} of "
                     f"the CPU, at {number(row['saturation_per_s'])} ops/s when the server saturates; "
                     f"{number(row['cpu_ms_per_op'])} ms of CPU per operation.")
        if self.utilization < 1:
            for sid, r in self.table.set_index("shape").iterrows():
                if r["factor"] != 1.0 or sid == self.limiting_shape:
                    lines.append(f"Latency of {name(str(sid))} at {number(r['asked_per_s'])} ops/s: "
                                 + interval(r["latency_ms"], r["latency_ms_low"], r["latency_ms_high"], unit="ms")
                                 + ".")
        lines.append(f"Intervals: {self.level:.0%}, refits on resampled intervals of {number(self.interval_s)} s.")
        return "\n".join(lines)


def resolve_shapes(shapes: QueryShapes, factors: Mapping) -> dict:
    """``{shape id: factor}`` from ``{shape id or rank in the table (1 = first): factor}``; ``InputError`` naming an
    unknown shape or a factor out of range."""
    ids = shapes.rows["shape"].tolist()
    out = {}
    for key, factor in factors.items():
        text = str(key).strip()
        if text in ids:
            sid = text
        elif text.isdigit() and 1 <= int(text) <= len(ids):
            sid = ids[int(text) - 1]
        else:
            raise InputError(f"what-if: no shape {text!r}; give a shape id of the table or its rank (1 to "
                             f"{len(ids)})")
        out[sid] = float(SCALE_FACTOR.check(factor, InputError, f"what-if: {text}"))
    return out


def shapes_what_if(shapes: QueryShapes, samples: pd.DataFrame, cores, factors: Mapping | None = None,
                   n_bootstrap: int = 200, level: float = 0.95, seed: int = 0) -> ShapesWhatIf:
    """Scale some shapes' rates and predict the server: CPU, each shape's latency, the load that saturates it.

    Parameters
    ----------
    shapes : QueryShapes
        The log's shapes (``query_shapes``).
    samples : pandas.DataFrame
        ``capmodel observe``'s per-interval samples over the same time (``observe_ftdc(path).samples``).
    cores : int
        The processors the mongod may use.
    factors : mapping, optional
        ``{shape: factor}``, a shape by its id or its rank in ``shapes.table`` (1 = first); a shape not named keeps
        its rate. None: the observed load.
    n_bootstrap : int, default 200
        Refits on resampled intervals for the intervals (0 to 10,000).
    level : float, default 0.95
        The intervals' coverage, strictly between 0 and 1.
    seed : int, default 0
        The bootstrap's random seed.

    Returns
    -------
    ShapesWhatIf

    Raises
    ------
    InputError
        Too few shared intervals, an unknown shape, a shape that did not run in them, a number out of range.
    """
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, int) or not 0 <= n_bootstrap <= 10_000:
        raise InputError(f"n_bootstrap must be a whole number from 0 to 10,000, got {n_bootstrap!r}")
    if not 0 < level < 1:
        raise InputError(f"level must be between 0 and 1, got {level!r}")
    asked = resolve_shapes(shapes, factors or {})
    table = shape_intervals(shapes, samples)
    fit = fit_shape_demands(shapes, samples, cores, table)
    absent = [sid for sid in asked if sid not in fit.classes]
    if absent:
        raise InputError(f"what-if: shape {absent[0]} did not run in the intervals the log and the CPU share: no "
                         "demand to scale")
    predicted = pd.Series(predict_demands(fit, _rates(fit, asked)))
    rng = np.random.default_rng(seed)
    block = dependence(cpu_residuals(fit, table)).block
    draws, demand_draws = [], []
    for _ in range(n_bootstrap):
        resample = table.iloc[circular_blocks(rng, len(table), block)].reset_index(drop=True)
        try:
            refit = fit_shape_demands(shapes, samples, fit.cores, resample)
        except InputError:
            continue
        if set(refit.classes) != set(fit.classes):      # a shape absent from the resample: no figure for it
            continue
        draws.append(predict_demands(refit, _rates(refit, asked)))
        demand_draws.append(refit.cpu_per_op)
    low, high = percentiles(draws or [predicted.to_dict()], level)
    boot = pd.DataFrame(demand_draws or [fit.cpu_per_op])
    d_low = boot.quantile((1 - level) / 2, interpolation="lower")
    d_high = boot.quantile((1 + level) / 2, interpolation="higher")
    reasons = []
    if predicted["utilization"] >= 1:
        reasons.append(Reason("saturated", "unusable", f"the asked load needs {percent(predicted['utilization'])} of "
                              "the CPU: no steady state, so no latency", float(predicted["utilization"])))
    return ShapesWhatIf(shapes, fit, asked, predicted, low, high, d_low.to_dict(), d_high.to_dict(), level,
                        tuple(reasons), float(table["seconds"].median()))


def parse_factors(items, label: str = "--what-if") -> dict:
    """``{shape: factor}`` of ``SHAPE=FACTOR`` texts (``["3=3", "1=0.5"]``; a shape's id or rank, its factor a
    number; the range is checked with the shapes, by ``resolve_shapes``); ``InputError`` naming ``label`` and the text
    that is not one."""
    out = {}
    for item in items:
        shape, sep, factor = str(item).partition("=")
        if not sep or not shape.strip():
            raise InputError(f"{label}: expected SHAPE=FACTOR (e.g. 3=2.5), got {item!r}")
        try:
            out[shape.strip()] = float(factor)
        except ValueError:
            raise InputError(f"{label} {shape.strip()}: the factor must be a number, got {factor!r}") from None
    return out


def ftdc_cores(samples: pd.DataFrame, source, option: str = "--cores") -> float:
    """The host's cores as the FTDC ``samples`` report them; ``InputError`` naming ``source`` and asking for
    ``option`` where they do not."""
    if "cores" not in samples or samples["cores"].dropna().empty:
        raise InputError(f"{source}: the FTDC does not say the host's cores; give {option}")
    return float(samples["cores"].dropna().median())


def _rates(demands: ServerDemands, factors: dict) -> dict:
    return {sid: demands.baseline[sid] * factors.get(sid, 1.0) for sid in demands.classes}
