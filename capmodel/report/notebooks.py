"""The report notebooks: where they live, their names, and which ones need a live MongoDB."""
from __future__ import annotations

import re
from pathlib import Path

from capmodel._bundled import bundled_dir
from capmodel.errors import InputError


def notebooks_dir() -> Path:
    """The folder of report notebooks (``CAPMODEL_NOTEBOOKS_DIR``, else the project's ``notebooks/``, else the
    copy in an installed wheel; see ``capmodel._bundled.bundled_dir``)."""
    return bundled_dir("notebooks")


def names() -> list[str]:
    """Every report name (a notebook's file name without ``.ipynb``), sorted."""
    return sorted(p.stem for p in notebooks_dir().glob("*.ipynb"))


_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,99}")


def is_notebook_path(name: str) -> bool:
    """True when ``name`` is a notebook path the user gave explicitly (it ends in ``.ipynb``), not a report name."""
    return str(name).endswith(".ipynb")


def report_name(name: str) -> str:
    """The name a report's files get in the output folder: the report name, or an explicit notebook's file stem."""
    return Path(name).stem if is_notebook_path(name) else name


def path(name: str) -> Path:
    """The notebook behind a report name (a bundled report) or an explicit ``.ipynb`` path; ``InputError`` listing
    the known names otherwise. A name is a plain file stem: no folders, no ``..``, so it never reaches outside the
    notebooks folder."""
    name = str(name)
    if is_notebook_path(name):
        p = Path(name)
        if not p.is_file():
            raise InputError(f"{name}: no such notebook")
        return p
    if not _NAME.fullmatch(name) or ".." in name:
        raise InputError(f"report name {name[:80]!r} is not a report name: give a bundled report "
                         f"({', '.join(names())}) or the path of a .ipynb file")
    p = notebooks_dir() / f"{name}.ipynb"
    if not p.is_file():
        raise InputError(f"unknown report '{name}' (known: {', '.join(names()) or 'none in ' + str(notebooks_dir())})")
    return p


def read_json(notebook: str | Path) -> dict:
    """A notebook file as plain JSON (no nbformat: importing it and its schema validator costs seconds, which a
    command that only checks its parameters should not pay); ``ReportError`` naming the file when it is not one."""
    import json

    from capmodel.errors import ReportError

    try:
        nb = json.loads(Path(notebook).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ReportError(f"{notebook}: not a readable notebook ({type(exc).__name__})") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise ReportError(f"{notebook}: not a notebook (no list of cells)")
    return nb


def is_live(name: str) -> bool:
    """True for a notebook that benchmarks a server (metadata ``capmodel.live``); ``--all`` runs these on request."""
    meta = read_json(path(name)).get("metadata") or {}
    return bool((meta.get("capmodel") or {}).get("live", False))


def question(nb) -> str:
    """The question the report answers: the notebook's ``capmodel.question`` metadata, else its first markdown
    heading without the ``#``."""
    declared = nb.metadata.get("capmodel", {}).get("question")
    if declared:
        return str(declared)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("#"):
                    return line.lstrip("#").strip()
    return ""
