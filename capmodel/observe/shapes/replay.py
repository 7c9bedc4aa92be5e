"""A bench workload that replays production: the shapes of one namespace as ``capmodel bench`` operations with the
observed filter structures, mix and rate, and values drawn to match each shape's observed selectivity (never the
log's values: the shapes hold ``?`` where they were).

The data (one rule, ``value_domains``): ``records`` documents, the largest number a collection scan of the namespace
examined per operation (else the most any shape examined or returned); every field a filter, a sort or an index of the
plans names holds integers drawn uniformly, and independently of the other fields, from a domain of its own:

- a field some shape compares by a range (``$gt``, ``$gte``, ``$lt``, ``$lte``) draws from ``[0, records)``, and a
  range of ``width`` integers matches ``width / records`` of the documents;
- a field compared by equality only (``?``, ``$eq``, a one-value ``$in``) draws from ``[0, D)``; an equality matches
  ``1 / D`` of them. D is set by the busiest shape without a range that names the field: such a shape should match
  its target, so the fields it names that have no domain yet share the factor ``records / (target x the domains
  already set)`` equally (geometrically), each rounded to a whole number >= 1;
- a shape with ranges then gets the widths that bring it to its target: its equality fields without a domain and its
  ranges share the factor equally (the fields are given their D), and the ranges share what is left equally;
- ``_id`` compared by equality is the record key (``{gen: key}``): one document.

A shape's target (documents its filter matches per operation): the documents it returned per operation where it
returned any, else the documents examined per operation where its plan is not a collection scan (an update's or a
delete's matches), else 1. A ``limit`` is not part of a shape (nor in the replay): a find that stopped early returns
fewer than its filter matches, and the replay matches what it returned.

What the replay cannot say, each stated in the file's comments: the operators without a rule here (``$ne``,
``$regex``, ``$exists``, ``$or``, ``$expr`` ...), aggregations (a pipeline's stages other than ``$match`` and ``$sort``
are names alone) and commands are left out, with their share; a find's ``getMore``s (its next batches, a shape of
their own with the find's filter) are counted with it: their documents examined and returned and their replies'
bytes are added to the find's per operation (the replay's find runs them too, as its client asks); an update's
modification is not in its shape (the replay sets one field of its own, ``replayed``), nor is ``multi`` (one
document).

The documents' size (``document_size``): the replies' bytes (``reslen``) of the find that returned the most documents
per operation, less a find reply's envelope (``REPLY_ENVELOPE`` + the namespace's length, once per reply) and an array
element's 3 bytes per document; the replay pads its documents with a string to that size (BSON sizes, counted as
``bson_size`` counts them). Where no find returned documents, or the log has no ``reslen``, no padding: the file says
so.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from capmodel.errors import InputError
from capmodel.formatting import number, percent
from capmodel.observe.shapes.result import QueryShapes

#: the operations replayed, as ``capmodel bench``'s operation kinds
REPLAYED = {"find": "find", "update": "update", "delete": "delete", "insert": "insert"}
RANGE_OPERATORS = {"$gte": "lower", "$gt": "lower", "$lt": "upper", "$lte": "upper"}
EQUALITY_OPERATORS = ("$eq", "$in")
UPDATED_FIELD = "replayed"
PADDING = "padding"
KEY_PREFIX = "r"
#: a find reply's bytes besides its documents, less the namespace it names (measured on mongod 6.0: 93 + 15 bytes of
#: shopdemo.orders around one document), and each document's bytes as an array element (type, index, terminator)
REPLY_ENVELOPE, ARRAY_ELEMENT = 93, 3
_INDEX = re.compile(r"IXSCAN \{ ([^}]*) \}")


def parse_shape(text: str):
    """A shape's text (``filter_shape``'s, ``key_shape``'s) back as a structure: mappings, ``?`` for a value, lists of
    shapes' texts, numbers for a sort's or a projection's directions; ``{}`` for an empty text."""
    text = text.strip()
    if not text:
        return {}
    value, end = _value(text, 0)
    if end != len(text):
        raise InputError(f"shape {text!r}: unexpected text at {end}")
    return value


