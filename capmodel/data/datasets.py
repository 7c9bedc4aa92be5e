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
    """The file behind a dataset's name.

    Parameters
    ----------
    name : str
        A bundled dataset's name.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    InputError
        An unknown name (the message lists the known ones).
    """
    p = data_dir() / f"{name}.csv"
    if not p.is_file():
        known = ", ".join(names()) or "none found in " + str(data_dir())
        raise InputError(f"unknown dataset '{name}' (known: {known})")
    return p


def load(name: str) -> pd.DataFrame:
    """A bundled dataset as a DataFrame, exactly as stored.

    Parameters
    ----------
    name : str
        A name ``names()`` lists (``plgm_workload1``, ``benchant_vms`` ...).

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    InputError
        An unknown name (the message lists the known ones).
    """
    return pd.read_csv(path(name))


def load_curve(name: str) -> pd.DataFrame:
    """A bundled dataset that is a curve table, validated (``validate_curve``).

    Parameters
    ----------
    name : str
        A curve dataset's name (``usl_specsdm91``, ``usl_raytracer``, ``plgm_workload1`` ...).

    Returns
    -------
    pandas.DataFrame
        The curve table.

    Raises
    ------
    InputError
        An unknown name, or a dataset that is not a curve table.

    Examples
    --------
    >>> import capmodel
    >>> curve = capmodel.datasets.load_curve("usl_specsdm91")
    >>> curve["concurrency"].tolist()[:4]
    [1.0, 18.0, 36.0, 72.0]
    """
    return validate_curve(load(name), source=f"dataset '{name}'")
