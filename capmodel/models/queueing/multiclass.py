"""Mean Value Analysis of closed multi-class product-form networks: exact, Bard-Schweitzer and Linearizer.

``multiclass_mva``: the exact recursion over population vectors (Reiser and Lavenberg 1980; Lazowska et al.,
"Quantitative System Performance", 1984, ch. 7): with n the population vector and e_c one class-c customer,
    R_kc(n) = D_kc (1 + Q_k(n - e_c))     at a queue (arrival theorem),   D_kc at a delay station,
    X_c(n)  = n_c / (Z_c + sum_k R_kc(n)),   Q_k(n) = sum_c X_c(n) R_kc(n),
and load-dependent stations as in ``mva_loaddep``. It visits every vector 0 <= n <= N, prod(N_c + 1) of them, one
level of total population at a time (vectorised); above ``max_states`` it refuses and names the approximate solver.

``approximate_multiclass_mva``: one fixed point per population instead of the whole lattice.
- Bard-Schweitzer: Q_kj(N - e_c) ~ (N_j - [j = c]) / N_j * Q_kj(N).
- Linearizer (Chandy and Neuse, "Linearizer: a heuristic algorithm for queueing network models of computing
  systems", CACM 25(2), 1982): the same with a correction F_kjc = Q_kj(N - e_c) / (N - e_c)_j - Q_kj(N) / N_j,
  estimated by solving the populations N - e_c as well, three rounds.
Both handle queues, delays and c-server stations by Seidmann's transformation (A. Seidmann, P. Schweitzer and
S. Shalev-Oren, "Computerized closed queueing network models of flexible manufacturing systems", Large Scale Systems
12, 1987; as in Menasce, Almeida and Dowdy, "Performance by Design", 2004, ch. 15): the station becomes a single
queue of demand D/c in series with a delay of D (c-1)/c, and only the customers in the queue part count in the
arrival theorem. Other load-dependent stations need the exact solver.
"""
from __future__ import annotations

import numpy as np

from capmodel.errors import CapmodelError, InputError, shown
from capmodel.models.queueing.laws import MAX_SECONDS
from capmodel.models.queueing.load_dependent import LoadDependent, residence_factor
from capmodel.models.queueing.network import DELAY, QUEUE, MulticlassResult, Network, build_network, class_vector

DEFAULT_MAX_STATES = 2_000_000
DEFAULT_MAX_CELLS = 50_000_000  # 400 MB of float64
MAX_LEVEL_STEPS = 40_000  # total population x 2^(load-dependent stations): the recursion's Python-level steps
MAX_APPROXIMATE_WORK = 5_000_000  # stations x classes^2 x fixed points: about 10 s on one core


def closed_network(demands, populations, think_times=None, servers=None):
    """(network, N, Z) checked: every class with customers can complete (a demand somewhere or a think time)."""
    if not isinstance(populations, dict) or not populations:
        raise InputError("populations must be a mapping {class: number of customers}")
    order = [str(c) for c in populations]
    net = build_network(demands, servers, classes=order)
    n = class_vector(populations, net.classes, "populations", integer=True)
    z = class_vector(think_times, net.classes, "think_times", default=0.0, high=MAX_SECONDS)
    stuck = [c for i, c in enumerate(net.classes) if n[i] > 0 and z[i] == 0 and not np.any(net.demands[:, i] > 0)]
    if stuck:
        raise InputError(f"class {stuck[0]!r} has no service demand anywhere and no think time: its throughput "
                         "would be infinite")
    return net, n, z


class _Lattice:
    """Every population vector 0 <= n <= N, flat-indexed (C order), grouped by total population."""

    def __init__(self, populations: np.ndarray):
        self.top = populations
        self.stride = np.array([int(np.prod(populations[c + 1:] + 1)) for c in range(len(populations))])
        self.n = np.indices(tuple(populations + 1)).reshape(len(populations), -1).T
        total = self.n.sum(axis=1)
        order = np.argsort(total, kind="stable")
        bounds = np.searchsorted(total[order], np.arange(int(populations.sum()) + 2))
        self.levels = [order[bounds[t]:bounds[t + 1]] for t in range(1, int(populations.sum()) + 1)]
        self.size = len(self.n)


