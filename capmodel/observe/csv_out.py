"""Tables written as CSV without pandas or pyarrow, a block of rows at a time, in the form pyarrow's CSV writer gives
them (the form ``samples.csv`` and ``curve.csv`` have always had), read back by pandas as the same table: times as
text in the given format, NaN as an empty cell, numbers in their shortest form that reads back exactly (a whole float
as ``1``, not ``1.0``), bools as ``True``/``False``.

Floats follow the layout of the double-conversion library behind Arrow's writer (``ToShortest`` with exponents
written from 1e10 up and below 1e-6, the exponent signed and not padded: ``1e+10``, ``1.5e-7``, ``0.000015``);
the shortest digits themselves are Python's ``repr``, which picks the same digits (the shortest string that reads
back as the same double, the nearest one when several are as short). When any text cell needs quotes (a comma, a
quote, a line break), every cell of every text column is quoted, as Arrow's ``quoting_style="needed"`` does.

A table is a pandas DataFrame or anything with ``names`` and ``table[name]`` giving numpy arrays (``Columns``): the
FTDC path of ``capmodel observe`` writes its tables without ever importing pandas.
"""
from __future__ import annotations

import re

import numpy as np

from capmodel.csv_cells import guarded
from capmodel.observe.columns import cell_text

_NEEDS_QUOTES = re.compile(r'[,"\r\n]')
_ROWS = 2048                         # rows formatted at a time: the text of a block, not of the table, is held
_ISO_MICROSECONDS = "%Y-%m-%dT%H:%M:%S.%f"
_KNOWN_TEXTS = 32_768                # formatted float values a writer keeps to look up (a few MB at most)
_LOW, _HIGH = 1e-4, 1e10             # between these, Python's repr and Arrow lay a float out alike (no exponent)


def write_csv(table, path, time_format: str) -> None:
    """Write ``table`` (no index) to ``path``; datetime columns formatted with ``time_format`` (their wall time)."""
    with CsvWriter(path, time_format) as writer:
        writer.write(table)


class CsvWriter:
    """``with CsvWriter(path, time_format) as writer: writer.write(table)``, once or once per block of rows: the
    file of the blocks' rows in order, as ``write_csv`` writes their whole table (the header of the first block,
    which every block repeats; text cells quoted when the first block's need quotes, and a later block's text that
    needs them refused, since the whole table's would then be quoted throughout)."""

    def __init__(self, path, time_format: str):
        self.path, self.time_format = path, time_format
        self.names: list | None = None
        self.quote = False
        self.floats = _FloatTexts()

    def __enter__(self) -> "CsvWriter":
        self.handle = open(self.path, "w", encoding="utf-8", newline="")
        return self

    def __exit__(self, kind, error, traceback) -> None:
        try:
            self.handle.close()          # flushes: a full disk or a size limit may refuse the last bytes here
        except OSError as closing:
            error = error or closing
            if error is closing and closing.filename:
                raise
        if isinstance(error, OSError) and not error.filename:   # a refused write names no file by itself
            raise OSError(error.errno, error.strerror, str(self.path)) from None

    def distinct(self, name: str) -> np.ndarray | None:
        """The distinct values of float column ``name`` written so far, sorted (NaN last), when the writer has
        kept them all (None otherwise)."""
        return None if name in self.floats.full or name not in self.floats.known else self.floats.known[name][0]

    def write(self, table) -> None:
        """The rows of ``table`` (the header first, on the first call)."""
        columns = [(str(name), kind, [guarded(v) for v in values] if kind == "text" else values)   # csv_cells
                   for name, (kind, values) in _columns(table)]
        quote = any(kind == "text" and any(_NEEDS_QUOTES.search(v) for v in set(values) if v is not None)
                    for _, kind, values in columns)
        names = [n for n, _, _ in columns]
        if self.names is None:
            self.names, self.quote = names, quote
            self.handle.write(",".join(f'"{n}"' if _NEEDS_QUOTES.search(n) else n
                                       for n in (n.replace('"', '""') for n in names)) + "\n")
        elif names != self.names or (quote and not self.quote):
            raise ValueError(f"{self.path}: a block of rows with other columns, or text needing quotes the first "
                             "block's did not: not one table")
        rows = len(columns[0][2]) if columns else 0
        cells = [self.floats.cells(name, values) if kind == "float"
                 else _cells(kind, values, self.time_format, self.quote) for name, kind, values in columns]
        for start in range(0, rows, _ROWS):
            block = [column(start, start + _ROWS) for column in cells]
            self.handle.write("\n".join(map(",".join, zip(*block))) + "\n")
            del block                             # this block's text let go of before the next is made


