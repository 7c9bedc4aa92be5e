"""One module per ``capmodel`` subcommand (see capmodel/cli.py), plus the output helpers they share.

Command modules stay thin: parse options, call into the layers, print text or JSON. Heavy imports go inside the
command's function so that ``capmodel --help`` stays fast.
"""
from __future__ import annotations

import json
import math
import sys
from typing import Any

from capmodel.errors import CapmodelError


def to_jsonable(value: Any) -> Any:
    """Plain JSON types from numpy / pandas values; NaN and infinities become null."""
    try:
        import numpy as np
    except ImportError:  # pragma: no cover
        np = None
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if np is not None:
        if isinstance(value, np.ndarray):
            return [to_jsonable(v) for v in value.tolist()]
        if isinstance(value, np.generic):
            value = value.item()
    if hasattr(value, "to_dict") and hasattr(value, "columns"):  # a DataFrame: list of rows
        return [to_jsonable(r) for r in value.to_dict(orient="records")]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def print_json(obj: Any) -> None:
    json.dump(to_jsonable(obj), sys.stdout, indent=2, allow_nan=False)
    sys.stdout.write("\n")


def parse_number_list(text: str, option: str, kind=float) -> list:
    """'1,2,4,8' -> [1, 2, 4, 8]; a clear error naming the option otherwise."""
    try:
        values = [kind(part) for part in text.replace(" ", "").split(",") if part]
    except ValueError:
        raise CapmodelError(f"{option}: expected a comma-separated list of numbers, got {text!r}") from None
    if not values:
        raise CapmodelError(f"{option}: the list is empty")
    return values


def single_curve(curve, source: str):
    """Refuse a file that holds several curves (different system/workload/op labels)."""
    from capmodel.errors import InputError

    keys = [k for k in ("system", "workload", "op") if k in curve.columns]
    if keys:
        groups = curve[keys].astype(str).drop_duplicates()
        if len(groups) > 1:
            shown = "; ".join(", ".join(f"{k}={v}" for k, v in row.items()) for _, row in groups.head(4).iterrows())
            raise InputError(f"{source}: holds {len(groups)} curves ({shown}); split the file and fit one curve")
