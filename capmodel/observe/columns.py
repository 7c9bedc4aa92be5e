"""A table held as plain numpy columns, in order: how the FTDC path of ``capmodel observe`` decodes, derives and
writes its tables without importing pandas (pandas with pyarrow is about 80 MB and half a second of CPU before it
holds a single row). ``frame()`` gives the pandas DataFrame to whoever asks for one (a notebook, the fleet)."""
from __future__ import annotations

import numpy as np

_MISSING = ("NaTType", "NAType")          # pandas' missing time and missing value, named without importing pandas

class Columns:
    """Named numpy arrays of one length: ``table[name]``, ``name in table``, ``len(table)`` (rows), ``names``;
    datetime64 columns are UTC."""

    __slots__ = ("data", "rows")

    def __init__(self, data: dict, rows: int | None = None):
        self.data = {str(name): np.asarray(values) for name, values in data.items()}
        lengths = {len(values) for values in self.data.values()}
        if len(lengths) > 1:
            raise ValueError(f"columns of different lengths: {sorted(lengths)}")
        self.rows = lengths.pop() if lengths else int(rows or 0)

    def __len__(self) -> int:
        return self.rows

    def __getitem__(self, name: str) -> np.ndarray:
        return self.data[name]

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
        return Columns({name: values[rows] for name, values in self.data.items()}, kept)

    def frame(self):
        """A pandas DataFrame of the same columns (datetimes as UTC, microseconds), index 0..rows-1."""
        import pandas as pd

        data = {}
        for name, values in self.data.items():
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
