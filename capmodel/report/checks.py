"""What a report's parameters mean, checked before any kernel starts: a missing file, an unknown dataset or workload,
a column the file lacks, a folder that is no bench folder, a server that does not answer. Each failure is one
``InputError`` line naming the parameter and the reason, and no kernel, mongod or sweep has started.

Checks are declared per parameter name (the same name means the same thing in every report) and read the inputs with
the readers the notebooks use, so a file that passes here reads the same way in the kernel.
"""
from __future__ import annotations

from pathlib import Path

from capmodel.errors import CapmodelError, InputError
from capmodel.formatting import aside, number

SERVER_TIMEOUT_MS = 3000


def _fail(name: str, reason: str) -> InputError:
    return InputError(f"parameter {name}: {reason}")


def _existing(name: str, value: str, folder: bool = False, file: bool = False) -> Path:
    """The path ``value`` of parameter ``name``, which exists (and is a folder, or a file, when asked)."""
    path = Path(value).expanduser()
    if not path.exists():
        raise _fail(name, f"{value} does not exist")
    if folder and not path.is_dir():
        raise _fail(name, f"{value} is not a folder")
    if file and path.is_dir():
        raise _fail(name, f"{value} is a folder, not a file")
    return path


def _reader(name: str, value: str, read):
    """``read()`` of the file ``value`` with its error reworded to name the parameter."""
    _existing(name, value, file=True)
    try:
        return read()
    except CapmodelError as exc:
        raise _fail(name, str(exc)) from None


def _dataset(name, value, values):
    from capmodel import datasets

    if value not in datasets.names():
        raise _fail(name, f"unknown dataset '{value}' (bundled: {', '.join(datasets.names())})")


def _curve_file(name, value, values):
    from capmodel.data.readers import read_curve

    if value:
        _reader(name, value, lambda: read_curve(value, concurrency=values.get("concurrency") or None,
                                                throughput=values.get("throughput") or None))


def _needs_catalog(name, values):
    if "catalog" in values and not values.get("catalog"):
        raise _fail(name, "needs a catalog too (the prices of the VMs): give -p catalog FILE")


def _table_file(name, value, values):
    from capmodel.data.readers import read_table

    if value:
        _reader(name, value, lambda: read_table(value))


def _catalog_file(name, value, values):
    """A VM catalog or a table of per-VM measurements, read as report 03 reads it (``read_catalog``)."""
    from capmodel.data.readers import read_catalog

    if value:
        if name == "measurements":
            _needs_catalog(name, values)
        _reader(name, value, lambda: read_catalog(value))


def _vm_curves(values):
    """Report 03's curves, read with its column parameters as ``plan_report`` reads them."""
    from capmodel.data.readers import DEFAULT_VM_COLUMN, read_curve

    return read_curve(values["curves"], system=values.get("vm_column") or DEFAULT_VM_COLUMN,
                      concurrency=values.get("concurrency") or None, throughput=values.get("throughput") or None)


def _curves(name, value, values):
    from capmodel.data.readers import DEFAULT_VM_COLUMN

    if value:
        _needs_catalog(name, values)
        column = values.get("vm_column") or DEFAULT_VM_COLUMN
        try:
            curves = _reader(name, value, lambda: _vm_curves(values))
        except InputError as exc:
            if f"'{column}' given for system" not in str(exc):
                raise
            curves = None
        if curves is None or "system" not in curves.columns:
            raise _fail("vm_column", f"{value} has no column '{column}' naming each row's VM")


def _baseline_vm(name, value, values):
    """A VM of the catalog (the bundled benchANT study's without one), or of the curves."""
    if not value.strip():
        return
    from capmodel import datasets
    from capmodel.data.readers import read_catalog

    catalog = values.get("catalog")
    table = read_catalog(catalog) if catalog else datasets.load("benchant_vms")
    known = [str(v) for v in table["vm"]] if "vm" in table.columns else []
    if values.get("curves"):
        curves = _vm_curves(values)
        known += [str(v) for v in curves["system"].unique()]
    if known and value not in known:
        raise _fail(name, f"unknown VM '{value[:60]}' (known: {', '.join(dict.fromkeys(known[:20]))}"
                          f"{' ...' if len(known) > 20 else ''})")


