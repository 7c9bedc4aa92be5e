"""An embedded Dask cluster on this machine for bench's client processes and the fleet's tasks: a ``LocalCluster``
of single-threaded worker processes on 127.0.0.1, no dashboard, whose workers leave Ctrl-C to the process that
started them.

A terminal's Ctrl-C reaches every process of its foreground group: the local cluster's workers as well as capmodel.
A worker that took it printed its ``KeyboardInterrupt`` traceback on the user's terminal. And capmodel could meet a
lost worker before its own interrupt, and then end with an error instead of "interrupted". So each worker ignores
SIGINT from its start (this module is the workers' preload, ``dask_setup``). capmodel alone stops the run and closes
the cluster; SIGTERM, which closing the cluster sends, keeps its meaning.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from distributed import LocalCluster


def local_cluster(workers: int, silence_logs: int) -> "LocalCluster":
    """Start the cluster: ``workers`` processes of one thread each; Dask's own log lines below ``silence_logs``
    (a ``logging`` level) are not shown. The scheduler's HTTP server starts even without a dashboard: on port 0 it
    never meets another cluster's 8787 (and never warns into a report's page)."""
    from distributed import LocalCluster

    return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                        dashboard_address="127.0.0.1:0", silence_logs=silence_logs,
                        scheduler_kwargs={"dashboard": False}, preload=[__name__])


def dask_setup(worker) -> None:
    """Run by each worker process as it starts (Dask's preload hook): Ctrl-C is the coordinator's to handle."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