def _value(text: str, at: int):
    if text.startswith("{", at):
        out: dict = {}
        at += 1
        while not text.startswith("}", at):
            colon = text.index(": ", at)
            key = text[at:colon]
            out[key], at = _value(text, colon + 2)
            if text.startswith(", ", at):
                at += 2
        return out, at + 1
    if text.startswith("[", at):
        items, depth, start = [], 0, at + 1
        for i in range(at + 1, len(text)):
            if text[i] in "{[":
                depth += 1
            elif text[i] in "}]":
                if depth == 0:
                    if text[start:i].strip():
                        items.append(text[start:i].strip())
                    return items, i + 1
                depth -= 1
            elif text[i] == "," and depth == 0:
                items.append(text[start:i].strip())
                start = i + 1
        raise InputError(f"shape {text!r}: a list is not closed")
    end = at
    while end < len(text) and text[end] not in ",}]":
        end += 1
    token = text[at:end]
    try:
        return int(token), end
    except ValueError:
        return token, end


@dataclass(frozen=True)
class ShapeFilter:
    """A filter shape's conditions, by field: ``equal`` the fields compared by equality, ``ranges`` ``{field:
    (lower operator or None, upper operator or None)}``, ``in_lists`` the equalities written as ``$in``; ``unsupported``
    what the replay has no rule for (None: every condition has one)."""

    equal: tuple = ()
    ranges: dict = field(default_factory=dict)
    eq_operator: dict = field(default_factory=dict)
    unsupported: str | None = None


def shape_filter(text: str) -> ShapeFilter:
    """The conditions of a filter shape's text, or what in it the replay has no rule for."""
    shape = parse_shape(text)
    if not isinstance(shape, dict):
        return ShapeFilter(unsupported=f"a filter that is not a document ({text})")
    equal, ranges, operator = [], {}, {}
    for path, condition in shape.items():
        if path.startswith("$"):
            return ShapeFilter(unsupported=f"the operator {path}")
        if condition == "?":
            equal.append(path)
            continue
        if not isinstance(condition, dict) or not condition:
            return ShapeFilter(unsupported=f"the condition on {path}")
        ops = set(condition)
        if len(ops) == 1 and ops <= set(EQUALITY_OPERATORS):
            equal.append(path)
            operator[path] = ops.pop()
        elif ops <= set(RANGE_OPERATORS) and len({RANGE_OPERATORS[o] for o in ops}) == len(ops):
            lower = next((o for o in ops if RANGE_OPERATORS[o] == "lower"), None)
            upper = next((o for o in ops if RANGE_OPERATORS[o] == "upper"), None)
            ranges[path] = (lower, upper)
        else:
            return ShapeFilter(unsupported=f"the operator{'s' if len(ops) > 1 else ''} {', '.join(sorted(ops))} on "
                                           f"{path}")
    return ShapeFilter(tuple(equal), ranges, operator)


def target_matches(row) -> float:
    """The documents a shape's filter matches per operation: returned where it returned any, else examined where its
    plan is not a collection scan, else 1."""
    if row["returned_per_op"] > 0:
        return float(row["returned_per_op"])
    if not row["collscan"] and row["docs_examined_per_op"] > 0:
        return float(row["docs_examined_per_op"])
    return 1.0


def index_keys(plan: str) -> list[dict]:
    """The indexes a plan summary names (``IXSCAN { customer: 1, placed: 1 }``), as ``{field: direction}``."""
    out = []
    for keys in _INDEX.findall(plan or ""):
        pairs = [part.rsplit(": ", 1) for part in keys.split(", ")]
        index = {name: int(direction) if direction.lstrip("-").isdigit() else direction for name, direction in pairs}
        if index and index not in out and list(index) != ["_id"]:
            out.append(index)
    return out


