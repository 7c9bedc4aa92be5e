"""The utilization law drawn: the server's CPU against its operation rate, the fitted line U = U0 + D·X carried to
the cores it may use, where it meets the utilization target and full use (the bottleneck law's saturation)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from capmodel.formatting import number
from capmodel.plots.curves import COLORS, HEIGHT


def cpu_law_figure(busy: pd.DataFrame, capacity, title: str = "Server CPU against throughput: the bottleneck law"
                   ) -> go.Figure:
    """``busy``: the intervals the laws used (``throughput`` ops/s, ``cpu_cores``); ``capacity``: a
    ``ServerCapacity`` (its service demand, background CPU, cores, target and saturation are drawn)."""
    d_s = capacity.service_demand_ms.estimate / 1000.0
    sat = capacity.saturation_throughput.estimate
    plan = capacity.planned_throughput.estimate
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=busy["throughput"], y=busy["cpu_cores"], mode="markers", name="observed intervals",
                             marker=dict(size=7, color="#333333", opacity=0.6)))
    usable = capacity.evidence.usable
    if np.isfinite(sat) and not usable:        # a verdict that states no capacity: the line only where data are
        grid = np.linspace(0.0, float(busy["throughput"].max()) if len(busy) else 0.0, 100)
        fig.add_trace(go.Scatter(x=grid, y=capacity.background_cores + d_s * grid, mode="lines",
                                 name=f"U = U0 + D·X over the observed load (D = "
                                      f"{number(capacity.service_demand_ms.estimate)} ms; verdict unusable: not "
                                      f"carried "
                                      "to saturation)", line=dict(color=COLORS[0], width=2)))
    elif np.isfinite(sat):
        grid = np.linspace(0.0, sat, 100)
        fig.add_trace(go.Scatter(x=grid, y=capacity.background_cores + d_s * grid, mode="lines",
                                 name=f"U = U0 + D·X (D = {number(capacity.service_demand_ms.estimate)} ms)",
                                 line=dict(color=COLORS[0], width=2)))
        fig.add_trace(go.Scatter(x=[plan, sat], y=[capacity.utilization_target * capacity.cores, capacity.cores],
                                 mode="markers", name="planned (target) and saturation",
                                 marker=dict(symbol="star", size=14, color=COLORS[1])))
    fig.add_hline(y=capacity.cores, line=dict(color="#b00", dash="dash"),
                  annotation_text=f"{number(capacity.cores, 6)} core{'s' if capacity.cores != 1 else ''}: full use")
    fig.add_hline(y=capacity.utilization_target * capacity.cores, line=dict(color="#777", dash="dot"),
                  annotation_text=f"target {capacity.utilization_target:.0%}")
    highest = float(busy["cpu_cores"].max()) if len(busy) else 0.0      # data past the cores stay in view
    top = max(float(busy["throughput"].max()) if len(busy) else 0.0, sat if np.isfinite(sat) and usable else 0.0)
    fig.update_layout(title=title, height=HEIGHT, xaxis_title="throughput (ops/s)",
                      yaxis_title="server CPU (cores busy)", xaxis_range=[0, 1.08 * top],
                      yaxis_range=[0, max(1.15 * capacity.cores, 1.05 * highest)], legend=dict(orientation="h", y=-0.2))
    return fig
