"""Workloads as data: YAML files under ``data/workloads/`` (or any path) loaded and validated into ``Workload``.

A workload says what to do, never how to talk to the database (that is the binding, ``capmodel.bench.client``) or what
was seen (``measurements``). Keys of a workload file:

``name``, ``description``, ``source``   what it is and where its definition comes from
``collection``                          the collection it loads and runs against (in the bench database)
``records``                             documents loaded before the run (YCSB's recordcount)
``keys``                                ``{prefix: user, order: hashed|ordered, zero_padding: 1, distribution: ...}``:
                                        ``_id`` of record number k is prefix + k (ordered) or prefix +
                                        fnvhash64(k) (hashed, YCSB's default insertorder), its digits left-padded
                                        with zeros to ``zero_padding`` (YCSB's zeropadding), as YCSB names records;
                                        ``distribution`` is the request distribution (uniform, zipfian,
                                        scrambled_zipfian, latest, hotspot). Omit for ObjectIds.
``fields``                              ``{count: 10, length: 100}``: YCSB's field0..field9 of random text
``document``                            a template (see ``capmodel.bench.workload.templates``) for
                                        loaded/inserted documents
``indexes``                             ``[{name, keys: {field: 1, ...}}]`` created before loading
``readallfields``, ``writeallfields``   YCSB's switches (read all fields / update one random field)
``scan``                                ``{max_length: 100, length_distribution: uniform|zipfian}`` (workload E)
``throughput``                          ``operations`` (default) or ``documents`` (an insert batch counts its docs)
``rate``                                the operations per second the workload stands for (a replay of production:
                                        the rate production ran at, ``capmodel shapes --workload``); a record, not a
                                        setting: ``capmodel bench --rate`` runs a step open-loop at a rate
``operations``                          ``{read: 0.5, update: 0.5}`` or a list of ``{op, weight, ...}``

Operation kinds: YCSB's key-based ``read``, ``update``, ``insert``, ``scan``, ``readmodifywrite`` and the template
kinds ``find`` (filter, projection, sort, limit), ``update`` with ``filter`` + ``update`` (``many``), ``delete``
(filter, ``many``), ``aggregate`` (pipeline), ``insert`` with ``batch``, and ``command`` (a database command
template, e.g. ``{ping: 1}``; only read-only commands and commands on the workload's own collection, see
``capmodel.bench.workload.confinement``). Weights are normalised to proportions.
"""
from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from capmodel._bundled import bundled_dir
from capmodel.bench.workload.confinement import check_operation
from capmodel.bench.workload.generators import DISTRIBUTIONS, ycsb_fnvhash64
from capmodel.bench.workload.templates import compile_template, estimated_size
from capmodel.data.structured import check_depth, load_yaml, read_text
from capmodel.errors import InputError, shown
from capmodel.formatting import number

OPERATION_KINDS = ("read", "update", "insert", "scan", "readmodifywrite", "find", "delete", "aggregate", "command")
KEY_OPERATIONS = ("read", "scan", "readmodifywrite")
MAX_WORKLOAD_BYTES = 1 * 2**20
MAX_RECORDS = 1_000_000_000
MAX_DOCUMENT_BYTES = 16 * 2**20  # MongoDB's BSON document limit
MAX_BATCH_BYTES = 256 * 2**20    # documents held in memory at once: a load batch (1,000) or an insert's 'batch'
MAX_WEIGHT = 1e12                # operation weights are relative; their sum must stay a finite number
MAX_COLLECTION_BYTES = 190       # the namespace "<database>.<collection>" is at most 255 bytes; the database's name
#                                  (at most 64 bytes) and the dot take the rest
MAX_SCAN_LENGTH = 1_000_000      # documents per scan (YCSB E: 100); a zipfian length table costs O(max) per client
LOAD_BATCH = 1000                # documents per insert_many while loading (bench.client.operations.load_records)
TOP_LEVEL = {"name", "description", "source", "collection", "records", "keys", "fields", "document", "indexes",
             "readallfields", "writeallfields", "scan", "throughput", "operations", "rate"}


