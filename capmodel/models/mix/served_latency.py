"""The mean latency of the replication operations a sync source serves, told apart from its clients' operations of the
same ``opLatencies`` class (oplog getMores among the reads, ``replSetUpdatePosition`` reports among the commands).

numpy alone (no pandas or scipy), so that ``observe --ftdc`` can take served replication out of a primary's curve
without importing them. ``capmodel.models.mix.intervals.split_replication`` states the rule; this is its arithmetic.
"""
from __future__ import annotations

import numpy as np

#: observe's replication columns (``capmodel.observe.serverstatus``): oplog getMores and position reports a sync
#: source serves, and the oplog entries a member applied
APPLIED = "repl_applied_per_s"
#: the replication operations a sync source serves, by the class ``opLatencies`` counts them in
SERVED = {"reads": "oplog_getmores_per_s", "commands": "repl_update_position_per_s"}
#: the fewest intervals a fit of the mix what-if (and this regression) takes
MIN_INTERVALS = 5
#: the replication operations' own latency is read where the clients' are at most this share of their class
PURE_SHARE = 0.01


def served_latency(summed: np.ndarray, clients: np.ndarray, served: np.ndarray, total: np.ndarray) -> float:
    """The served operations' mean latency (s), from per-interval ``summed`` latency (s per s), the ``clients``' and
    the ``served`` operations' rates and their ``total``: a least-squares regression of the summed latency on the
    two rates where the clients' share varies by 0.1 or more over MIN_INTERVALS intervals or more and both
    coefficients come out positive (there the non-negative fit is the ordinary one); else the class's mean latency
    over the intervals where the clients are at most PURE_SHARE of it, in MIN_INTERVALS or more; else NaN."""
    summed, clients, served, total = (np.asarray(a, dtype=float) for a in (summed, clients, served, total))
    ok = np.isfinite(summed) & (served > 0) & (total > 0)
    if ok.sum() >= MIN_INTERVALS and np.ptp(clients[ok] / total[ok]) >= 0.1:
        design = np.column_stack([clients[ok], served[ok]])
        scale = np.maximum(np.abs(design).max(axis=0), 1e-300)
        (own, theirs), *_ = np.linalg.lstsq(design / scale, summed[ok], rcond=None)
        own, theirs = own / scale[0], theirs / scale[1]
        if own > 0 and theirs > 0:
            return float(theirs)
    pure = ok & (clients <= PURE_SHARE * total)
    if pure.sum() >= MIN_INTERVALS:
        return float(summed[pure].sum() / total[pure].sum())
    return float("nan")
