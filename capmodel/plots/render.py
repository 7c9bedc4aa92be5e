"""How figures reach a notebook: live in JupyterLab, and offline in the HTML reports.

``setup_notebook()`` makes every displayed figure carry two representations: plotly's own mimetype (drawn by
JupyterLab's plotly extension) and a small HTML snippet that calls ``Plotly.newPlot`` without bundling the library.
The report converter (``capmodel.report.convert``) puts plotly.js once in the page head, so reports are
self-contained and load nothing from a CDN. The bundle is published through IPython's display formatter directly:
plotly's renderer registry costs about 1.7 s to initialise in every kernel, the largest part of a report's run.
"""
from __future__ import annotations

import json

CONFIG = {"displaylogo": False, "responsive": True}


def figure_bundle(fig) -> dict:
    """The display bundle of a figure: plotly mimetype, library-free HTML, and a one-line text fallback."""
    import plotly.io as pio

    plain = json.loads(pio.to_json(fig, validate=False, remove_uids=False))
    height = plain.get("layout", {}).get("height") or 450
    html = pio.to_html(fig, config=CONFIG, include_plotlyjs=False, include_mathjax=False, full_html=False,
                       default_width="100%", default_height=f"{int(height)}px", validate=False)
    title = (plain.get("layout", {}).get("title") or {}).get("text") or "figure"
    return {"application/vnd.plotly.v1+json": {**plain, "config": CONFIG}, "text/html": html,
            "text/plain": f"<plotly figure: {title}>"}


def setup_notebook(template: str = "plotly_white") -> None:
    """Make figures display in JupyterLab and in capmodel's offline HTML reports; call once at a notebook's top."""
    import plotly.io as pio
    from plotly.basedatatypes import BaseFigure

    pio.templates.default = template
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - plotly needs IPython for notebooks anyway
        return
    shell = get_ipython()
    if shell is not None:  # a figure's own _ipython_display_ would go through plotly's renderers: take precedence
        shell.display_formatter.ipython_display_formatter.for_type(BaseFigure, _publish)


def _publish(fig) -> bool:
    from IPython.display import publish_display_data

    publish_display_data(figure_bundle(fig))
    return True