@dataclass
class Operation:
    """One entry of the operation mix.

    Attributes
    ----------
    name : str
        The label its latencies are recorded under.
    kind : str
        The operation (``read``, ``update``, ``insert``, ``scan``, ``command`` ...).
    proportion : float
        Its share of the mix.
    params : dict
        Its own settings (filters, updates, pipelines, batch size).
    """

    name: str  # the label latencies are recorded under
    kind: str
    proportion: float
    params: dict = field(default_factory=dict)

    def template(self, key: str, where: str):
        return compile_template(self.params[key], f"{where}.{key}") if key in self.params else None


@dataclass
class Workload:
    """A validated workload definition, as ``load_workload`` and ``parse_workload`` return it.

    Attributes
    ----------
    name, description, source : str
        What it is and where it comes from.
    collection : str
        The collection it works on.
    records : int
        Documents loaded before the sweep.
    operations : list of Operation
        The operation mix.
    key_prefix, key_order : str or None
        How record keys are made (``key_order`` ``hashed`` or ``ordered``; None: no keys, ObjectIds).
    key_padding : int
        The fewest digits of a key's number, zeros added on the left (YCSB's ``zeropadding``; 1: none).
    distribution : str
        The request distribution over the keys (``uniform``, ``zipfian``, ``latest`` ...), with
        ``distribution_options``.
    document, field_names, field_length
        The document template, or YCSB-style fields.
    indexes : list of dict
        Indexes created on the collection.
    throughput_unit : str
        What the throughput counts (``operations`` or ``documents``).
    rate : float or None
        The operations per second the workload stands for (``rate``), where it says.
    spec : dict
        The YAML mapping it came from, after overrides.
    path : str or None
        Its file.
    """

    name: str
    description: str
    source: str
    collection: str
    records: int
    operations: list[Operation]
    key_prefix: str | None = "user"
    key_order: str | None = None  # "hashed", "ordered", or None (no record keys: ObjectIds)
    key_padding: int = 1
    distribution: str = "uniform"
    distribution_options: dict = field(default_factory=dict)
    document: Any = None
    field_names: list[str] = field(default_factory=list)
    field_length: int = 0
    indexes: list[dict] = field(default_factory=list)
    readallfields: bool = True
    writeallfields: bool = False
    scan_max_length: int = 100
    scan_length_distribution: str = "uniform"
    throughput_unit: str = "operations"
    rate: float | None = None
    spec: dict = field(default_factory=dict)
    path: str | None = None

    @property
    def has_keys(self) -> bool:
        return self.key_order is not None

    def fingerprint(self) -> str:
        """Hash of what determines the loaded data (collection, records, keys, document, indexes)."""
        loaded = {k: self.spec.get(k) for k in ("collection", "records", "fields", "document", "indexes")}
        # the request distribution does not change the data; the hash is named since it changed (YCSB's, signed)
        loaded["keys"] = [self.key_prefix, self.key_order, self.key_padding, "ycsb_fnvhash64"]
        return hashlib.sha256(json.dumps(loaded, sort_keys=True, default=str).encode()).hexdigest()[:16]

    def key_names(self, numbers) -> list[str]:
        """The ``_id`` of each record number, as YCSB's ``CoreWorkload.buildKeyName`` makes it: the prefix, zeros up
        to ``key_padding`` digits, and the number itself (``ordered``) or its ``ycsb_fnvhash64`` (``hashed``)."""
        numbers = np.asarray(numbers, dtype=np.int64)
        values = ycsb_fnvhash64(numbers) if self.key_order == "hashed" else numbers
        prefix, width = self.key_prefix or "", self.key_padding
        digits = [str(v) for v in values.tolist()]
        return [f"{prefix}{'0' * (width - len(d))}{d}" for d in digits]  # YCSB pads before a sign too

    def document_template(self):
        """The template every loaded or inserted document is built from."""
        if self.document is not None:
            return self.document
        return {name: {"gen": "string", "length": self.field_length} for name in self.field_names}


