"""Where the bundled files are found: the project's top-level ``data/`` and ``notebooks/`` folders.

The repository keeps them at the top level (the single source of truth). A built wheel carries a copy inside this
package, ``capmodel/_bundled/data`` and ``capmodel/_bundled/notebooks``, made by the build step in ``setup.py``.
"""
from __future__ import annotations

import os
from pathlib import Path

PACKAGED = Path(__file__).resolve().parent
#: the folders that are bundled, each with the environment variable that points elsewhere
FOLDERS = {"data": "CAPMODEL_DATA_DIR", "notebooks": "CAPMODEL_NOTEBOOKS_DIR"}


def bundled_dir(folder: str) -> Path:
    """The folder ``data`` or ``notebooks`` is read from.

    Search order: its environment variable (``CAPMODEL_DATA_DIR``, ``CAPMODEL_NOTEBOOKS_DIR``); the top-level folder
    of the source checkout this package runs from (an editable install); the copy packaged with an installed wheel.
    """
    override = os.environ.get(FOLDERS[folder])
    if override:
        return Path(override)
    checkout = PACKAGED.parents[1]
    if (checkout / "pyproject.toml").is_file() and (checkout / folder).is_dir():
        return checkout / folder
    return PACKAGED / folder
