"""What a curve table must be before any model is fitted to it, and what its own columns say against it: the rules
every fit runs (``capmodel.models.usl.engine.fit_model``), so the Python API, the CLI, plans, nodes, shards and the
reports refuse or grade the same table alike.

Refused (``InputError``, naming the column and the labels):

- **several curves** in one table: rows labelled with more than one ``system``, ``workload`` or ``op``;
- **parts of one step**: the rows at each concurrency are one measurement split by load-generator host (each host
  its share of the clients and of the throughput), not replicates of it. Told by a column that labels the rows with
  the same k >= 2 values at every concurrency, each once, when the column names a host (``host``, ``client_host``,
  ``load_generator``, ``worker``, ``machine`` ...) or, whatever its name, when Little's law puts about 1/k of the
  clients in flight per row (``IN_FLIGHT_PARTS``): each row then carries a k-th of the step. Fitted as replicates
  they give one host's share of the server's throughput as its peak.

Graded (a ``Reason`` each; capmodel.models.usl.verdict.assessment gathers them):

- ``client_bound``: steps the bench flagged client-bound measured the load generator (all: unusable; some: weak);
- ``below_one``: observed points with fewer than one operation in flight (any: weak; half or more: unusable);
- ``in_flight``: throughput × mean latency against the concurrency, both ways (capmodel.models.usl.verdict.little);
- ``wide_span``: a throughput spanning more than six orders of magnitude (a unit error or an outlier).
"""
from __future__ import annotations

import math

import numpy as np

from capmodel.errors import InputError
from capmodel.formatting import number
from capmodel.models.evidence import NextStep, Reason

CLIENT_BOUND_COLUMN = "client_bound"
BELOW_ONE_SHARE_UNUSABLE = 0.5
WIDE_SPAN = 1e6
#: label columns that name one curve each; a table with several is several curves
CURVE_LABELS = ("system", "workload", "op")
#: words in a column's name that say it names the load-generator host a row was measured from
HOST_WORDS = ("host", "generator", "loadgen", "client", "worker", "machine", "agent", "driver", "injector")
#: a column of replicate labels, never parts of a step (the bench's ``repeat``; a reader's ``run``)
REPLICATE_LABELS = ("repeat", "replicate", "run", "trial", "iteration", "rep")
#: rows whose in-flight share (X·R/N) lies within this factor of 1/k, k rows at each concurrency, are parts of a step
IN_FLIGHT_PARTS = 1.5


def check_one_curve(curve) -> None:
    """Refuse a table that holds several curves (different ``system``, ``workload`` or ``op`` labels)."""
    keys = [k for k in CURVE_LABELS if k in curve.columns]
    if not keys:
        return
    groups = curve[keys].astype(str).drop_duplicates()
    if len(groups) > 1:
        shown = "; ".join(", ".join(f"{k}={v}" for k, v in row.items()) for _, row in groups.head(4).iterrows())
        raise InputError(f"holds {len(groups)} curves ({shown}); split the table and fit one curve")


def _names_host(column) -> bool:
    name = str(column).strip().lower().replace("-", "_").replace(" ", "_")
    return name not in REPLICATE_LABELS and any(word in name for word in HOST_WORDS)


def _partitions_each_level(labels, concurrency) -> int:
    """k when every concurrency level holds the same k >= 2 labels, each once (0 otherwise)."""
    frame = labels.astype(str).groupby(concurrency)
    sets = {frozenset(group) for _, group in frame}
    sizes = frame.size()
    if len(sets) != 1 or (frame.nunique() != sizes).any():
        return 0
    k = len(next(iter(sets)))
    return k if k >= 2 and len(sizes) >= 2 else 0