def workloads_dir() -> Path:
    """The folder of bundled workloads: ``workloads/`` in the data folder (``capmodel._bundled.bundled_dir``)."""
    return bundled_dir("data") / "workloads"


def workload_names() -> list[str]:
    """Names of the bundled workloads (files ``data/workloads/<name>.yaml``)."""
    return sorted(p.stem for p in workloads_dir().glob("*.yaml"))


def load_workload(name_or_path: str | Path, allow_server_js: bool = False, **overrides) -> Workload:
    """A bundled workload by name, or a workload YAML file by path, checked.

    Parameters
    ----------
    name_or_path : str or path-like
        A bundled name (``ycsb-b``; ``workload_names()`` lists them) or a file.
    allow_server_js : bool, default False
        Accept ``$where``, ``$function`` and ``$accumulator`` (refused otherwise).
    **overrides
        Top-level keys to override, e.g. ``records=10000`` or ``collection="t2"``; None values are ignored.

    Returns
    -------
    Workload

    Raises
    ------
    InputError
        An unknown name, a file that cannot be read or is beyond the limits (1 MB, 64 levels), or a definition refused
        by ``parse_workload`` (named by file and key).

    Examples
    --------
    >>> from capmodel.bench.workload.definition import load_workload
    >>> workload = load_workload("ycsb-b", records=1000)
    >>> workload.records, [(op.name, op.proportion) for op in workload.operations]
    (1000, [('read', 0.95), ('update', 0.05)])
    """
    text_path = Path(name_or_path)
    if text_path.suffix in (".yaml", ".yml") or text_path.exists():
        path = text_path
    else:
        path = workloads_dir() / f"{name_or_path}.yaml"
        if not path.is_file():
            known = ", ".join(workload_names()) or "none"
            raise InputError(f"unknown workload '{name_or_path}' (bundled: {known}; or give a .yaml path)")
    try:
        spec = load_yaml(read_text(path, max_bytes=MAX_WORKLOAD_BYTES), path)
    except OSError as exc:
        raise InputError(f"{path}: cannot read the workload ({exc.strerror or exc})") from None
    if spec is not None and not isinstance(spec, dict):
        raise InputError(f"{path}: a workload file must be a YAML mapping, not a {type(spec).__name__}")
    spec = dict(spec or {})
    spec.update({k: v for k, v in overrides.items() if v is not None})
    return parse_workload(spec, source=str(path), allow_server_js=allow_server_js)


def _require(cond: object, where: str, message: str) -> None:
    if not cond:
        raise InputError(f"{where}: {message}")


#: the options each request distribution takes under ``keys`` (the generators' own keywords)
DISTRIBUTION_OPTIONS = {"zipfian": ("theta", "method"), "hotspot": ("hot_data", "hot_ops")}


def _check_distribution_options(distribution: str, options: dict, where: str) -> None:
    """Options of ``keys`` the distribution takes, numbers where numbers go, in the generator's range: checked when
    the file is read, not when the sweep draws its first key (a misspelt 'thetta' was dropped in silence, a theta of
    5 refused only after the server was reached, a theta of 'x' a TypeError)."""
    from capmodel.bench.workload.generators import key_chooser

    allowed = DISTRIBUTION_OPTIONS.get(distribution, ())
    for name, value in options.items():
        _require(name in allowed, where, f"keys.{name} does not apply to the {distribution} distribution ("
                 + (f"it takes {', '.join(allowed)})" if allowed else "it takes no options)"))
        if name != "method":
            _require(isinstance(value, (int, float)) and not isinstance(value, bool), where,
                     f"keys.{name} must be a number, got {shown(value)}")
    try:   # the generator's own range checks, on a two-key space (cheap whatever 'records' is)
        key_chooser(distribution, lambda: 2, seed=0, **options)
    except InputError as exc:
        raise InputError(f"{where}: keys: {exc}") from None


