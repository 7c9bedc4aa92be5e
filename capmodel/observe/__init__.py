"""Production telemetry: a running MongoDB's own measurements turned into the curve table, no benchmark needed.

``observe_uri`` samples ``serverStatus`` live (read-only); ``observe_ftdc`` reads the FTDC files a mongod writes into
``diagnostic.data``. Both give an ``Observation``: per-interval ``samples`` and the ``curve`` (concurrency from
Little's law, throughput, mean latency) that ``capmodel.fit_usl`` and ``fit_usl_latency`` read.
``query_shapes`` reads a mongod's JSON logs (``shapes_from_profile`` its ``system.profile``) into ``QueryShapes``.
"""
from capmodel.observe.capacity import ServerCapacity, server_capacity
from capmodel.observe.observation import Observation, bundled_sample, observe_ftdc, observe_uri, read_observation
from capmodel.observe.shapes.grouping import query_shapes, shapes_from_profile
from capmodel.observe.shapes.result import QueryShapes

__all__ = ["Observation", "QueryShapes", "ServerCapacity", "bundled_sample", "observe_ftdc", "observe_uri",
           "query_shapes", "read_observation", "server_capacity", "shapes_from_profile"]
