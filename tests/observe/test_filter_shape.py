"""A filter's shape keeps its field paths and operators and drops every value: each filter below against the shape
written out by hand, and none of its values (strings starting ``zq``, seven-digit numbers) in the text."""
from __future__ import annotations

import json

import pytest

from capmodel.observe.shapes.filter_shape import filter_shape, key_shape, pipeline_shape

CASES = [
    ({"customer": "zq-a", "placed": {"$gte": 1234567, "$lt": 1234999}}, "{customer: ?, placed: {$gte: ?, $lt: ?}}"),
    ({"b": 1234567, "a": "zq-b"}, "{a: ?, b: ?}"),                                   # paths sorted
    ({"tags": {"$in": ["zq-c", "zq-d"]}}, "{tags: {$in: ?}}"),                      # a list is one value
    ({"address": {"city": "zq-e", "zip": 1234567}}, "{address: ?}"),               # a subdocument compared whole
    ({"_id": {"$oid": "zq0000000000000000000000"}}, "{_id: ?}"),                    # extended JSON is a value
    ({"at": {"$gt": {"$date": "2026-01-01T00:00:00Z"}}}, "{at: {$gt: ?}}"),
    ({"name": {"$regex": "^zq", "$options": "i"}}, "{name: {$options: ?, $regex: ?}}"),
    ({"name": {"$regularExpression": {"pattern": "^zq", "options": ""}}}, "{name: ?}"),
    ({"$or": [{"a": "zq-f"}, {"b": {"$exists": True}}, {"a": "zq-g"}]}, "{$or: [{a: ?}, {b: {$exists: ?}}]}"),
    ({"items": {"$elemMatch": {"sku": "zq-h", "qty": {"$gt": 1234567}}}},
     "{items: {$elemMatch: {qty: {$gt: ?}, sku: ?}}}"),
    ({"scores": {"$elemMatch": {"$gte": 1234567, "$lt": 1234568}}}, "{scores: {$elemMatch: {$gte: ?, $lt: ?}}}"),
    ({"qty": {"$not": {"$gt": 1234567}}}, "{qty: {$not: {$gt: ?}}}"),
    ({"$expr": {"$gt": ["$a", "zq-i"]}}, "{$expr: ?}"),
    ({}, "{}"),
]


@pytest.mark.parametrize("query, shape", CASES)
def test_the_shape_of_a_filter(query, shape):
    """The shape as written; no value of the filter in it."""
    assert filter_shape(query) == shape
    assert "zq" not in shape and "123456" not in shape


def test_sorts_projections_and_pipelines():
    """A sort and a projection keep their 1, -1 and 0; anything else (a $slice, a $meta) is a value; a pipeline keeps
    its stages' names, a $match's filter shape and a $sort's keys."""
    assert key_shape({"placed": -1, "_id": 1}) == "{placed: -1, _id: 1}"
    assert key_shape({"total": 1, "items": {"$slice": 1234567}, "note": "zq-j"}) == "{total: 1, items: ?, note: ?}"
    pipeline = [{"$match": {"status": "zq-k"}}, {"$group": {"_id": "$c", "n": {"$sum": 1}}}, {"$sort": {"n": -1}},
                {"$limit": 1234567}]
    assert pipeline_shape(pipeline) == "[{$match: {status: ?}}, $group, {$sort: {n: -1}}, $limit]"
    assert "zq" not in json.dumps(pipeline_shape(pipeline))
