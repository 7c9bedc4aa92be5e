"""How a CSV file is written, read from its first lines before pandas parses it: the delimiter, the decimal mark, and a
header whose column names are all different.

- Comma-separated is the default. A header with semicolons and no commas (or more semicolons than commas) is
  semicolon-separated, as European spreadsheet software writes CSV; there, numbers like ``1,5`` or ``1.234,5`` in the
  first data lines mean a decimal comma (and a dot for thousands), numbers like ``1.5`` a decimal point.
- A column name that appears twice is an error naming the file and the column (pandas would rename the second to
  ``name.1`` and the first would be used silently).
- More columns than ``MAX_COLUMNS`` is refused before parsing.
"""
from __future__ import annotations

import csv
import re
from pathlib import Path

from capmodel.data.input_limits import MAX_LINE_BYTES, check_column_count
from capmodel.errors import InputError

SNIFF_LINES = 20
_DECIMAL_COMMA = re.compile(r"^\s*[-+]?\d{1,3}(\.\d{3})*,\d+\s*$|^\s*[-+]?\d+,\d+\s*$")
_DECIMAL_POINT = re.compile(r"^\s*[-+]?\d*\.\d+([eE][-+]?\d+)?\s*$")
_GROUPED = re.compile(r"^\s*[-+]?\d{1,3}(\.\d{3})+\s*$")  # 1.234: thousands with a decimal comma, or a decimal point


def _first_lines(path: Path) -> tuple[list[str], int]:
    """The header and the first data lines, and how many blank lines came before the header."""
    lines: list[str] = []
    blank = 0
    # universal newlines: a file whose lines end with a bare CR (classic Mac OS) has its lines too, as pandas reads them
    with open(path, encoding="utf-8", errors="replace", newline=None) as fh:
        for raw in fh:
            text = raw.lstrip("\ufeff" if not lines else "").rstrip("\r\n")
            if text.strip() or lines:
                lines.append(text)
            else:
                blank += 1
            if len(lines) > SNIFF_LINES or sum(map(len, lines)) > 4 * MAX_LINE_BYTES:
                break
    return lines, blank


def _check_row_widths(path: Path, lines: list[str], names: list[str], sep: str, blank: int) -> None:
    """A data line with more fields than the header is an error naming its line. pandas would otherwise take the
    first column of such a first row for the index and shift every column left: threads read as concurrency and
    ops/s as nothing (a later line is refused by pandas itself, in its own words)."""
    rows = csv.reader(lines[1:], delimiter=sep, skipinitialspace=sep == ",")
    for number, fields in enumerate(rows, start=blank + 2):
        if len(fields) > len(names) and any(f.strip() for f in fields[len(names):]):
            raise InputError(f"{path}: line {number} has {len(fields)} fields but the header names {len(names)} "
                             f"columns ({', '.join(repr(n.strip()[:30]) for n in names[:6])}); "
                             + ("a decimal comma in a comma-separated file, or a stray separator? (quote the value "
                                "or fix the line)" if sep == "," else "a stray separator? (fix the line)"))


def dialect(path: Path, fmt: str) -> dict:
    """``pd.read_csv`` keywords for ``path`` (``csv`` or ``tsv``), after checking its header."""
    lines, blank = _first_lines(path)
    if not lines:
        return {"sep": "\t", "index_col": False} if fmt == "tsv" else {"skipinitialspace": True, "index_col": False}
    header = lines[0]
    if fmt == "tsv":
        sep = "\t"
    else:
        sep = ";" if header.count(";") > header.count(",") else ","
    names = next(csv.reader([header], delimiter=sep, skipinitialspace=True))
    check_column_count(len(names), path)
    _check_row_widths(path, lines, names, sep, blank)
    seen: dict[str, int] = {}
    for index, name in enumerate(names):
        key = name.strip()
        if key in seen:
            raise InputError(f"{path}: column {key[:60]!r} appears twice in the header (columns {seen[key] + 1} and "
                             f"{index + 1}); rename one of them")
        seen[key] = index
    # index_col=False: pandas never takes the first column for the index (a row ending in a separator it would)
    options: dict = {"sep": sep, "index_col": False}
    if sep == ",":
        options["skipinitialspace"] = True
    if sep == ";":
        cells = [cell for line in lines[1:] for cell in next(csv.reader([line], delimiter=";"), [])]
        comma = sum(bool(_DECIMAL_COMMA.match(c)) for c in cells)
        point = sum(bool(_DECIMAL_POINT.match(c)) and not _GROUPED.match(c) for c in cells)
        if comma and point:
            raise InputError(f"{path}: semicolon-separated with both decimal commas and decimal points in its first "
                             "lines; save it with one decimal mark (or as comma-separated CSV with points)")
        if comma:
            options.update(decimal=",", thousands=".")
    return options
