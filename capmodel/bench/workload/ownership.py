"""Data safety: the benchmark works only in its own database and only on collections it created.

Rules (enforced here, before anything is written):
- The database is ``capmodel_bench`` unless told otherwise, and never ``admin``, ``local`` or ``config``.
- capmodel creates the workload's collection itself (``create``, which fails if the name is taken) and records the
  UUID the server gave it (``listCollections`` ``info.uuid``) in the marker collection ``_capmodel_owned``. A
  collection is capmodel's only when it exists *and* its UUID is the recorded one: a marker that names a collection
  which someone else created, or which was dropped and created again, proves nothing. capmodel drops or reloads
  only such collections.
- Any other existing collection, empty or not, is never adopted: it is refused unless ``allow_existing=True``, and
  then used as it is (nothing is dropped, loaded or indexed; its options, validator and indexes stay as they are).
"""
from __future__ import annotations

import datetime as dt

from capmodel.errors import BenchError

DEFAULT_DATABASE = "capmodel_bench"
MARKER_COLLECTION = "_capmodel_owned"
FORBIDDEN_DATABASES = ("admin", "local", "config")


def check_database_name(name: str) -> str:
    if (not isinstance(name, str) or not name or len(name) > 63 or name in FORBIDDEN_DATABASES
            or any(c in name for c in '/\\. "$\0')):
        raise BenchError(f"--database {str(name)[:80]!r} is not allowed: use a dedicated database such as "
                         f"'{DEFAULT_DATABASE}' (never admin, local or config)")
    return name


def collection_uuid(database, collection: str):
    """The server's UUID of ``collection`` (a ``bson.Binary``/``uuid.UUID``), or None when it does not exist (a view
    has none)."""
    for info in database.list_collections(filter={"name": collection}):
        return (info.get("info") or {}).get("uuid")
    return None


def ownership(database, collection: str) -> dict | None:
    """The marker of a collection capmodel created, when the collection that exists now is that very one (same
    UUID); None otherwise."""
    marker = database[MARKER_COLLECTION].find_one({"_id": collection})
    if marker is None or marker.get("uuid") is None:
        return None
    current = collection_uuid(database, collection)
    return marker if current is not None and current == marker["uuid"] else None


def create_owned(database, collection: str, workload_fingerprint: str, records: int):
    """Create ``collection`` (refused when the name is already taken) and record its UUID as capmodel's."""
    import pymongo

    try:
        database.create_collection(collection, check_exists=False)
    except pymongo.errors.OperationFailure as exc:
        if exc.code == 48:  # NamespaceExists: someone created it since we looked
            raise BenchError(f"collection {database.name}.{collection} appeared while capmodel was about to create "
                             "it; refusing to use it") from None
        raise
    uuid = collection_uuid(database, collection)
    database[MARKER_COLLECTION].replace_one(
        {"_id": collection},
        {"_id": collection, "created_by": "capmodel", "uuid": uuid, "fingerprint": workload_fingerprint,
         "records": int(records), "created_at": dt.datetime.now(dt.timezone.utc)},
        upsert=True,
    )
    return database[collection]


def prepare_collection(database, workload, allow_existing: bool = False, reload: bool = False):
    """Decide what to do with the workload's collection; return ``(collection, action, existing_count)``.

    ``action`` is ``"reuse"`` (capmodel's, same data definition, already loaded), ``"load"`` (created now: create
    indexes and load), or ``"as-is"`` (an existing collection the user allowed). Drops only capmodel's own
    collections (UUID as recorded), and only when their data definition differs from the workload's (or ``reload``).
    """
    check_database_name(database.name)
    name = workload.collection
    if name == MARKER_COLLECTION:
        raise BenchError(f"collection name '{MARKER_COLLECTION}' is reserved by capmodel")
    exists = name in database.list_collection_names(filter={"name": name})
    if not exists:
        return create_owned(database, name, workload.fingerprint(), workload.records), "load", 0
    coll = database[name]
    marker = ownership(database, name)
    if marker is None:
        count = coll.estimated_document_count()
        if not allow_existing:
            held = f"already holds {count} documents" if count else "already exists (empty)"
            raise BenchError(
                f"collection {database.name}.{name} {held} and was not created by capmodel; refusing to use it. "
                "Use another --database or --collection, or pass --allow-existing to benchmark it as it is "
                "(nothing will be dropped, loaded or indexed)")
        return coll, "as-is", count
    count = coll.estimated_document_count()
    if (not reload and marker.get("fingerprint") == workload.fingerprint()
            and count >= marker.get("records", 0) and count >= workload.records):
        return coll, "reuse", count
    coll.drop()  # ours (the UUID recorded when capmodel created it): safe to rebuild
    return create_owned(database, name, workload.fingerprint(), workload.records), "load", 0
