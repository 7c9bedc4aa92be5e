"""One module per ``capmodel`` subcommand (see capmodel/cli.py), plus the option helpers they share.

Command modules stay thin: parse options, call into the layers, print text or JSON (capmodel.jsonable). Heavy imports
go inside the command's function so that ``capmodel --help`` stays fast.
"""
from __future__ import annotations

from capmodel.errors import CapmodelError

__all__ = ["parse_number_list", "whole_number"]


def parse_number_list(text: str, option: str, kind=float) -> list:
    """'1,2,4,8' -> [1, 2, 4, 8]; a clear error naming the option otherwise."""
    import math

    from capmodel.errors import shown

    parts = text.replace(" ", "").split(",")
    if len(parts) > 1 and "" in parts:      # '1,,2' or '1,2,': a number left out, not a list to guess at
        raise CapmodelError(f"{option}: item {parts.index('') + 1} of {shown(text)} is empty")
    from capmodel.constraints import number_in

    values = []
    for i, part in enumerate(p for p in parts if p):
        value = number_in(part, kind)       # one reading of a typed number: '1e3' and '8.0' are whole numbers
        if isinstance(value, str):
            raise CapmodelError(f"{option}: expected a comma-separated list of numbers, got {shown(text)}")
        if not math.isfinite(value):
            raise CapmodelError(f"{option}: every number must be finite, got {shown(text)}")
        if kind is int and type(value) is not int:
            raise CapmodelError(f"{option}: item {i + 1} of {shown(text)} ({part}) is not a whole number")
        values.append(kind(value))
    if not values:
        raise CapmodelError(f"{option}: the list is empty")
    return values


def whole_number(text: str) -> int:
    """An argparse type for counts that may be large: '1000000', '1e9' and '1_000_000' are whole numbers; '1.5',
    'nan' and text are not (argparse names the option)."""
    import argparse

    from capmodel.constraints import number_in

    value = number_in(text, int)
    if type(value) is not int:
        raise argparse.ArgumentTypeError(f"expected a whole number (such as 1000 or 1e9), got {text!r}")
    return value