def _flat(kind: LoadDependent, n_total: int) -> int | None:
    """Where alpha stops growing, if that is within the population (c servers for N >= c customers); None when it
    never does or only beyond N (then the station never sees more than N requests: the full marginals are short)."""
    return kind.flat_from if kind.flat_from is not None and kind.flat_from <= n_total else None


def exact_cells(net: Network, populations: np.ndarray) -> float:
    """Numbers the exact recursion keeps in memory: per population vector, X and Q, plus each load-dependent
    station's marginals (width min(c, N) + 1, or N + 1), over the network and its 2^L sub-networks without them."""
    n_total = int(populations.sum())
    states = float(np.exp(np.sum(np.log1p(populations.astype(float)))))
    ld = [kind for kind in net.kinds if isinstance(kind, LoadDependent)]
    widths = sum((_flat(kind, n_total) or n_total) + 1 for kind in ld)
    return states * (len(net.classes) + len(net.stations) + widths) * 2.0 ** len(ld)


def _exact(net: Network, z: np.ndarray, lattice: _Lattice, memo: dict) -> dict:
    """X (states x classes), Q (states x stations) and the marginals of load-dependent stations over the lattice."""
    key = net.stations
    if key in memo:
        return memo[key]
    k_all, n_classes, n_total = len(net.stations), len(net.classes), int(lattice.top.sum())
    d = net.demands
    queue = [k for k in range(k_all) if net.kinds[k] == QUEUE]
    delay = [k for k in range(k_all) if net.kinds[k] == DELAY]
    ld = {k: kind for k, kind in enumerate(net.kinds) if isinstance(kind, LoadDependent)}
    alpha: dict[int, np.ndarray] = {}
    width: dict[int, int] = {}
    without: dict[int, np.ndarray] = {}
    trapped: dict[int, list[int]] = {}
    flat = {k: _flat(kind, n_total) for k, kind in ld.items()}
    for k, kind in ld.items():
        flat_from = flat[k]
        width[k] = flat_from if flat_from is not None else n_total + 1
        alpha[k] = kind.alpha(max(width[k], 1))
        without[k] = _exact(net.without(k), z, lattice, memo)["X"]
        # classes with no think time and no demand but at k: while one is present, k is never empty (p_k(0|n) = 0;
        # the network without k has no place for them, its throughputs there are meaningless and never used)
        trapped[k] = [c for c in range(n_classes) if z[c] == 0 and not np.any(np.delete(d[:, c], k) > 0)]
    x_all = np.zeros((lattice.size, n_classes))
    q_all = np.zeros((lattice.size, k_all))
    # p_k(0..width-1 | n), plus the mean queue length as a last column for the closed-form tail (flat stations)
    marg = {k: np.zeros((lattice.size, width[k] + (1 if flat[k] is not None else 0))) for k in ld}
    for k in ld:
        marg[k][0, 0] = 1.0
    residence = np.zeros((1, k_all, n_classes))
    with np.errstate(divide="ignore", invalid="ignore"):
        for idx in lattice.levels:
            n = lattice.n[idx]
            residence = np.zeros((len(idx), k_all, n_classes))
            preds = [np.where(n[:, c] > 0, idx - lattice.stride[c], idx) for c in range(n_classes)]
            for c, pred in enumerate(preds):
                residence[:, queue, c] = d[queue, c] * (1.0 + q_all[pred][:, queue])
                residence[:, delay, c] = d[delay, c]
                for k, kind in ld.items():
                    factor = residence_factor(marg[k][pred], alpha[k], flat[k], n_total)
                    residence[:, k, c] = d[k, c] * factor
            cycle = z + residence.sum(axis=1)
            x = np.where(n > 0, n / cycle, 0.0)
            x_all[idx] = x
            q_all[idx] = np.einsum("mkc,mc->mk", residence, x)
            for k in ld:
                m = width[k]
                new = np.zeros((len(idx), marg[k].shape[1]))
                for c, pred in enumerate(preds):
                    new[:, 1:m] += (d[k, c] * x[:, c])[:, None] * marg[k][pred, : m - 1]
                new[:, 1:m] /= alpha[k][: m - 1][None, :] if m > 1 else 1.0
                # p(0 | n) = p(0 | n - e_c) X_c(n) / X_c^{-k}(n) for a class c present in n (last one wins),
                # then 0 wherever a class trapped at k is present
                for c, pred in enumerate(preds):
                    if c in trapped[k]:
                        continue
                    present = n[:, c] > 0
                    ratio = np.where(np.isinf(without[k][idx, c]), 0.0, x[:, c] / without[k][idx, c])
                    new[present, 0] = marg[k][pred[present], 0] * ratio[present]
                for c in trapped[k]:
                    new[n[:, c] > 0, 0] = 0.0
                if flat[k] is not None:
                    new[:, m] = q_all[idx, k]
                marg[k][idx] = new
    out = {"X": x_all, "Q": q_all, "marginals": marg, "residence": residence[-1]}
    memo[key] = out
    return out