def check_step_parts(curve) -> None:
    """Refuse rows that are parts of one step, one per load-generator host (the module's rule)."""
    from capmodel.models.usl.verdict.little import in_flight_ratio

    if len(curve) < 4:
        return
    level = curve["concurrency"].to_numpy(dtype=float)
    numeric = {"concurrency", "throughput"}
    for column in curve.columns:
        if column in numeric or str(column).strip().lower() in REPLICATE_LABELS + CURVE_LABELS:
            continue
        values = curve[column]
        if values.dtype.kind in "fc":     # a measured figure, not a label
            continue
        k = _partitions_each_level(values, level)
        if not k:
            continue
        said = f"column '{column}' labels the rows at every concurrency with the same {k} values, each once"
        if _names_host(column):
            why = f"{said}, naming {k} load-generator hosts"
        else:
            found = in_flight_ratio(curve)
            if found is None or not 1 / (k * IN_FLIGHT_PARTS) <= found[0] <= IN_FLIGHT_PARTS / k:
                continue
            why = (f"{said}, and by Little's law each row has about 1/{k} of the clients in flight (a share of "
                   f"{number(found[0], 2)})")
        raise InputError(f"{why}: the rows are parts of one step, not replicates; sum each step's throughput and "
                         "clients over the hosts (or fit one host's rows alone)")


def check_curve(curve) -> None:
    """The refusals every fit runs: one curve, not parts of steps."""
    check_one_curve(curve)
    check_step_parts(curve)


def client_bound_steps(curve) -> list[float]:
    """The concurrencies of the steps the bench flagged ``client_bound`` (empty without the column)."""
    if curve is None or CLIENT_BOUND_COLUMN not in curve.columns:
        return []
    flags = curve[CLIENT_BOUND_COLUMN].map(lambda v: str(v).strip().lower() in ("true", "1", "1.0", "yes"))
    return [float(n) for n in curve.loc[flags.to_numpy(), "concurrency"]]


def check_client_bound(curve) -> Reason | None:
    """Steps measured against the client rather than the server: all -> unusable, some -> weak."""
    bound = client_bound_steps(curve)
    if not bound:
        return None
    steps = tuple(sorted(set(bound)))
    advice = NextStep(steps, 1, f"measure the client-bound steps again ({', '.join(number(n, 6) for n in steps)} "
                      "clients) from a separate client host, with more client processes, or without a throughput "
                      "target")
    if len(bound) == len(curve):
        return Reason("client_bound", "unusable", f"every one of the {len(bound)} steps was client-bound (the load "
                      "generator, not the server, set the pace): the curve describes the client", float(len(bound)),
                      advice)
    return Reason("client_bound", "weak", f"{len(bound)} of {len(curve)} steps were client-bound (at "
                  f"{', '.join(number(n, 6) for n in steps)} clients): those points measure the load generator, not "
                  "the server", float(len(bound)), advice)


def check_below_one(concurrency) -> Reason | None:
    """Share of points with fewer than one operation in flight (observed curves): >= half unusable, any weak."""
    n = np.asarray(concurrency, dtype=float)
    if not len(n):
        return None
    share = float(np.mean(n < 1))
    if share == 0:
        return None
    grade = "unusable" if share >= BELOW_ONE_SHARE_UNUSABLE else "weak"
    return Reason("below_one", grade, f"{share:.0%} of the points had fewer than one operation in flight (the "
                  f"largest concurrency measured was {number(float(n.max()))}): the server was mostly idle, so the "
                  "curve shows no contention to locate a peak from", share)


def check_wide_span(throughput) -> Reason | None:
    """Positive throughputs spanning more than ``WIDE_SPAN`` (largest / smallest): one point may decide (weak)."""
    x = np.asarray(throughput, dtype=float)
    positive = x[x > 0]
    if not len(positive) or positive.max() <= WIDE_SPAN * positive.min():
        return None
    orders = math.log10(positive.max() / positive.min())
    return Reason("wide_span", "weak", f"the throughput spans {orders:.0f} orders of magnitude (a unit error or an "
                  "outlier?): one point may decide the whole fit", float(positive.max() / positive.min()))


def curve_reasons(curve, concurrency, throughput) -> list[Reason]:
    """What the curve's own columns say against any answer read off it (the graded rules above)."""
    from capmodel.models.usl.verdict.little import check_in_flight

    found = (check_client_bound(curve), check_below_one(concurrency), check_in_flight(curve),
             check_wide_span(throughput))
    return [r for r in found if r is not None]
