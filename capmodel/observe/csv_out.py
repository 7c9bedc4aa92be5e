"""Tables written as CSV by pyarrow's writer (compiled, about five times faster than pandas' ``to_csv`` on a day of
samples: 0.5 s against 2.4 s of CPU for 86,674 intervals and 57,230 curve points), read back by pandas as the same
table: times as text in the given format, NaN as an empty cell, numbers in their shortest form that reads back
exactly (a whole float as ``1``, not ``1.0``), bools as ``True``/``False``. Without pyarrow, pandas writes.
"""
from __future__ import annotations

import re

import pandas as pd

_NEEDS_QUOTES = re.compile(r'[,"\r\n]')


def write_csv(table: pd.DataFrame, path, time_format: str) -> None:
    """Write ``table`` (no index) to ``path``; datetime columns formatted with ``time_format``."""
    try:
        import pyarrow as pa
        import pyarrow.csv as pacsv
    except ImportError:                              # pragma: no cover - pyarrow is a dependency
        table.to_csv(path, index=False, date_format=time_format)
        return
    columns, quote = {}, False
    for name in table.columns:
        column = table[name]
        if pd.api.types.is_datetime64_any_dtype(column):
            column = column.dt.strftime(time_format)
        elif pd.api.types.is_bool_dtype(column):
            column = column.map({True: "True", False: "False"})
        elif not pd.api.types.is_numeric_dtype(column):
            column = column.astype(object).map(lambda v: "" if v is None or v is pd.NaT or
                                               (isinstance(v, float) and v != v) else str(v)).astype(object)
            quote |= bool(column.str.contains(_NEEDS_QUOTES).any())
        columns[str(name)] = pa.array(column, from_pandas=True)
    header = ",".join(f'"{n}"' if _NEEDS_QUOTES.search(n) else n for n in (n.replace('"', '""') for n in columns))
    options = pacsv.WriteOptions(include_header=False, quoting_style="needed" if quote else "none")
    with open(path, "wb") as handle:
        handle.write(header.encode() + b"\n")
        pacsv.write_csv(pa.table(columns), handle, options)
