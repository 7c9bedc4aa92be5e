"""A report whose kernel failed: the page says so in one line at its top, in place of the answer, and carries no
traceback; the traceback goes to ``NAME.log`` beside the page (secrets scrubbed like everything written)."""
from __future__ import annotations

import html
import re

import nbformat

from capmodel.report.headline import HEADLINE_CSS_CLASS

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
PAPERMILL_ERROR_TAG = "papermill-error-cell-tag"   # papermill's own banner cell above the failing cell


def without_tracebacks(nb, question: str, error: str, log_name: str) -> str:
    """Replace every error output of ``nb`` by one line and put a failure block at its top; returns the log text."""
    log = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown" and PAPERMILL_ERROR_TAG in cell.get("metadata", {}).get("tags", []):
            cell.source = ""
            continue
        outputs = []
        for output in cell.get("outputs", []):
            if output.get("output_type") != "error":
                outputs.append(output)
                continue
            log.append(f"cell {cell.get('execution_count') or index}: {output.get('ename')}: {output.get('evalue')}\n"
                       + ANSI.sub("", "\n".join(output.get("traceback", []))))
            outputs.append(nbformat.v4.new_output("stream", name="stderr",
                                                  text=f"{output.get('ename')}: {output.get('evalue')}\n"))
        if "outputs" in cell:
            cell.outputs = outputs
    nb.cells = [c for c in nb.cells if not (c.cell_type == "markdown" and not c.source
                                             and PAPERMILL_ERROR_TAG in c.get("metadata", {}).get("tags", []))]
    block = (f'<div class="{HEADLINE_CSS_CLASS} failed"><h1 class="question">{html.escape(question)}</h1>'
             f"<p><strong>This report failed</strong>: {html.escape(error)}.</p>"
             f"<p>No answer is given. The traceback is in <code>{html.escape(log_name)}</code> beside this page.</p>"
             "</div>")
    banner = nbformat.v4.new_code_cell(source="", outputs=[nbformat.v4.new_output(
        "display_data", data={"text/html": block, "text/plain": f"This report failed: {error}"})])
    banner.metadata["tags"] = ["capmodel-failure"]
    nb.cells.insert(0, banner)
    return "\n\n".join(log) or error
