"""Dask's own log lines kept from a command-line user: capmodel says what went wrong in one line.

Dask's ``distributed`` package sets up its loggers when it is imported (a stream handler on stderr, ``distributed``
at INFO, ``distributed.client`` at WARNING): a scheduler lost mid-call makes ``distributed.client`` print a
``CommClosedError`` traceback of some forty lines before capmodel's own one-line error. A command that runs on Dask
(``bench --processes/--scheduler``, ``fleet``) calls ``quiet_dask_logs`` first; ``CAPMODEL_DEBUG=1`` keeps Dask's
logs (and the tracebacks) for whoever debugs. The Python API leaves them as Dask sets them.
"""
from __future__ import annotations

import logging
import os

#: Dask's loggers that print to the user's terminal (the ones ``distributed.config`` gives a level, and asyncio's
#: "Task exception was never retrieved" from a cancelled reconnect)
DASK_LOGGERS = ("distributed", "distributed.client", "distributed.gc", "tornado", "tornado.application", "asyncio")


def quiet_dask_logs() -> bool:
    """Raise Dask's loggers to CRITICAL in this process, after Dask's import has set them (the import is done
    here: its levels would override ours); False, changing nothing, with ``CAPMODEL_DEBUG=1`` or without Dask."""
    if os.environ.get("CAPMODEL_DEBUG") == "1":
        return False
    try:
        import distributed  # noqa: F401 - imported for its logging set-up, which must come before ours
    except ImportError:
        return False
    for name in DASK_LOGGERS:
        logging.getLogger(name).setLevel(logging.CRITICAL)
    return True