def value_domains(shapes: list, records: int) -> tuple[dict, dict]:
    """The rule of the module's docstring: ``({field: D}, {shape: {field: width}})`` for shapes given as ``(name,
    ShapeFilter, target)``, busiest first; a range field's D is ``records``, ``_id``'s is not set (the key)."""
    domains: dict = {}
    for _, conditions, _target in shapes:
        for path in conditions.ranges:
            domains[path] = records
    for _, conditions, target in shapes:
        if conditions.ranges:
            continue
        fields = [p for p in conditions.equal if p != "_id"]
        unset = [p for p in fields if p not in domains]
        if not unset:
            continue
        known = math.prod(domains[p] for p in fields if p in domains)
        factor = records / (max(target, 1e-9) * known) if "_id" not in conditions.equal else 1.0
        each = max(factor, 1.0) ** (1 / len(unset))
        for p in unset:
            domains[p] = max(1, round(each))
    widths: dict = {}
    for name, conditions, target in shapes:
        if not conditions.ranges:
            continue
        fields = [p for p in conditions.equal if p != "_id"]
        unset = [p for p in fields if p not in domains]
        if unset:
            known = math.prod(domains[p] for p in fields if p in domains)
            factor = records / (max(target, 1e-9) * known)
            each = max(factor, 1.0) ** (1 / (len(unset) + len(conditions.ranges)))
            for p in unset:
                domains[p] = max(1, round(each))
        equal = math.prod(domains[p] for p in fields)
        share = 1.0 if "_id" in conditions.equal else min(max(target * equal / records, 0.0), 1.0)
        each_share = share ** (1 / len(conditions.ranges))
        widths[name] = {p: min(max(1, round(each_share * records)), records) for p in conditions.ranges}
    return domains, widths


def expected_matches(conditions: ShapeFilter, domains: dict, widths: dict, records: int) -> float:
    """The documents a shape's replayed filter matches on average, with the domains and widths chosen."""
    if "_id" in conditions.equal:
        return 1.0
    share = 1.0
    for p in conditions.equal:
        share /= domains[p]
    for p, width in widths.items():
        share *= width / records
    return records * share


@dataclass(frozen=True)
class ReplayWorkload:
    """A workload replaying one namespace's shapes: ``spec`` the workload mapping (``capmodel bench``'s format),
    ``replayed`` one row per replayed shape (its operation's name, share, target and expected matches), ``left_out``
    ``{shape id: why}``; ``to_yaml()`` the file's text with its comments."""

    spec: dict
    namespace: str
    replayed: tuple
    left_out: dict
    notes: tuple

    def to_yaml(self) -> str:
        """The workload file: a header that says where it comes from and what it cannot say, a comment per operation
        (its shape, share and selectivity target), then the mapping."""
        import yaml

        lines = [f"# A replay of the query shapes of {self.namespace} (capmodel shapes --workload): the",
                 "# observed filter structures, mix and rate; values drawn to match each shape's selectivity, none",
                 "# from the log. Data: every field holds integers from a domain sized so that an equality (1 / its",
                 "# size) or a range (its width / records) matches the documents the shape matched",
                 "# (capmodel.observe.shapes.replay)."]
        lines += [f"# {note}" for note in self.notes]
        lines.append("# Operations (name: shape id, operation, filter shape; share of the replayed operations; "
                     "documents matched per operation, observed -> expected here):")
        for row in self.replayed:
            lines.append(f"#   {row['name']}: {row['shape']} {row['operation']} {row['filter_shape']}".rstrip()
                         + f"; {percent(row['share'])}; {number(row['target'])} -> {number(row['expected'])}")
        for sid, why in self.left_out.items():
            lines.append(f"#   left out: {sid}: {why}")
        body = yaml.safe_dump(self.spec, sort_keys=False, default_flow_style=None, width=110)
        return "\n".join(lines) + "\n" + body


