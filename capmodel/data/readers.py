"""Read measured curves from files into the curve table: CSV, Parquet, JSON, markdown tables, YCSB client output.

``read_curve`` is the one entry point. Column mapping happens here, once: source columns are renamed to the curve-table
names (``concurrency``, ``throughput``, ``latency_p95_ms`` ...), either as the caller says or, for the columns the
caller does not name, by a table of common header spellings. The result always goes through ``validate_curve``, so a bad
value is reported with the file, the column and the row.
"""
from __future__ import annotations

import glob as globbing
import json
import os
import re
from pathlib import Path

import pandas as pd

from capmodel.data.column_names import map_columns as map_table_columns
from capmodel.data.curve import validate_curve
from capmodel.data.curve_columns import LABELS, OPTIONAL_NUMERIC, PER_OP_LATENCY, REQUIRED
from capmodel.data.input_limits import check_column_count, check_file, check_size
from capmodel.data.number_cells import number_cell
from capmodel.errors import InputError
from capmodel.extras import MissingExtraError

CURVE_KEYS = ("system", "workload", "op")  # labels that tell one curve from another; run/repeat tell replicates
FORMATS = ("csv", "tsv", "parquet", "json", "jsonl", "markdown", "ycsb")
EXTENSIONS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".md": "markdown",
    ".markdown": "markdown",
}
# Extensions that say "text", not which text: the content decides (YCSB output or a markdown table).
SNIFFED_EXTENSIONS = (".txt", ".log", ".out", "")

OPS = ("read", "write", "update", "insert", "delete", "scan", "find", "select", "aggregate")

# Curve-table column -> header spellings recognised when the caller maps nothing. Compared after `_header_key`,
# which lower-cases and drops everything but letters, digits, '/' and '%'.
_ALIASES = {
    "concurrency": (
        "concurrency", "threads", "thread count", "threadcount", "num threads", "n threads", "workers",
        "workers (threads)", "clients", "client threads", "connections", "users", "vus", "virtual users",
    ),
    "throughput": (
        "throughput", "throughput (ops/sec)", "throughput (ops/s)", "throughput ops/sec", "ops/sec", "ops/s",
        "ops per sec", "ops_per_sec", "ops per second", "operations per second", "qps", "tps", "requests/sec",
    ),
    "latency_mean_ms": (
        "latency_mean_ms", "avg latency (ms)", "average latency (ms)", "mean latency (ms)", "latency (ms)",
        "latency ms", "avg latency ms", "mean latency ms", "latency mean (ms)", "latency avg (ms)",
    ),
    "latency_p50_ms": ("latency_p50_ms", "p50 latency (ms)", "p50 (ms)", "median latency (ms)", "latency p50 (ms)"),
    "latency_p95_ms": ("latency_p95_ms", "p95 latency (ms)", "p95 (ms)", "95th percentile latency (ms)",
                       "latency p95 (ms)"),
    "latency_p99_ms": ("latency_p99_ms", "p99 latency (ms)", "p99 (ms)", "99th percentile latency (ms)",
                       "latency p99 (ms)"),
    "cpu_util": ("cpu_util", "cpu utilisation", "cpu utilization", "cpu util"),
    "errors": ("errors", "error count", "failed operations", "failures"),
}
#: how a file may name the column that says which VM (or system) a row is about: ``vm`` is the default name everywhere
#: (catalogs, measurements, ``capmodel plan --vm-column``, report 03's ``vm_column``); ``system`` is the curve table's
VM_SPELLINGS = ("vm", "system", "vm name", "vm type", "instance", "instance type", "instance name", "machine type",
                "flavor", "flavour")
DEFAULT_VM_COLUMN = VM_SPELLINGS[0]
_ALIASES["system"] = VM_SPELLINGS
for _op in OPS:
    _ALIASES[f"latency_{_op}_mean_ms"] = tuple(
        f"{stat} {_op} latency (ms)" for stat in ("avg", "average", "mean")
    ) + (f"latency_{_op}_mean_ms",)
    for _q in ("p95", "p99"):
        _ALIASES[f"latency_{_op}_{_q}_ms"] = (f"{_q} {_op} latency (ms)", f"latency_{_op}_{_q}_ms")


