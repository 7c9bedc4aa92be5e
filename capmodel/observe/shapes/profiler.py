"""The query shapes of a live server's profiler: the ``system.profile`` documents of the database a URI names, read
with pymongo (read-only), with the profiler's settings as the server reports them (``profile: -1``)."""
from __future__ import annotations

from capmodel.errors import InputError
from capmodel.observe.shapes.grouping import shapes_from_profile
from capmodel.observe.shapes.result import QueryShapes
from capmodel.redact import redact_uri

#: the profiler's levels: 2 records every operation (as slowms 0 would), 1 those of slowms or more, 0 none
EVERY_OPERATION = 2


def shapes_from_server(uri: str, interval_s: float | None = None) -> QueryShapes:
    """The query shapes of the ``system.profile`` of the database in ``uri``'s path (``mongodb://host/shop``).

    The settings: at level 2 every operation was eligible (slowms 0), at level 1 those of the server's slowms or more;
    either way drawn by its sampleRate. They are the settings now: a change since the documents were written is not
    seen (the log shows changes; the profiler does not).

    Parameters
    ----------
    uri : str
        A MongoDB URI whose path names the database.
    interval_s : float, optional
        As for ``query_shapes``.

    Returns
    -------
    QueryShapes

    Raises
    ------
    InputError
        The URI names no database, or the database has no ``system.profile``.
    ServerError
        The server cannot be reached.
    """
    from pymongo import uri_parser

    from capmodel.observe.sampler import connect

    try:
        name = uri_parser.parse_uri(uri).get("database")
    except Exception:  # noqa: BLE001 - InvalidURI, ConfigurationError, ValueError: connect says which
        name = None
    client = connect(uri)
    try:
        if not name:
            raise InputError(f"--profile {redact_uri(uri)}: name the database whose system.profile to read in the "
                             "URI's path (mongodb://host/DATABASE)")
        database = client[name]
        if "system.profile" not in database.list_collection_names(filter={"name": "system.profile"}):
            raise InputError(f"--profile {redact_uri(uri)}: database {name!r} has no system.profile (turn the "
                             "profiler on: db.setProfilingLevel(2))")
        settings = database.command("profile", -1)
        slowms = 0.0 if settings.get("was") == EVERY_OPERATION else float(settings.get("slowms", 100))
        documents = database["system.profile"].find().sort("ts", 1)
        return shapes_from_profile(documents, slowms=slowms, sample_rate=float(settings.get("sampleRate", 1.0)),
                                   source=f"{redact_uri(uri)} system.profile", interval_s=interval_s)
    finally:
        client.close()
