"""Where the benchmark's clients run: this process or a Dask cluster, each process's share of a step, the connection."""
