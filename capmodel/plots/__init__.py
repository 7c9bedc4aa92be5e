"""capmodel.plots: plotly figures from curve tables, fits and plan tables (no computation of their own).

``setup_notebook()`` makes figures render both live in JupyterLab and offline in capmodel's HTML reports.
"""
from capmodel.plots.render import setup_notebook

__all__ = ["setup_notebook"]
