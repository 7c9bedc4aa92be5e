"""Per-interval samples -> the curve table (DESIGN.md): one row per usable interval, with its concurrency derived
by Little's law.

Over an interval, a class of operations (reads, writes, commands) ran at X ops/s with mean latency R, so on average
N = X * R of them were inside the server at once (Little's law; Lazowska et al., *Quantitative System Performance*,
1984, ch. 3). The total is the sum over the classes; its mean latency the ops-weighted mean. That (N, X) pair is one
point of the server's own scalability curve, measured under the load it actually had. The operations are the
clients': the replication operations a member serves to others are taken out of their class, rate and latency
(``capmodel.observe.clients``).
"""
from __future__ import annotations

import numpy as np

from capmodel.data.curve_columns import CLASS_CONCURRENCY, CLASS_LATENCY, CLASS_THROUGHPUT, OPERATION_CLASSES
from capmodel.observe.clients import CLIENT_INPUTS, client_classes
from capmodel.observe.columns import Columns

SOURCE = "observed"
#: the samples' columns the curve is derived from
CURVE_INPUTS = ("time", "dropped", *CLIENT_INPUTS)


def curve_from_samples(samples):
    """The curve table (a pandas DataFrame) of a samples DataFrame (see ``curve_columns``)."""
    import pandas as pd

    rows = len(samples)
    given = {name: samples[name].to_numpy() for name in CURVE_INPUTS if rows and name in samples and name != "dropped"}
    given["dropped"] = samples["dropped"].astype(object).fillna("").to_numpy() if rows else None
    columns, kept = _curve(given, rows, busy_only=False)
    if not kept:
        columns["time"] = []
    curve = pd.DataFrame(columns)
    curve["source"] = SOURCE
    return curve[curve["concurrency"] > 0].reset_index(drop=True)


def curve_columns(samples, served_s: dict | None = None) -> Columns:
    """The curve table of the usable intervals (``dropped`` empty) of ``samples`` (a ``Columns`` of observe's
    samples): ``time``, ``concurrency``, ``throughput``, ``latency_mean_ms``, per class ``concurrency_<class>``,
    ``throughput_<class>``, ``latency_<class>_ms``, and ``source = "observed"``; the intervals with operations in
    the server (concurrency > 0). ``served_s``: for ``samples`` a block of a table's rows, the table's
    ``clients.served_latencies`` (the curve of each block is then that block's rows of the table's)."""
    columns, kept = _curve(samples, len(samples), busy_only=True, served_s=served_s)
    columns["source"] = np.full(kept, SOURCE, dtype=object)
    return Columns(columns, kept)


def _curve(samples, rows: int, busy_only: bool, served_s: dict | None = None) -> tuple[dict, int]:
    """The curve's columns of the usable intervals (``busy_only``: of those with concurrency > 0), and how many."""
    def column(name: str, dtype=float) -> np.ndarray:
        return np.asarray(samples[name], dtype=dtype) if rows else np.zeros(0, dtype=dtype)

    total_x = np.zeros(rows)
    total_n = np.zeros(rows)
    per_class = {}
    classes = client_classes(samples, np.ones(rows, dtype=bool), served_s)[0] if rows else {}
    for name in OPERATION_CLASSES:
        x, r_ms = classes[name] if rows else (column(f"{name}_per_s"), column(f"{name}_latency_ms"))
        n = np.where(x > 0, x * np.nan_to_num(r_ms) / 1000.0, 0.0)        # Little's law, N = X * R
        per_class[name] = (n, x, r_ms)
        total_x += np.nan_to_num(x)
        total_n += n
    keep = column("dropped", object) == ""
    if busy_only:
        keep &= total_n > 0
    columns = {"time": samples["time"][keep] if rows else np.zeros(0, dtype="datetime64[ms]")}
    total_x, total_n = total_x[keep], total_n[keep]
    with np.errstate(divide="ignore", invalid="ignore"):
        columns["concurrency"] = total_n
        columns["throughput"] = total_x
        columns["latency_mean_ms"] = np.where(total_x > 0, total_n / total_x * 1000.0, np.nan)
    for name, (n, x, r_ms) in per_class.items():
        columns[CLASS_CONCURRENCY.named(name)] = n[keep]
        columns[CLASS_THROUGHPUT.named(name)] = x[keep]
        columns[CLASS_LATENCY.named(name)] = r_ms[keep]
    return columns, int(keep.sum())