# VM catalog and per-VM measurement column -> header spellings (``read_catalog``), compared as the curve table's are.
CATALOG_SPELLINGS = {
    "vm": VM_SPELLINGS + ("name",),
    "monthly_cost": ("monthly cost", "cost", "cost per month", "cost/month", "monthly price", "price",
                     "price per month", "price/month", "monthly", "per month"),
    "currency": ("currency", "ccy"),
    "family": ("family", "vm family", "instance family", "series"),
    "vcpu": ("vcpu", "vcpus", "v cpu", "cpus", "cores", "vcores", "cpu count"),
    "ram_gb": ("ram_gb", "ram", "ram (gb)", "ram gb", "ram (gib)", "memory", "memory (gb)", "memory gb",
               "memory (gib)", "mem (gb)"),
    "storage": ("storage", "disk", "disk type", "storage type"),
    "throughput": _ALIASES["throughput"],
    "relative_throughput": ("relative throughput", "throughput vs baseline", "throughput (x baseline)",
                            "x baseline"),
    "cpu_util": _ALIASES["cpu_util"],
    "latency_p95_ms": _ALIASES["latency_p95_ms"],
}


def detect_format(path: str | os.PathLike) -> str:
    """The reader a file needs: from its extension, or for ``.txt``, ``.log`` and ``.out`` files from its first lines.

    Parameters
    ----------
    path : str or path-like
        The file.

    Returns
    -------
    str
        ``csv``, ``tsv``, ``parquet``, ``json``, ``markdown`` or ``ycsb``.

    Raises
    ------
    InputError
        The extension says nothing and the first lines are neither YCSB output nor a markdown table, or the file cannot
        be read.

    Examples
    --------
    >>> from capmodel.data.readers import detect_format
    >>> detect_format("data/usl_specsdm91.csv")
    'csv'
    """
    p = Path(path)
    ext = p.suffix.lower()
    if ext in EXTENSIONS:
        return EXTENSIONS[ext]
    if ext in SNIFFED_EXTENSIONS:
        head = _read_head(p, 20000)
        if re.search(r"^\[OVERALL\],", head, re.MULTILINE):
            return "ycsb"
        if re.search(r"^\s*\|.*\|.*\|", head, re.MULTILINE):
            return "markdown"
        raise InputError(f"{p}: neither YCSB client output nor a markdown table; pass format= one of "
                         f"{', '.join(FORMATS)}")
    raise InputError(f"{p}: cannot tell the format from the extension '{ext}'; pass format= one of "
                     f"{', '.join(FORMATS)}")


def _read_head(p: Path, size: int) -> str:
    try:
        with open(p, "rb") as fh:
            return fh.read(size).decode("utf-8", errors="replace")
    except OSError as exc:
        raise InputError(f"{p}: cannot read file ({exc.strerror or exc})") from None


def _read_text(p: Path) -> str:
    try:
        return p.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise InputError(f"{p}: cannot read file ({exc.strerror or exc})") from None