def _width(kind: LoadDependent, n_total: int) -> int:
    flat = _flat(kind, n_total)
    return flat if flat is not None else n_total + 1


def _absent_classes(net: Network, populations: np.ndarray, residence: np.ndarray, queue: np.ndarray,
                    marginals: dict, last: int) -> np.ndarray:
    """``residence`` with the columns of classes that have no customers filled in as the approximate solvers fill
    them: what one arriving customer of the class would see (the arrival theorem: the network at population N),
    D (1 + Q_k(N)) at a queue, D at a delay, D sum_j j/alpha(j) p(j-1 | N) at a load-dependent station. (The
    recursion itself never meets such a customer and would leave D alone, as if the network were empty.)"""
    absent = np.flatnonzero(populations == 0)
    if not len(absent):
        return residence
    out = np.array(residence, dtype=float, copy=True)
    d, n_total = net.demands, int(populations.sum())
    for k, kind in enumerate(net.kinds):
        if kind == QUEUE:
            out[k, absent] = d[k, absent] * (1.0 + queue[k])
        elif kind == DELAY:
            out[k, absent] = d[k, absent]
        else:
            width = _width(kind, n_total)
            factor = residence_factor(marginals[k][[last]], kind.alpha(max(width, 1)), _flat(kind, n_total), n_total)
            out[k, absent] = d[k, absent] * float(factor[0])
    return out


def _station_utilization(net: Network, x: np.ndarray, marginals: dict, last: int) -> np.ndarray:
    u = net.demands @ x
    for k, kind in enumerate(net.kinds):
        if isinstance(kind, LoadDependent):
            u[k] = u[k] / kind.servers if kind.servers else 1.0 - marginals[k][last, 0]
    return u