def _parse_operations(raw, where: str) -> list[Operation]:
    if isinstance(raw, dict):
        raw = [{"op": k, "weight": v} for k, v in raw.items()]
    _require(isinstance(raw, list) and raw, where, "'operations' must be a mapping op -> proportion or a list")
    ops = []
    for i, entry in enumerate(raw):
        at = f"{where}: operations[{i}]"
        _require(isinstance(entry, dict) and "op" in entry, at, "each operation needs 'op'")
        kind = str(entry["op"]).lower().replace("-", "").replace("_", "")
        _require(kind in OPERATION_KINDS, at, f"unknown op {entry['op']!r}; choose one of {', '.join(OPERATION_KINDS)}")
        given = entry.get("weight", entry.get("proportion", 1.0))
        _require(isinstance(given, (int, float)) and not isinstance(given, bool), at,
                 f"weight {shown(given)} is not a number (YAML reads 1e-3 and 1.0e3 as text: write 0.001 or 1.0e+3)")
        weight = float(given)
        _require(0 <= weight <= MAX_WEIGHT, at, f"weight {shown(given)} must be a number from 0 to "
                                                f"{number(MAX_WEIGHT, 6)} "
                 "(weights are relative: 0.5 and 0.5, or 1 and 1, mean the same)")
        params = {k: v for k, v in entry.items() if k not in ("op", "weight", "proportion", "name")}
        if "batch" in params:
            _require(isinstance(params["batch"], int) and params["batch"] >= 1, at, "'batch' must be an integer >= 1")
        if "limit" in params:
            _require(isinstance(params["limit"], int) and params["limit"] >= 0, at, "'limit' must be an integer >= 0")
        ops.append(Operation(str(entry.get("name", kind)), kind, weight, params))
    total = sum(o.proportion for o in ops)
    _require(total > 0, where, "operation weights sum to 0")
    ops = [o for o in ops if o.proportion > 0]
    names = [o.name for o in ops]
    _require(len(set(names)) == len(names), where, f"operation names repeat ({names}); give each a distinct 'name'")
    for o in ops:
        o.proportion /= total
    return ops


def _check_document_size(size: int, where: str, what: str, records: int, batch: int) -> None:
    """Refuse, before anything is allocated, documents over BSON's limit or batches over MAX_BATCH_BYTES."""
    _require(size <= MAX_DOCUMENT_BYTES, where,
             f"'{what}' makes documents of about {size:,} bytes; MongoDB's limit is {MAX_DOCUMENT_BYTES:,}")
    held = max(min(records, LOAD_BATCH), batch)
    _require(size * held <= MAX_BATCH_BYTES, where,
             f"'{what}' makes documents of about {size:,} bytes, {held:,} of them held at once "
             f"({size * held:,} bytes); at most {MAX_BATCH_BYTES:,} (fewer or shorter fields, or a smaller batch)")


def parse_workload(spec: dict, source: str = "workload", allow_server_js: bool = False) -> Workload:
    """Validate a workload mapping, as read from YAML.

    Parameters
    ----------
    spec : dict
        The mapping (``name``, ``collection``, ``records``, ``keys``, ``fields`` or ``document``, ``indexes``,
        ``operations`` ...; the manual's page on benchmarks describes them).
    source : str, default "workload"
        Names the file in messages.
    allow_server_js : bool, default False
        Accept server-side JavaScript.

    Returns
    -------
    Workload

    Raises
    ------
    InputError
        Naming the file and the key at fault: an unknown key, a value out of range, a command or pipeline that could
        write elsewhere, server-side JavaScript, documents or batches too large.
    """
    try:
        return _parse_workload(spec, source, allow_server_js)
    except RecursionError:
        raise InputError(f"{source}: nested too deeply") from None
    except (TypeError, AttributeError, KeyError, ValueError, OverflowError) as exc:
        if isinstance(exc, InputError):
            raise
        # a value of a type no check above expected (a number where a mapping belongs ...): still one clear line
        raise InputError(f"{source}: a value has the wrong type or form ({type(exc).__name__}: "
                         f"{str(exc)[:100]})") from None


