"""Executed notebook -> one self-contained HTML file: code hidden by default, plotly.js inlined once, no CDN.

nbconvert's ``lab`` template loads require.js, MathJax, mermaid and the widget manager from CDNs; the template below
drops those and puts plotly.js itself in the page head, so figures (written by ``capmodel.plots.setup_notebook``'s
renderer as ``Plotly.newPlot`` snippets without a library) draw with no network at all. Widget outputs need a live
kernel and are left out of the page.
"""
from __future__ import annotations

from pathlib import Path

import nbformat

from capmodel.errors import ReportError
from capmodel.report.writing import write_text

TEMPLATE_NAME = "capmodel_report.html.j2"
TEMPLATE = """{%- extends 'index.html.j2' -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block html_head_css -%}
{%- if resources.plotly_js -%}
<script type="text/javascript">window.PlotlyConfig = {MathJaxConfig: 'local'};</script>
<script type="text/javascript">{{ resources.plotly_js }}</script>
{%- endif -%}
<style type="text/css">body.jp-Notebook { max-width: 1100px; margin: 0 auto; }</style>
{%- endblock html_head_css -%}
"""
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _has_plotly(nb) -> bool:
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "application/vnd.plotly.v1+json" in data or "Plotly.newPlot" in str(data.get("text/html", "")):
                return True
    return False


def _without_widgets(nb):
    """Widget outputs only work against a live kernel; a static page drops them (their figures are shown apart)."""
    for cell in nb.cells:
        if "outputs" in cell:
            cell.outputs = [o for o in cell.outputs if WIDGET_VIEW not in o.get("data", {})]
    nb.metadata.pop("widgets", None)
    return nb


def exporter(show_code: bool = False):
    """An nbconvert ``HTMLExporter`` for reports (prompts always hidden, code hidden unless ``show_code``)."""
    import jinja2
    from nbconvert import HTMLExporter

    return HTMLExporter(
        template_name="lab",
        template_file=TEMPLATE_NAME,
        extra_loaders=[jinja2.DictLoader({TEMPLATE_NAME: TEMPLATE})],
        exclude_input=not show_code,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
    )


def to_html(notebook: str | Path, html_path: str | Path | None = None, show_code: bool = False) -> Path:
    """Write the executed ``notebook`` as a self-contained HTML page (default: next to it, ``.html``)."""
    notebook = Path(notebook)
    html_path = Path(html_path) if html_path else notebook.with_suffix(".html")
    try:
        nb = nbformat.read(notebook, as_version=4)
    except (OSError, ValueError) as exc:
        raise ReportError(f"{notebook}: cannot read the executed notebook ({exc})") from None
    nb = _without_widgets(nb)
    resources = {"metadata": {"name": notebook.stem}}
    if _has_plotly(nb):
        from plotly.offline import get_plotlyjs

        resources["plotly_js"] = get_plotlyjs()
    body, _ = exporter(show_code).from_notebook_node(nb, resources=resources)
    write_text(html_path, body)
    return html_path
