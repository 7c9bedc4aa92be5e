"""Cost figures from a plan's VM table: bars per VM, the cost-against-performance Pareto chart, the growth runway.

Column names default to the plan table's (``vm, monthly_cost, throughput, users, runway_months``); the figures draw
what the table says and compute nothing of their own.
"""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from capmodel.plots.curves import COLORS, HEIGHT


def bar_figure(table: pd.DataFrame, value: str, label: str = "vm", title: str | None = None,
               axis_title: str | None = None, highlight=None, fmt: str = ",.0f") -> go.Figure:
    """One bar per row of ``table`` showing ``value`` (error bars from ``<value>_low``/``<value>_high`` when present);
    rows whose ``label`` is in ``highlight`` stand out."""
    marked = set([highlight] if isinstance(highlight, str) else (highlight or []))
    colors = ["#d62728" if name in marked else "#1f77b4" for name in table[label]]
    error = None
    if f"{value}_low" in table.columns and f"{value}_high" in table.columns:
        error = dict(type="data", symmetric=False, array=table[f"{value}_high"] - table[value],
                     arrayminus=table[value] - table[f"{value}_low"], color="#555555")
    fig = go.Figure(go.Bar(x=table[label].astype(str), y=table[value], marker_color=colors, name=value,
                           error_y=error, text=[format(v, fmt) for v in table[value]], textposition="auto"))
    fig.update_layout(title=title or value.replace("_", " "), height=HEIGHT, xaxis_title=label,
                      yaxis_title=axis_title or value.replace("_", " "), showlegend=False)
    return fig


def pareto_figure(table: pd.DataFrame, cost: str = "monthly_cost", performance: str = "throughput",
                  label: str = "vm", frontier: str | None = "pareto", highlight=None,
                  title: str = "Cost against performance") -> go.Figure:
    """Each VM at (cost, performance); rows flagged in the boolean column ``frontier`` joined as the Pareto front."""
    marked = set([highlight] if isinstance(highlight, str) else (highlight or []))
    fig = go.Figure()
    on_front = table[frontier].astype(bool) if frontier and frontier in table.columns else None
    if on_front is not None and on_front.any():
        front = table[on_front].sort_values(cost)
        fig.add_trace(go.Scatter(x=front[cost], y=front[performance], mode="lines", name="Pareto front",
                                 line=dict(color="#2ca02c", dash="dash")))
    symbols = ["star" if name in marked else "circle" for name in table[label]]
    colors = ["#2ca02c" if (on_front is not None and on_front.iloc[i]) else "#1f77b4" for i in range(len(table))]
    fig.add_trace(go.Scatter(x=table[cost], y=table[performance], mode="markers+text", name="VMs",
                             text=table[label].astype(str), textposition="top center",
                             marker=dict(size=[16 if s == "star" else 11 for s in symbols], symbol=symbols,
                                         color=colors)))
    fig.update_layout(title=title, height=HEIGHT, xaxis_title=cost.replace("_", " "),
                      yaxis_title=performance.replace("_", " "), showlegend=True,
                      legend=dict(orientation="h", y=-0.2))
    return fig


def runway_figure(vms: pd.DataFrame, recommendations: pd.DataFrame | None = None, label: str = "vm",
                  months: str = "runway_months",
                  title: str = "Growth runway: months until each VM is full") -> go.Figure:
    """Months of growth each VM absorbs (with its interval when the table has ``<months>_low/_high``), and a level
    per growth target at the month it is reached (``recommendations``' ``months_until_target``)."""
    fig = bar_figure(vms, months, label=label, title=title, axis_title="months", fmt=",.1f")
    if recommendations is not None and "months_until_target" in recommendations.columns:
        for i, row in enumerate(recommendations.itertuples(index=False)):
            fig.add_hline(y=row.months_until_target, line=dict(color=COLORS[(i + 1) % len(COLORS)], dash="dash"),
                          annotation_text=f"{row.target_users:,.0f} users in {row.months_until_target:.1f} months")
    return fig