def _parse_workload(spec: dict, source: str, allow_server_js: bool) -> Workload:
    where = source
    _require(isinstance(spec, dict), where, "a workload file must be a YAML mapping")
    unknown = set(spec) - TOP_LEVEL
    what = "an unknown key" if len(unknown) == 1 else "unknown keys"
    _require(not unknown, where, f"{what} {shown(sorted(map(str, unknown)))}; allowed: {sorted(TOP_LEVEL)}")
    check_depth(spec, where)
    spec = copy.deepcopy(spec)
    name = str(spec.get("name") or Path(source).stem)
    collection = str(spec.get("collection") or name.replace("-", "_"))
    _require(collection and "$" not in collection and "\x00" not in collection
             and not collection.startswith("system."), where, f"collection name {shown(collection)} is not allowed")
    _require(len(collection.encode("utf-8")) <= MAX_COLLECTION_BYTES, where,
             f"collection name {shown(collection)} is {len(collection.encode('utf-8')):,} bytes long; at most "
             f"{MAX_COLLECTION_BYTES} (MongoDB's namespace, database.collection, is at most 255 bytes)")
    records = spec.get("records", 0)
    _require(isinstance(records, int) and not isinstance(records, bool) and 0 <= records <= MAX_RECORDS, where,
             f"'records' must be an integer >= 0 and <= {MAX_RECORDS:,}, got {shown(records)}")

    keys = spec.get("keys")
    key_order, key_prefix, key_padding, distribution, dist_options = None, None, 1, "uniform", {}
    if keys is not None:
        _require(isinstance(keys, dict), where, "'keys' must be a mapping")
        key_order = keys.get("order", "hashed")
        _require(key_order in ("hashed", "ordered"), where, f"keys.order {key_order!r} must be hashed or ordered")
        key_prefix = keys.get("prefix", "user")
        key_padding = keys.get("zero_padding", 1)
        _require(isinstance(key_padding, int) and not isinstance(key_padding, bool) and 1 <= key_padding <= 100,
                 where, f"keys.zero_padding must be an integer from 1 to 100 (YCSB's zeropadding), "
                 f"got {shown(key_padding)}")
        distribution = keys.get("distribution", "uniform")
        _require(distribution in DISTRIBUTIONS, where,
                 f"keys.distribution {distribution!r}; choose one of {', '.join(DISTRIBUTIONS)}")
        dist_options = {k: v for k, v in keys.items() if k not in ("prefix", "order", "zero_padding", "distribution")}
        _check_distribution_options(distribution, dist_options, where)

    fields_spec = spec.get("fields")
    field_names, field_length = [], 0
    if fields_spec is not None:
        _require(isinstance(fields_spec, dict), where, "'fields' must be {count: N, length: L}")
        count, field_length = fields_spec.get("count", 10), fields_spec.get("length", 100)
        _require(isinstance(count, int) and count >= 1, where, "fields.count must be an integer >= 1")
        _require(isinstance(field_length, int) and field_length >= 0, where, "fields.length must be an integer >= 0")
        _check_document_size(count * (field_length + 12), where, "fields", records, 1)
        field_names = [f"{fields_spec.get('prefix', 'field')}{i}" for i in range(count)]
    document = spec.get("document")
    _require(document is None or isinstance(document, dict), where, "'document' must be a mapping (a template)")
    _require(document is None or not field_names, where, "give either 'fields' or 'document', not both")
    if document is not None:
        compile_template(document, f"{where}: document")  # validate generators now
        _check_document_size(estimated_size(document), where, "document", records, 1)

    indexes = spec.get("indexes") or []
    _require(isinstance(indexes, list), where, "'indexes' must be a list of {name, keys}")
    for i, index in enumerate(indexes):
        _require(isinstance(index, dict) and isinstance(index.get("keys"), dict) and index["keys"], where,
                 f"indexes[{i}] needs 'keys' (a mapping field -> 1 or -1)")

    scan = spec.get("scan") or {}
    _require(isinstance(scan, dict), where, "'scan' must be {max_length: N, length_distribution: ...}")
    scan_max = scan.get("max_length", 100)
    _require(isinstance(scan_max, int) and not isinstance(scan_max, bool) and 1 <= scan_max <= MAX_SCAN_LENGTH,
             where, f"scan.max_length must be an integer from 1 to {MAX_SCAN_LENGTH:,}, got {shown(scan_max)}")
    scan_dist = scan.get("length_distribution", "uniform")
    _require(scan_dist in ("uniform", "zipfian"), where, "scan.length_distribution must be uniform or zipfian")

    unit = spec.get("throughput", "operations")
    _require(unit in ("operations", "documents"), where, "'throughput' must be operations or documents")

    rate = spec.get("rate")
    _require(rate is None or (isinstance(rate, (int, float)) and not isinstance(rate, bool) and 0 <= rate < 1e12),
             where, f"'rate' must be operations per second (a number >= 0), got {shown(rate)}")

    ops = _parse_operations(spec.get("operations"), where)
    has_document = document is not None or bool(field_names)
    for op in ops:
        at = f"{where}: operation '{op.name}'"
        templated = "filter" in op.params or "pipeline" in op.params
        if op.kind in KEY_OPERATIONS or (op.kind == "update" and not templated):
            _require(key_order is not None, at, "needs record keys: add 'keys' to the workload or give a 'filter'")
        if op.kind in ("read", "readmodifywrite", "update") and not templated:
            _require(bool(field_names), at, "YCSB-style read/update needs 'fields'")
        if op.kind == "update" and templated:
            _require("update" in op.params, at, "a templated update needs 'update' (e.g. {$inc: {n: 1}})")
        if op.kind == "delete":
            _require("filter" in op.params, at, "delete needs a 'filter'")
        if op.kind == "aggregate":
            _require(isinstance(op.params.get("pipeline"), list), at, "aggregate needs a 'pipeline' list")
        check_operation(op.kind, op.params, collection, at, allow_server_js=allow_server_js)
        if op.kind == "insert":
            _require(has_document or "document" in op.params, at, "insert needs a 'document' template or 'fields'")
        if op.kind == "insert":
            template = op.params.get("document", document if document is not None else None)
            size = estimated_size(template) if template is not None else len(field_names) * (field_length + 12)
            _check_document_size(size, at, "document", 0, op.params.get("batch", 1))
        for key in ("filter", "update", "pipeline", "projection", "document", "command"):
            if key in op.params:
                compile_template(op.params[key], f"{at}.{key}")
    _require(records == 0 or has_document, where, "'records' > 0 needs a 'document' template or 'fields'")
    keyed = [op.name for op in ops if op.kind in KEY_OPERATIONS or (op.kind == "update" and "filter" not in op.params)]
    _require(not (records == 0 and keyed and not any(op.kind == "insert" for op in ops)), where,
             f"'records' is 0 and nothing inserts, so {', '.join(keyed)} would ask for keys of an empty collection "
             "(every one a miss, timed as if it were work): load records ('records: N', --records N)")

    return Workload(
        name=name, description=str(spec.get("description", "")).strip(), source=str(spec.get("source", "")).strip(),
        collection=collection, records=records, operations=ops, key_prefix=key_prefix, key_order=key_order,
        key_padding=key_padding, distribution=distribution, distribution_options=dist_options, document=document,
        field_names=field_names, field_length=field_length, indexes=indexes,
        readallfields=bool(spec.get("readallfields", True)), writeallfields=bool(spec.get("writeallfields", False)),
        scan_max_length=scan_max,
        scan_length_distribution=scan_dist, throughput_unit=unit, rate=None if rate is None else float(rate),
        spec=spec, path=source,
    )
