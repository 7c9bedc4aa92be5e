"""The fleet at a glance: one bar per server, the months of runway (or the spare fraction without a growth rate),
coloured by the evidence verdict; a server that failed or cannot be ranked is shown as such, never as a number."""
from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go

from capmodel.formatting import number
from capmodel.models.runway import PAST_TARGET_WORDS
from capmodel.plots.curves import HEIGHT

VERDICT_COLORS = {"sound": "#2ca02c", "weak": "#ff7f0e", "unusable": "#9e9e9e", "failed": "#d62728"}
RUNWAY_CAP_MONTHS = 36.0          # longer runways are drawn to this length and labelled with their value


def _short_folder(folder, width: int = 30) -> str:
    """A folder's last whole path parts within ``width`` characters, "…/" before them when some are left out
    ("…/bad/diagnostic.data", not "ew3-fleet2/bad/diagnostic.data")."""
    from pathlib import PurePath

    parts = PurePath(str(folder)).parts
    kept = parts[-1] if parts else str(folder)
    for part in reversed(parts[:-1]):
        if len(part) + 1 + len(kept) > width - 2:
            return "…/" + kept if len(kept) <= width else "…" + kept[-(width - 1):]
        kept = part.rstrip("/") + "/" + kept if part != "/" else "/" + kept
    return kept if len(kept) <= width else "…" + kept[-(width - 1):]


def _label(row) -> str:
    member = row["member"] if isinstance(row["member"], str) else _short_folder(row["folder"])
    return f"{row['cluster']} · {member}" if isinstance(row["cluster"], str) else member


def _labels(rows: pd.DataFrame) -> list[str]:
    """Each row's ``_label``, one per row: a folder that reports the name another row has (a copy of a member's FTDC)
    is told apart by the nearest part of its path where the folders differ ("db-1-copy", not "…/diagnostic.data"
    twice), or the two would share one bar and their labels overprint each other."""
    from pathlib import PurePath

    plain = [_label(rows.iloc[i]) for i in range(len(rows))]
    out = list(plain)
    for label in {x for x in plain if plain.count(x) > 1}:
        rows_of = [i for i, x in enumerate(plain) if x == label]
        parts = {i: PurePath(str(rows.iloc[i]["folder"])).parts[::-1] for i in rows_of}
        for i in rows_of:
            others = [parts[j] for j in rows_of if j != i]
            depth = next((d for d, part in enumerate(parts[i]) if all(d >= len(o) or o[d] != part for o in others)),
                         None)
            out[i] = f"{label} · {parts[i][depth] if depth is not None else _short_folder(rows.iloc[i]['folder'])}"
    return out


def _state(row) -> str:
    return "failed" if isinstance(row["error"], str) else str(row["verdict"])


