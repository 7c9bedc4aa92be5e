"""The report notebooks: where they live, their names, and which ones need a live MongoDB."""
from __future__ import annotations

from pathlib import Path

import nbformat

from capmodel._bundled import bundled_dir
from capmodel.errors import InputError


def notebooks_dir() -> Path:
    """The folder of report notebooks (``CAPMODEL_NOTEBOOKS_DIR``, else the project's ``notebooks/``, else the
    copy in an installed wheel; see ``capmodel._bundled.bundled_dir``)."""
    return bundled_dir("notebooks")


def names() -> list[str]:
    """Every report name (a notebook's file name without ``.ipynb``), sorted."""
    return sorted(p.stem for p in notebooks_dir().glob("*.ipynb"))


def path(name: str) -> Path:
    """The notebook behind a report name; ``InputError`` listing the known names when there is none."""
    p = notebooks_dir() / f"{name}.ipynb"
    if not p.is_file():
        raise InputError(f"unknown report '{name}' (known: {', '.join(names()) or 'none in ' + str(notebooks_dir())})")
    return p


def is_live(name: str) -> bool:
    """True for a notebook that benchmarks a server (metadata ``capmodel.live``); ``--all`` runs these on request."""
    nb = nbformat.read(path(name), as_version=4)
    return bool(nb.metadata.get("capmodel", {}).get("live", False))


def question(nb) -> str:
    """The notebook's title: the first markdown heading, without the ``#``."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("#"):
                    return line.lstrip("#").strip()
    return ""
