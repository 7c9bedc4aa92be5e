"""Production telemetry: a running MongoDB's own measurements turned into the curve table, no benchmark needed.

``observe_uri`` samples ``serverStatus`` live (read-only); ``observe_ftdc`` reads the FTDC files a mongod writes into
``diagnostic.data``. Both give an ``Observation``: per-interval ``samples`` and the ``curve`` (concurrency from
Little's law, throughput, mean latency) that ``capmodel.fit_usl`` and ``fit_usl_latency`` read.
"""
from capmodel.observe.capacity import ServerCapacity, server_capacity
from capmodel.observe.observation import Observation, bundled_sample, observe_ftdc, observe_uri, read_observation

__all__ = ["Observation", "ServerCapacity", "bundled_sample", "observe_ftdc", "observe_uri", "read_observation",
           "server_capacity"]