def fleet_runway_figure(rows: pd.DataFrame, utilization_target: float = 0.8, title: str | None = None) -> go.Figure:
    """Horizontal bars, most urgent at the top: months until each server's busiest load reaches its planned
    throughput (``runway_months`` with ``runway_low``/``runway_high`` as error bars), or its spare fraction when the
    table has no runway; colour = verdict; failed and unranked servers get a labelled stub."""
    runway = pd.to_numeric(rows["runway_months"], errors="coerce")
    by_runway = runway.notna().any()
    column, unit = ("runway", "runway (months") if by_runway else ("spare", "spare (fraction of the planned throughput")
    fig = go.Figure()
    order = list(range(len(rows)))[::-1]              # plotly draws the first category at the bottom
    names = _labels(rows)
    for state, color in VERDICT_COLORS.items():
        picked = [i for i in order if _state(rows.iloc[i]) == state]
        if not picked:
            continue
        labels, values, texts, low, high = [], [], [], [], []
        for i in picked:
            row = rows.iloc[i]
            labels.append(names[i])
            if state == "failed":
                values.append(0.0)
                texts.append("failed: unreadable FTDC")
                low.append(0.0)
                high.append(0.0)
                continue
            if state == "unusable":
                values.append(0.0)
                texts.append("not ranked: verdict unusable")
                low.append(0.0)
                high.append(0.0)
                continue
            if by_runway:
                value = float(row["runway_months"])
                shown = min(value, RUNWAY_CAP_MONTHS)
                texts.append("never at this growth" if math.isinf(value) else
                             PAST_TARGET_WORDS if value == 0 else f"{value:.1f} months")
                lo = min(float(row["runway_low"]), RUNWAY_CAP_MONTHS)
                hi = min(float(row["runway_high"]), RUNWAY_CAP_MONTHS)
                if math.isinf(value):      # no growth reaches the target: no interval to draw at the cap
                    lo = hi = shown
            else:
                shown = float(row["spare_fraction"])
                texts.append(f"{shown:.0%} spare")
                lo, hi = float(row["spare_low"]), float(row["spare_high"])
            values.append(shown)
            low.append(max(shown - lo, 0.0))
            high.append(max(hi - shown, 0.0))
        fig.add_trace(go.Bar(y=labels, x=values, orientation="h", name=state, marker_color=color, text=texts,
                             textposition="outside", cliponaxis=False,
                             error_x=dict(type="data", symmetric=False, array=high, arrayminus=low,
                                          color="#555555")))
    # the cap is said only where a bar is cut by it: a longer runway (labelled with its value) or one never reached
    known = runway[runway.notna()]
    longer = by_runway and bool(((known > RUNWAY_CAP_MONTHS) & (known < math.inf)).any())
    never = by_runway and bool((known == math.inf).any())
    cap = "; ".join(([f"longer runways end at {number(RUNWAY_CAP_MONTHS, 6)}, labelled with their value"]
                     if longer else [])
                    + ([f"'never at this growth' bars end at {number(RUNWAY_CAP_MONTHS, 6)}"] if never else []))
    fig.update_layout(title=title or (f"Months until the busiest load reaches its planned throughput "
                                      f"({utilization_target:.0%} CPU)" if by_runway else
                                      "Spare fraction of the planned throughput at the busiest load"),
                      height=max(HEIGHT, 60 + 28 * len(rows)), barmode="overlay", legend_title="verdict",
                      xaxis_title=unit + (f"; {cap})" if cap else ")"),     # the unit in parentheses, as every axis
                      # a space between each server's name and a stub's words at 0 ("past the target now")
                      yaxis=dict(title="server (replica set · host:port)", categoryorder="array", ticksuffix="  ",
                                 categoryarray=[names[i] for i in order]),
                      showlegend=True, legend=dict(orientation="h", y=-0.2))
    return fig


def _numbers(rows: pd.DataFrame, column: str, order: list[int]) -> list[float]:
    return [float(pd.to_numeric(rows.iloc[i][column], errors="coerce")) for i in order]


def load_figure(rows: pd.DataFrame, utilization_target: float = 0.8, title: str | None = None) -> go.Figure:
    """Per server (the runway figure's order), its busiest load beside the throughput it may carry at the utilization
    target and its saturation (capacity with its interval), in ops/s; a server without a usable capacity shows its
    load alone, its capacity bar left out and said so in its label."""
    order = list(range(len(rows)))[::-1]
    labels = [_labels(rows)[i] for i in order]
    usable = [_state(rows.iloc[i]) in ("sound", "weak") for i in order]
    busiest, capacity, low, high = (_numbers(rows, column, order) for column in
                                    ("busiest_ops", "capacity_ops", "capacity_low", "capacity_high"))
    shown = [c if ok else math.nan for c, ok in zip(capacity, usable)]
    planned = [c * utilization_target for c in shown]
    fig = go.Figure()
    fig.add_trace(go.Bar(y=labels, x=busiest, orientation="h", name="busiest load (95th percentile)",
                         marker_color="#1f77b4"))
    fig.add_trace(go.Bar(y=labels, x=planned, orientation="h", name=f"planned at {utilization_target:.0%} CPU",
                         marker_color="#aec7e8"))
    fig.add_trace(go.Bar(y=labels, x=shown, orientation="h", name="saturation (bottleneck law)",
                         marker_color="#c7c7c7",
                         error_x=dict(type="data", symmetric=False, color="#555555",
                                      array=[max(h - c, 0.0) if ok else 0.0 for h, c, ok in zip(high, shown, usable)],
                                      arrayminus=[max(c - lo, 0.0) if ok else 0.0
                                                  for lo, c, ok in zip(low, shown, usable)])))
    ticks = [label if ok else f"{label} (no usable capacity)" for label, ok in zip(labels, usable)]
    fig.update_layout(title=title or "Busiest load against what each server may carry", barmode="group",
                      height=max(HEIGHT, 80 + 40 * len(rows)), xaxis_title="throughput (ops/s)",
                      yaxis=dict(title="server (replica set · host:port)", tickvals=labels, ticktext=ticks,
                                 categoryorder="array", categoryarray=labels),
                      legend=dict(orientation="h", y=-0.2))
    return fig
