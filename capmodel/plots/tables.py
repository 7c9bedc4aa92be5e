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
                 markers: bool = True) -> go.Figure:
    """One line per column of ``columns`` (list, or dict column -> legend name; default all but ``x``) against ``x``;
    an optional horizontal ``level`` (a target) labelled ``level_text``."""
    fig = go.Figure()
    for i, (column, name) in enumerate(_names(table, columns, x).items()):
        fig.add_trace(go.Scatter(x=table[x], y=table[column], mode="lines+markers" if markers else "lines",
                                 name=name, line=dict(color=COLORS[i % len(COLORS)], width=2)))
    if level is not None:
        fig.add_hline(y=level, line=dict(color="#b00", dash="dash"), annotation_text=level_text)
    fig.update_layout(title=title, height=HEIGHT, xaxis_title=x_title or x.replace("_", " "), yaxis_title=y_title,
                      legend=dict(orientation="h", y=-0.2))
    return fig


def grouped_bars_figure(table: pd.DataFrame, label: str, columns, title: str = "", y_title: str = "") -> go.Figure:
    """For each row (named by ``label``) one bar per column of ``columns`` (list or dict column -> legend name);
    error bars from ``<column>_low``/``<column>_high`` when the table has them."""
    fig = go.Figure()
    for i, (column, name) in enumerate(_names(table, columns, label).items()):
        error = None
        if f"{column}_low" in table.columns and f"{column}_high" in table.columns:
            error = dict(type="data", symmetric=False, array=table[f"{column}_high"] - table[column],
                         arrayminus=table[column] - table[f"{column}_low"], color="#555555")
        fig.add_trace(go.Bar(x=table[label].astype(str), y=table[column], name=name, error_y=error,
                             marker_color=COLORS[i % len(COLORS)], text=table[column], textposition="auto"))
    fig.update_layout(title=title, height=HEIGHT, barmode="group", xaxis_title=label.replace("_", " "),
                      yaxis_title=y_title, legend=dict(orientation="h", y=-0.2))
    return fig
