"""Pipe tables (markdown / GitHub style, or pasted from an article) as DataFrames of text cells.

A table is a run of consecutive lines that start with ``|`` and have the same number of cells, at least two; its first
line is the header and a ``|---|---|`` rule line is skipped. Cells stay text here: ``read_curve`` turns the mapped
columns into numbers (dropping thousands separators such as ``2,635``) and validates them.
"""
from __future__ import annotations

import re

import pandas as pd

from capmodel.errors import InputError

_RULE = re.compile(r"^:?-{2,}:?$")


def _cells(line: str) -> list[str]:
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") else body
    return [c.strip() for c in re.split(r"(?<!\\)\|", body)]


def find_tables(text: str) -> list[list[list[str]]]:
    """Every pipe table in ``text``, each as a list of rows of cells (header first, rule lines removed)."""
    tables: list[list[list[str]]] = []
    current: list[list[str]] = []
    for line in text.splitlines() + [""]:
        row = _cells(line) if line.strip().startswith("|") else None
        if row is not None and all(_RULE.match(c) for c in row if c):
            continue
        if row is not None and len(row) >= 2 and (not current or len(row) == len(current[0])):
            current.append(row)
            continue
        if len(current) >= 2:
            tables.append(current)
        current = [row] if row is not None and len(row) >= 2 else []
    return tables


def read_markdown_table(text: str, source: str = "<text>", table: int | None = None) -> pd.DataFrame:
    """The table in ``text`` (or its ``table``-th table, from 0) with its header row as column names."""
    tables = find_tables(text)
    if not tables:
        raise InputError(f"{source}: no pipe table found (expected lines like '| Threads | Throughput |')")
    if table is None:
        if len(tables) > 1:
            heads = "; ".join(f"{i}: {' | '.join(t[0])}" for i, t in enumerate(tables))
            raise InputError(f"{source}: {len(tables)} tables found, pick one with table=N ({heads})")
        table = 0
    if not 0 <= table < len(tables):
        raise InputError(f"{source}: table={table} asked, but the file has {len(tables)} table(s)")
    header, *rows = tables[table]
    if len(set(header)) != len(header):
        raise InputError(f"{source}: table {table} repeats a column name in its header: {' | '.join(header)}")
    return pd.DataFrame(rows, columns=header).replace({"": None})
