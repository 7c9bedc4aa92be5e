"""How figures reach a notebook: live in JupyterLab, and offline in the HTML reports.

``setup_notebook()`` makes every displayed figure carry two representations: plotly's own mimetype (drawn by
JupyterLab's plotly extension) and a small HTML snippet that calls ``Plotly.newPlot`` without bundling the library.
The report converter (``capmodel.report.convert``) puts plotly.js once in the page head, so reports are
self-contained and load nothing from a CDN.
"""
from __future__ import annotations

RENDERER = "capmodel"
CONFIG = {"displaylogo": False, "responsive": True}


def _renderer_class():
    from plotly.io._base_renderers import MimetypeRenderer, PlotlyRenderer

    class ReportRenderer(MimetypeRenderer):
        """plotly mimetype for JupyterLab + library-free HTML for static reports."""

        def to_mimebundle(self, fig_dict):
            import plotly.io as pio

            bundle = PlotlyRenderer(config=CONFIG).to_mimebundle(fig_dict)
            height = fig_dict.get("layout", {}).get("height") or 450
            bundle["text/html"] = pio.to_html(
                fig_dict, config=CONFIG, include_plotlyjs=False, include_mathjax=False, full_html=False,
                default_width="100%", default_height=f"{int(height)}px", validate=False,
            )
            return bundle

    return ReportRenderer


def setup_notebook(template: str = "plotly_white") -> None:
    """Make figures display in JupyterLab and in capmodel's offline HTML reports; call once at a notebook's top."""
    import plotly.io as pio

    if RENDERER not in pio.renderers:
        pio.renderers[RENDERER] = _renderer_class()()
    pio.renderers.default = RENDERER
    pio.templates.default = template
