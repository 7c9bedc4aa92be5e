"""Where the fleet's tasks run: an embedded local Dask cluster of single-threaded worker processes, or an existing
scheduler, behind one ``dask_client`` (as ``distributed.deploy.local`` puts a local cluster and a remote scheduler
behind one ``Client``)."""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from capmodel.errors import CapmodelError, InputError
from capmodel.formatting import plural
from capmodel.local_cluster import local_cluster

if TYPE_CHECKING:
    from distributed import Client, LocalCluster

CLIENT_TIMEOUT_S = 15
WORKERS_PER_CPU = 4      # as bench's local client processes: more only queue for the CPUs (and take minutes to start)


def local_workers():
    """The ``--workers`` of an embedded local cluster: 1 to 4 per CPU core of this machine (a capmodel.constraints
    ``Number``)."""
    import os

    from capmodel.constraints import Number

    most = WORKERS_PER_CPU * (os.cpu_count() or 1)
    return Number(int, 1, most, name="--workers",
                  wanted_text=f"an integer from 1 to {most:,} ({WORKERS_PER_CPU} per CPU core here)")


class dask_client:
    """A Dask client on an embedded LocalCluster of ``workers`` single-threaded processes (no dashboard), or on the
    scheduler at ``address``; both closed on exit. Yields (client, a description of the workers)."""

    def __init__(self, address: str | None, workers: int = 2):
        self.address, self.workers = address, workers
        self.cluster: LocalCluster | None = None
        self.client: Client | None = None

    def __enter__(self):
        try:
            from distributed import Client
        except ImportError:
            raise CapmodelError("the fleet runs on Dask: pip install distributed") from None
        if self.address is None:
            self.workers = local_workers().check(self.workers, InputError)
        try:
            if self.address is None:
                # the workers' log handlers at CRITICAL: a heartbeat lost while the cluster closes logged an ERROR
                # and its traceback on the user's terminal
                self.cluster = local_cluster(self.workers, logging.CRITICAL)
                self.client = Client(self.cluster, set_as_default=False, timeout=CLIENT_TIMEOUT_S)
                described = f"{plural(self.workers, 'local Dask worker')}"
            else:
                self.client = Client(self.address, set_as_default=False, timeout=CLIENT_TIMEOUT_S)
                count = len(self.client.scheduler_info()["workers"])
                if not count:   # the tasks would wait for a worker without end
                    raise CapmodelError(f"the Dask scheduler at {self.address} has no workers: start some "
                                        f"(dask worker {self.address}) or leave --scheduler out")
                described = f"{plural(count, 'Dask worker')} at {self.address}"
        except CapmodelError:
            self.__exit__(None, None, None)
            raise
        except Exception as exc:  # noqa: BLE001 - Dask raises OSError, TimeoutError, ValueError ...
            self.__exit__(None, None, None)
            where = f"the Dask scheduler at {self.address}" if self.address else "a local Dask cluster"
            raise CapmodelError(f"cannot start or reach {where}: {type(exc).__name__}: {exc}"[:400]) from None
        return self.client, described

    def __exit__(self, *exc_info):
        for thing in (self.client, self.cluster):
            if thing is not None:
                try:
                    thing.close()
                except Exception:  # noqa: BLE001 - closing after a lost scheduler
                    pass
        self.client = self.cluster = None
        return False