def _user_load(name, value, values):
    """Report 03 on a catalog of one's own needs the load one user puts on the VMs: ``ops_per_user``, or users at a
    baseline VM whose measured throughput gives it (the bundled study has its own baseline)."""
    if not values.get("catalog") or value:
        return
    if not values.get("baseline_users"):
        raise _fail(name, "give the ops/s one user generates (the load each user puts on the VMs): a catalog of your "
                          "own has no baseline to derive it from (or give baseline_users and baseline_vm)")
    vm = values.get("baseline_vm")
    if not vm:
        raise _fail("baseline_vm", f"baseline_users = {number(values['baseline_users'])} needs the VM those users "
                                   "were measured on (or give ops_per_user instead)")
    from capmodel.data.readers import read_catalog
    from capmodel.plan.catalog import join_measurements
    from capmodel.plan.study import measured_throughput

    try:
        table = read_catalog(values["catalog"])
        if values.get("measurements"):
            table = join_measurements(table, read_catalog(values["measurements"]))
        fitted = set(_vm_curves(values)["system"].astype(str)) if values.get("curves") else set()
    except CapmodelError:
        return      # the file's own check names what is wrong with it
    if measured_throughput(table, vm, fitted) is None:
        why = "its curve is fitted" if vm in fitted else "none in the catalog or measurements"
        raise _fail("baseline_vm", f"{vm} has no measured throughput (ops/s) to derive the load per user from "
                                   f"{aside(why)}; give ops_per_user instead")


def _model(name, value, values):
    from capmodel.models.usl.selection import MODEL_CHOICES

    if value not in MODEL_CHOICES:
        raise _fail(name, f"'{value}' is not one of {', '.join(MODEL_CHOICES)}")


def _rounding(name, value, values):
    if value not in ("nearest", "up"):
        raise _fail(name, f"'{value}' is not nearest or up")


def _workload(name, value, values):
    from capmodel.bench.workload.definition import load_workload, workload_names

    if values.get("bench_dir") or value in workload_names():
        return
    if not Path(value).is_file():
        raise _fail(name, f"'{value}' is neither a bundled workload ({', '.join(workload_names())}) nor a file")
    _reader(name, value, lambda: load_workload(value))


def _bench_dir(name, value, values):
    if value:
        from capmodel.report.bench_report import read_bench_folder

        _existing(name, value, folder=True)
        read_bench_folder(value)


def _processes(name, value, values):
    if value == "auto":
        return
    try:
        count = int(value)
    except (TypeError, ValueError):
        raise _fail(name, f"'{value}' is neither auto nor a number of processes") from None
    if not 1 <= count <= 1024:
        raise _fail(name, f"{count} is outside 1 to 1024")


def _uri_form(name, value, values):
    """A server given at all is written as a MongoDB URI (whether the report samples or benchmarks it)."""
    if not value or values.get("bench_dir"):
        return
    from capmodel.redact import redact_url_password

    if not value.startswith(("mongodb://", "mongodb+srv://")):
        shown = redact_url_password(value)
        raise _fail(name, f"{shown} is not a MongoDB URI (it starts with mongodb:// or mongodb+srv://)")


def _uri(name, value, values):
    """A server given to benchmark must answer a ping now (not after a kernel and a sweep have started)."""
    if not value or values.get("bench_dir"):
        return
    from capmodel.redact import redact_url_password

    shown = redact_url_password(value)
    _uri_form(name, value, values)
    try:
        import pymongo
        from pymongo.errors import ConfigurationError, InvalidURI, PyMongoError
    except ImportError:  # pragma: no cover - pymongo is a dependency
        return
    try:
        client: pymongo.MongoClient[dict] = pymongo.MongoClient(value, serverSelectionTimeoutMS=SERVER_TIMEOUT_MS,
                                                                connectTimeoutMS=SERVER_TIMEOUT_MS)
    except (InvalidURI, ConfigurationError, ValueError, TypeError) as exc:
        from capmodel.redact import url_password

        why = str(exc).splitlines()[0].split(". ")[0].rstrip(".")  # pymongo's first sentence, whole
        secret = url_password(value)
        why = why.replace(secret, "***") if secret else why
        raise _fail(name, f"{shown} is not a usable MongoDB URI: {why}") from None
    try:
        client.admin.command("ping")
    except PyMongoError as exc:
        reason = "authentication failed" if "auth" in type(exc).__name__.lower() else \
            f"no server answered within {number(SERVER_TIMEOUT_MS / 1000, 6)} s"
        raise _fail(name, f"{shown}: {reason}") from None
    finally:
        client.close()


