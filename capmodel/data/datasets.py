"""Bundled datasets: the numbers of the five source studies, as CSV files under the project's ``data/`` folder.

Each dataset is one file ``data/<name>.csv``; ``data/README.md`` names its source document, table and any derivation.
An installed wheel carries a copy of the folder; set ``CAPMODEL_DATA_DIR`` to read them from elsewhere.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from capmodel._bundled import bundled_dir
from capmodel.data.curve import validate_curve
from capmodel.errors import InputError


def data_dir() -> Path:
    """The folder the bundled datasets (and ``workloads/``) are read from; see ``capmodel._bundled.bundled_dir``."""
    return bundled_dir("data")


def names() -> list[str]:
    """Names of every bundled dataset, sorted."""
    return sorted(p.stem for p in data_dir().glob("*.csv"))


def path(name: str) -> Path:
    """The file behind a dataset name; ``InputError`` listing the known names when there is none."""
    p = data_dir() / f"{name}.csv"
    if not p.is_file():
        known = ", ".join(names()) or "none found in " + str(data_dir())
        raise InputError(f"unknown dataset '{name}' (known: {known})")
    return p


def load(name: str) -> pd.DataFrame:
    """A bundled dataset as a DataFrame, exactly as stored."""
    return pd.read_csv(path(name))


def load_curve(name: str) -> pd.DataFrame:
    """A bundled dataset that is a curve table, validated."""
    return validate_curve(load(name), source=f"dataset '{name}'")
