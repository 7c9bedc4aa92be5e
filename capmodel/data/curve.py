"""The curve table: the one exchange format between bench, data readers and models.

A pandas DataFrame with one row per measured step: ``concurrency`` (> 0), ``throughput`` (ops/s, >= 0), optional
latency and utilisation columns, and free label columns, each declared in ``capmodel.data.curve_columns``.
``validate_curve`` is the single gate every reader and every model goes through, so its messages are the ones users
see.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from capmodel.constraints import typed
from capmodel.data.column_names import column_label
from capmodel.data.curve_columns import LATENCY, OPTIONAL_NUMERIC, PER_OP_LATENCY, REQUIRED
from capmodel.data.input_limits import listed
from capmodel.errors import InputError, shown
from capmodel.formatting import number

# Magnitudes a measured curve can have; values beyond them are a unit error, an outlier or a hostile file, and would
# only overflow the fit (refused here with the row, not fitted into a silent lambda of 1e298):
CONCURRENCY_RANGE = (1e-6, 1e9)   # clients, threads, nodes or shards
MAX_THROUGHPUT = 1e15             # operations (or documents) per second
MIN_THROUGHPUT = 1e-6             # a measured rate above 0 but below one operation in 11 days: a unit error (and the
                                  # fit's arithmetic underflows below ~1e-9: a lambda printed as 0)
MAX_SPAN = 1e12                   # largest / smallest positive throughput of one curve (12 orders of magnitude)
MAX_MEASURE = 1e12                # latencies (ms) and error counts


def _where(source: str | None) -> str:
    return f"{source}: " if source else ""


def validate_curve(df: pd.DataFrame, source: str | None = None, min_points: int = 1) -> pd.DataFrame:
    """Check a curve table and return a clean copy: numeric columns as float, rows in measured order.

    The columns and their checks are declared once in ``capmodel.data.curve_columns`` (the manual's page "The curve
    table"). ``read_curve`` and ``load_curve`` call it.

    Parameters
    ----------
    df : pandas.DataFrame
        A table with at least ``concurrency`` and ``throughput``. A column a reader renamed
        (``df.attrs["source_columns"]``: curve name to the file's name) is named in messages as the file names it.
    source : str, optional
        Names the file (or dataset) in messages.
    min_points : int, default 1
        Fewer rows is an error.

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    InputError
        Naming the file, column and row (data rows counted from 1) of the first problem: a required column missing, a
        value that is not a number, not finite or out of range, too few rows.
    """
    where = _where(source)

    def column(col: str) -> str:
        return column_label(df, col)

    if not isinstance(df, pd.DataFrame):
        raise InputError(f"{where}expected a table (pandas DataFrame), got {type(df).__name__}")
    repeated = sorted({str(c) for c in df.columns[df.columns.duplicated()]})
    if repeated:
        raise InputError(f"{where}column name(s) {', '.join(map(repr, repeated))} appear more than once")
    for col in REQUIRED:
        if col not in df.columns:
            have = listed(df.columns)
            raise InputError(f"{where}missing column '{col}' (columns present: {have}); map it with --{col} COL")
    out = df.copy().reset_index(drop=True)
    per_op = tuple(c for c in out.columns if isinstance(c, str) and PER_OP_LATENCY.match(c) and c not in LATENCY)
    numeric = REQUIRED + tuple(c for c in OPTIONAL_NUMERIC if c in out.columns) + per_op
    for col in numeric:
        kind = {"m": "durations", "M": "dates", "c": "complex numbers"}.get(getattr(out[col].dtype, "kind", ""))
        if kind:   # pandas would read a duration as nanoseconds, a complex number as its real part
            raise InputError(f"{where}{column(col)} holds {kind} ({out[col].dtype}), not real numbers")
        values = numeric_column(out[col], f"{where}{column(col)}")
        bad = values.isna() & out[col].notna()
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise InputError(f"{where}{column(col)}, row {row + 1}: {shown(out[col].iloc[row])} is not a number")
        if col in REQUIRED and values.isna().any():
            row = int(np.flatnonzero(values.isna().to_numpy())[0])
            raise InputError(f"{where}{column(col)}, row {row + 1}: value is missing (NaN)")
        if np.isinf(values.to_numpy(dtype=float, na_value=np.nan)).any():
            row = int(np.flatnonzero(np.isinf(values.to_numpy(dtype=float, na_value=np.nan)))[0])
            raise InputError(f"{where}{column(col)}, row {row + 1}: value is infinite")
        out[col] = values.astype(float)
    conc, thr = out["concurrency"].to_numpy(), out["throughput"].to_numpy()
    if (conc <= 0).any():
        row = int(np.flatnonzero(conc <= 0)[0])
        raise InputError(f"{where}{column('concurrency')}, row {row + 1}: {typed(conc[row])} must be > 0")
    if (thr < 0).any():
        row = int(np.flatnonzero(thr < 0)[0])
        raise InputError(f"{where}{column('throughput')}, row {row + 1}: {typed(thr[row])} must be >= 0")
    low, high = CONCURRENCY_RANGE
    if ((conc < low) | (conc > high)).any():
        row = int(np.flatnonzero((conc < low) | (conc > high))[0])
        raise InputError(f"{where}{column('concurrency')}, row {row + 1}: {typed(conc[row])} is outside "
                         f"{number(low, 6)} to "
                         f"{number(high, 6)} (a unit error?)")
    if (thr > MAX_THROUGHPUT).any():
        row = int(np.flatnonzero(thr > MAX_THROUGHPUT)[0])
        raise InputError(f"{where}{column('throughput')}, row {row + 1}: {typed(thr[row])} is more than "
                         f"{number(MAX_THROUGHPUT, 6)} per second (a unit error or an outlier?)")
    if ((thr > 0) & (thr < MIN_THROUGHPUT)).any():
        row = int(np.flatnonzero((thr > 0) & (thr < MIN_THROUGHPUT))[0])
        raise InputError(f"{where}{column('throughput')}, row {row + 1}: {typed(thr[row])} per second is "
                         f"above 0 but below "
                         f"{number(MIN_THROUGHPUT, 6)} (a unit error?)")
    positive = np.flatnonzero(thr > 0)
    if len(positive) and thr[positive].max() > MAX_SPAN * thr[positive].min():
        small, large = positive[np.argmin(thr[positive])], positive[np.argmax(thr[positive])]
        raise InputError(f"{where}{column('throughput')}: values span more than {np.log10(MAX_SPAN):.0f} orders of "
                         f"magnitude (row {small + 1}: {typed(thr[small])}, row {large + 1}: "
                         f"{typed(thr[large])}); a unit "
                         "error or an outlier?")
    for col in tuple(c for c in LATENCY + ("errors",) if c in out.columns) + per_op:
        values = out[col].to_numpy()
        if (values < 0).any():
            row = int(np.flatnonzero(values < 0)[0])
            raise InputError(f"{where}{column(col)}, row {row + 1}: {typed(values[row])} must be >= 0")
        if (values > MAX_MEASURE).any():
            row = int(np.flatnonzero(values > MAX_MEASURE)[0])
            raise InputError(f"{where}{column(col)}, row {row + 1}: {typed(values[row])} is more than "
                             f"{number(MAX_MEASURE, 6)}")
    if "cpu_util" in out.columns:
        cpu = out["cpu_util"].to_numpy()
        bad = (cpu < 0) | (cpu > 1)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise InputError(f"{where}{column('cpu_util')}, row {row + 1}: {typed(cpu[row])} must be a "
                             f"fraction 0-1")
    if len(out) < min_points:
        raise InputError(f"{where}{len(out)} data rows, need at least {min_points}")
    return out


def numeric_column(column: pd.Series, where: str) -> pd.Series:
    """``pd.to_numeric`` (unreadable cells NaN); a number too large for a float (a 400-digit cell) is named by row."""
    try:
        return pd.to_numeric(column, errors="coerce")
    except (OverflowError, ValueError):
        for row, value in enumerate(column):
            try:
                float(value)
            except OverflowError:
                raise InputError(f"{where}, row {row + 1}: {shown(value)} is too large a number") from None
            except (TypeError, ValueError):
                pass
        raise


def require_points(curve: pd.DataFrame, n_params: int, model: str, source: str | None = None) -> None:
    """Raise ``InputError`` unless the curve has more points than the model has parameters."""
    if len(curve) <= n_params:
        raise InputError(
            f"{_where(source)}{len(curve)} point{'' if len(curve) == 1 else 's'} cannot fit {model} with {n_params} "
            f"parameters; measure at least {n_params + 1} points"
        )
