"""Latency against throughput: the observed intervals and the USL's latency form with both branches of its nose."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from capmodel.formatting import number
from capmodel.plots.curves import COLORS, HEIGHT

#: the legend of the latency curve of a fit without coherency: one branch, no nose
NO_NOSE = "USL R(X): no coherency term, so no nose"


def nose_figure(curve: pd.DataFrame, latency_fit, target_ms: float | None = None,
                title: str = "Latency against throughput: the nose") -> go.Figure:
    """Observed (throughput, mean latency) points, the fitted normal and retrograde branches meeting at the peak,
    the peak itself and an optional latency target line."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=curve["throughput"], y=curve["latency_mean_ms"], mode="markers",
                             name="observed intervals", marker=dict(size=7, color="#333333", opacity=0.6)))
    peak = latency_fit.peak_throughput
    nose = np.isfinite(peak) and np.isfinite(latency_fit.peak_latency_ms)
    if np.isfinite(peak):
        # without coherency (kappa = 0) the latency has one branch, rising without end towards the ceiling: no nose,
        # no retrograde branch and no peak drawn or named in the legend
        grid = np.linspace(peak * 1e-3, peak if nose else peak * 0.999, 300)
        branches = ((("normal", COLORS[0], None), ("retrograde", COLORS[1], "dot")) if nose
                    else (("normal", COLORS[0], None),))
        for branch, color, dash in branches:
            fig.add_trace(go.Scatter(x=grid, y=latency_fit.latency_ms(grid, branch), mode="lines",
                                     name=f"USL R(X), {branch} branch" if nose else NO_NOSE,
                                     line=dict(color=color, width=2, dash=dash)))
        if nose:
            fig.add_trace(go.Scatter(x=[peak], y=[latency_fit.peak_latency_ms], mode="markers", name="peak (nose)",
                                     marker=dict(symbol="star", size=14, color=COLORS[1])))
    if target_ms is not None:
        fig.add_hline(y=target_ms, line=dict(color="#b00", dash="dash"), annotation_text=f"target "
                                                                                         f"{number(target_ms, 6)} ms")
    top = float(np.nanmax(curve["latency_mean_ms"])) if len(curve) else 1.0
    fig.update_layout(title=title, height=HEIGHT, xaxis_title="throughput (ops/s)", yaxis_title="mean latency (ms)",
                      yaxis_range=[0, 1.3 * max(top, target_ms or 0)], legend=dict(orientation="h", y=-0.2))
    return fig
