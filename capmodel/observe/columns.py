"""A table held as plain numpy columns, in order: how the FTDC path of ``capmodel observe`` decodes, derives and
writes its tables without importing pandas (pandas with pyarrow is about 80 MB and half a second of CPU before it
holds a single row). ``Columns.frame()`` gives the pandas DataFrame to whoever asks for one (a notebook, the fleet).
Beside it: ``Rows``, which gathers a day of samples without holding them twice, and the rules for a cell's text and
numbers that apply alike to these columns and to a DataFrame's."""
from __future__ import annotations

import numpy as np

_SEGMENT = 16_384                        # rows gathered in one block of memory (``Rows``)
_MISSING = ("NaTType", "NAType")          # pandas' missing time and missing value, named without importing pandas

class Coded:
    """A float column held as each row's index among its distinct values (``values[codes]``, 2 bytes a row, not 8):
    ``Coded.of`` codes a column of at most 65,536 distinct values and no negative zero (which a distinct value
    would fold into zero)."""

    __slots__ = ("codes", "values")

    def __init__(self, codes: np.ndarray, values: np.ndarray):
        self.codes, self.values = codes, values

    def __len__(self) -> int:
        return len(self.codes)

    @classmethod
    def of(cls, column: np.ndarray, distinct: np.ndarray | None = None):
        """``column`` coded, or itself when it cannot be (see the class); ``distinct``: its distinct values, sorted
        (NaN last), when they are known already (a ``CsvWriter`` has them), else found here."""
        if column.dtype.kind != "f" or ((column == 0) & np.signbit(column)).any():
            return column
        if distinct is None:
            distinct, codes = np.unique(column, return_inverse=True)
        else:
            codes = np.searchsorted(distinct, column)
            at = np.minimum(codes, max(distinct.size - 1, 0))
            if not distinct.size or not ((distinct[at] == column) | (np.isnan(column) & np.isnan(distinct[at]))).all():
                return column                    # not every value among them: held as it is
        return cls(codes.astype(np.uint16), distinct) if distinct.size <= 1 << 16 else column

    def decoded(self) -> np.ndarray:
        return self.values[self.codes]


class Columns:
    """Named numpy arrays of one length: ``table[name]``, ``name in table``, ``len(table)`` (rows), ``names``;
    datetime64 columns are UTC. A column may be held ``Coded``: ``table[name]`` gives its values."""

    __slots__ = ("data", "rows")

    def __init__(self, data: dict, rows: int | None = None):
        self.data = {str(name): values if isinstance(values, Coded) else np.asarray(values)
                     for name, values in data.items()}
        lengths = {len(values) for values in self.data.values()}
        if len(lengths) > 1:
            raise ValueError(f"columns of different lengths: {sorted(lengths)}")
        self.rows = lengths.pop() if lengths else int(rows or 0)

    def __len__(self) -> int:
        return self.rows

    def __getitem__(self, name: str) -> np.ndarray:
        values = self.data[name]
        return values.decoded() if isinstance(values, Coded) else values

    def __contains__(self, name) -> bool:
        return name in self.data

    @property
    def names(self) -> list[str]:
        """The column names, in order."""
        return list(self.data)

    def take(self, rows) -> "Columns":
        """The table of the given rows (a boolean mask or positions)."""
        rows = np.asarray(rows)
        kept = int(rows.sum()) if rows.dtype == bool else len(rows)
        return Columns({name: self[name][rows] for name in self.data}, kept)

    def part(self, start: int, stop: int) -> "Columns":
        """The table of the rows ``start`` to ``stop`` (views of the columns, not copies)."""
        return Columns({name: Coded(values.codes[start:stop], values.values) if isinstance(values, Coded)
                        else values[start:stop] for name, values in self.data.items()},
                       max(0, min(stop, self.rows) - start))

    def frame(self):
        """A pandas DataFrame of the same columns (datetimes as UTC, microseconds), index 0..rows-1."""
        import pandas as pd

        data = {}
        for name in self.data:
            values = self[name]
            if values.dtype.kind == "M":
                unit = np.datetime_data(values.dtype)[0]
                values = pd.to_datetime(values.view(np.int64), unit=unit, utc=True)
            data[name] = values
        return pd.DataFrame(data, index=pd.RangeIndex(self.rows))


