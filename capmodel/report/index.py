"""``index.html``: one page linking every report in a folder, with its question, its decision (the headline's lead;
its answer in one sentence where it states none), the grade of its evidence with the reason that sets it and the next
step, its parameters, date and status (a failed report says why in place of its answer).

The index is rebuilt from the executed notebooks themselves (their ``capmodel.report`` and ``capmodel.answer``
metadata, written by ``capmodel.report.execute``), so reports rendered one at a time still all appear. Parameters there
are already redacted.
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
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>capmodel reports</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 1.5em auto; padding: 0 1em; max-width: 1200px; color: #222;
  line-height: 1.4; }}
table {{ border-collapse: collapse; width: 100%; table-layout: fixed; }}
th, td {{ text-align: left; vertical-align: top; padding: .6em .6em; border-bottom: 1px solid #ddd;
  overflow-wrap: break-word; }}
th {{ background: #f4f4f4; }}
col.report {{ width: 24%; }} col.answer {{ width: 38%; }} col.evidence {{ width: 26%; }} col.when {{ width: 12%; }}
.question {{ color: #444; font-size: .92em; margin-top: .3em; }}
.grade {{ display: inline-block; font-weight: bold; padding: 0 .45em; border-radius: 3px; background: #e3f3e8; }}
.grade-weak {{ background: #fbeccc; }} .grade-unusable {{ background: #f8d7d7; }}
.reason, .next {{ font-size: .92em; margin-top: .3em; }}
.next {{ color: #444; }}
details {{ font-size: .85em; margin-top: .4em; color: #444; }}
code {{ font-size: 90%; }}
ul.params {{ margin: .2em 0 0; padding-left: 1.2em; }}
.failed {{ color: #b00; }}
.status {{ font-size: .85em; color: #555; }}
</style>
</head>
<body>
<h1>capmodel reports</h1>
<p>{count}; each page is self-contained (figures work offline). Each row gives the report's decision (or its answer
in one sentence), the grade of its evidence and the reason that sets it; the page says what the grade
promises.{skipped}</p>
<table>
<colgroup><col class="report"><col class="answer"><col class="evidence"><col class="when"></colgroup>
<thead>
<tr><th>Report</th><th>Answer</th><th>Evidence</th><th>Rendered (UTC)</th></tr>
</thead>
<tbody>
{rows}
</tbody>
</table>
</body>
</html>
"""


def reports_in(folder: str | Path) -> list[dict]:
    """The report records of every executed notebook in ``folder`` (sorted by name), each with what the index shows
    of its answer (``answer``: ``capmodel.report.index_entry.answer_record``, stored at render time; rebuilt from the
    headline for a notebook rendered before it was stored)."""
    from capmodel.report.index_entry import answer_record

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
        answer = meta.get("answer") or answer_record(meta.get("headline"), record.get("error"))
        found.append({**record, "question": meta.get("question", ""), "answer": answer,
                      "grade": answer.get("grade") or "",
                      "html": html_file.name if html_file.is_file() else None, "ipynb": notebook.name})
    return found


def _value(value) -> str:
    """A parameter as the report's own headline shows it (1 and 0.5, not 1.0; 0, 0.01, 0.03, not [0.0, 0.01, 0.03])."""
    from capmodel.report.headline import _shown

    return _shown(value)


def _inline(markdown: str) -> str:
    """One sentence of markdown as inline HTML (its bold figures kept, no paragraph around it)."""
    from capmodel.formatting import unbroken_names
    from capmodel.report.headline import _markdown

    text = _markdown(markdown).strip()
    return unbroken_names(text.removeprefix("<p>").removesuffix("</p>"))


def _answer_cell(record: dict) -> str:
    answer = record.get("answer") or {}
    if record.get("error"):
        return f'<span class="failed"><strong>Failed</strong>: {html.escape(record["error"])}.</span>'
    said = answer.get("decision") or answer.get("sentence")   # the decision a headline leads with, where it has one
    return _inline(said) if said else "—"


def _evidence_cell(record: dict) -> str:
    answer = record.get("answer") or {}
    grade = answer.get("grade")
    if record.get("error") or not grade:
        return "—"
    cell = f'<span class="grade grade-{html.escape(grade)}">{html.escape(grade)}</span>'
    main = answer.get("main_reason")
    if main:
        cell += f'<div class="reason">{html.escape(main["message"])}.</div>'
    if answer.get("next_step"):
        cell += f'<div class="next">Next step: {html.escape(answer["next_step"])}.</div>'
    return cell


def _row(record: dict) -> str:
    name = html.escape(record["name"])
    link = f'<a href="{html.escape(record["html"])}">{name}</a>' if record.get("html") else name
    link += f' <small>(<a href="{html.escape(record["ipynb"])}">ipynb</a>)</small>'
    link += f'<div class="question">{html.escape(record.get("question", ""))}</div>'
    params = record.get("parameters") or {}
    shown = "".join(f"<li><code>{html.escape(k)} = {html.escape(_value(v))}</code></li>" for k, v in params.items())
    link += (f'<details><summary>{len(params)} parameter{"" if len(params) == 1 else "s"} set</summary>'
             f'<ul class="params">{shown}</ul></details>' if shown else '<details><summary>defaults</summary>'
             "every parameter at its default</details>")
    status = ("failed" if record.get("error") else f'ok ({record.get("total_s", 0):.1f}\u00a0s)')
    date = html.escape(record.get("rendered_at", "").replace("T", " ").replace("+00:00", " UTC"))
    return (f"<tr><td>{link}</td><td>{_answer_cell(record)}</td><td>{_evidence_cell(record)}</td>"
            f'<td>{date}<div class="status">{status}</div></td></tr>')


def _not_here(records: list[dict]) -> str:
    """What a partial folder holds and lacks: the bundled reports rendered here and those not, the live ones among
    them with how to render them (``--all`` leaves them out unless ``--live``)."""
    from capmodel.report import notebooks

    here = {r.get("name") for r in records}
    try:
        bundled = notebooks.names()
        missing = [name for name in bundled if name not in here]
        live = [name for name in missing if notebooks.is_live(name)]
    except CapmodelError:
        return ""
    if not missing:
        return ""
    rendered = [name for name in bundled if name in here]

    def listed(names):
        return ", ".join(html.escape(name) for name in names)

    text = f" Rendered here: {listed(rendered) or 'none of the bundled reports'}."
    static = [name for name in missing if name not in live]
    if static:
        text += (f" Not rendered: {listed(static)} (<code>capmodel report NAME</code> or <code>--all</code> "
                 "renders them).")
    if live:
        which = "benchmarks" if len(live) == 1 else "benchmark"
        text += (f" {'Not rendered either' if static else 'Not rendered'}: {listed(live)}, which {which} a live "
                 "server (render with <code>--all --live</code>, or with <code>-p bench_dir FOLDER</code> from a "
                 "recorded sweep).")
    return text


def write_index(folder: str | Path) -> Path:
    """Write ``folder/index.html`` listing every report there; returns its path."""
    folder = Path(folder)
    records = reports_in(folder)
    count = f"{len(records):,} report" + ("" if len(records) == 1 else "s")
    page = PAGE.format(count=count, skipped=_not_here(records), rows="\n".join(_row(r) for r in records))
    target = folder / "index.html"
    write_text(target, page)
    return target
