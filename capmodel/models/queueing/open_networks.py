"""Open and mixed multi-class product-form networks: utilization, response time per class, and the stability limit.

Open classes arrive at rate lambda_c (Poisson) and leave; closed classes keep N_c customers circulating. Formulas
(Lazowska et al., "Quantitative System Performance", 1984, ch. 7, sections on open and mixed models):
- open network: U_k = sum_c lambda_c D_kc (per server: / c_k). At a queue R_kc = D_kc / (1 - U_k); at a delay
  R_kc = D_kc; at a c-server station R_kc = D_kc (1 + C(c, a) / (c (1 - rho))), the M/M/c stretch factor with
  a = c rho offered Erlangs and C Erlang's C formula (shared by every class: processor sharing over c servers).
- mixed network: the open classes take U_k^o of each queue; the closed classes see queues slowed to D_kc / (1 - U_k^o)
  and are solved by (exact or approximate) MVA; an open request then finds the closed customers' queue:
  R_kc = D_kc (1 + Q_k^closed) / (1 - U_k^o).
The network is stable only while every U_k < 1: ``stability_limit`` says how far the open rates can grow.
Stations with other load-dependent rates (a rate function, a USL tier) are not product-form here and are refused.
"""
from __future__ import annotations

import numpy as np

from capmodel.errors import InputError
from capmodel.formatting import number
from capmodel.models.queueing.erlang import erlang_c
from capmodel.models.queueing.load_dependent import LoadDependent
from capmodel.models.queueing.network import DELAY, QUEUE, MulticlassResult, build_network, class_vector


def _servers(net) -> np.ndarray:
    out = []
    for k, kind in enumerate(net.kinds):
        if isinstance(kind, LoadDependent) and not kind.servers:
            raise InputError(f"station {net.stations[k]} is load-dependent ({kind.label}): open and mixed networks "
                             "take queues, delays and c-server stations; use multiclass_mva for a closed network")
        out.append(kind.servers if isinstance(kind, LoadDependent) else (np.inf if kind == DELAY else 1))
    return np.array(out, dtype=float)


def stability_limit(arrival_rates, demands, servers=None) -> dict:
    """How far the open arrival rates can grow together before a station saturates.

    Parameters
    ----------
    arrival_rates : mapping
        ``{class: λ}``, requests per second.
    demands : mapping
        ``{station: {class: D}}`` in seconds.
    servers : mapping, optional
        ``{station: count or "delay"}`` (default 1).

    Returns
    -------
    dict
        ``factor`` (the multiple of these rates the network can carry; > 1: room left), ``bottleneck`` (the station
        that saturates first), ``utilization`` (per server there, now) and ``max_rate_alone`` (each class's highest
        rate with no other load: the least c_k / D_kc over its stations).

    Raises
    ------
    InputError
        An input is out of range, or a station is load-dependent (other than c servers).

    Examples
    --------
    >>> from capmodel.models.queueing.open_networks import stability_limit
    >>> limit = stability_limit({"read": 100, "write": 50},
    ...                         {"cpu": {"read": 0.002, "write": 0.004}, "disk": {"read": 0.001, "write": 0.006}})
    >>> limit["factor"], limit["bottleneck"]
    (2.5, 'cpu')
    """
    net = build_network(demands, servers, classes=[str(c) for c in dict(arrival_rates)])
    lam = class_vector(arrival_rates, net.classes, "arrival_rates")
    c = _servers(net)
    queueing = np.isfinite(c)
    u = np.where(queueing, net.demands @ lam / np.where(queueing, c, 1.0), 0.0)
    k = int(np.argmax(u))
    with np.errstate(divide="ignore"):
        alone = {cls: float(np.min(np.where(queueing & (net.demands[:, i] > 0),
                                            c / np.where(net.demands[:, i] > 0, net.demands[:, i], 1.0), np.inf)))
                 for i, cls in enumerate(net.classes)}
    return {"factor": float(1.0 / u[k]) if u[k] > 0 else float("inf"), "bottleneck": net.stations[k],
            "utilization": float(u[k]), "max_rate_alone": alone}


def _check_stable(net, u, c, who: str) -> None:
    loaded = np.where(np.isfinite(c), u, 0.0)
    k = int(np.argmax(loaded))
    if loaded[k] >= 1.0:  # the worst station is named: that is the one the rates must be scaled down for
        raise InputError(f"{who} load station {net.stations[k]} to utilization {number(u[k], 4)} >= 1 per server: no "
                         f"steady state (at most {number(1.0 / u[k], 4)} x these arrival rates)")


