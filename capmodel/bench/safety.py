"""Data safety: the benchmark works only in its own database and only on collections it created.

Rules (enforced here, before anything is written):
- The database is ``capmodel_bench`` unless told otherwise, and never ``admin``, ``local`` or ``config``.
- A collection counts as capmodel's when the marker collection ``_capmodel_owned`` of that same database has a
  document for it (written when capmodel creates the collection). capmodel drops or reloads only such collections.
- A non-empty collection that capmodel did not create is refused unless ``allow_existing=True`` (then it is used
  as it is: nothing is dropped, loaded or indexed).
"""
from __future__ import annotations

import datetime as dt

from capmodel.errors import BenchError

DEFAULT_DATABASE = "capmodel_bench"
MARKER_COLLECTION = "_capmodel_owned"
FORBIDDEN_DATABASES = ("admin", "local", "config")


def check_database_name(name: str) -> str:
    if not name or name in FORBIDDEN_DATABASES or any(c in name for c in '/\\. "$'):
        raise BenchError(f"--database {name!r} is not allowed: use a dedicated database such as "
                         f"'{DEFAULT_DATABASE}' (never admin, local or config)")
    return name


def ownership(database, collection: str) -> dict | None:
    """The marker document of a collection capmodel created, or None."""
    return database[MARKER_COLLECTION].find_one({"_id": collection})


def mark_owned(database, collection: str, workload_fingerprint: str, records: int) -> None:
    database[MARKER_COLLECTION].replace_one(
        {"_id": collection},
        {"_id": collection, "created_by": "capmodel", "fingerprint": workload_fingerprint, "records": int(records),
         "created_at": dt.datetime.now(dt.timezone.utc)},
        upsert=True,
    )


def prepare_collection(database, workload, allow_existing: bool = False, reload: bool = False):
    """Decide what to do with the workload's collection; return ``(collection, action, existing_count)``.

    ``action`` is ``"reuse"`` (capmodel's, same data definition, already loaded), ``"load"`` (empty or new: create
    indexes and load), or ``"as-is"`` (a foreign collection the user allowed). Drops only capmodel's own
    collections, and only when their data definition differs from the workload's (or ``reload``).
    """
    check_database_name(database.name)
    if workload.collection == MARKER_COLLECTION:
        raise BenchError(f"collection name '{MARKER_COLLECTION}' is reserved by capmodel")
    coll = database[workload.collection]
    exists = workload.collection in database.list_collection_names(filter={"name": workload.collection})
    count = coll.estimated_document_count() if exists else 0
    marker = ownership(database, workload.collection) if exists else None
    if marker is None:
        if count > 0:
            if not allow_existing:
                raise BenchError(
                    f"collection {database.name}.{workload.collection} already holds {count} documents and was not "
                    "created by capmodel; refusing to write to it. Use another --database or --collection, or pass "
                    "--allow-existing to benchmark it as it is (nothing will be dropped or loaded)")
            return coll, "as-is", count
        mark_owned(database, workload.collection, workload.fingerprint(), workload.records)
        return coll, "load", 0
    if (not reload and marker.get("fingerprint") == workload.fingerprint()
            and count >= marker.get("records", 0) and count >= workload.records):
        return coll, "reuse", count
    coll.drop()  # ours (marker present): safe to rebuild
    mark_owned(database, workload.collection, workload.fingerprint(), workload.records)
    return coll, "load", 0
