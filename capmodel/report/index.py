"""``index.html``: one page linking every report in a folder, with its question, parameters, date and status.

The index is rebuilt from the executed notebooks themselves (their ``capmodel.report`` metadata, written by
``capmodel.report.execute``), so reports rendered one at a time still all appear. Parameters there are already redacted.
"""
from __future__ import annotations

import html
from pathlib import Path

import nbformat

from capmodel.errors import CapmodelError

from capmodel.report.writing import write_text

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>capmodel reports</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }}
table {{ border-collapse: collapse; width: 100%; }}
th, td {{ text-align: left; vertical-align: top; padding: .5em .7em; border-bottom: 1px solid #ddd; }}
th {{ background: #f4f4f4; }}
code {{ font-size: 90%; }}
ul.params {{ margin: 0; padding-left: 1em; }}
.failed {{ color: #b00; font-weight: bold; }}
td.when {{ white-space: nowrap; }}
</style>
</head>
<body>
<h1>capmodel reports</h1>
<p>{count}; each page is self-contained (figures work offline).{skipped}</p>
<table>
<thead>
<tr><th>Report</th><th>Question</th><th>Evidence</th><th>Parameters</th><th>Rendered (UTC)</th><th>Status</th></tr>
</thead>
<tbody>
{rows}
</tbody>
</table>
</body>
</html>
"""


def reports_in(folder: str | Path) -> list[dict]:
    """The report records of every executed notebook in ``folder`` (sorted by name)."""
    found = []
    for notebook in sorted(Path(folder).glob("*.ipynb")):
        try:
            nb = nbformat.read(notebook, as_version=4)
        except (OSError, ValueError):
            continue
        meta = nb.metadata.get("capmodel", {})
        record = meta.get("report")
        if not record:
            continue
        html_file = notebook.with_suffix(".html")
        grade = ((meta.get("headline") or {}).get("evidence") or {}).get("grade", "")
        found.append({**record, "question": meta.get("question", ""), "grade": grade,
                      "html": html_file.name if html_file.is_file() else None, "ipynb": notebook.name})
    return found


def _value(value) -> str:
    """A parameter as the report's own headline shows it (1 and 0.5, not 1.0; 0, 0.01, 0.03, not [0.0, 0.01, 0.03])."""
    from capmodel.report.headline import _shown

    return _shown(value)


def _row(record: dict) -> str:
    name = html.escape(record["name"])
    link = f'<a href="{html.escape(record["html"])}">{name}</a>' if record.get("html") else name
    link += f' <small>(<a href="{html.escape(record["ipynb"])}">ipynb</a>)</small>'
    params = record.get("parameters") or {}
    shown = "".join(f"<li><code>{html.escape(k)} = {html.escape(_value(v))}</code></li>" for k, v in params.items())
    shown = f'<ul class="params">{shown}</ul>' if shown else "defaults"
    status = (f'<span class="failed">failed: {html.escape(record["error"])}</span>' if record.get("error")
              else f'ok ({record.get("total_s", 0):.1f}\u00a0s)')
    date = html.escape(record.get("rendered_at", "").replace("T", " ").replace("+00:00", " UTC"))
    grade = html.escape(record.get("grade") or "—")
    return (f"<tr><td>{link}</td><td>{html.escape(record.get('question', ''))}</td><td>{grade}</td><td>{shown}</td>"
            f'<td class="when">{date}</td><td>{status}</td></tr>')


def _live_not_here(records: list[dict]) -> str:
    """A sentence naming the bundled live reports the folder lacks (``--all`` leaves them out unless ``--live``)."""
    from capmodel.report import notebooks

    here = {r.get("name") for r in records}
    try:
        missing = [name for name in notebooks.names() if name not in here and notebooks.is_live(name)]
    except CapmodelError:
        return ""
    if not missing:
        return ""
    names = ", ".join(html.escape(name) for name in missing)
    verb = "benchmarks" if len(missing) == 1 else "benchmark"
    return (f" Not rendered: {names}, which {verb} a live server (render with <code>--all --live</code>, or "
            "with <code>-p bench_dir FOLDER</code> from a recorded sweep).")


def write_index(folder: str | Path) -> Path:
    """Write ``folder/index.html`` listing every report there; returns its path."""
    folder = Path(folder)
    records = reports_in(folder)
    count = f"{len(records):,} report" + ("" if len(records) == 1 else "s")
    page = PAGE.format(count=count, skipped=_live_not_here(records), rows="\n".join(_row(r) for r in records))
    target = folder / "index.html"
    write_text(target, page)
    return target