def stretch(u: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Residence time / demand of an open request at each station (utilization per server ``u`` below 1, servers
    ``c``): 1/(1-U) queue, M/M/c stretch 1 + C(c, cU) / (c (1 - U)), 1 at a delay (c infinite). Also the mix
    what-if's CPU stretch S(U) (``capmodel.models.mix.production``)."""
    out = np.ones(len(u))
    for k in range(len(u)):
        if not np.isfinite(c[k]):
            continue
        if c[k] == 1:
            out[k] = 1.0 / (1.0 - u[k])
        else:
            out[k] = 1.0 + erlang_c(int(c[k]), u[k] * c[k]) / (c[k] * (1.0 - u[k]))
    return out


def open_network(arrival_rates, demands, servers=None) -> MulticlassResult:
    """Solve an open multi-class network: Poisson arrivals per class, product form.

    Residence time per station: D/(1 − U) at a queue, D at a delay, the M/M/c stretch at a c-server station.

    Parameters
    ----------
    arrival_rates : mapping
        ``{class: λ}``, requests per second.
    demands : mapping
        ``{station: {class: D}}`` in seconds.
    servers : mapping, optional
        ``{station: count or "delay"}`` (default 1: a single-server queue).

    Returns
    -------
    MulticlassResult
        Its ``throughput`` equals the arrival rates; ``notes`` says how far the rates can grow (``stability_limit``).

    Raises
    ------
    InputError
        An input is out of range, a station is load-dependent (other than c servers), or a station's utilization per
        server reaches 1 (no steady state; the message names it and the largest multiple of the rates).

    Examples
    --------
    >>> from capmodel.models.queueing.open_networks import open_network
    >>> result = open_network({"read": 100, "write": 50},
    ...                       {"cpu": {"read": 0.002, "write": 0.004}, "disk": {"read": 0.001, "write": 0.006}})
    >>> result.response_time.round(5).to_dict()
    {'read': 0.005, 'write': 0.01667}
    >>> result.notes
    ['stable up to 2.5 x these arrival rates (bottleneck cpu)']
    """
    net = build_network(demands, servers, classes=[str(c) for c in dict(arrival_rates)])
    lam = class_vector(arrival_rates, net.classes, "arrival_rates")
    c = _servers(net)
    u = net.demands @ lam / np.where(np.isfinite(c), c, 1.0)
    _check_stable(net, u, c, "the arrival rates")
    residence = net.demands * stretch(u, c)[:, None]
    limit = stability_limit(arrival_rates, demands, servers)
    if np.isfinite(limit["factor"]):
        factor = number(limit["factor"], 4)
        notes = [f"stable up to {'barely more than 1' if factor == '1' else factor} x these arrival rates "
                 f"(bottleneck {limit['bottleneck']})"]
    elif not np.any(lam > 0):      # no load, not "any load": a queueing station with a demand still saturates
        notes = ["every arrival rate is 0: no station carries load"]
    else:
        notes = ["no queueing station carries load: stable at any arrival rate"]
    return MulticlassResult(net, lam, residence, u, "open network", arrival_rates=lam, notes=notes)


def mixed_network(demands, populations, arrival_rates, think_times=None, servers=None,
                  method: str = "exact") -> MulticlassResult:
    """Solve a mixed network: closed classes (a population each) and open classes (an arrival rate each) together.

    The open classes take their utilization of each queue; the closed classes see the queues slowed by it and are solved
    by MVA; an open request then finds the closed customers' queue.

    Parameters
    ----------
    demands : mapping
        ``{station: {class: D}}`` in seconds, for both kinds of class.
    populations : mapping
        ``{class: customers}`` of the closed classes.
    arrival_rates : mapping
        ``{class: λ}`` of the open classes; no class may be in both.
    think_times : mapping, optional
        ``{class: Z}`` of the closed classes (default 0).
    servers : mapping, optional
        ``{station: count or "delay"}``; a station with several servers may serve only closed classes.
    method : {"exact", "linearizer", "schweitzer"}, default "exact"
        The solver of the closed part (``multiclass_mva`` or ``approximate_multiclass_mva``).

    Returns
    -------
    MulticlassResult
        Every class, closed first; ``method`` names the closed part's solver.

    Raises
    ------
    InputError
        A class is both closed and open, a c-server station carries open load, the open classes saturate a station,
        or an input is out of range.
    """
    from capmodel.models.queueing.multiclass import approximate_multiclass_mva, multiclass_mva

    closed, opened = [str(c) for c in dict(populations)], [str(c) for c in dict(arrival_rates)]
    both = set(closed) & set(opened)
    if both:
        raise InputError(f"class {sorted(both)[0]!r} is both closed (a population) and open (an arrival rate)")
    net = build_network(demands, servers, classes=closed + opened)
    lam = class_vector(arrival_rates, opened, "arrival_rates")
    c = _servers(net)
    d_open = net.demands[:, len(closed):]
    u_open = d_open @ lam / np.where(np.isfinite(c), c, 1.0)
    for k in np.flatnonzero((c > 1) & np.isfinite(c) & (u_open > 0)):
        raise InputError(f"station {net.stations[k]} has {int(c[k])} servers and open load: the mixed solution is "
                         "exact for single-server queues and delays only")
    _check_stable(net, u_open, c, "the open classes")
    slow = np.where(c == 1, 1.0 / (1.0 - u_open), 1.0)
    closed_demands = {s: {cls: net.demands[k, i] * slow[k] for i, cls in enumerate(closed)}
                      for k, s in enumerate(net.stations)}
    kinds = {s: (net.kinds[k] if net.kinds[k] not in (QUEUE,) else 1) for k, s in enumerate(net.stations)}
    if method == "exact":
        part = multiclass_mva(closed_demands, populations, think_times, kinds)
    else:
        part = approximate_multiclass_mva(closed_demands, populations, think_times, kinds, method=method)
    q_closed = part.queue_length.sum(axis=1).to_numpy()
    open_residence = np.where(np.isfinite(c)[:, None], d_open * ((1.0 + q_closed) * slow)[:, None], d_open)
    residence = np.hstack([part.residence_time.to_numpy(), open_residence])
    x = np.concatenate([part.throughput.to_numpy(), lam])
    u = net.demands @ x / np.where(np.isfinite(c), c, 1.0)
    nan_open, nan_closed = np.full(len(opened), np.nan), np.full(len(closed), np.nan)
    return MulticlassResult(net, x, residence, u, f"mixed network ({part.method} for the closed classes)",
                            populations=np.concatenate([part.populations.to_numpy(float), nan_open]),
                            think_times=np.concatenate([part.think_times.to_numpy(), nan_open]),
                            arrival_rates=np.concatenate([nan_closed, lam]))