def replay_workload(shapes: QueryShapes, namespace: str | None = None, records: int | None = None,
                    document_bytes: int | None = None, name: str | None = None) -> ReplayWorkload:
    """A ``capmodel bench`` workload that replays the shapes of one namespace.

    Parameters
    ----------
    shapes : QueryShapes
        The log's shapes (``query_shapes``).
    namespace : str, optional
        The ``database.collection`` to replay; default the one with the most operations (a workload works on one
        collection; the others' shapes are named as left out).
    records : int, optional
        Documents to load; default the rule of the module's docstring.
    document_bytes : int, optional
        The documents' size in bytes (BSON); default ``document_size`` of the shapes (None there: no padding).
    name : str, optional
        The workload's name (default ``replay-<collection>``).

    Returns
    -------
    ReplayWorkload

    Raises
    ------
    InputError
        No shape of the namespace that can be replayed.
    """
    rows = shapes.rows
    if rows.empty:
        raise InputError("no query shapes to replay")
    if namespace is None:
        namespace = str(rows.groupby("namespace")["operations"].sum().sort_values(ascending=False).index[0])
    chosen, left_out = _replayable(rows, namespace)
    given = records is not None
    if records is None:
        scans = [r["docs_examined_per_op"] for r, _, _ in chosen if r["collscan"]]
        seen = scans or [max(r["docs_examined_per_op"], r["returned_per_op"]) for r, _, _ in chosen]
        records = max(1, math.ceil(max(seen)))
    named = [(f"shape_{r['shape']}", c, target_matches(r)) for r, _, c in chosen]
    domains, widths = value_domains(named, records)
    total = sum(r["operations"] for r, _, _ in chosen)
    operations, replayed = [], []
    for (r, kind, conditions), (op_name, _, target) in zip(chosen, named):
        operations.append(_operation(r, kind, op_name, round(float(r["operations"]) / total, 6),
                                     _filter(conditions, domains, widths.get(op_name, {}), records)))
        expected = expected_matches(conditions, domains, widths.get(op_name, {}), records)
        replayed.append({"name": op_name, "shape": str(r["shape"]), "operation": r["operation"],
                         "filter_shape": r["filter_shape"], "share": float(r["operations"]) / total,
                         "target": 0.0 if kind == "insert" else target,
                         "expected": 0.0 if kind == "insert" else expected})
    collection = namespace.split(".", 1)[-1]
    spec: dict = {"name": name or f"replay-{collection}",
                  "description": f"A replay of {len(chosen)} query shapes of {namespace}.",
                  "source": f"capmodel shapes --workload, from {', '.join(shapes.sources) or 'a log'}",
                  "collection": f"replay_{re.sub(r'[^A-Za-z0-9_]', '_', collection)}", "records": int(records)}
    if any("_id" in c.equal for _, _, c in chosen):
        spec["keys"] = {"prefix": KEY_PREFIX, "order": "ordered", "distribution": "uniform"}
    size = document_bytes if document_bytes is not None else document_size(chosen, namespace)
    spec["document"] = _document(chosen, domains, records, size, "keys" in spec)
    indexes = [keys for r, _, _ in chosen for keys in index_keys(r["plan"])]
    indexes = [keys for i, keys in enumerate(indexes) if keys not in indexes[:i]]
    if indexes:
        spec["indexes"] = [{"name": "_".join(f"{k}_{v}" for k, v in keys.items()), "keys": keys} for keys in indexes]
    rate = float(sum(r["rate_per_s"] for r, _, _ in chosen))
    if math.isfinite(rate):
        spec["rate"] = round(rate, 3)
    spec["operations"] = operations
    notes = [f"Records: {records:,}" + (" (given)." if given else "."),
             f"Rate: {number(rate)} ops/s in production (run it with capmodel bench --rate)." if math.isfinite(rate)
             else "Rate: unknown (the log never saw every operation: slowms above 0).",
             "Document size: " + ("unknown (no find returned documents with a reslen): no padding." if size is None
                                  else f"{size:,} bytes" + (" (given)." if document_bytes is not None else
                                                            ", from the replies' sizes.")),
             f"Updates set the field {UPDATED_FIELD!r} of one document (the log's shapes hold no modification); an "
             "insert writes one document (a batch's size is not in its shape)."]
    return ReplayWorkload(spec, namespace, tuple(replayed), left_out, tuple(notes))


