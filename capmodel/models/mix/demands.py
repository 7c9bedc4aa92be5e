"""What-if for operation mixes: per-class service demands from measured curves of different mixes, and predictions.

The model. N client threads in a closed loop (no think time: each sends its next operation when the last returns),
each operation of class c (read, write...) with probability p_c, the mix. An operation spends d_c at a delay (client,
network, router: no queueing) and needs D_c at the database, a station of ``servers`` processors shared by the
requests present (processor sharing). A thread that changes class at every operation is one customer chain with
class switching, so the network is the single-class one with mixed demands D = sum p_c D_c and d = sum p_c d_c,
solved exactly by MVA (``capmodel.models.queueing.mva.exact_mva``); under processor sharing every class is slowed by the
same factor at the database, so class c's latency is R_c(N) = d_c + D_c * R_db(N) / D and its throughput p_c X(N).

``fit_mix_demands`` estimates (D_c, d_c) for every class by least squares on log throughput over all curves, plus
log per-class mean latency where a curve has a ``latency_<class>_mean_ms`` column. Two curves with different mixes
separate the classes; one curve per class-free mix would not.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd
from scipy.optimize import least_squares

from capmodel.errors import FitError, InputError
from capmodel.formatting import number
from capmodel.models.queueing.laws import check_servers
from capmodel.models.queueing.mva import exact_mva


def check_mix(mix, classes=None) -> dict[str, float]:
    """A mix {class: share}: shares >= 0 summing to 1 (within 0.1 %); ``InputError`` naming the problem otherwise."""
    if not isinstance(mix, Mapping) or not mix:
        raise InputError(f"a mix must be a mapping {{class: share}}, got {mix!r}")
    out = {}
    for c, share in mix.items():
        try:
            share = float(share)
        except (TypeError, ValueError):
            raise InputError(f"mix share of {c!r} must be a number, got {share!r}") from None
        if not np.isfinite(share) or share < 0:
            raise InputError(f"mix share of {c!r} must be >= 0, got {share!r}")
        if classes is not None and str(c) not in classes:
            raise InputError(f"mix names class {c!r}, which the fitted model does not know; classes: {list(classes)}")
        out[str(c)] = share
    if abs(sum(out.values()) - 1.0) > 1e-3:
        raise InputError(f"mix shares must add up to 1, got {number(sum(out.values()), 4)} for {out}")
    return out


def _curve_arrays(curve, name):
    for col in ("concurrency", "throughput"):
        if col not in curve:
            raise InputError(f"{name}: no {col!r} column")
    n = np.asarray(curve["concurrency"], dtype=float)
    x = np.asarray(curve["throughput"], dtype=float)
    if np.any(n < 1) or np.any(np.mod(n, 1) != 0) or np.any(~np.isfinite(x)) or np.any(x <= 0):
        raise InputError(f"{name}: concurrency must be whole numbers >= 1 and throughput > 0 on every row")
    return n.astype(int), x


def solve_mix(demand: Mapping[str, float], delay: Mapping[str, float], mix: Mapping[str, float], servers: int,
              concurrency) -> pd.DataFrame:
    """The model at each concurrency: throughput (per second), latency_mean_ms, latency_<class>_ms, throughput_<class>,
    utilization (per database server)."""
    d_mix = sum(share * demand[c] for c, share in mix.items())
    z_mix = sum(share * delay[c] for c, share in mix.items())
    n = np.asarray(concurrency, dtype=int)
    table = exact_mva({"database": d_mix}, think_time=z_mix, populations=sorted(set(n.tolist())),
                      servers={"database": servers}).set_index("concurrency").loc[n]
    x = table["throughput"].to_numpy()
    stretch = table["residence_time_database"].to_numpy() / d_mix
    out = pd.DataFrame({"concurrency": n, "throughput": x, "latency_mean_ms": n / x * 1000.0})
    for c, share in mix.items():
        out[f"latency_{c}_ms"] = (delay[c] + demand[c] * stretch) * 1000.0
        out[f"throughput_{c}"] = share * x
    out["utilization"] = table["utilization_database"].to_numpy()
    return out


@dataclass(frozen=True)
class MixFit:
    """Fitted per-class demands from curves of known mixes; every figure derives from them.

    ``predict(mix, concurrency)`` solves another mix; ``compare(curve, mix)`` checks it against a measured curve;
    ``network()`` gives the stations for ``multiclass_mva``.

    Attributes
    ----------
    demand : dict
        ``{class: D_c}``, seconds at the database per operation.
    delay : dict
        ``{class: d_c}``, seconds outside it.
    servers : int
        The processors at the database station.
    observations : dict
        ``{name: (curve, mix)}``, what was fitted.
    cost : float
        The least-squares cost at the solution.
    """

    demand: dict            # class -> D_c at the database (s)
    delay: dict             # class -> d_c outside it (s)
    servers: int
    observations: dict      # name -> (curve, mix)
    cost: float

    @cached_property
    def classes(self) -> list[str]:
        """The classes, in order of first appearance in the mixes."""
        return list(self.demand)

    @cached_property
    def parameters(self) -> pd.DataFrame:
        """One row per class: database demand and delay in ms, and the throughput bound servers / D_c alone."""
        return pd.DataFrame({"database_demand_ms": {c: v * 1000 for c, v in self.demand.items()},
                             "delay_ms": {c: v * 1000 for c, v in self.delay.items()},
                             "max_throughput_alone": {c: self.servers / v for c, v in self.demand.items()}})

    def predict(self, mix, concurrency) -> pd.DataFrame:
        """Throughput and latency per class of a mix (shares summing to 1) at the given concurrencies."""
        return solve_mix(self.demand, self.delay, check_mix(mix, self.classes), self.servers, concurrency)

    def compare(self, curve: pd.DataFrame, mix, name: str = "curve") -> MixPrediction:
        """The prediction for ``mix`` against a measured ``curve`` of that mix."""
        n, x = _curve_arrays(curve, name)
        predicted = self.predict(mix, n)
        table = pd.DataFrame({"concurrency": n, "measured_throughput": x,
                              "predicted_throughput": predicted["throughput"].to_numpy()})
        table["throughput_error_pct"] = (table["predicted_throughput"] / table["measured_throughput"] - 1) * 100
        if "latency_mean_ms" in curve:
            table["measured_latency_ms"] = np.asarray(curve["latency_mean_ms"], dtype=float)
            table["predicted_latency_ms"] = predicted["latency_mean_ms"].to_numpy()
            table["latency_error_pct"] = (table["predicted_latency_ms"] / table["measured_latency_ms"] - 1) * 100
        return MixPrediction(name=name, mix=check_mix(mix, self.classes), table=table,
                             fitted_to=tuple(self.observations))

    def network(self) -> tuple[dict, dict]:
        """(demands, servers) for ``multiclass_mva``: the same stations with dedicated threads per class (tenants)."""
        demands = {"database": dict(self.demand), "client": dict(self.delay)}
        return demands, {"database": self.servers, "client": "delay"}

    def fit_errors(self) -> pd.DataFrame:
        """Mean absolute throughput error (%) of the model on each curve it was fitted to."""
        rows = {name: self.compare(curve, mix, name).mean_abs_throughput_error_pct
                for name, (curve, mix) in self.observations.items()}
        return pd.Series(rows, name="mean_abs_throughput_error_pct").to_frame()


@dataclass(frozen=True)
class MixPrediction:
    """Predicted against measured for one curve, as ``MixFit.compare`` returns it.

    Errors are (predicted / measured − 1) in %.

    Attributes
    ----------
    name : str
        The curve's name.
    mix : dict
        ``{class: share}``.
    table : pandas.DataFrame
        Per concurrency: measured and predicted throughput (and latency, where measured) and their errors.
    fitted_to : tuple of str
        The curves the model was fitted to.
    """

    name: str
    mix: dict
    table: pd.DataFrame
    fitted_to: tuple

    @cached_property
    def mean_abs_throughput_error_pct(self) -> float:
        """Mean absolute throughput error over the measured concurrencies (%)."""
        return float(self.table["throughput_error_pct"].abs().mean())

    @cached_property
    def worst_throughput_error_pct(self) -> float:
        """The largest absolute throughput error (%), signed."""
        errors = self.table["throughput_error_pct"]
        return float(errors.loc[errors.abs().idxmax()])

    @cached_property
    def peak_error_pct(self) -> float:
        """Error of the predicted highest throughput against the measured highest (%)."""
        return float((self.table["predicted_throughput"].max() / self.table["measured_throughput"].max() - 1) * 100)

    def describe(self) -> str:
        """The comparison in one sentence."""
        shares = ", ".join(f"{share:.0%} {c}" for c, share in self.mix.items())
        return (f"Fitted to {' and '.join(self.fitted_to)}, the model predicts {self.name} ({shares}) with a mean "
                f"absolute throughput error of {self.mean_abs_throughput_error_pct:.1f}% (worst "
                f"{self.worst_throughput_error_pct:+.1f}%); its peak "
                f"{self.table['predicted_throughput'].max():,.0f} ops/s against the measured "
                f"{self.table['measured_throughput'].max():,.0f} ops/s ({self.peak_error_pct:+.1f}%).")


def fit_mix_demands(observations: Mapping[str, tuple], servers: int = 1) -> MixFit:
    """Per-class demands from measured curves of known mixes (a benchmark, not production).

    Each class has a demand D_c at a database station of ``servers`` processors and a delay d_c outside it; both are
    fitted by least squares on the log throughput (and the per-class mean latency where the curves carry it).

    Parameters
    ----------
    observations : mapping
        ``{name: (curve, {class: share})}``: each curve table and the mix it was measured at (shares summing to 1).
    servers : int, default 1
        The processors at the database station (e.g. the vCPUs of the server that saturates).

    Returns
    -------
    MixFit

    Raises
    ------
    InputError
        An observation is not a (curve, mix) pair, a mix or curve is refused, or fewer linearly independent mixes than
        classes.
    FitError
        The least squares did not reach finite demands.
    """
    servers = check_servers(servers, "servers (processors at the database)")
    if not isinstance(observations, Mapping) or not observations:
        raise InputError("observations must map a name to (curve, mix)")
    checked, classes = {}, []
    for name, item in observations.items():
        if not isinstance(item, tuple) or len(item) != 2:
            raise InputError(f"observations[{name!r}] must be a (curve, mix) pair")
        curve, mix = item
        mix = check_mix(mix)
        _curve_arrays(curve, name)
        checked[name] = (curve, mix)
        classes += [c for c in mix if c not in classes]
    vectors = np.array([[mix.get(c, 0.0) for c in classes] for _, mix in checked.values()])
    if np.linalg.matrix_rank(vectors) < len(classes):
        raise InputError(f"{len(classes)} classes ({', '.join(classes)}) need curves of at least {len(classes)} "
                         f"linearly independent mixes; got {len(checked)}")

    def unpack(q):
        q = np.exp(q)
        return dict(zip(classes, q[: len(classes)])), dict(zip(classes, q[len(classes):]))

    def residuals(q):
        demand, delay = unpack(q)
        out = []
        for curve, mix in checked.values():
            n, x = _curve_arrays(curve, "")
            model = solve_mix(demand, delay, mix, servers, n)
            out.append(np.log(model["throughput"].to_numpy() / x))
            for c in mix:
                column = f"latency_{c}_mean_ms"
                if column in curve:
                    out.append(np.log(model[f"latency_{c}_ms"].to_numpy() / np.asarray(curve[column], float)))
        return np.concatenate(out)

    # start: every class as the fastest curve's plateau (D = servers / max X) and its lowest-load latency
    first_curve = max(checked.values(), key=lambda item: np.max(item[0]["throughput"]))[0]
    n0, x0 = _curve_arrays(first_curve, "")
    d0 = servers / x0.max()
    z0 = max(n0.min() / x0[np.argmin(n0)] - d0, d0)
    solution = least_squares(residuals, np.log([d0] * len(classes) + [z0] * len(classes)))
    if not solution.success or not np.all(np.isfinite(solution.x)):
        raise FitError(f"the per-class demands could not be fitted: {solution.message}")
    demand, delay = unpack(solution.x)
    return MixFit({c: float(v) for c, v in demand.items()}, {c: float(v) for c, v in delay.items()}, servers,
                  checked, float(solution.cost))
