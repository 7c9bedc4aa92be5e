"""Brute-force continuous-time Markov chains of small multi-class queueing networks, for checking the MVA solvers.

Every state (where each customer is) is enumerated and the global balance equations pi Q = 0 are solved with sparse
linear algebra. Nothing here uses the mean-value recursions: it is the independent reference the tests compare to.
"""
from __future__ import annotations

import itertools

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.linalg import spsolve


def compositions(total: int, parts: int):
    """Every way to place ``total`` identical customers into ``parts`` slots."""
    for cuts in itertools.combinations(range(total + parts - 1), parts - 1):
        edges = (-1,) + cuts + (total + parts - 1,)
        yield tuple(edges[i + 1] - edges[i] - 1 for i in range(parts))


def stationary(states, transitions):
    """pi over ``states`` from a list of (from_index, to_index, rate)."""
    size = len(states)
    rows, cols, rates = zip(*transitions) if transitions else ((), (), ())
    q = coo_matrix((rates, (rows, cols)), shape=(size, size)).tocsr()
    q = q - coo_matrix((np.asarray(q.sum(axis=1)).ravel(), (range(size), range(size))), shape=(size, size))
    a = q.T.tolil()
    a[0, :] = 1.0  # replace one balance equation by the normalisation
    b = np.zeros(size)
    b[0] = 1.0
    return spsolve(a.tocsr(), b)


def station_rate(kind, n_total: int) -> float:
    """Total service rate multiplier with n_total present: 1 for a queue, alpha(n) for a load-dependent station."""
    if kind == "queue":
        return 1.0
    if isinstance(kind, int):
        return float(min(n_total, kind))
    return float(kind(n_total))


def closed_network(demands, populations, think_times, kinds):
    """Mixed-class closed network: class c cycles think -> every station with D[k, c] > 0 (in order) -> think.

    ``demands`` K x C, ``kinds`` per station: "queue" (one server, processor sharing), "delay", an int c (c servers,
    processor sharing), or a function alpha(n). Service of class c at station k is exponential with mean D[k, c]
    scaled by the station's rate. Returns throughput per class and the mean queue length matrix K x C.
    """
    d = np.asarray(demands, dtype=float)
    k_all, c_all = d.shape
    routes = [[k for k in range(k_all) if d[k, c] > 0] for c in range(c_all)]
    slots = k_all + 1  # the last slot: thinking
    per_class = []
    for c in range(c_all):  # a class's customers can only be where its route goes
        where = routes[c] + ([k_all] if think_times[c] > 0 else [])
        per_class.append([tuple(dict(zip(where, comp)).get(k, 0) for k in range(slots))
                          for comp in compositions(populations[c], len(where))])
    states = list(itertools.product(*per_class))
    index = {s: i for i, s in enumerate(states)}
    transitions, completions = [], np.zeros((len(states), c_all))
    for s, i in index.items():
        totals = [sum(s[c][k] for c in range(c_all)) for k in range(k_all)]
        for c in range(c_all):
            route = routes[c] + ([k_all] if think_times[c] > 0 else [])
            for pos, k in enumerate(route):
                here = s[c][k]
                if not here:
                    continue
                if k == k_all:
                    rate = here / think_times[c]
                elif kinds[k] == "delay":
                    rate = here / d[k, c]
                else:
                    rate = here / totals[k] * station_rate(kinds[k], totals[k]) / d[k, c]
                nxt = route[(pos + 1) % len(route)]
                if k == (routes[c][-1] if routes[c] else k_all):  # a cycle ends when it leaves its last station
                    completions[i, c] += rate
                t = [list(v) for v in s]
                t[c][k] -= 1
                t[c][nxt] += 1
                transitions.append((i, index[tuple(map(tuple, t))], rate))
    pi = stationary(states, transitions)
    occupancy = np.array([[s[c][k] for k in range(k_all) for c in range(c_all)] for s in states], dtype=float)
    queue = (pi @ occupancy).reshape(k_all, c_all)
    return pi @ completions, queue