def _replayable(rows, namespace: str) -> tuple[list, dict]:
    """The namespace's shapes the replay can run, busiest first, as (row, operation kind, ShapeFilter); and
    ``{shape id: why}`` for the others (of any namespace)."""
    mine = rows[rows["namespace"] == namespace]
    if mine.empty:
        raise InputError(f"no shapes of the namespace {namespace!r} (the log has "
                         f"{', '.join(sorted(set(rows['namespace'])))})")
    left_out = {str(r["shape"]): f"{r['namespace']}, another namespace"
                for _, r in rows[rows["namespace"] != namespace].iterrows()}
    chosen, more = [], _next_batches(mine)
    for _, row in mine.iterrows():
        if row["operation"] == "getMore" and row["shape"] in more:
            left_out[str(row["shape"])] = f"getMore {row['filter_shape']}: counted with its find".replace("  ", " ")
            continue
        row = _with_next_batches(row, more)
        kind = REPLAYED.get(row["operation"])
        conditions = shape_filter(row["filter_shape"]) if kind != "insert" else ShapeFilter()
        why = (f"{row['operation']} is not replayed" if kind is None else
               f"no selectivity rule for {conditions.unsupported}" if conditions.unsupported else
               "a range on _id is not replayed" if "_id" in conditions.ranges else None)
        if why:
            left_out[str(row["shape"])] = " ".join(filter(None, (row["operation"], row["filter_shape"]))) + f": {why}"
        else:
            chosen.append((row, kind, conditions))
    if not chosen:
        raise InputError(f"no shape of {namespace} can be replayed: " + "; ".join(left_out.values()))
    return sorted(chosen, key=lambda item: -item[0]["operations"]), left_out


def document_size(chosen: list, namespace: str) -> int | None:
    """The documents' BSON size from the replies of the find that returned the most per operation (the module's
    docstring); None where no find returned any with a reply size."""
    finds = [r for r, kind, _ in chosen if kind == "find" and r["returned_per_op"] > 0
             and math.isfinite(r.get("reply_bytes_per_returned", math.nan)) and r["reply_bytes_per_returned"] > 0]
    if not finds:
        return None
    row = max(finds, key=lambda r: r["returned_per_op"])
    envelope = (REPLY_ENVELOPE + len(namespace)) / row["returned_per_op"]
    return max(1, round(row["reply_bytes_per_returned"] - envelope - ARRAY_ELEMENT))


def bson_size(document: dict, key_bytes: int) -> int:
    """The BSON size of a replay document of ``document``'s fields (integers below 2**31: 4 bytes; a padding string
    its length) and an ``_id`` (``key_bytes`` long as a string; 0: an ObjectId)."""
    size = 4 + 1 + (1 + 3 + 1 + (4 + key_bytes + 1 if key_bytes else 12))
    for name, template in document.items():
        value = 4 + int(template["length"]) + 1 if template.get("gen") == "string" else 4
        size += 1 + len(name.encode()) + 1 + value
    return size


def _next_batches(rows) -> dict:
    """{getMore shape id: its row} for the getMores whose find (same filter, sort, projection) is a shape here."""
    parts = ("filter_shape", "sort", "projection")
    finds = {tuple(r[p] for p in parts) for _, r in rows[rows["operation"] == "find"].iterrows()}
    return {r["shape"]: r for _, r in rows[rows["operation"] == "getMore"].iterrows()
            if tuple(r[p] for p in parts) in finds}


