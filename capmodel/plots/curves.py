"""Throughput and latency against concurrency: the measured points, fitted curves and their confidence bands.

Figures only: every number drawn comes from the curve table or from a fit's own ``predict`` / ``latency``.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from capmodel.formatting import number

HEIGHT = 440
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"]
LATENCY_COLUMNS = {"latency_mean_ms": "mean", "latency_p50_ms": "p50", "latency_p95_ms": "p95",
                   "latency_p99_ms": "p99"}


def _fits(fits) -> dict:
    if fits is None:
        return {}
    if isinstance(fits, dict):
        return fits
    from capmodel.models.usl.labels import model_label

    return {model_label(getattr(fits, "model", "fit")): fits}


def concurrency_grid(curve: pd.DataFrame, upto: float | None = None, points: int = 200) -> np.ndarray:
    """Evenly spaced concurrencies from 1 to ``upto`` (default: the largest measured), for smooth fitted lines."""
    top = float(upto if upto is not None else curve["concurrency"].max())
    return np.linspace(1.0, max(top, 1.0), points)


def _rgba(hex_color: str, alpha: float) -> str:
    r, g, b = (int(hex_color[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def _points(fig, curve, y, by, name, color=None):
    if by and by in curve.columns:
        for i, (label, part) in enumerate(curve.groupby(by, sort=False)):
            fig.add_trace(go.Scatter(x=part["concurrency"], y=part[y], mode="markers", name=f"{name}: {label}",
                                     marker=dict(size=9, color=COLORS[i % len(COLORS)])))
    else:
        fig.add_trace(go.Scatter(x=curve["concurrency"], y=curve[y], mode="markers", name=name,
                                 marker=dict(size=9, color=color or "#333333")))


def throughput_figure(curve: pd.DataFrame, fits=None, level: float | None = 0.95, upto: float | None = None,
                      by: str | None = None, title: str = "Throughput against concurrency",
                      mark_peak: bool = True, bands: dict | None = None) -> go.Figure:
    """Measured throughput, each fit's curve (``fits``: a fit or name -> fit) and its ``level`` confidence band: the
    fit's own (``fit.predict(grid, level)``), or the one ``bands`` gives for its name (a table of ``concurrency``,
    ``low``, ``high``: the band over the region the page's answer reads its intervals over; its ``attrs["label"]``
    names it in the legend)."""
    fig = go.Figure()
    grid = concurrency_grid(curve, upto)
    for i, (name, fit) in enumerate(_fits(fits).items()):
        color = COLORS[i % len(COLORS)]
        if level is not None:
            band = (bands or {}).get(name)
            band = fit.predict(grid, level=level) if band is None else band
            fig.add_trace(go.Scatter(x=np.concatenate([band["concurrency"], band["concurrency"][::-1]]),
                                     # throughput is never negative: a wide band stops at 0
                                     y=np.maximum(np.concatenate([band["high"], band["low"][::-1]]), 0.0),
                                     fill="toself",
                                     fillcolor=_rgba(color, 0.15), line=dict(width=0), hoverinfo="skip",
                                     name=band.attrs.get("label") or f"{name} {level:.0%} band", showlegend=True))
        fig.add_trace(go.Scatter(x=grid, y=fit.predict(grid), mode="lines", name=name, line=dict(color=color, width=2)))
        peak = getattr(fit, "peak_concurrency", None)
        if mark_peak and peak is not None and np.isfinite(peak) and peak <= grid[-1]:
            fig.add_trace(go.Scatter(x=[peak], y=[fit.peak_throughput], mode="markers", name=f"{name} peak",
                                     marker=dict(symbol="star", size=14, color=color)))
    _points(fig, curve, "throughput", by, "measured")
    fig.update_layout(title=title, height=HEIGHT, xaxis_title="concurrency (clients)",
                      yaxis_title="throughput (ops/s)", hovermode="closest", legend=dict(orientation="h", y=-0.2))
    return fig


#: the legend of a mean latency the curve does not hold but Little's law derives from its N and X
DERIVED_MEAN = "mean derived from N and X by Little's law, not measured"


def latency_figure(curve: pd.DataFrame, fits=None, target_ms: float | None = None, upto: float | None = None,
                   think_time_s: float = 0.0, title: str = "Mean latency against concurrency") -> go.Figure:
    """The curve's mean latency against each fit's Little's-law mean N/X(N) − Z (mean against mean), and a target
    line.

    The model gives a mean, so it is compared with a mean: the measured ``latency_mean_ms`` column, else the mean
    Little's law derives from the measured points themselves (N/X − Z, closed system), drawn and named as derived
    (``DERIVED_MEAN``), never as measured: it holds no more than the throughput does. Measured percentiles are
    drawn too, in grey and named as percentiles, for context only."""
    fig = go.Figure()
    if "latency_mean_ms" in curve.columns and curve["latency_mean_ms"].notna().any():
        measured, label = curve["latency_mean_ms"], "measured mean"
    else:
        measured = (curve["concurrency"] / curve["throughput"].where(curve["throughput"] > 0) - think_time_s) * 1000.0
        label = DERIVED_MEAN
    fig.add_trace(go.Scatter(x=curve["concurrency"], y=measured, mode="markers+lines", name=label,
                             line=dict(color=COLORS[0], dash="dot"), marker=dict(size=8)))
    for i, (column, name) in enumerate(LATENCY_COLUMNS.items()):
        if column != "latency_mean_ms" and column in curve.columns and curve[column].notna().any():
            fig.add_trace(go.Scatter(x=curve["concurrency"], y=curve[column], mode="markers", name=f"measured {name}"
                                     " (percentile, not modelled)", marker=dict(size=6, color="#aaaaaa",
                                                                                symbol=["circle", "square",
                                                                                        "diamond"][i % 3])))
    grid = concurrency_grid(curve, upto)
    for i, (name, fit) in enumerate(_fits(fits).items()):
        fig.add_trace(go.Scatter(x=grid, y=np.asarray(fit.latency(grid, think_time_s=think_time_s)) * 1000.0,
                                 mode="lines", name=f"{name} model mean: N/X(N) (Little's law)",
                                 line=dict(color=COLORS[(i + 4) % len(COLORS)], width=2)))
    if target_ms is not None:
        fig.add_hline(y=target_ms, line=dict(color="#b00", dash="dash"),
                      annotation_text=f"target {number(target_ms, 6)} ms")
    fig.update_layout(title=title, height=HEIGHT, xaxis_title="concurrency (clients)", yaxis_title="latency (ms)",
                      legend=dict(orientation="h", y=-0.2))
    return fig
