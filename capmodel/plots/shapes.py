"""The query shapes' figures: each shape's share of the server's CPU at the observed and at the asked load, and the
what-if's ramp (the cores each shape uses as the asked load grows, up to where the server saturates). They draw a
``ShapesWhatIf``'s ``cpu_by_shape``; the labels come from the caller (the report names shapes by their rank)."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from capmodel.formatting import number, percent, plural
from capmodel.plots.curves import COLORS, HEIGHT

BACKGROUND_COLOR = "#9e9e9e"


def cpu_share_figure(cpu, labels: dict, asked: str = "", title: str = "Each shape's share of the server's CPU"):
    """Horizontal bars: each shape's share of the CPU used at the observed load and, when ``asked`` names a what-if,
    at the asked load; ``cpu`` is ``ShapesWhatIf.cpu_by_shape``, ``labels`` shape id -> the name on its bar."""
    names = [labels.get(s, s) for s in cpu["shape"]]
    fig = go.Figure()
    kinds = [("observed", "at the observed load")] + ([("asked", f"at {asked}")] if asked else [])
    for i, (kind, legend) in enumerate(kinds):
        shares = cpu[f"{kind}_share"] * 100
        fig.add_trace(go.Bar(y=names, x=shares, orientation="h", name=legend, marker_color=COLORS[i],
                             text=[percent(v / 100) for v in shares], textposition="outside", cliponaxis=False))
    fig.update_layout(title=title, height=max(HEIGHT, 90 + 60 * len(names)), barmode="group",
                      xaxis_title="share of the CPU used (%)", yaxis_title="query shape (# rank in the table)",
                      yaxis=dict(autorange="reversed"),
                      legend=dict(orientation="h", y=-0.2), margin=dict(l=10, r=60))
    return fig


def saturation_figure(cpu, labels: dict, cores: float, load_factor: float, asked: str = "the observed load",
                      title: str = "The asked load scaled until the CPU saturates"):
    """Stacked areas: the cores each shape (and the background) uses at a factor of the asked load, from 0 to a
    little past ``load_factor`` (where their sum reaches ``cores``); a line at ``cores`` and one at the factor."""
    top = load_factor * 1.25 if np.isfinite(load_factor) and load_factor > 0 else 2.0
    factors = np.linspace(0, top, 60)
    fig = go.Figure()
    shapes = cpu[cpu["shape"] != "background"]
    background = float(cpu.loc[cpu["shape"] == "background", "asked_cores"].sum())
    fig.add_trace(go.Scatter(x=factors, y=np.full_like(factors, background), name="background", stackgroup="cpu",
                             mode="lines", line=dict(width=0.5, color=BACKGROUND_COLOR)))
    for i, row in enumerate(shapes.itertuples()):
        fig.add_trace(go.Scatter(x=factors, y=factors * row.asked_cores, name=labels.get(row.shape, row.shape),
                                 stackgroup="cpu", mode="lines", line=dict(width=0.5, color=COLORS[i % len(COLORS)])))
    fig.add_hline(y=cores, line=dict(color="#b00", dash="dash"),
                  annotation_text=f"the server's {plural(cores, 'core')}", annotation_position="top left")
    if np.isfinite(load_factor):
        fig.add_vline(x=load_factor, line=dict(color="#333", dash="dot"),
                      annotation_text=f"saturates at {number(load_factor)}x", annotation_position="bottom right")
    fig.update_layout(title=title, height=HEIGHT, xaxis_title=f"load (factor of {asked})",
                      yaxis_title="CPU used (cores)",
                      yaxis=dict(range=[0, max(cores * 1.15, background * 1.2)]), legend=dict(orientation="h", y=-0.2))
    return fig