def _columns(table):
    """(name, (kind, values)) of every column: kind ``float``, ``int``, ``time`` (numpy arrays), ``text`` (a list of
    str or None for an empty unquoted cell)."""
    names = list(table.columns) if hasattr(table, "columns") else list(table.names)
    for name in names:
        column = table[name]
        yield name, (_of_pandas(column) if hasattr(column, "dtype") and not isinstance(column, np.ndarray)
                     else _of_numpy(np.asarray(column)))


def _of_numpy(values: np.ndarray):
    kind = values.dtype.kind
    if kind == "M":
        return "time", values
    if kind == "b":
        return "text", ["True" if v else "False" for v in values.tolist()]
    if kind in "iu":
        return "int", values
    if kind == "f":
        return "float", values
    return "text", _texts(values.tolist())


def _of_pandas(column):
    import pandas as pd

    api = pd.api.types
    if api.is_datetime64_any_dtype(column):
        if getattr(column.dt, "tz", None) is not None:
            column = column.dt.tz_localize(None)                 # its wall time, as strftime writes it
        return "time", column.to_numpy()
    if api.is_bool_dtype(column):
        return "text", [None if v is None or v is pd.NA else ("True" if v else "False")
                        for v in column.astype(object).tolist()]
    if api.is_numeric_dtype(column):
        if column.hasnans and api.is_integer_dtype(column):       # a nullable integer column with gaps
            return "text_unquoted", [None if v is pd.NA or v is None else str(int(v))
                                     for v in column.astype(object).tolist()]
        if api.is_integer_dtype(column):
            return "int", column.to_numpy()
        return "float", column.to_numpy(dtype=float, na_value=np.nan)
    return "text", _texts(column.astype(object).tolist())


def _texts(values: list) -> list:
    """Cell texts of an object column: its strings as they are, NaN, None and NaT as empty, anything else str()."""
    try:
        if all(type(v) is str for v in set(values)):     # the usual case, checked on the distinct values
            return values
    except TypeError:                                    # unhashable cells (lists): each one written as str()
        pass
    return [cell_text(v) for v in values]


def _cells(kind: str, values, time_format: str, quote: bool):
    """A column's cells other than floats' (``_FloatTexts``): a function of (start, stop) giving the text of those
    rows' cells."""
    if kind == "int":
        return lambda start, stop: list(map(str, values[start:stop].tolist()))
    if kind == "time":
        return lambda start, stop: _texts_of(_times(values[start:stop], time_format), quote)
    if kind == "text_unquoted":
        return lambda start, stop: _texts_of(values[start:stop], False)
    return lambda start, stop: _texts_of(values[start:stop], quote)


def _texts_of(values: list, quote: bool) -> list[str]:
    if not quote:
        return ["" if v is None else v for v in values]
    return ["" if v is None else '"' + v.replace('"', '""') + '"' for v in values]


