"""Plain JSON from what the package computes: numpy scalars and arrays, DataFrames (as lists of rows), NaN and
infinities (as null). The command line prints it, the benchmark writes run.json and steps.jsonl with it; it sits at
the bottom of the package so that every layer can call it without an upward import."""
from __future__ import annotations

import json
import math
import sys
from typing import Any


def to_jsonable(value: Any) -> Any:
    """Plain JSON types from numpy / pandas values; NaN and infinities become null."""
    import numpy as np  # a core requirement, imported where it is used: this bottom module imports fast
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return [to_jsonable(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        value = value.item()
    if hasattr(value, "to_dict") and hasattr(value, "columns"):  # a DataFrame: list of rows
        return [to_jsonable(r) for r in value.to_dict(orient="records")]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def dumps(obj: Any, indent: int | None = None) -> str:
    """``obj`` as strict JSON text (no NaN), after ``to_jsonable``."""
    return json.dumps(to_jsonable(obj), indent=indent, allow_nan=False)


def print_json(obj: Any, stream=None) -> None:
    """``obj`` as indented JSON on stdout (or ``stream``), one trailing newline."""
    stream = sys.stdout if stream is None else stream
    stream.write(dumps(obj, indent=2) + "\n")