def _folders(name, value, values):
    """Comma-separated folders (servers' diagnostic.data or parents of many): each must exist, be a folder and hold
    FTDC files (``metrics.*``) in it or the folders below it, as the fleet report finds them."""
    from capmodel.observe.folders import server_folders

    for part in (p.strip() for p in str(value).split(",")):
        if part:
            _existing(name, part, folder=True)
            try:
                server_folders([part])
            except CapmodelError:
                raise _fail(name, f"{part} holds no FTDC files (metrics.*), in it or the folders below it") from None


def _observed(name, value, values):
    """An ``observe --out`` folder of one server, read as report 07 reads it."""
    if value:
        from capmodel.observe import read_observation

        _existing(name, value, folder=True)
        try:
            read_observation(value)
        except CapmodelError as exc:
            why = str(exc)
            raise _fail(name, why if why.startswith(value) else f"{value}: {why}") from None


def _time(name, value, values):
    """An FTDC window's end: a time pandas reads (ISO 8601, UTC unless it says otherwise), and since not after
    until."""
    if not value.strip():
        return
    import pandas as pd

    def moment(text):
        try:
            stamp = pd.Timestamp(text)
        except (ValueError, TypeError, OverflowError):
            stamp = pd.NaT
        return None if pd.isna(stamp) else stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp

    if moment(value) is None:
        raise _fail(name, f"{value!r} is not a time (give one such as 2024-05-01T12:00:00Z)")
    since = str(values.get("since") or "")
    if name == "until" and since.strip() and moment(since) is not None and moment(since) > moment(value):
        raise _fail(name, f"{value} is before since {since}")


def _fit_on(name, value, values):
    if value not in ("throughput", "latency"):
        raise _fail(name, f"'{value}' is not throughput or latency")


def _scheduler(name, value, values):
    """An existing Dask scheduler's address, SCHEME://HOST:PORT (tcp://10.0.0.5:8786)."""
    import re

    if value and not re.fullmatch(r"[a-z][a-z0-9+.-]*://[^\s/:]+(:[0-9]{1,5})?/?", value.strip()):
        raise _fail(name, f"'{value}' is not a scheduler address such as tcp://10.0.0.5:8786")


def _ftdc(name, value, values):
    """One server's FTDC: a ``metrics.*`` file or a ``diagnostic.data`` folder that holds some."""
    if value:
        from capmodel.observe.ftdc import ftdc_files

        if _existing(name, value).is_dir():
            try:
                ftdc_files(value)
            except CapmodelError:
                raise _fail(name, f"{value} holds no FTDC files (metrics.*)") from None


def _logs(name, value, values):
    """mongod logs: comma-separated files or folders, each of which exists."""
    for part in (p.strip() for p in str(value).split(",")):
        if part:
            _existing(name, part)


def _what_if(name, value, values):
    """``SHAPExFACTOR`` items, comma-separated (the shapes themselves are checked against the log)."""
    from capmodel.observe.shapes.what_if import parse_factors
    from capmodel.report.shapes_report import factor_items

    try:
        parse_factors(factor_items(value), name)
    except CapmodelError as exc:
        raise _fail(name, str(exc).removeprefix(f"{name}").lstrip(": ")) from None


CHECKS = {
    "dataset": _dataset, "baseline": _dataset, "file": _curve_file, "catalog": _catalog_file,
    "measurements": _catalog_file, "table": _table_file, "curves": _curves, "model": _model, "rounding": _rounding,
    "workload": _workload, "bench_dir": _bench_dir, "processes": _processes, "uri": _uri, "folders": _folders,
    "observed": _observed, "ftdc": _ftdc, "since": _time, "until": _time, "fit_on": _fit_on,
    "scheduler": _scheduler, "baseline_vm": _baseline_vm, "ops_per_user": _user_load, "log": _logs,
    "what_if": _what_if,
}
#: checks of numeric parameters (the others check text: paths, names, addresses)
NUMBER_CHECKS = ("ops_per_user",)


def check_report_parameters(defaults: dict, given: dict, live: bool = False) -> None:
    """Check what every parameter of a report means (``defaults`` the notebook's, ``given`` the caller's);
    ``InputError`` naming the first parameter that cannot work, and why. The server behind ``uri`` must answer
    only for a ``live`` report (one that benchmarks it)."""
    values = {**defaults, **given}
    # what is given checked before what is missing, the network last
    order = ([k for k in values if k != "uri" and k not in NUMBER_CHECKS] + [k for k in NUMBER_CHECKS if k in values]
             + (["uri"] if "uri" in values else []))
    for name in order:
        check = CHECKS.get(name) if name != "uri" or live else _uri_form   # a server only a live report pings
        value = values[name]
        if check is not None and (isinstance(value, str) or name in NUMBER_CHECKS):
            check(name, value, values)