class _FloatTexts:
    """The cells of a writer's float columns. A column repeats its values (gauges, rates over whole seconds,
    latencies in whole microseconds): each distinct value is formatted once, in whichever block it first comes, and
    looked up after; a block with a negative zero (equal to zero but written ``-0``) has its values formatted on
    their own, as has a column once the writer holds ``_KNOWN_TEXTS`` formatted values."""

    def __init__(self):
        self.known: dict = {}                      # column -> (sorted distinct values, NaN last; their texts)
        self.full: set = set()                     # columns formatted value by value
        self.held = 0

    def cells(self, name: str, values):
        """A function of (start, stop) giving the text of those rows' cells of ``values``, column ``name``'s."""
        values = np.asarray(values, dtype=np.float64)
        direct = lambda start, stop: format_floats(values[start:stop])      # noqa: E731
        if not values.size or name in self.full or ((values == 0) & np.signbit(values)).any():
            return direct
        known, texts = self.known.get(name, (np.zeros(0), np.zeros(0, dtype=object)))
        at = np.searchsorted(known, values)            # known: sorted, NaN last, as searchsorted expects
        found = np.isnan(values) if known.size and np.isnan(known[-1]) else np.zeros(values.size, dtype=bool)
        if known.size:
            found |= known[np.minimum(at, known.size - 1)] == values
        if not found.all():                            # values not met before: formatted once, and kept
            new = np.unique(values[~found])
            if self.held + new.size > _KNOWN_TEXTS:
                self.full.add(name)
                return direct
            merged = np.concatenate((known, new))
            order = np.argsort(merged, kind="stable")
            known, texts = merged[order], np.concatenate((texts, np.array(format_floats(new), dtype=object)))[order]
            self.known[name] = (known, texts)
            self.held += new.size
            at = np.searchsorted(known, values)
        return lambda start, stop: texts[at[start:stop]].tolist()


def _times(values: np.ndarray, time_format: str) -> list:
    """Datetimes (numpy, naive: their wall time) as text in ``time_format``; None for NaT."""
    missing = np.isnat(values)
    if time_format.endswith("Z") and time_format[:-1] == _ISO_MICROSECONDS:
        text = np.char.add(np.datetime_as_string(values.astype("datetime64[us]"), unit="us"), "Z").tolist()
    else:
        text = [v.strftime(time_format) if v is not None else None
                for v in values.astype("datetime64[us]").tolist()]
    return [None if gap else t for t, gap in zip(text, missing.tolist())] if missing.any() else text


def format_floats(values: np.ndarray) -> list[str]:
    """Every float as Arrow's CSV writer writes it (see the module docstring); NaN as an empty string."""
    values = np.asarray(values, dtype=np.float64)
    out = np.full(values.size, "", dtype=object)
    size = np.abs(values)
    plain = ((size >= _LOW) & (size < _HIGH)) | ((values == 0) & ~np.signbit(values))    # NaN, inf: not plain
    whole = plain & (values == np.trunc(values))
    if whole.any():
        out[whole] = list(map(str, values[whole].astype(np.int64).tolist()))
    fraction = plain & ~whole
    if fraction.any():
        out[fraction] = list(map(repr, values[fraction].tolist()))
    rest = ~plain & ~np.isnan(values)
    if rest.any():
        out[rest] = [_arrow_layout(v) for v in values[rest].tolist()]
    return out.tolist()


def _arrow_layout(value: float) -> str:
    """One float laid out as double-conversion's ``ToShortest`` with Arrow's settings (decimal notation for decimal
    exponents -6 to 9, otherwise ``d.ddde+X``)."""
    if value != value:
        return ""
    if value in (np.inf, -np.inf):
        return "inf" if value > 0 else "-inf"
    sign = "-" if value < 0 or (value == 0 and np.signbit(value)) else ""
    if value == 0:
        return sign + "0"
    text = repr(abs(value))
    mantissa, _, exponent = text.partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    point = len(whole) + int(exponent or 0) - (len(whole + fraction) - len((whole + fraction).lstrip("0")))
    digits = digits.rstrip("0") or "0"
    power = point - 1                                          # value = d.ddd x 10^power
    if -6 <= power < 10:
        if point <= 0:
            return f"{sign}0.{'0' * -point}{digits}"
        if point >= len(digits):
            return sign + digits + "0" * (point - len(digits))
        return f"{sign}{digits[:point]}.{digits[point:]}"
    tail = f".{digits[1:]}" if len(digits) > 1 else ""
    return f"{sign}{digits[0]}{tail}e{'+' if power >= 0 else '-'}{abs(power)}"
