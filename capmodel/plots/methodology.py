"""Teaching figures: what each USL term does to a curve, and MVA against the USL.

Every y value comes from ``capmodel.models.usl.fit.usl_throughput`` or a table the models layer computed.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from capmodel.plots.curves import COLORS, HEIGHT
from capmodel.plots.tables import lines_figure


def usl_terms_figure(sigma: float, kappa: float, lambda_: float, upto: float = 64,
                     title: str = "The three terms of the Universal Scalability Law") -> go.Figure:
    """Linear scaling (lambda only), Amdahl (adds contention sigma) and the full USL (adds coherency kappa); the
    y axis stops a little above Amdahl and the USL, so the linear line leaves the top as in the textbooks."""
    from capmodel.formatting import number
    from capmodel.models.usl.closed_form import usl_throughput

    n = np.linspace(1.0, float(upto), 200)
    fig = go.Figure()
    # a term of 0 draws its curve on top of the one before: the legend says so (σ = κ = 0 showed one line of three)
    amdahl = f"Amdahl: sigma = {number(sigma)}" + (" (on the linear line)" if sigma == 0 else "")
    usl = f"USL: sigma = {number(sigma)}, kappa = {number(kappa)}" + (" (on the Amdahl line)" if kappa == 0 else "")
    for i, (name, s, k) in enumerate([("linear: lambda*N", 0.0, 0.0), (amdahl, sigma, 0.0), (usl, sigma, kappa)]):
        fig.add_trace(go.Scatter(x=n, y=usl_throughput(n, s, k, lambda_), mode="lines", name=name,
                                 line=dict(color=COLORS[i], width=2, dash="dot" if i == 0 else None)))
    top = max(max(fig.data[1].y), max(fig.data[2].y))
    fig.update_layout(title=title, height=HEIGHT, xaxis_title="concurrency N (clients)",
                      yaxis_title="throughput X(N) (ops/s)",
                      yaxis_range=[0, 1.3 * top], legend=dict(orientation="h", y=-0.2))
    return fig


def mva_vs_usl_figure(table: pd.DataFrame, title: str = "Mean value analysis against the USL") -> go.Figure:
    """Lines for every throughput column of ``table`` (``concurrency`` plus one column per model)."""
    return lines_figure(table, "concurrency", title=title, x_title="concurrency N (clients)",
                        y_title="throughput (ops/s)")


def term_steps(value: float, smallest: float, largest: float) -> list[tuple[str, float]]:
    """A slider's exact stops for a USL term: 0, then 1, 2 and 5 of every decade from ``smallest`` to ``largest``,
    and ``value`` itself (the fitted term, labelled so), each labelled as the page prints numbers (no float drift:
    0.0005 stays 0.0005, where a log slider's 10^-3.3 read 0.000501)."""
    from capmodel.formatting import number

    stops = {0.0, float(value)}
    for exponent in range(int(np.floor(np.log10(smallest))), int(np.ceil(np.log10(largest))) + 1):
        stops.update(float(f"{m}e{exponent}") for m in (1, 2, 5))
    kept = sorted(s for s in stops if s == 0 or smallest <= s <= largest or s == value)
    return [(number(v) + (" (fitted)" if v == value else ""), v) for v in kept]