def _with_next_batches(row, more: dict):
    """A find's row with its getMores' documents examined and returned and reply bytes added per find."""
    if row["operation"] != "find":
        return row
    mine = [m for m in more.values() if all(m[p] == row[p] for p in ("filter_shape", "sort", "projection"))]
    if not mine or not row["operations"] > 0:
        return row
    row = row.copy()
    returned = row["returned_per_op"] * row["operations"]
    replied = (row.get("reply_bytes_per_returned", math.nan) * returned) if returned > 0 else 0.0
    for m in mine:
        share = m["operations"] / row["operations"]
        row["docs_examined_per_op"] += m["docs_examined_per_op"] * share
        row["keys_examined_per_op"] += m["keys_examined_per_op"] * share
        row["returned_per_op"] += m["returned_per_op"] * share
        if m["returned_per_op"] > 0:
            replied += m.get("reply_bytes_per_returned", math.nan) * m["returned_per_op"] * m["operations"]
        returned += m["returned_per_op"] * m["operations"]
    if returned > 0:
        row["reply_bytes_per_returned"] = replied / returned
    return row


def _document(chosen: list, domains: dict, records: int, size: int | None, keyed: bool) -> dict:
    """The document template: each filter field from its domain, each sort or index field from [0, records)."""
    document: dict = {p: {"gen": "int", "min": 0, "max": d - 1} for p, d in domains.items() if p != "_id"}
    for r, _, _ in chosen:
        for key in list(_keys(r["sort"])) + [p for index in index_keys(r["plan"]) for p in index]:
            if key != "_id" and key not in document:
                document[key] = {"gen": "int", "min": 0, "max": records - 1}
    if not document:
        document = {UPDATED_FIELD: {"gen": "int", "min": 0, "max": 0}}
    if size is not None:
        key_bytes = len(f"{KEY_PREFIX}{records - 1}") if keyed else 0
        padding = size - bson_size({**document, PADDING: {"gen": "string", "length": 0}}, key_bytes)
        if padding > 0:
            document[PADDING] = {"gen": "string", "length": padding}
    return document


def _operation(row, kind: str, name: str, weight: float, filter_template: dict) -> dict:
    """One operation of the workload: the shape's operation with its filter, sort and projection."""
    op: dict = {"op": kind, "name": name, "weight": weight}
    if kind != "insert":
        op["filter"] = filter_template
    if kind == "find" and _keys(row["sort"]):
        op["sort"] = _keys(row["sort"])
    if kind == "find" and _keys(row["projection"]):
        op["projection"] = {k: (v if isinstance(v, int) else 1) for k, v in _keys(row["projection"]).items()}
    if kind == "update":
        op["update"] = {"$set": {UPDATED_FIELD: {"gen": "int", "min": 0, "max": 999_999}}}
    return op


def _keys(text: str) -> dict:
    shape = parse_shape(text or "")
    return shape if isinstance(shape, dict) else {}


def _filter(conditions: ShapeFilter, domains: dict, widths: dict, records: int) -> dict:
    """The filter template of a replayed shape: its paths and operators, values from the domains."""
    out: dict = {}
    for p in conditions.equal:
        value = {"gen": "key"} if p == "_id" else {"gen": "int", "min": 0, "max": domains[p] - 1}
        operator = conditions.eq_operator.get(p)
        out[p] = value if operator is None else {operator: [value] if operator == "$in" else value}
    for p, (lower, upper) in conditions.ranges.items():
        out[p] = {"gen": "range", "min": 0, "max": records - 1, "width": widths[p],
                  **({"lower": lower} if lower else {}), **({"upper": upper} if upper else {})}
    return out


def write_replay(workload: ReplayWorkload, path) -> str:
    """Write the workload file (``ReplayWorkload.to_yaml``) to ``path``; returns the path."""
    from pathlib import Path

    target = Path(path)
    try:
        target.write_text(workload.to_yaml())
    except OSError as exc:
        raise InputError(f"{target}: cannot write the workload ({exc.strerror or exc})") from None
    return str(target)
