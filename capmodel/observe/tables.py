"""Per-interval samples -> the curve table (DESIGN.md): one row per usable interval, with its concurrency derived
by Little's law.

Over an interval, a class of operations (reads, writes, commands) ran at X ops/s with mean latency R, so on average
N = X * R of them were inside the server at once (Little's law; Lazowska et al., *Quantitative System Performance*,
1984, ch. 3). The total is the sum over the classes; its mean latency the ops-weighted mean. That (N, X) pair is one
point of the server's own scalability curve, measured under the load it actually had.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from capmodel.data.curve_columns import CLASS_CONCURRENCY, CLASS_LATENCY, CLASS_THROUGHPUT
from capmodel.observe.serverstatus import CLASSES

SOURCE = "observed"


def curve_from_samples(samples: pd.DataFrame) -> pd.DataFrame:
    """The curve table of the usable intervals (``dropped`` empty), in the columns ``capmodel.data.curve_columns``
    declares for observe (and in its order): ``time``, ``concurrency``, ``throughput``, ``latency_mean_ms``, per class
    ``concurrency_<class>``, ``throughput_<class>``, ``latency_<class>_ms``, and ``source = "observed"``."""
    usable = samples[samples["dropped"].astype(object).fillna("") == ""] if len(samples) else samples
    columns = {"time": usable["time"].to_numpy() if len(usable) else []}
    total_x = np.zeros(len(usable))
    total_n = np.zeros(len(usable))
    per_class = {}
    for name in CLASSES:
        x = usable[f"{name}_per_s"].to_numpy(dtype=float) if len(usable) else np.zeros(0)
        r_ms = usable[f"{name}_latency_ms"].to_numpy(dtype=float) if len(usable) else np.zeros(0)
        n = np.where(x > 0, x * np.nan_to_num(r_ms) / 1000.0, 0.0)        # Little's law, N = X * R
        per_class[name] = (n, x, r_ms)
        total_x += np.nan_to_num(x)
        total_n += n
    with np.errstate(divide="ignore", invalid="ignore"):
        columns["concurrency"] = total_n
        columns["throughput"] = total_x
        columns["latency_mean_ms"] = np.where(total_x > 0, total_n / total_x * 1000.0, np.nan)
    for name, (n, x, r_ms) in per_class.items():
        columns[CLASS_CONCURRENCY.named(name)] = n
        columns[CLASS_THROUGHPUT.named(name)] = x
        columns[CLASS_LATENCY.named(name)] = r_ms
    curve = pd.DataFrame(columns)
    curve["source"] = SOURCE
    return curve[curve["concurrency"] > 0].reset_index(drop=True)