def multiclass_mva(demands, populations, think_times=None, servers=None, max_states: int = DEFAULT_MAX_STATES,
                   max_cells: int = DEFAULT_MAX_CELLS):
    """Exact multi-class MVA of a closed network: the recursion over every population vector.

    Parameters
    ----------
    demands : mapping
        ``{station: {class: D}}``, the service demand of each class at each station, in seconds per request.
    populations : mapping
        ``{class: customers}``, whole numbers >= 0.
    think_times : mapping, optional
        ``{class: Z}`` in seconds (default 0 for every class).
    servers : mapping, optional
        ``{station: kind}``: a server count, ``"delay"`` (no queueing) or a ``LoadDependent`` station
        (``multi_server``, ``rate_function``, ``usl_station``); default 1, a single-server queue.
    max_states : int, default 2000000
        The most population vectors (∏(N_c + 1)) to visit.
    max_cells : int, default 50000000
        The most numbers to keep (vectors × stations, classes and the marginals of load-dependent stations).

    Returns
    -------
    MulticlassResult
        Throughput and response time per class, residence time, queue length and utilization per station, the
        bottleneck, ``table``, ``station_table()`` and ``describe()``.

    Raises
    ------
    InputError
        An input is out of range, a class has no demand and no think time, or the work exceeds ``max_states``,
        ``max_cells`` or the recursion's step limit (the message names the approximate solver); raised before any work.
    CapmodelError
        No finite solution.

    See Also
    --------
    approximate_multiclass_mva : Linearizer or Bard-Schweitzer, at a cost independent of the populations.

    Examples
    --------
    >>> from capmodel.models.queueing.multiclass import multiclass_mva
    >>> result = multiclass_mva({"cpu": {"read": 0.002, "write": 0.004}, "disk": {"read": 0.001, "write": 0.006}},
    ...                         populations={"read": 20, "write": 5}, think_times={"read": 0.05, "write": 0.05})
    >>> result.throughput.round(1).to_dict(), result.bottleneck
    ({'read': 321.4, 'write': 60.1}, 'cpu')
    >>> result.describe()
    'exact MVA: read: 321.4 ops/s at 12.2 ms; write: 60.14 ops/s at 33.1 ms. Bottleneck: cpu (utilization 88.3%).'
    """
    net, n, z = closed_network(demands, populations, think_times, servers)
    log_states = float(np.sum(np.log1p(n.astype(float))))
    if log_states > np.log(max_states) + 1e-9:
        count = f"{np.exp(log_states):,.0f}" if log_states < 700 else f"about 10^{log_states / np.log(10):,.0f}"
        raise InputError(
            f"exact multi-class MVA over populations {shown(dict(zip(net.classes, n.tolist())), 200)} visits "
            f"{count} population vectors, more than max_states = {max_states:,}; use approximate_multiclass_mva "
            "(method='linearizer' or 'schweitzer') or raise max_states")
    steps = int(n.sum()) * 2 ** sum(isinstance(k, LoadDependent) for k in net.kinds)
    if steps > MAX_LEVEL_STEPS:
        raise InputError(
            f"exact multi-class MVA over {int(n.sum()):,} customers steps through {steps:,} population levels "
            f"(customers x 2^load-dependent stations), more than {MAX_LEVEL_STEPS:,}; use approximate_multiclass_mva "
            "(method='linearizer' or 'schweitzer')")
    cells = exact_cells(net, n)
    if cells > max_cells:
        raise InputError(
            f"exact multi-class MVA would keep {cells:,.0f} numbers ({cells * 8 / 2**30:,.1f} GiB: population "
            f"vectors x stations, classes and the marginals of {sum(isinstance(k, LoadDependent) for k in net.kinds)}"
            f" load-dependent station(s)), more than max_cells = {max_cells:,}; use approximate_multiclass_mva "
            "(c-server stations by Seidmann's transformation) or raise max_cells")
    lattice = _Lattice(n)
    if lattice.size == 1:  # nobody in the network: each class's residence is what a lone customer would see
        empty = {k: np.eye(1, _width(kind, 0) + (_flat(kind, 0) is not None)) for k, kind in enumerate(net.kinds)
                 if isinstance(kind, LoadDependent)}
        zeros = np.zeros((len(net.stations), len(net.classes)))
        residence = _absent_classes(net, n, zeros, np.zeros(len(net.stations)), empty, 0)
        return MulticlassResult(net, np.zeros(len(net.classes)), residence, np.zeros(len(net.stations)),
                                "exact MVA", populations=n, think_times=z)
    sol = _exact(net, z, lattice, {})
    last = lattice.size - 1
    x = sol["X"][last]
    residence = _absent_classes(net, n, sol["residence"], sol["Q"][last], sol["marginals"], last)
    utilization = _station_utilization(net, x, sol["marginals"], last)
    return MulticlassResult(net, x, residence, utilization, "exact MVA", populations=n, think_times=z)


# --- approximate ---------------------------------------------------------------------------------------------------

def _split_for_approximation(net: Network) -> tuple[np.ndarray, np.ndarray]:
    """(queueing part, delay part) of the demands; c-server stations by Seidmann's approximation."""
    queueing = np.zeros_like(net.demands)
    delay = np.zeros_like(net.demands)
    for k, kind in enumerate(net.kinds):
        if kind == QUEUE:
            queueing[k] = net.demands[k]
        elif kind == DELAY:
            delay[k] = net.demands[k]
        elif kind.servers:
            queueing[k] = net.demands[k] / kind.servers
            delay[k] = net.demands[k] * (kind.servers - 1) / kind.servers
        else:
            raise InputError(f"station {net.stations[k]} is load-dependent ({kind.label}): the approximate solvers "
                             "handle queues, delays and c-server stations only; use multiclass_mva (exact)")
    return queueing, delay


