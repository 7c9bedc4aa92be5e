"""Column names as files spell them, mapped onto capmodel's: the one rule every table reader follows (the curve
table's, ``capmodel.data.readers.read_curve``; the VM catalog's, ``read_catalog``).

A reader declares, per column it knows, the header spellings it recognises (``{"monthly_cost": ("monthly cost",
"price", ...)}``). Headers are compared by ``header_key``: lower case, everything but letters, digits, ``/`` and ``%``
dropped, so ``Monthly cost``, ``monthly_cost`` and ``MONTHLY-COST`` are one spelling. A caller may name the file's
column for a target; that name is found exactly, then by its key, then (when it is the target's default name, such as
``vm``) as any one column spelled like the target. A target two columns could fill is an
error naming both, never a silent pick.
"""
from __future__ import annotations

import re
from collections.abc import Mapping

import pandas as pd

from capmodel.data.input_limits import listed
from capmodel.errors import InputError


def header_key(name) -> str:
    """A header as the spellings are compared: lower case, only letters, digits, ``/`` and ``%``."""
    return re.sub(r"[^a-z0-9/%]+", "", str(name).lower())


def spelling_index(spellings: dict[str, tuple[str, ...]]) -> dict[str, str]:
    """Header key -> the target it spells, for a reader's table of spellings (each target spells itself too)."""
    index = {header_key(target): target for target in spellings}
    index.update({header_key(s): target for target, names in spellings.items() for s in names})
    return index


def _spelled_as(df: pd.DataFrame, target: str, index: dict[str, str]) -> list:
    return [c for c in df.columns if str(c) == target or index.get(header_key(c)) == target]


def find_column(df: pd.DataFrame, name: str, target: str, source: str, spellings: dict[str, tuple[str, ...]]):
    """The column of ``df`` that the caller named ``name`` for ``target``: exact, then by ``header_key``, then, when
    ``name`` is the target's default name (its first spelling, such as ``vm``), the one column spelled like
    ``target`` (``system``); any other name the caller gives must be there."""
    if name in df.columns:
        return name
    matches = [c for c in df.columns if header_key(c) == header_key(name)]
    default = (spellings.get(target) or (target,))[0]
    if not matches and header_key(name) == header_key(default):
        matches = _spelled_as(df, target, spelling_index(spellings))
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise InputError(f"{source}: column '{name}' given for {target} matches several columns "
                         f"({', '.join(map(str, matches))}); name one exactly")
    raise InputError(f"{source}: column '{name}' given for {target} not found (columns present: {listed(df.columns)})")


def column_label(df: pd.DataFrame, col: str) -> str:
    """A column as messages name it: as the file spells it, with capmodel's name beside a renamed one
    (``column 'Monthly cost' (monthly_cost)``)."""
    renamed = df.attrs.get("source_columns", {}) if isinstance(df, pd.DataFrame) else {}
    return f"column '{renamed[col]}' ({col})" if col in renamed else f"column '{col}'"


def map_columns(df: pd.DataFrame, source: str, mapping: Mapping[str, str | None], spellings: dict[str, tuple[str, ...]],
                options: dict[str, str] | None = None) -> pd.DataFrame:
    """Rename the file's columns to capmodel's: the caller's ``mapping`` first, then the known ``spellings`` for the
    targets left. A column already carrying a target's name is taken as it is.

    Parameters
    ----------
    df : pandas.DataFrame
        The table as the file names its columns.
    source : str
        Names the file in messages.
    mapping : mapping of str to str or None
        Target -> the file's column for it, as the caller named it (None: not named).
    spellings : dict of str to tuple of str
        Target -> the header spellings recognised for it; the first is its default name.
    options : dict of str to str, optional
        Target -> how a user names its column on the command line (``--concurrency COL``), for the message when
        two columns could each be the target.

    Returns
    -------
    pandas.DataFrame
        The columns renamed; ``attrs["source_columns"]`` maps each renamed target to the file's name, for messages.

    Raises
    ------
    InputError
        A named column not found, one column mapped to two targets, or two columns that could each be one target.

    Examples
    --------
    >>> import pandas as pd
    >>> from capmodel.data.column_names import map_columns
    >>> table = map_columns(pd.DataFrame(columns=["VM", "Monthly cost"]), "vms.csv", {},
    ...                     {"vm": ("vm", "instance type"), "monthly_cost": ("monthly cost", "price")})
    >>> table.columns.tolist(), table.attrs["source_columns"]
    (['vm', 'monthly_cost'], {'vm': 'VM', 'monthly_cost': 'Monthly cost'})
    """
    index = spelling_index(spellings)
    renames: dict = {}
    for target, name in mapping.items():
        if name is None:
            continue
        col = find_column(df, str(name), target, source, spellings)
        if col in renames:
            raise InputError(f"{source}: column '{col}' is mapped to both {renames[col]} and {target}")
        renames[col] = target
    explicit_targets = set(renames.values())
    for target in explicit_targets:
        if target in df.columns and target not in renames:
            col = next(k for k, v in renames.items() if v == target)
            raise InputError(f"{source}: column '{col}' is mapped to {target}, but the "
                             f"file already has a column '{target}'; drop or rename one of them")
    candidates: dict[str, list] = {}
    for col in df.columns:
        if col in renames or col in explicit_targets:
            continue
        guess = str(col) if str(col) in spellings else index.get(header_key(col))
        if guess is None or guess in explicit_targets:
            continue
        candidates.setdefault(guess, []).append(col)
    for target, cols in candidates.items():
        if target in df.columns:  # a column already named exactly as capmodel wants is not a guess
            continue
        if len(cols) > 1:
            named = ", ".join(f"'{c}'" for c in cols)
            option = (options or {}).get(target)
            raise InputError(f"{source}: columns {named} could each be {target}; say which one with {target}=COL"
                             + (f" ({option} on the command line)" if option else
                                " (on the command line: rename or drop the others)"))
        renames[cols[0]] = target
    out = df.rename(columns=renames)
    out.attrs["source_columns"] = {target: str(col) for col, target in renames.items() if str(col) != target}
    return out
