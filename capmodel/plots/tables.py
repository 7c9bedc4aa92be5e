"""Figures from any table: lines of several columns against one, grouped bars per row. They draw columns as given."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from capmodel.plots.curves import COLORS, HEIGHT


def _names(table: pd.DataFrame, columns, exclude: str) -> dict:
    if columns is None:
        return {c: c.replace("_", " ") for c in table.columns if c != exclude}
    return columns if isinstance(columns, dict) else {c: c.replace("_", " ") for c in columns}


def lines_figure(table: pd.DataFrame, x: str, columns=None, title: str = "", x_title: str | None = None,
                 y_title: str = "", level: float | None = None, level_text: str = "",
                 markers: bool = True, missing_text: str = "unreachable") -> go.Figure:
    """One line per column of ``columns`` (list, or dict column -> legend name; default all but ``x``) against ``x``;
    an optional horizontal ``level`` (a target) labelled ``level_text``; a missing value is drawn as an ×
    in a shaded band along the top labelled ``missing_text`` (and named so in the legend), instead of a silent
    gap."""
    fig = go.Figure()
    names = _names(table, columns, x)
    top = max([float(pd.to_numeric(table[c], errors="coerce").max()) for c in names] + [0.0])
    top = top if top == top else 0.0
    missing = [c for c in names if pd.to_numeric(table[c], errors="coerce").isna().any()]
    if missing:   # a band above the data, so that an × there reads as "no value", not as a value of the y axis
        fig.add_hrect(y0=top * 1.02, y1=top * (1.06 + 0.03 * len(names)), fillcolor="#999", opacity=0.12,
                      line_width=0, annotation_text=missing_text, annotation_position="top left")
    for i, (column, name) in enumerate(names.items()):
        color = COLORS[i % len(COLORS)]
        fig.add_trace(go.Scatter(x=table[x], y=table[column], mode="lines+markers" if markers else "lines",
                                 name=name, line=dict(color=color, width=2)))
        gaps = table[pd.to_numeric(table[column], errors="coerce").isna()]
        if len(gaps):
            fig.add_trace(go.Scatter(x=gaps[x], y=[top * (1.04 + 0.03 * i)] * len(gaps), mode="markers",
                                     name=f"× {missing_text} (colour: which line)", legendgroup="missing",
                                     showlegend=not any(t.legendgroup == "missing" for t in fig.data),
                                     hovertext=f"{name}: {missing_text}", marker=dict(symbol="x", size=10,
                                                                                        color=color)))
    if level is not None:
        fig.add_hline(y=level, line=dict(color="#b00", dash="dash"), annotation_text=level_text)
    fig.update_layout(title=title, height=HEIGHT, xaxis_title=x_title or x.replace("_", " "), yaxis_title=y_title,
                      legend=dict(orientation="h", y=-0.2))
    return fig


def grouped_bars_figure(table: pd.DataFrame, label: str, columns, title: str = "", y_title: str = "",
                        x_title: str | None = None, missing_text: str = "unreachable") -> go.Figure:
    """For each row (named by ``label``) one bar per column of ``columns`` (list or dict column -> legend name);
    error bars from ``<column>_low``/``<column>_high`` when the table has them; a missing value is labelled
    ``missing_text`` where its bar would stand."""
    fig = go.Figure()
    names = _names(table, columns, label)
    for i, (column, name) in enumerate(names.items()):
        error = None
        if f"{column}_low" in table.columns and f"{column}_high" in table.columns:
            error = dict(type="data", symmetric=False, array=table[f"{column}_high"] - table[column],
                         arrayminus=table[column] - table[f"{column}_low"], color="#555555")
        values = pd.to_numeric(table[column], errors="coerce")
        fig.add_trace(go.Bar(x=table[label].astype(str), y=values, name=name, error_y=error,
                             marker_color=COLORS[i % len(COLORS)], offsetgroup=str(i),
                             text=["" if v != v else f"{v:,.0f}" for v in values], textposition="inside",
                             insidetextanchor="start", textangle=0))
        for where, v in zip(table[label].astype(str), values):
            if v != v:
                fig.add_annotation(x=where, y=0, text=f"{name}: {missing_text}", showarrow=False, yanchor="bottom",
                                   textangle=-90, font=dict(color="#b00"), xshift=(i - (len(names) - 1) / 2) * 18)
    fig.update_layout(title=title, height=HEIGHT, barmode="group", xaxis_title=x_title or label.replace("_", " "),
                      yaxis_title=y_title, legend=dict(orientation="h", y=-0.2),
                      uniformtext=dict(minsize=9, mode="hide"))
    return fig
