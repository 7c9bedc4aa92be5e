"""Cost figures from a plan's VM table: bars per VM, the cost-against-performance Pareto chart, the growth runway.

Column names default to the plan table's (``vm, monthly_cost, throughput, users, runway_months``); the figures draw
what the table says and compute nothing of their own.
"""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from capmodel.plots.curves import COLORS, HEIGHT

#: a VM's runway of 0 (today's users already fill it under the objectives): the words its bar and report 03's table
#: show. Not the fleet's "past the target now": on 03 "target" is a user count to grow to, which this VM need not
#: be past
FULL_NOW = "full now"

def bar_figure(table: pd.DataFrame, value: str, label: str = "vm", title: str | None = None,
               axis_title: str | None = None, highlight=None, fmt: str = ",.0f", highlight_name: str = "recommended",
               missing_text: str | dict[str, str] = "unreachable",
               lines: dict[str, float] | None = None) -> go.Figure:
    """One bar per row of ``table`` showing ``value`` (error bars from ``<value>_low``/``<value>_high`` when present);
    rows whose ``label`` is in ``highlight`` stand out, named ``highlight_name`` in the legend; a row without a value
    is drawn as a labelled gap (``missing_text``, or a dict label -> its own text) instead of left out; ``lines``
    (label -> value) are dotted levels across the whole plot, each labelled at its left end, for the bars to be read
    against (the targets a VM must carry). Give ``axis_title`` with its unit."""
    marked = set([highlight] if isinstance(highlight, str) else (highlight or []))
    names = table[label].astype(str)
    values = pd.to_numeric(table[value], errors="coerce")
    has_error = f"{value}_low" in table.columns and f"{value}_high" in table.columns
    fig = go.Figure()
    for group, chosen in (("others", False), (highlight_name, True)):
        rows = [i for i, name in enumerate(names) if (name in marked) == chosen]
        if not rows:
            continue
        part = table.iloc[rows]
        error = None
        if has_error:
            error = dict(type="data", symmetric=False, array=(part[f"{value}_high"] - part[value]).to_numpy(),
                         arrayminus=(part[value] - part[f"{value}_low"]).to_numpy(), color="#555555")
        fig.add_trace(go.Bar(
            x=names.iloc[rows], y=values.iloc[rows], marker_color="#d62728" if chosen else "#1f77b4",
            name=group if marked else value.replace("_", " "), error_y=error,
            text=["" if pd.isna(v) else format(v, fmt) for v in values.iloc[rows]],
            # labels inside the bar, at its foot, so an error bar never runs through them
            textposition="inside", insidetextanchor="start", textangle=0))
    for name, v in zip(names, values):
        if pd.isna(v):
            text = missing_text.get(name, "no value") if isinstance(missing_text, dict) else missing_text
            fig.add_annotation(x=name, y=0, text=text, showarrow=False, yanchor="bottom", textangle=-90,
                               font=dict(color="#b00"))
    for text, level in (lines or {}).items():
        fig.add_hline(y=level, line=dict(color="#555555", dash="dot", width=1.5), annotation_text=text,
                      annotation_position="top left", annotation_font=dict(color="#333333"))
    fig.update_layout(title=title or value.replace("_", " "), height=HEIGHT,
                      xaxis_title="VM" if label == "vm" else label.replace("_", " "),
                      yaxis_title=axis_title or value.replace("_", " "), showlegend=bool(marked), barmode="overlay",
                      xaxis=dict(categoryorder="array", categoryarray=list(names)),
                      legend=dict(orientation="h", y=-0.25), uniformtext=dict(minsize=9, mode="hide"))
    fig.update_yaxes(tickformat=",")   # 1,500 as the tables write it, not 1500
    return fig


