"""capmodel.bench: live mini-benchmarks against MongoDB that produce curve tables.

Split as YCSB splits a benchmark: ``workloads`` (what to do: YAML definitions, validated), ``generators`` and
``templates`` (keys and values), ``binding`` (how to talk to MongoDB with pymongo), ``measurements`` (what was seen:
HdrHistograms, errors by kind); ``runner`` drives one step, ``sweep`` a series of steps into ``curve.csv``;
``safety`` keeps it inside its own database; ``server``, ``telemetry`` and ``redact`` are the embedded mongod,
serverStatus/CPU readings and secret scrubbing.
"""
