"""A query's shape: its structure with every value from the data removed.

The server's own notion is the query shape behind ``queryHash`` (``src/mongo/db/query/canonical_query_encoder.cpp``):
the match expression's paths and operators, the sort and the projection, no constants. This module writes a shape as
short text a person can read, ``{customer: ?, placed: {$gte: ?, $lt: ?}}``: field paths and operators are kept (the
application's code chose them), every value becomes ``?`` — scalars, arrays (an ``$in`` list), subdocuments compared
whole, and extended-JSON wrappers (``{"$oid": ...}``, ``{"$date": ...}``) alike. Only the logical operators ``$and``,
``$or`` and ``$nor`` keep their lists (of shapes), and a sort or a projection keeps its 1 and -1 (directions and
inclusions are code, not data); a projection's expression, like any other value, is ``?``. ``$regex`` is the operator
here (the log writes a regular-expression value as ``$regularExpression``). Field paths are kept as the application
wrote them: one that builds field names from its data would show them (and make a shape per name).
"""
from __future__ import annotations

VALUE = "?"
#: operators whose argument is a list of filters
LOGICAL = frozenset({"$and", "$or", "$nor"})
#: extended JSON's type wrappers (the log and mongoexport write BSON values this way): a value, not an operator
TYPE_WRAPPERS = frozenset({"$oid", "$date", "$numberLong", "$numberInt", "$numberDouble", "$numberDecimal",
                           "$binary", "$uuid", "$regularExpression", "$timestamp", "$symbol",
                           "$code", "$scope", "$minKey", "$maxKey", "$undefined", "$dbPointer"})
#: aggregation stages whose argument is a filter, a sort or a projection (others keep their name alone)
FILTER_STAGES = frozenset({"$match"})
SORT_STAGES = frozenset({"$sort"})


def _is_value_document(document: dict) -> bool:
    """A subdocument that is a value: compared whole (no key is an operator) or an extended-JSON wrapper."""
    return not document or all(not str(k).startswith("$") or k in TYPE_WRAPPERS for k in document)


def filter_shape(node) -> str:
    """The shape of a filter (a match expression) as text: paths and operators kept, values ``?``."""
    return _text(_filter(node))


def _filter(node):
    """A match expression: paths (each with its condition) and top-level operators; ``$and``, ``$or`` and ``$nor``
    keep their branches' shapes (sorted, once each), any other top-level operator (``$expr``, ``$text``) its name."""
    if not isinstance(node, dict):
        return VALUE
    out: dict = {}
    for key in sorted(node, key=str):
        value = node[key]
        if key in LOGICAL and isinstance(value, list):
            out[key] = sorted({_text(_filter(item)) for item in value})
        else:
            out[str(key)] = VALUE if str(key).startswith("$") else _condition(value)
    return out


def _condition(value):
    """A path's condition: its operators, each with ``?`` (``$elemMatch`` and ``$not`` with the shape they hold);
    a value compared whole is ``?``."""
    if not isinstance(value, dict) or _is_value_document(value):
        return VALUE
    out: dict = {}
    for op in sorted(value, key=str):
        if op == "$elemMatch" and isinstance(value[op], dict):
            inner = value[op]
            out[op] = _condition(inner) if inner and all(str(k).startswith("$") for k in inner) else _filter(inner)
        elif op == "$not":
            out[op] = _condition(value[op])
        else:
            out[str(op)] = VALUE
    return out


def key_shape(node) -> str:
    """The shape of a sort or a projection: its paths, each with its 1, -1, 0 or true kept and anything else ``?``
    (an expression, a ``$slice``, a ``$meta``)."""
    if not isinstance(node, dict) or not node:
        return ""
    return _text({str(k): (v if type(v) in (int, bool) and v in (-1, 0, 1) else VALUE) for k, v in node.items()})


def pipeline_shape(pipeline) -> str:
    """The shape of an aggregation pipeline: its stages in order, a ``$match``'s filter and a ``$sort``'s keys shaped,
    every other stage by its name alone."""
    if not isinstance(pipeline, list):
        return VALUE
    stages = []
    for stage in pipeline:
        name = next(iter(stage), "?") if isinstance(stage, dict) and len(stage) == 1 else "?"
        if name in FILTER_STAGES:
            stages.append(f"{{{name}: {filter_shape(stage[name])}}}")
        elif name in SORT_STAGES:
            stages.append(f"{{{name}: {key_shape(stage[name])}}}")
        else:
            stages.append(name if str(name).startswith("$") else VALUE)
    return "[" + ", ".join(stages) + "]"


def _text(shape) -> str:
    if isinstance(shape, dict):
        return "{" + ", ".join(f"{k}: {_text(v)}" for k, v in shape.items()) + "}"
    if isinstance(shape, list):
        return "[" + ", ".join(shape) + "]"
    if isinstance(shape, bool):
        return "true" if shape else "false"
    return str(shape)