def _core(n, z, dq, dd, correction, queue, tolerance, max_iterations):
    """Fixed point of the approximate MVA equations at population n with the Linearizer correction F[k, j, c].

    ``queue`` (and what is returned as the queue) counts only the customers in the queueing part dq of each station:
    in Seidmann's transformation a c-server station is a queue of demand D/c in series with a delay of D (c-1)/c, and
    an arriving customer waits behind those at the queue, never behind those in the delay.
    """
    n = n.astype(float)
    removed = n[:, None] - np.eye(len(n))  # removed[j, c] = (n - e_c)_j
    scale = max(1.0, n.sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        for _ in range(max_iterations):
            share = np.where(n > 0, queue / n, 0.0)
            arrival = np.einsum("jc,kjc->kc", np.clip(removed, 0, None), share[:, :, None] + correction)
            queued = dq * (1.0 + arrival)
            residence = queued + dd
            x = np.where(n > 0, n / (z + residence.sum(axis=0)), 0.0)
            new = queued * x  # customers in the queueing part only: the delay part of a c-server station never queues
            change = np.max(np.abs(new - queue))
            queue = new
            if change < tolerance * scale:
                return queue, x, residence
    raise CapmodelError(f"approximate MVA did not converge for populations {n.astype(int).tolist()} within "
                        f"{max_iterations} iterations; use multiclass_mva (exact) or loosen the tolerance")


def approximate_multiclass_mva(demands, populations, think_times=None, servers=None, method: str = "linearizer",
                               tolerance: float = 1e-10, max_iterations: int = 100_000, rounds: int = 3):
    """Approximate multi-class MVA: Linearizer or Bard-Schweitzer (APPROXIMATE).

    The cost does not depend on the populations: one fixed point (Bard-Schweitzer) or 1 + ``rounds`` × (C + 1) fixed
    points for C classes (Linearizer). c-server stations are handled by Seidmann's transformation; other load-dependent
    stations need ``multiclass_mva``. Compare with ``multiclass_mva`` where the lattice is small enough.

    Parameters
    ----------
    demands, populations, think_times, servers
        As for ``multiclass_mva``.
    method : {"linearizer", "schweitzer"}, default "linearizer"
        The approximation.
    tolerance : float, default 1e-10
        The fixed point's convergence threshold, relative to the total population.
    max_iterations : int, default 100000
        The iterations allowed per fixed point.
    rounds : int, default 3
        Linearizer's correction rounds.

    Returns
    -------
    MulticlassResult
        As ``multiclass_mva`` returns it, its ``method`` naming the approximation.

    Raises
    ------
    InputError
        An unknown ``method``, an input out of range, a load-dependent station other than c servers, or more work than
        the solver's limit.
    CapmodelError
        A fixed point did not converge within ``max_iterations``, or no finite solution.
    """
    if method not in ("schweitzer", "linearizer"):
        raise InputError(f"method must be 'schweitzer' or 'linearizer', got {method!r}")
    net, n, z = closed_network(demands, populations, think_times, servers)
    dq, dd = _split_for_approximation(net)
    k_all, c_all = dq.shape
    work = k_all * c_all * c_all * ((c_all + 1) * rounds + 1 if method == "linearizer" else 1)
    if work > MAX_APPROXIMATE_WORK:
        raise InputError(f"{method} over {k_all:,} stations and {c_all} classes: {work:,} terms per iteration "
                         f"round (stations x classes^2 x fixed points), more than {MAX_APPROXIMATE_WORK:,}; "
                         + ("use method='schweitzer' or " if method == "linearizer" else "") + "merge classes")

    def start(pop):
        weight = dq / np.where((dq + dd).sum(axis=0) > 0, (dq + dd).sum(axis=0), 1.0)
        return weight * pop

    correction = np.zeros((k_all, c_all, c_all))
    queue, x, residence = _core(n, z, dq, dd, correction, start(n), tolerance, max_iterations)
    if method == "linearizer":
        for _ in range(rounds):
            removed = {}
            for c in range(c_all):
                if n[c] > 0:
                    pop = n - np.eye(c_all, dtype=int)[c]
                    removed[c] = _core(pop, z, dq, dd, correction, start(pop), tolerance, max_iterations)[0]
            with np.errstate(divide="ignore", invalid="ignore"):
                base = np.where(n > 0, queue / n, 0.0)
                for c, q_less in removed.items():
                    pop = n - np.eye(c_all, dtype=int)[c]
                    correction[:, :, c] = np.where(pop > 0, q_less / pop, 0.0) - np.where(pop > 0, base, 0.0)
            queue, x, residence = _core(n, z, dq, dd, correction, queue, tolerance, max_iterations)
    utilization = np.zeros(k_all)
    for k, kind in enumerate(net.kinds):
        servers_k = kind.servers if isinstance(kind, LoadDependent) else 1
        utilization[k] = net.demands[k] @ x / servers_k
    name = "Linearizer approximate MVA" if method == "linearizer" else "Bard-Schweitzer approximate MVA"
    return MulticlassResult(net, x, residence, utilization, name, populations=n, think_times=z)
