"""Executed notebook -> one self-contained HTML file: code hidden by default, plotly.js inlined once, no CDN.

nbconvert's ``lab`` template loads require.js, MathJax, mermaid and the widget manager from CDNs; the template below
drops those and puts plotly.js itself in the page head, so figures (written by ``capmodel.plots.setup_notebook``'s
renderer as ``Plotly.newPlot`` snippets without a library) draw with no network at all. Widget outputs need a live
kernel and are left out of the page.
"""
from __future__ import annotations

import re
from pathlib import Path

import nbformat

from capmodel.errors import ReportError
from capmodel.formatting import unbroken_names
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
<style type="text/css">{{ resources.capmodel_css }}</style>
{%- endblock html_head_css -%}
"""
CSS = """
body.jp-Notebook { max-width: 1100px; margin: 0 auto; overflow-wrap: break-word; }
.capmodel-headline { border: 1px solid #ccd; border-left: 6px solid #2a6; background: #f7faf8; padding: .4em 1.2em 1em;
  margin: 1em 0 2em; }
.capmodel-headline.graded-weak { border-left-color: #d90; }
.capmodel-headline.graded-unusable { border-left-color: #c22; }
.capmodel-headline.failed { border-left-color: #c22; background: #fdf5f5; }
.capmodel-headline h1.question { font-size: 1.6em; margin: .4em 0; }
.capmodel-headline .answer { font-size: 1.12em; }
.capmodel-headline .answer .decision { font-size: 1.2em; margin: .3em 0 .6em; }
.capmodel-evidence { margin: .8em 0; border-left: 4px solid #2a6; padding: .1em 0 .1em .8em; }
.capmodel-evidence.grade-weak { border-left-color: #d90; }
.capmodel-evidence.grade-unusable { border-left-color: #c22; }
.capmodel-evidence p { margin: .3em 0; }
.capmodel-evidence .meaning { color: #555; font-size: .92em; }
.capmodel-evidence ul.why { margin: .2em 0; padding-left: 1.4em; }
.capmodel-evidence .next { font-size: .95em; }
.capmodel-headline .provenance { color: #555; font-size: .85em; margin-top: .8em; line-height: 1.5; }
.capmodel-headline .sha { font-family: monospace; font-size: .85em; white-space: nowrap; }
.capmodel-table { overflow-x: auto; max-width: 100%; margin: .6em 0 1.2em; }
.capmodel-table table { border-collapse: collapse; font-size: .92em; }
.capmodel-table th, .capmodel-table td { padding: .25em .7em; border-bottom: 1px solid #ddd; text-align: right;
  white-space: normal; word-break: normal; overflow-wrap: normal; hyphens: none; }
.capmodel-table th { background: #f2f2f2; vertical-align: bottom; }
.capmodel-table td.text, .capmodel-table th.text { text-align: left; }
.capmodel-table td.keep { white-space: nowrap; }
.capmodel-table caption { caption-side: top; text-align: left; font-weight: bold; padding: .3em 0; }
.capmodel-table .download { font-size: .85em; }
.capmodel-table .footnotes { font-size: .85em; color: #555; margin: .3em 0; }
.jp-RenderedText pre { white-space: pre-wrap; }
"""
REMOVE_CELL_TAG = "remove-cell"        # a cell for readers of the notebook only (its title, its prose)
REMOVE_OUTPUT_TAG = "remove-output"    # a compute cell whose printout is not for the page
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


#: what a page's text must not be changed inside: code, scripts, styles, the page's title
_VERBATIM = re.compile(r"(<(script|style|pre|textarea|title|code)\b.*?</\2>)", re.S | re.I)


def unbroken_page(page: str) -> str:
    """A whole HTML page with ``unbroken_names`` applied to the text of its body (scripts, styles, code and
    preformatted text as they are): no name or path on any page breaks at a hyphen."""
    start = page.find("<body")
    start = page.find(">", start) + 1 if start >= 0 else 0     # after the body's own tag (its attributes as they are)
    head, body = page[:start], page[start:]
    pieces = _VERBATIM.split(body)
    out = []
    for i, piece in enumerate(pieces):
        if i % 3 == 0:
            out.append(unbroken_names(piece))
        elif i % 3 == 1:
            out.append(piece)
    return head + "".join(out)


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
    from nbconvert.preprocessors import TagRemovePreprocessor

    exporter = HTMLExporter(
        template_name="lab",
        template_file=TEMPLATE_NAME,
        extra_loaders=[jinja2.DictLoader({TEMPLATE_NAME: TEMPLATE})],
        exclude_input=not show_code,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
    )
    exporter.register_preprocessor(TagRemovePreprocessor(remove_cell_tags=(REMOVE_CELL_TAG,),
                                                         remove_all_outputs_tags=(REMOVE_OUTPUT_TAG,)), enabled=True)
    return exporter


def to_html(notebook: str | Path, html_path: str | Path | None = None, show_code: bool = False) -> Path:
    """Write the executed ``notebook`` as a self-contained HTML page (default: next to it, ``.html``)."""
    notebook = Path(notebook)
    html_path = Path(html_path) if html_path else notebook.with_suffix(".html")
    try:
        nb = nbformat.read(notebook, as_version=4)
    except (OSError, ValueError) as exc:
        raise ReportError(f"{notebook}: cannot read the executed notebook ({exc})") from None
    nb = _without_widgets(nb)
    from capmodel.report.notebooks import question

    # the page's <title> is the question the report answers (the file name only when it declares none)
    resources = {"metadata": {"name": question(nb) or notebook.stem}, "capmodel_css": CSS}
    if _has_plotly(nb):
        from plotly.offline import get_plotlyjs

        resources["plotly_js"] = get_plotlyjs()
    body, _ = exporter(show_code).from_notebook_node(nb, resources=resources)
    write_text(html_path, unbroken_page(body))    # no name or path breaks at a hyphen, on any page
    return html_path
