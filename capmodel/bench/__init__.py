"""capmodel.bench: live mini-benchmarks against MongoDB that produce curve tables.

In wings, as YCSB splits a benchmark, each changing for its own reason:

- ``workload/`` what to do: workload definitions (YAML, validated), key and value generators, document templates,
  what a workload may ask of the server (``confinement``) and which collections are the bench's own (``ownership``);
- ``client/``   how to talk to the server and what was seen: the bindings (``--binding pymongo|mongojet``), a
  workload's operations on a binding, the runner of one step and its two measuring loops (threads, coroutines),
  arrivals, measurements, progress, telemetry, failed attempts and driver errors as sentences;
- ``cluster/``  where the clients run: this process or a Dask cluster (``executor``), one process's share of a step
  (``share``), a step split into shares and merged back (``split_merge``), the connection and its client options,
  the scheduler probe;
- ``sweep/``    the experiment: its configuration, the adaptive search, each step's verdict, the output files and
  the sweep in words;
- ``server/``   the embedded mongod.
"""
