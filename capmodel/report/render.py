"""Render reports: execute each notebook, convert it to HTML, then rebuild the folder's index.

Reports run side by side (each in its own kernel process; ``jobs`` of them at a time) because most of a report's time
is a kernel starting and importing the scientific stack, which overlaps well. Rendering needs the ``notebooks`` extra
(papermill, nbformat, nbconvert): its modules are imported when a report is rendered, after ``require`` has named
the extra if one is missing.
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from capmodel.errors import ReportError
from capmodel.extras import require
from capmodel.output_folder import FolderLock
from capmodel.report import notebooks
from capmodel.report.checks import check_report_parameters
from capmodel.report.params import notebook_parameters, redacted

if TYPE_CHECKING:
    from capmodel.report.execute import ReportRun


def render_one(name: str, out_dir: str | Path, parameters: dict | None = None, show_code: bool = False,
               kernel_name: str = "python3", checked: bool = False) -> ReportRun:
    """Execute one report into ``out_dir`` and write its HTML beside the executed notebook.

    Parameters
    ----------
    name : str
        A bundled report's name (``02_fit_curve``) or a ``.ipynb`` file's path.
    out_dir : str or path-like
        The output folder.
    parameters : dict, optional
        ``{parameter: value}``, typed values.
    show_code : bool, default False
        Keep the code cells in the HTML.
    kernel_name : str, default "python3"
        The Jupyter kernel.
    checked : bool, default False
        The parameters were already checked.

    Returns
    -------
    ReportRun
        Its notebook, HTML, timings and ``error`` (what failed, when something did).

    Raises
    ------
    InputError
        A parameter that cannot work, before any kernel starts.
    """
    require("notebooks", "rendering a report")
    from capmodel.report.convert import to_html
    from capmodel.report.execute import ReportRun, execute

    try:
        run = execute(name, out_dir, parameters, kernel_name=kernel_name, checked=checked)
    except ReportError as exc:  # the kernel never ran it: nothing to convert, the others go on
        name = notebooks.report_name(name)
        return ReportRun(name=name, notebook=Path(out_dir) / f"{name}.ipynb", parameters=redacted(parameters or {}),
                         rendered_at=datetime.now(timezone.utc).isoformat(timespec="seconds"), error=str(exc))
    started = time.perf_counter()
    run.html = to_html(run.notebook, show_code=show_code)
    run.convert_s = time.perf_counter() - started
    return run


def check_all(names: list[str], parameters: dict[str, dict]) -> None:
    """Every report's parameters checked (``capmodel.report.checks``) before any of them starts a kernel."""
    for name in names:  # a name that is not a report, or a parameter that cannot work, is refused before any kernel
        check_report_parameters(notebook_parameters(notebooks.path(name)), parameters.get(name) or {},
                         live=notebooks.is_live(name))


def render(names: list[str], out_dir: str | Path, parameters: dict[str, dict] | None = None, jobs: int = 2,
           show_code: bool = False, kernel_name: str = "python3", checked: bool = False
           ) -> tuple[list[ReportRun], Path]:
    """Render reports into a folder and write its ``index.html``: the Python side of ``capmodel report``.

    Every report's parameters are checked before any kernel starts; the reports then run in parallel, each executed
    with papermill and converted to HTML.

    Parameters
    ----------
    names : list of str
        Bundled reports by name (``02_fit_curve``) or paths of ``.ipynb`` files.
    out_dir : str or path-like
        The output folder (one render at a time: a lock file).
    parameters : dict, optional
        ``{report: {parameter: value}}``, typed values.
    jobs : int, default 2
        Reports run at once (1 to 64).
    show_code : bool, default False
        Keep the code cells in the HTML.
    kernel_name : str, default "python3"
        The Jupyter kernel.
    checked : bool, default False
        The caller already checked these parameters (``check_all``).

    Returns
    -------
    tuple of (list of ReportRun, pathlib.Path)
        Each report's run (``error`` says what failed; the others go on) and the index page.

    Raises
    ------
    InputError
        An unknown report or a parameter that cannot work, before any kernel starts.
    ReportError
        ``jobs`` out of range, or two reports that would write the same files.
    """
    require("notebooks", "rendering a report")
    from capmodel.report.index import write_index

    parameters = parameters or {}
    if not 1 <= jobs <= 64:
        raise ReportError(f"--jobs must be an integer from 1 to 64, got {jobs}")
    if not checked:
        check_all(names, parameters)
    stems = [notebooks.report_name(name) for name in names]
    if len(set(stems)) != len(stems):
        raise ReportError(f"two reports would write the same files in {out_dir}: {', '.join(names)}")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)

    def one(name):
        return render_one(name, out_dir, parameters.get(name), show_code=show_code, kernel_name=kernel_name,
                          checked=True)

    with FolderLock(out_dir):          # two renders into one folder would interleave their pages and the index
        if jobs <= 1 or len(names) <= 1:
            runs = [one(name) for name in names]
        else:
            with ThreadPoolExecutor(max_workers=jobs) as pool:
                runs = list(pool.map(one, names))
        return runs, write_index(out_dir)