def read_table(path: str | os.PathLike, format: str | None = None, table: int | None = None) -> pd.DataFrame:
    """One file as a raw DataFrame with its own column names: no mapping, no validation.

    Parameters
    ----------
    path : str or path-like
        A CSV, TSV, Parquet, JSON, markdown-table or YCSB-output file.
    format : str, optional
        Overrides the format ``detect_format`` finds.
    table : int, optional
        Which table (from 0) of a markdown file holding several.

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    InputError
        The path is not a regular file, is beyond the readers' size bounds, its format is unknown or it cannot be
        parsed.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise InputError(f"a file path is a string or a path, not {type(path).__name__}")
    if format is not None and not isinstance(format, str):
        raise InputError(f"format= is a name such as 'csv', not {type(format).__name__}")
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{p}: no such file" if not p.exists() else f"{p}: not a regular file")
    check_size(p)
    fmt = (format or detect_format(p)).lower()
    if fmt not in FORMATS:
        raise InputError(f"{p}: unknown format '{fmt}'; use one of {', '.join(FORMATS)}")
    check_file(p, fmt)
    frame = _read_checked(p, fmt, table)
    check_column_count(len(frame.columns), p)
    repeated = [str(c) for c in frame.columns[frame.columns.duplicated()]]
    if repeated:
        raise InputError(f"{p}: column {repeated[0][:60]!r} appears more than once; rename one of them")
    return frame


def read_catalog(path: str | os.PathLike, format: str | None = None, **mapping: str) -> pd.DataFrame:
    """A VM catalog (or a table of per-VM measurements) with its columns named as capmodel's planner reads them.

    The file is read as ``read_table`` reads it (CSV with commas or semicolons, TSV, Parquet, JSON, markdown); its
    columns are mapped as the curve reader maps a curve's (``capmodel.data.column_names``): ``mapping`` first
    (``vm="Instance"``), then common spellings (``VM``, ``Monthly cost``, ``price``, ``vCPUs``, ``RAM (GB)`` ...), case
    and spacing ignored. Cells stay as the file writes them: the planner's ``validate_catalog`` reads
    ``$420.00``, ``1.234,50 €`` and ``2,635`` as numbers and names the file's column and row of a cell it cannot read.

    Parameters
    ----------
    path : str or path-like
        The file.
    format : str, optional
        Overrides the format ``detect_format`` finds.
    **mapping : str
        Catalog column -> the file's column holding it, for a name the spellings do not cover.

    Returns
    -------
    pandas.DataFrame
        ``attrs["source_columns"]`` maps each renamed column to the file's name, for messages.

    Raises
    ------
    InputError
        The file cannot be read, a named column is missing, or two columns could each be one catalog column.

    Examples
    --------
    >>> from capmodel.data.readers import read_catalog
    >>> read_catalog("data/benchant_vms.csv").columns.tolist()[:2]
    ['vm', 'family']
    """
    unknown = sorted(set(mapping) - set(CATALOG_SPELLINGS))
    if unknown:
        raise InputError(f"unknown catalog column '{unknown[0]}' in the mapping; use one of "
                         f"{', '.join(CATALOG_SPELLINGS)}")
    table = read_table(path, format=format)
    return map_table_columns(table, str(path), mapping, CATALOG_SPELLINGS)


def _read_checked(p: Path, fmt: str, table: int | None) -> pd.DataFrame:
    try:
        if fmt in ("csv", "tsv"):
            from capmodel.data.csv_dialect import dialect

            return pd.read_csv(p, **dialect(p, fmt))
        if fmt == "parquet":
            from capmodel.extras import require

            require("parquet", f"{p}: reading Parquet")
            return pd.read_parquet(p)
        if fmt == "json":
            return _read_json(p)
        if fmt == "jsonl":
            return _read_json_lines(p, _read_text(p))
        if fmt == "markdown":
            from capmodel.data.markdown import read_markdown_table

            return read_markdown_table(_read_text(p), source=str(p), table=table)
        from capmodel.data.ycsb import read_ycsb_run

        return pd.DataFrame([read_ycsb_run(p)])
    except (InputError, MissingExtraError):
        raise
    except UnicodeDecodeError:   # pandas' position counts inside its own read buffer: name the byte in the file
        raise InputError(_not_utf8(p)) from None
    except (ValueError, OSError, pd.errors.ParserError, ImportError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"{p}: cannot read as {fmt}: {first}") from None
    except Exception as exc:  # pyarrow raises its own error types for a damaged Parquet file
        if type(exc).__module__.startswith("pyarrow"):
            raise InputError(f"{p}: cannot read as {fmt}: {exc}") from None
        raise


def _not_utf8(p: Path) -> str:
    """Where a file stops being UTF-8: the byte offset, the line, the byte itself, and what to do."""
    data = p.read_bytes()     # bounded by check_size before any reader runs
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return (f"{p}: not UTF-8 text: byte {exc.start:,} (line {line}) is 0x{data[exc.start]:02x}; save the file "
                "as UTF-8 (a spreadsheet's Latin-1 or Windows-1252 export is not)")
    return f"{p}: not UTF-8 text; save the file as UTF-8"


def _read_json(p: Path) -> pd.DataFrame:
    """JSON records (``[{...}, ...]``), columns (``{"col": [...]}`` or ``{"col": {"0": ...}}``), or JSON Lines."""
    from capmodel.data.structured import check_depth

    text = _read_text(p)
    try:
        data = check_depth(json.loads(text, object_pairs_hook=_unique_keys(p)), p, max_depth=3)
    except json.JSONDecodeError as exc:
        if text.lstrip().startswith("{") and "\n" in text.strip():
            return _read_json_lines(p, text)
        raise InputError(f"{p}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except RecursionError:
        raise InputError(f"{p}: nested too deeply to be a table (rows of values, or columns of values)") from None
    if isinstance(data, list):
        if not all(isinstance(r, dict) for r in data):
            raise InputError(f"{p}: a JSON list must hold one object per row (records orientation)")
        return pd.DataFrame.from_records(data)
    if isinstance(data, dict):
        if all(isinstance(v, list) for v in data.values()):
            lengths = {len(v) for v in data.values()}
            if len(lengths) > 1:
                raise InputError(f"{p}: JSON columns have different lengths {sorted(lengths)}")
            return pd.DataFrame(data)
        if all(isinstance(v, dict) for v in data.values()):
            return pd.DataFrame(data)
    raise InputError(f"{p}: JSON must be a list of row objects or an object of columns")


def _unique_keys(p: Path, line: int | None = None):
    """A ``json.loads`` hook refusing an object that names a key twice (``json`` would keep the last silently)."""
    where = f"{p}: line {line}" if line is not None else str(p)

    def hook(pairs):
        keys = set()
        for key, _ in pairs:
            if key in keys:
                raise InputError(f"{where}: key {key[:60]!r} appears twice in one object; rename one of them")
            keys.add(key)
        return dict(pairs)
    return hook


def _read_json_lines(p: Path, text: str) -> pd.DataFrame:
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line, object_pairs_hook=_unique_keys(p, number))
        except json.JSONDecodeError as exc:
            raise InputError(f"{p}: line {number} is not valid JSON ({exc.msg})") from None
        except RecursionError:
            raise InputError(f"{p}: line {number} is nested too deeply to be a row") from None
        if not isinstance(row, dict):
            raise InputError(f"{p}: line {number} must be a JSON object (one row per line)")
        rows.append(row)
    return pd.DataFrame.from_records(rows)


def _expand(path) -> tuple[list[Path], str]:
    """The files behind a path argument (a file, a directory, a glob, or a list of those) and a name for messages."""
    if isinstance(path, (list, tuple)):
        files = [f for item in path for f in _expand(item)[0]]
        return files, ", ".join(map(str, path))
    text = os.fspath(path)
    p = Path(text)
    if p.is_dir():
        files = sorted(f for f in p.iterdir() if f.is_file() and not f.name.startswith("."))
        if not files:
            raise InputError(f"{p}: directory holds no files")
        return files, text
    if not p.exists() and any(ch in text for ch in "*?["):
        files = sorted(Path(f) for f in globbing.glob(text) if Path(f).is_file())
        if not files:
            raise InputError(f"{text}: no file matches this pattern")
        return files, text
    if not p.exists():
        raise InputError(f"{p}: no such file")
    return [p], text


def _map_curve_columns(df: pd.DataFrame, source: str, mapping: dict[str, str | None]) -> pd.DataFrame:
    """Rename source columns to curve-table names: the caller's mapping first, then the known header spellings
    (``capmodel.data.column_names.map_columns``, the rule every reader follows)."""
    return map_table_columns(df, source, mapping, _ALIASES, options={"concurrency": "--concurrency COL",
                                                                      "throughput": "--throughput COL"})


def _clean_numbers(df: pd.DataFrame) -> pd.DataFrame:
    """Text numbers in the numeric curve columns as numbers' text: thousands separators ("2,635", "1.234,5") and decimal
    commas read by ``capmodel.data.number_cells``."""
    numeric = set(REQUIRED) | set(OPTIONAL_NUMERIC) | {c for c in df.columns if PER_OP_LATENCY.match(str(c))}
    for col in df.columns:
        if col in numeric and not pd.api.types.is_numeric_dtype(df[col]):
            df[col] = df[col].map(lambda v: number_cell(v.strip()) if isinstance(v, str) else v)
    return df


def _number_repeats(curve: pd.DataFrame) -> pd.DataFrame:
    """Add ``repeat`` (1, 2, ... within each concurrency level of one system/workload/op) when there are replicates.

    Separate files or ``run`` labels at one concurrency count as replicates of one curve.
    """
    if "repeat" in curve.columns:
        return curve
    keys = [c for c in CURVE_KEYS if c in curve.columns] + ["concurrency"]
    keyed = curve[keys].astype(str)
    if keyed.duplicated().any():
        curve = curve.copy()
        curve["repeat"] = curve.groupby(keys, sort=False, dropna=False).cumcount() + 1
    return curve


def read_curve(path, concurrency: str | None = None, throughput: str | None = None, *, format: str | None = None,
               min_points: int = 1, table: int | None = None, **mapping: str) -> pd.DataFrame:
    """Read a measured curve into the validated curve table.

    Parameters
    ----------
    path : str, path-like or list of them
        A CSV, TSV, Parquet, JSON (records, columns or JSON Lines), markdown-table or YCSB-output file; a directory or
        glob of such files (for example one YCSB run per thread count); or a list of them. The files are combined into
        one table, sorted by concurrency. The format comes from the extension (``.txt``, ``.log`` and ``.out`` files are
        recognised by their content).
    concurrency, throughput : str, optional
        The source columns holding the load N and the throughput X. Unnamed, they are matched against common header
        spellings ("Workers (Threads)", "Throughput (Ops/Sec)", "clients" ...), case and spacing ignored.
    format : str, optional
        Overrides the format the extension gives (``"csv"``, ``"tsv"``, ``"parquet"``, ``"json"``, ``"markdown"``,
        ``"ycsb"``).
    min_points : int, default 1
        Fewer rows than this is an error.
    table : int, optional
        Which table (from 0) of a markdown file holding several.
    **mapping : str
        Further curve-table names and the source columns that hold them, e.g. ``latency_p95_ms="p95"``. Latency headers
        without a unit are never guessed.

    Returns
    -------
    pandas.DataFrame
        The curve table (the manual's page "The curve table" lists its columns): the mapped columns renamed, the
        others kept as they are. Replicates (several rows at one concurrency of one system, workload and operation) stay
        separate rows, numbered in ``repeat`` unless the source has that column. Text numbers with thousands separators
        ("2,635") are read as numbers.

    Raises
    ------
    InputError
        Naming the file, column and row of the first problem: a file that cannot be read or is beyond the readers'
        bounds, a column that is missing or mapped twice, two candidates for one column, a value out of range.

    See Also
    --------
    capmodel.data.curve.validate_curve : the checks applied to the table read.

    capmodel.datasets.load_curve : a bundled curve, already validated.

    Examples
    --------
    >>> import capmodel
    >>> curve = capmodel.read_curve("data/usl_specsdm91.csv")
    >>> curve.columns.tolist()
    ['concurrency', 'throughput']
    >>> # a folder of YCSB client runs, one per thread count
    >>> len(capmodel.read_curve("tests/fixtures/ycsb_sweep"))
    3
    """
    paths = path if isinstance(path, (list, tuple)) else [path]
    if not paths or not all(isinstance(item, (str, os.PathLike)) for item in paths):
        kind = type(next((i for i in paths if not isinstance(i, (str, os.PathLike))), path)).__name__
        raise InputError(f"a file path is a string or a path, not {kind}")
    if format is not None and not isinstance(format, str):
        raise InputError(f"format= is a name such as 'csv', not {type(format).__name__}")
    for name, value in {"concurrency": concurrency, "throughput": throughput, **mapping}.items():
        if value is not None and not isinstance(value, str):
            raise InputError(f"{name}= names a column (a string), not {type(value).__name__}")
    for name, count in (("min_points", min_points), ("table", table)):
        if count is not None and (isinstance(count, bool) or not isinstance(count, int)):
            raise InputError(f"{name}= is a whole number, not {type(count).__name__}")
    for target in mapping:
        if target not in OPTIONAL_NUMERIC + LABELS and not PER_OP_LATENCY.match(target):
            known = ", ".join(OPTIONAL_NUMERIC + LABELS)
            raise InputError(f"unknown curve column '{target}' in the mapping; use one of concurrency, throughput, "
                             f"{known}, or latency_<op>_<mean|pNN>_ms")
    if format is not None and format.lower() not in FORMATS:
        raise InputError(f"unknown format '{format}'; use one of {', '.join(FORMATS)}")
    files, name = _expand(path)
    wanted = {"concurrency": concurrency, "throughput": throughput, **mapping}
    parts = []
    for f in files:
        raw = read_table(f, format=format, table=table)
        if raw.empty:
            raise InputError(f"{f}: no data rows")
        mapped = _clean_numbers(_map_curve_columns(raw, str(f), wanted))
        parts.append(validate_curve(mapped, source=str(f)))
    if len(parts) == 1:
        combined = parts[0]
    else:
        combined = pd.concat(parts, ignore_index=True, sort=False)
        combined = combined.sort_values("concurrency", kind="stable").reset_index(drop=True)
    curve = validate_curve(combined, source=name, min_points=min_points)
    return _number_repeats(curve)