def pareto_figure(table: pd.DataFrame, cost: str = "monthly_cost", performance: str = "throughput",
                  label: str = "vm", frontier: str | None = "pareto", highlight=None,
                  title: str = "Cost against performance", x_title: str | None = None,
                  y_title: str | None = None) -> go.Figure:
    """Each VM at (cost, performance); rows flagged in the boolean column ``frontier`` joined as the Pareto front
    (green); a star marks the ``highlight`` rows. Give the axis titles with their units."""
    marked = set([highlight] if isinstance(highlight, str) else (highlight or []))
    fig = go.Figure()
    on_front = table[frontier].astype(bool) if frontier and frontier in table.columns else None
    if on_front is not None and on_front.any():
        front = table[on_front].sort_values(cost)
        fig.add_trace(go.Scatter(x=front[cost], y=front[performance], mode="lines", name="Pareto front",
                                 line=dict(color="#2ca02c", dash="dash")))
    symbols = ["star" if name in marked else "circle" for name in table[label]]
    colors = ["#2ca02c" if (on_front is not None and on_front.iloc[i]) else "#1f77b4" for i in range(len(table))]
    fig.add_trace(go.Scatter(x=table[cost], y=table[performance], mode="markers+text",
                             name="VMs (green: on the front; star: recommended)" if marked else "VMs",
                             text=table[label].astype(str), textposition="top center", cliponaxis=False,
                             marker=dict(size=[16 if s == "star" else 11 for s in symbols], symbol=symbols,
                                         color=colors)))
    fig.update_layout(title=title, height=HEIGHT, xaxis_title=x_title or cost.replace("_", " "),
                      yaxis_title=y_title or performance.replace("_", " "), showlegend=True,
                      legend=dict(orientation="h", y=-0.2), margin=dict(t=70, r=90, l=80))
    fig.update_xaxes(automargin=True, tickformat=",")
    fig.update_yaxes(automargin=True, rangemode="tozero", tickformat=",")
    return fig


def runway_figure(vms: pd.DataFrame, recommendations: pd.DataFrame | None = None, label: str = "vm",
                  months: str = "runway_months",
                  title: str = "Growth runway: months until each VM is full") -> go.Figure:
    """Months of growth each VM absorbs (with its interval when the table has ``<months>_low/_high``), and a level
    per growth target at the month it is reached (``recommendations``' ``months_until_target``). A VM without a
    runway is labelled with why: its curve supports no capacity (``binding_limit`` "unsupported"), it fails an
    objective (no ``users``), or it is full now (0 months)."""
    names = vms[label].astype(str)
    users = pd.to_numeric(vms["users"], errors="coerce") if "users" in vms.columns else pd.Series(1.0, vms.index)
    limits = vms["binding_limit"].astype(str) if "binding_limit" in vms.columns else pd.Series("", vms.index)
    why = {name: ("unsupported curve" if limit == "unsupported" else "fails an objective") if pd.isna(u)
           else "no runway" for name, u, limit in zip(names, users, limits)}
    fig = bar_figure(vms, months, label=label, title=title, axis_title="runway (months)", fmt=",.1f",
                     missing_text=why)
    for name, v in zip(names, pd.to_numeric(vms[months], errors="coerce")):
        if v == 0:   # a zero-height bar shows nothing: say that the VM is full today
            fig.add_annotation(x=name, y=0, text=FULL_NOW, showarrow=False, yanchor="bottom", textangle=-90,
                               font=dict(color="#b00"))
    if recommendations is not None and "months_until_target" in recommendations.columns:
        for i, row in enumerate(recommendations.itertuples(index=False)):
            if pd.isna(row.months_until_target):
                continue
            fig.add_hline(y=row.months_until_target, line=dict(color=COLORS[(i + 1) % len(COLORS)], dash="dash"),
                          annotation_text=f"{row.target_users:,.0f} users in {row.months_until_target:.1f} months",
                          annotation_position="top left")
    return fig


NO_RUNWAY = "No runway: give today's users (`current_users`) or a baseline to grow from."


def runway_or_note(vms: pd.DataFrame, recommendations: pd.DataFrame | None = None) -> go.Figure | str:
    """The runway figure when some VM has a runway, else the sentence saying what it needs (a catalog of one's own
    with no baseline and no users today has no ``runway_months`` column at all)."""
    if "runway_months" in vms.columns and pd.to_numeric(vms["runway_months"], errors="coerce").notna().any():
        return runway_figure(vms, recommendations)
    return NO_RUNWAY
