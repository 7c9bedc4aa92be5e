"""Production telemetry: a running MongoDB's own measurements turned into the curve table, no benchmark needed.

``observe_uri`` samples ``serverStatus`` live (read-only); ``observe_ftdc`` reads the FTDC files a mongod writes into
``diagnostic.data``. Both give an ``Observation``: per-interval ``samples`` and the ``curve`` (concurrency from
Little's law, throughput, mean latency) that ``capmodel.fit_usl`` and ``fit_usl_latency`` read.
``query_shapes`` reads a mongod's JSON logs (``shapes_from_profile`` its ``system.profile``) into ``QueryShapes``.
"""
from capmodel.observe.capacity import ServerCapacity, server_capacity
from capmodel.observe.observation import Observation, bundled_sample, observe_ftdc, observe_uri, read_observation

__all__ = ["Observation", "QueryShapes", "ServerCapacity", "bundled_sample", "observe_ftdc", "observe_uri",
           "query_shapes", "read_observation", "server_capacity", "shapes_from_profile"]

#: the query-shape names, imported when first asked for: their results use pandas and scipy, which the FTDC and client
#: paths that import this package must not load
_SHAPES = {"query_shapes": "capmodel.observe.shapes.grouping",
           "shapes_from_profile": "capmodel.observe.shapes.grouping",
           "QueryShapes": "capmodel.observe.shapes.result"}


def __getattr__(name: str):
    if name in _SHAPES:
        import importlib

        return getattr(importlib.import_module(_SHAPES[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
