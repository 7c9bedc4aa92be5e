"""Run one report notebook with papermill and write the executed notebook, secrets scrubbed, with its report record.

The kernel gets the real parameters (it may need a password to reach a server); nothing written keeps them: the
injected-parameters cell, papermill's metadata and every output are rewritten with redacted values before the
executed notebook reaches the output folder.
"""
from __future__ import annotations

import tempfile
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import nbformat

from capmodel.errors import ReportError
from capmodel.report import notebooks
from capmodel.report.checks import check_report_parameters
from capmodel.report.failure import without_tracebacks
from capmodel.report.headline import CONTEXT_NAME, MIME
from capmodel.report.index_entry import answer_record
from capmodel.report.params import (
    checked_parameter,
    not_given_meanings,
    notebook_parameters,
    redacted,
    scrub,
    secrets_in,
)
from capmodel.report.writing import write_text


@dataclass
class ReportRun:
    """What happened when one report was executed (times in seconds)."""

    name: str
    notebook: Path
    parameters: dict                  # redacted: safe to show
    rendered_at: str                  # ISO 8601, UTC
    kernel_start_s: float = float("nan")
    execution_s: float = float("nan")  # sum of the cells' own durations
    total_s: float = float("nan")      # papermill end to end, including kernel start and shutdown
    convert_s: float = float("nan")
    html: Path | None = None
    error: str | None = None
    cells: list = field(default_factory=list)  # (cell index, seconds), slowest first

    def record(self) -> dict:
        """The JSON-able record stored in the notebook's metadata and read back by the index."""
        out = asdict(self)
        out["notebook"] = str(self.notebook)
        out["html"] = str(self.html) if self.html else None
        return out


def _not_about_context(record) -> bool:
    """papermill warns of every parameter its notebook does not declare; the report context is injected on purpose."""
    return CONTEXT_NAME not in record.getMessage()


def _rewrite_injected_cell(nb, shown: dict, kernel_name: str) -> None:
    from papermill.translators import translate_parameters

    for cell in nb.cells:
        if "injected-parameters" in cell.get("metadata", {}).get("tags", []):
            cell.source = translate_parameters(kernel_name, "python", shown, "Parameters")
    nb.metadata.setdefault("papermill", {})["parameters"] = shown


def execute(name: str, out_dir: str | Path, parameters: dict | None = None, kernel_name: str = "python3",
            timeout: float = 900, checked: bool = False) -> ReportRun:
    """Execute report ``name`` with ``parameters`` (already typed) into ``out_dir/name.ipynb``.

    Parameters are checked (``capmodel.report.checks``) before the kernel starts, unless the caller did (``checked``).
    A failing cell does not raise: the notebook is still written, its page says in one line that it failed (no
    traceback: that goes to ``NAME.log`` beside it) and ``run.error`` says why.
    The kernel runs in the caller's working directory, so relative file parameters mean what they say on the command
    line (papermill's ``cwd`` option changes the whole process's directory, which parallel reports cannot share).
    """
    import logging

    import papermill
    from papermill.exceptions import PapermillExecutionError

    if _not_about_context not in logging.getLogger("papermill").filters:
        logging.getLogger("papermill").addFilter(_not_about_context)

    source = notebooks.path(name)
    name = notebooks.report_name(name)
    out_dir = Path(out_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    parameters = dict(parameters or {})
    defaults = notebook_parameters(source)
    unknown = sorted(set(parameters) - set(defaults))
    if unknown:
        raise ReportError(f"report {name}: unknown parameter(s) {', '.join(unknown)} (known: {', '.join(defaults)})")
    parameters = {key: checked_parameter(key, value, defaults[key]) for key, value in parameters.items()}
    if not checked:
        check_report_parameters(defaults, parameters, live=notebooks.is_live(str(source)))
    secrets = secrets_in(parameters)
    shown = redacted(parameters)
    run = ReportRun(name=name, notebook=out_dir / f"{name}.ipynb", parameters=shown,
                    rendered_at=datetime.now(timezone.utc).isoformat(timespec="seconds"))
    context = {"name": name, "rendered_at": run.rendered_at, "defaults": redacted(defaults), "given": shown,
               "meanings": not_given_meanings(source)}

    started = time.perf_counter()
    kernel_ready = []
    with tempfile.TemporaryDirectory(prefix="capmodel-report-") as private:
        executed = Path(private) / f"{name}.ipynb"
        try:
            papermill.execute_notebook(
                str(source), str(executed), parameters={**parameters, CONTEXT_NAME: context},
                kernel_name=kernel_name,
                progress_bar=False, request_save_on_cell_execute=False,
                execution_timeout=timeout, extra_arguments=["--IPKernelApp.log_level=CRITICAL"],
                shutdown_kernel="immediate",  # the report is complete by then; a graceful stop costs 0.3-0.5 s
                on_notebook_start=lambda **_: kernel_ready.append(time.perf_counter()),
            )
        except PapermillExecutionError as exc:
            run.error = scrub(f"cell {exc.exec_count}: {exc.ename}: {exc.evalue}", secrets)
        except Exception as exc:  # kernel died, timed out, could not start: still a report error, not a traceback
            run.error = scrub(f"{type(exc).__name__}: {exc}", secrets)
        run.total_s = time.perf_counter() - started
        if kernel_ready:
            run.kernel_start_s = kernel_ready[0] - started
        if not executed.is_file():
            raise ReportError(f"report {name}: the notebook did not run ({run.error})")
        nb = nbformat.read(executed, as_version=4)

    durations = [(i, float(c.metadata.get("papermill", {}).get("duration") or 0.0))
                 for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    run.execution_s = sum(d for _, d in durations)
    run.cells = sorted(durations, key=lambda item: -item[1])[:5]
    _rewrite_injected_cell(nb, {**shown, CONTEXT_NAME: context}, kernel_name)
    log = run.notebook.with_suffix(".log")
    if run.error:
        write_text(log, scrub(without_tracebacks(nb, notebooks.question(nb), run.error, log.name), secrets) + "\n")
    elif log.is_file():
        log.unlink()  # a log from an earlier failed render of this report would describe a page no longer there
    shown_headline = next((o["data"][MIME] for c in nb.cells for o in c.get("outputs", [])
                           if MIME in o.get("data", {})), None)
    nb.metadata["capmodel"] = {**nb.metadata.get("capmodel", {}), "report": run.record(),
                               "question": notebooks.question(nb), "headline": shown_headline,
                               "answer": answer_record(shown_headline, run.error)}   # what the index shows
    write_text(run.notebook, scrub(nbformat.writes(nb), secrets))
    return run
