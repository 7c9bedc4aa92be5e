"""VM catalogs: a price list (name, family, vCPU, RAM, storage, monthly cost, currency) joined by name with what was
measured on each VM (absolute or relative throughput, utilization, latencies)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from capmodel.constraints import typed
from capmodel.data.column_names import column_label
from capmodel.errors import PlanError

CATALOG_REQUIRED = ("vm", "monthly_cost")
CATALOG_NUMERIC = ("vcpu", "ram_gb", "monthly_cost")
MEASUREMENT_NUMERIC = (
    "throughput", "throughput_low", "throughput_high",
    "relative_throughput", "relative_throughput_low", "relative_throughput_high",
    "cpu_util", "latency_p95_ms",
)
QUALITATIVE_SUFFIX = "_latency_vs_baseline"
QUALITATIVE_VALUES = ("baseline", "similar", "lower", "higher")


def _where(source):
    return f"{source}: " if source else ""


def _first(mask) -> int | None:
    """Index of the first True in ``mask`` (None when there is none)."""
    hits = np.flatnonzero(np.asarray(mask, dtype=bool))
    return int(hits[0]) if hits.size else None


# The largest value each numeric column may hold: beyond it the figure is a typing or unit slip, not a VM.
UPPER_BOUND = {"vcpu": 100_000, "ram_gb": 1_000_000, "monthly_cost": 1_000_000_000,
               "throughput": 1e12, "throughput_low": 1e12, "throughput_high": 1e12,
               "relative_throughput": 1e6, "relative_throughput_low": 1e6, "relative_throughput_high": 1e6,
               "cpu_util": 1.0, "latency_p95_ms": 1e9}


def _numeric(df: pd.DataFrame, col: str, source, positive: bool) -> None:
    """``col`` as floats, each finite and inside its range (``UPPER_BOUND``), its text cells read as
    ``capmodel.data.number_cells`` reads them (``2,635``, ``1.234,5``); the refusal names column, row and VM."""
    from capmodel.constraints import Number
    from capmodel.data.curve import numeric_column
    from capmodel.data.number_cells import number_cell
    from capmodel.errors import shown

    column = f"{_where(source)}{column_label(df, col)}"
    values = numeric_column(df[col].map(number_cell), column)
    bad = values.isna() & df[col].notna() & (df[col].astype(str).str.strip() != "")
    row = _first(bad.to_numpy())
    if row is not None:
        raise PlanError(f"{column}, row {row + 1}: {shown(df[col].iloc[row])} is not a number")
    high = UPPER_BOUND[col]
    bound = Number(float, 0.0, high, low_open=positive,
                   wanted_text=f"a number {'>' if positive else '>='} 0 and at most {high:,.0f}")
    for row, value in enumerate(values.tolist()):
        if not np.isnan(value):
            bound.check(value, PlanError, f"{column}, row {row + 1} (VM '{df['vm'].iloc[row]}')")
    df[col] = values.astype(float)


def _costs(df: pd.DataFrame, source) -> None:
    """``monthly_cost`` with its currency symbols or codes read off (``$420.00``, ``420 EUR``): they fill
    ``currency`` where the catalog has none, and must agree with it where it has one, and with each other. A cell that
    is no amount is left for ``_numeric`` to name."""
    from capmodel.data.number_cells import plain_number, read_money

    read = [read_money(cell) for cell in df["monthly_cost"]]
    if not any(mark for _, mark in read):
        return
    column = f"{_where(source)}{column_label(df, 'monthly_cost')}"
    written = (df["currency"].where(df["currency"].notna(), "").astype(str).str.strip().tolist()
               if "currency" in df.columns else [""] * len(df))
    amounts = [(row, mark) for row, (amount, mark) in enumerate(read)
               if not isinstance(amount, str) or plain_number(amount) is not None]
    for row, mark in amounts:
        named = written[row].upper()
        if mark and named and mark != named:
            raise PlanError(f"{column}, row {row + 1} (VM '{df['vm'].iloc[row]}'): the cost says {mark} but the "
                            f"currency column says {written[row]}; make them agree")
    first = next(mark for _, mark in amounts if mark)
    for row, mark in amounts:
        if mark != first and not (not mark and written[row].upper() == first):
            raise PlanError(f"{column}, row {row + 1} (VM '{df['vm'].iloc[row]}'): the costs are in {first} and "
                            f"{mark or written[row] or 'no currency'}; convert them to one currency (costs in "
                            "different ones cannot be compared)")
    df["monthly_cost"] = [amount for amount, _ in read]
    df["currency"] = [named or first for named in written]


def _names(df: pd.DataFrame, source) -> None:
    names = df["vm"].astype(str).str.strip()
    row = _first(((names == "") | df["vm"].isna()).to_numpy())
    if row is not None:
        raise PlanError(f"{_where(source)}{column_label(df, 'vm')}, row {row + 1}: the VM name is empty")
    dup = names.duplicated()
    row = _first(dup.to_numpy())
    if row is not None:
        raise PlanError(f"{_where(source)}{column_label(df, 'vm')}, row {row + 1}: VM '{names.iloc[row]}' is listed "
                        "twice")
    df["vm"] = names


def validate_catalog(df: pd.DataFrame, source: str | None = None) -> pd.DataFrame:
    """Check a VM catalog and return a clean copy.

    Parameters
    ----------
    df : pandas.DataFrame
        ``vm`` and ``monthly_cost`` required; ``vcpu``, ``ram_gb`` and other numeric columns checked when present.
    source : str, optional
        Names the table in messages.

    Returns
    -------
    pandas.DataFrame
        VM names stripped, numbers checked, ``currency`` filled ("" when not given).

    Raises
    ------
    PlanError
        Not a DataFrame, a required column missing, no rows, an empty or repeated VM name, a number out of range, a
        missing cost, or costs in more than one currency (named by column and row).
    """
    if not isinstance(df, pd.DataFrame):
        raise PlanError(f"{_where(source)}expected a table (pandas DataFrame), got {type(df).__name__}")
    for col in CATALOG_REQUIRED:
        if col not in df.columns:
            from capmodel.data.readers import CATALOG_SPELLINGS

            spelled = df.attrs.get("source_columns", {})          # the file's own names, as the user sees them
            have = ", ".join(str(spelled.get(c, c)) for c in df.columns) or "none"
            known = ", ".join(CATALOG_SPELLINGS[col][:4])
            raise PlanError(f"{_where(source)}missing column '{col}' (spelled {known} ...; columns present: {have})")
    if df.empty:
        raise PlanError(f"{_where(source)}the catalog has no rows")
    out = df.copy().reset_index(drop=True)
    _names(out, source)
    _costs(out, source)
    for col in CATALOG_NUMERIC:
        if col in out.columns:
            _numeric(out, col, source, positive=True)
    row = _first(out["monthly_cost"].isna().to_numpy())
    if row is not None:
        raise PlanError(f"{_where(source)}{column_label(out, 'monthly_cost')}, row {row + 1}: value is missing")
    if "currency" not in out.columns:
        out["currency"] = ""
    given = out["currency"].where(out["currency"].notna(), "").astype(str).str.strip()
    named = sorted(set(given) - {""})
    if len(named) > 1 or (named and (given == "").any()):
        # the cheapest VM, the cost per user and the Pareto frontier compare the costs as one unit
        row = _first((given != named[0]).to_numpy())
        assert row is not None   # two currencies, or one and none: some row differs from the first named
        found = " and ".join(named + (["no currency"] if (given == "").any() else []))
        raise PlanError(f"{_where(source)}{column_label(out, 'currency')}, row {row + 1} (VM "
                        f"'{out['vm'].iloc[row]}'): the costs are in {found}; convert them to one currency (costs "
                        "in different ones cannot be compared)")
    out["currency"] = given
    return out


def validate_measurements(df: pd.DataFrame, source: str | None = None) -> pd.DataFrame:
    """Check a per-VM measurement table: ``vm`` and ``throughput`` or ``relative_throughput`` per row."""
    if "vm" not in df.columns:
        raise PlanError(f"{_where(source)}missing column 'vm' (the VM name that joins the catalog)")
    out = df.copy().reset_index(drop=True)
    _names(out, source)
    for col in MEASUREMENT_NUMERIC:
        if col in out.columns:
            _numeric(out, col, source, positive=False)
    if "throughput" not in out.columns and "relative_throughput" not in out.columns:
        raise PlanError(f"{_where(source)}needs a column 'throughput' (ops/s) or 'relative_throughput' (x baseline)")
    absolute = out["throughput"] if "throughput" in out.columns else pd.Series(np.nan, index=out.index)
    relative = (out["relative_throughput"] if "relative_throughput" in out.columns
                else pd.Series(np.nan, index=out.index))
    missing = absolute.isna() & relative.isna()
    row = _first(missing.to_numpy())
    if row is not None:
        raise PlanError(f"{_where(source)}row {row + 1} (VM '{out['vm'].iloc[row]}'): no throughput or "
                        "relative_throughput")
    if "cpu_util" in out.columns:
        cpu = out["cpu_util"].to_numpy(dtype=float)
        bad = (cpu <= 0) | (cpu > 1)
        row = _first(bad)
        if row is not None:
            raise PlanError(f"{_where(source)}{column_label(out, 'cpu_util')}, row {row + 1}: {typed(cpu[row])} "
                            "must be a fraction in (0, 1]")
    for col in (c for c in out.columns if str(c).endswith(QUALITATIVE_SUFFIX)):
        text = out[col].fillna("").astype(str).str.strip().str.lower()
        bad = ~text.isin(QUALITATIVE_VALUES + ("",))
        row = _first(bad.to_numpy())
        if row is not None:
            raise PlanError(f"{_where(source)}column '{col}', row {row + 1}: {out[col].iloc[row]!r} is not one of "
                            f"{', '.join(QUALITATIVE_VALUES)}")
        out[col] = text
    for name in ("throughput", "relative_throughput"):
        if name in out.columns:
            for end in ("low", "high"):
                col = f"{name}_{end}"
                out[col] = out[col].fillna(out[name]) if col in out.columns else out[name]
            inverted = out[f"{name}_low"] > out[f"{name}_high"]
            row = _first(inverted.to_numpy())
            if row is not None:
                raise PlanError(f"{_where(source)}row {row + 1}: {name}_low is above {name}_high")
    return out


def join_measurements(catalog: pd.DataFrame, measurements: pd.DataFrame, catalog_source: str | None = None,
                      measurements_source: str | None = None) -> pd.DataFrame:
    """The catalog with each VM's measurement columns added, joined on ``vm``.

    Parameters
    ----------
    catalog : pandas.DataFrame
        The VMs and prices (``validate_catalog`` checks them).
    measurements : pandas.DataFrame
        One row per measured VM, ``vm`` and the measured columns (``throughput`` or ``relative_throughput``,
        ``cpu_util``, ``latency_p95_ms`` ...).
    catalog_source, measurements_source : str, optional
        Name the two tables in messages.

    Returns
    -------
    pandas.DataFrame
        The catalog's rows; VMs without a measurement keep empty measurement columns (the planner leaves them out and
        says so).

    Raises
    ------
    PlanError
        Either table is refused, or a measured VM is not in the catalog (it has no price).
    """
    catalog = validate_catalog(catalog, catalog_source)
    measurements = validate_measurements(measurements, measurements_source)
    unknown = sorted(set(measurements["vm"]) - set(catalog["vm"]))
    if unknown:
        where = _where(measurements_source)
        raise PlanError(f"{where}VM '{unknown[0]}' is not in the catalog (catalog VMs: {', '.join(catalog['vm'])})")
    overlap = [c for c in measurements.columns if c != "vm" and c in catalog.columns]
    return catalog.merge(measurements.drop(columns=overlap), on="vm", how="left", sort=False)


def require_vm(table: pd.DataFrame, vm: str, role: str = "VM") -> pd.Series:
    """The row of a named VM; ``PlanError`` listing the known names otherwise."""
    match = table[table["vm"] == vm]
    if match.empty:
        raise PlanError(f"unknown {role} '{vm}' (known: {', '.join(map(str, table['vm']))})")
    return match.iloc[0]