def cell_text(value) -> str:
    """A table cell as text: empty for a missing value (None, NaN, pandas' NaT and NA), ``str`` of anything else."""
    if value is None or (isinstance(value, float) and value != value) or type(value).__name__ in _MISSING:
        return ""
    return str(value)


def as_floats(column) -> np.ndarray:
    """A column as floats, anything that is not a number NaN (``pandas.to_numeric(errors="coerce")``); a float column
    is itself, not a copy."""
    if isinstance(column, np.ndarray) and column.dtype.kind in "biuf":
        return column.astype(float, copy=False)
    import pandas as pd

    return pd.to_numeric(pd.Series(column), errors="coerce").to_numpy(dtype=float)


def empty_cells(column) -> np.ndarray:
    """Which cells of a column are empty (``cell_text`` gives ""): a missing value or an empty string."""
    values = column.to_numpy() if hasattr(column, "to_numpy") else np.asarray(column)
    if values.dtype.kind == "U" or (values.dtype == object and {type(v) for v in values.tolist()} == {str}):
        return values == ""
    return np.array([cell_text(v) == "" for v in values.tolist()], dtype=bool)


class Rows:
    """Rows of floats gathered a piece at a time (an FTDC chunk's samples) into segments of ``_SEGMENT`` rows, each
    its own block of memory, handed back to the system when freed; joined at the end into one array per column, each
    segment freed once copied: the rows are held about once, not twice as a growing array's copy would hold them, and
    each column can be let go of on its own once used (``serverstatus.interval_columns`` does)."""

    def __init__(self, width: int):
        self.width, self.filled = width, _SEGMENT
        self.segments: list = []

    def __len__(self) -> int:
        return (len(self.segments) - 1) * _SEGMENT + self.filled if self.segments else 0

    def append(self, columns: list, keep: np.ndarray) -> None:
        """The ``keep`` rows of one piece: ``columns`` (numeric arrays, None for a column the piece lacks: NaN)."""
        start = 0
        chosen = np.flatnonzero(keep)
        while start < chosen.size:
            if self.filled == _SEGMENT:
                self.segments.append(np.empty((_SEGMENT, self.width)))
                self.filled = 0
            take = chosen[start:start + _SEGMENT - self.filled]
            segment, at = self.segments[-1], self.filled
            for column, values in enumerate(columns):
                segment[at:at + take.size, column] = values[take] if values is not None else np.nan
            self.filled += take.size
            start += take.size

    def column(self, index: int) -> np.ndarray:
        """Every row of one column, as one float array (the segments kept)."""
        total = len(self)
        out = np.empty(total)
        for at, segment in zip(range(0, total, _SEGMENT), self.segments):
            out[at:at + _SEGMENT] = segment[:min(_SEGMENT, total - at), index]
        return out

    def joined(self) -> list[np.ndarray]:
        """Every row, as one float array per column (each its own block of memory); the segments are let go of."""
        total = len(self)
        out = [np.empty(total) for _ in range(self.width)]
        for index in range(len(self.segments)):
            segment, self.segments[index] = self.segments[index], None
            at = index * _SEGMENT
            for column, values in enumerate(out):
                values[at:at + _SEGMENT] = segment[:min(_SEGMENT, total - at), column]
            del segment
        self.segments = []
        return out


def release_free_memory() -> None:
    """Hand the memory freed in the C library's heap back to the system (glibc's ``malloc_trim``: blocks of rows
    made and freed one after another leave holes that the process otherwise keeps); nothing where there is none."""
    import ctypes  # numpy has imported it already

    try:
        ctypes.CDLL(None).malloc_trim(0)     # the process's own symbols: the C library it runs on
    except (OSError, AttributeError, TypeError):     # not glibc (macOS, musl), Windows (no CDLL(None))
        pass
