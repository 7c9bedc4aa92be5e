"""A bundled workload's collection loaded on a real server, under a name no other test uses."""
from __future__ import annotations

import itertools

_names = itertools.count()


def loaded(database, name: str, records: int):
    """``(collection, workload, keyspace)``: a fresh collection of ``database`` holding ``records`` of the bundled
    workload ``name``, its indexes created (keyspace None for a workload without record keys)."""
    from capmodel.bench.client.operations import KeySpace, create_indexes, load_records
    from capmodel.bench.workload.definition import load_workload

    w = load_workload(name, records=records, collection=f"{name.replace('-', '_')}_{next(_names)}")
    coll = database[w.collection]
    create_indexes(coll, w)
    load_records(coll, w, 0, w.records)
    return coll, w, (KeySpace(w, w.records) if w.has_keys else None)
