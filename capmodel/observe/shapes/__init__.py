"""Query shapes from a server's own records: mongod's JSON log (its slow-operation entries) and the profiler's
``system.profile``, grouped into shapes (namespace, operation, the filter's paths and operators without their values,
sort, projection, the server's ``queryHash``) with each shape's rate, latency, work per operation and plan, aware of
what the profiler settings let the log see. ``query_shapes(paths)`` and ``shapes_from_profile(documents)`` give a
``QueryShapes`` (``capmodel.observe`` hands them on).
"""
