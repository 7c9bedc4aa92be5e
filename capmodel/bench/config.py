"""What a sweep measures and how: ``BenchConfig``, validated in one place (``check``) before anything connects."""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field

from capmodel.bench.arrivals import ARRIVALS
from capmodel.bench.safety import DEFAULT_DATABASE, check_database_name
from capmodel.errors import BenchError

ON_ERROR = ("stop", "retry", "continue")
BINDINGS = ("pymongo", "mongojet")
SCHEDULER_ENV = "CAPMODEL_DASK_SCHEDULER"
# configuration keys that define what a sweep measures: a resumed sweep must agree on them
SWEEP_KEYS = ("workload", "records", "concurrency", "repeat", "duration", "warmup", "operations", "rate", "adaptive",
              "tolerance", "max_steps", "database", "collection", "read_preference", "write_concern", "seed",
              "processes", "arrivals", "binding")


@dataclass
class BenchConfig:
    """Everything a sweep needs besides the server address.

    Where the clients run: ``processes`` (1: threads of this process; P or "auto": a local Dask cluster of P
    single-threaded worker processes on 127.0.0.1) or ``scheduler`` (the address of an existing Dask scheduler whose
    workers may run on other hosts; ``workers`` limits how many of them take part).
    """

    workload: str = "ycsb-b"
    records: int | None = None
    concurrency: list[int] = field(default_factory=lambda: [1, 2, 4, 8, 16, 32, 64])
    repeat: int = 1
    duration: float = 10.0
    warmup: float = 2.0
    operations: int | None = None
    rate: float | None = None
    adaptive: bool = False
    tolerance: float = 0.1
    max_steps: int | None = None
    database: str = DEFAULT_DATABASE
    collection: str | None = None
    read_preference: str | None = None
    write_concern: str | None = None
    timeout_ms: int = 10_000
    server_selection_timeout_ms: int = 5_000
    on_error: str = "stop"
    retries: int = 2
    error_threshold: float = 0.05
    seed: int = 0
    allow_existing: bool = False
    calibrate: bool = True
    processes: int | str = 1  # "auto": one per CPU core of this machine
    arrivals: str = "uniform"
    scheduler: str | None = None
    workers: int | None = None
    # the driver the clients use: "mongojet" (coroutines on a Rust core; 0.3-0.4x the client CPU per operation of
    # pymongo threads in benchmarks/bench_runner.py) or "pymongo" (threads)
    binding: str = "mongojet"

    def check(self) -> "BenchConfig":
        self.concurrency = sorted({int(c) for c in self.concurrency})
        if not self.concurrency or self.concurrency[0] < 1:
            raise BenchError("--concurrency: every value must be an integer >= 1")
        if self.repeat < 1:
            raise BenchError("--repeat must be >= 1")
        if self.operations is None and not self.duration > 0:
            raise BenchError("--duration must be > 0 seconds (or give --operations)")
        if self.warmup < 0:
            raise BenchError("--warmup must be >= 0 seconds")
        if self.processes == "auto":
            self.processes = os.cpu_count() or 1
        if isinstance(self.processes, bool) or not isinstance(self.processes, int) or self.processes < 1:
            raise BenchError(f"--processes must be an integer >= 1 or 'auto', got {self.processes!r}")
        if self.scheduler is not None:
            self.scheduler = str(self.scheduler).strip()
            if not self.scheduler:
                raise BenchError("--scheduler: give the Dask scheduler's address, e.g. tcp://10.0.0.5:8786")
            if self.processes != 1:
                raise BenchError("--processes starts a local cluster; with --scheduler the cluster's workers run "
                                 "the clients (limit them with --workers)")
        if self.workers is not None:
            if isinstance(self.workers, bool) or not isinstance(self.workers, int) or self.workers < 1:
                raise BenchError(f"--workers must be an integer >= 1, got {self.workers!r}")
            if self.scheduler is None:
                raise BenchError("--workers limits the workers of an existing cluster: give --scheduler too "
                                 "(or --processes for a local one)")
        if self.rate is not None and not self.rate > 0:
            raise BenchError(f"--rate must be > 0 operations per second, got {self.rate}")
        if self.arrivals not in ARRIVALS:
            raise BenchError(f"--arrivals must be one of {', '.join(ARRIVALS)}")
        if self.arrivals != "uniform" and self.rate is None:
            raise BenchError("--arrivals sets the open loop's arrival process: give --rate too")
        if self.operations is not None and self.operations < min(self.processes, self.concurrency[0]):
            raise BenchError(f"--operations {self.operations} is fewer than the client processes "
                             f"({min(self.processes, self.concurrency[0])})")
        if self.binding not in BINDINGS:
            raise BenchError(f"--binding must be one of {', '.join(BINDINGS)}, got {self.binding!r}")
        if self.binding == "mongojet":
            from capmodel.bench.async_workers import available

            if not available():
                raise BenchError("--binding mongojet needs the mongojet package: pip install mongojet")
        if self.on_error not in ON_ERROR:
            raise BenchError(f"--on-error must be one of {', '.join(ON_ERROR)}")
        if self.adaptive and len(self.concurrency) < 2:
            raise BenchError("--adaptive needs a concurrency range: give at least two values (min and max)")
        if self.adaptive and not 0 < self.tolerance < 1:
            raise BenchError("--tolerance must be a fraction between 0 and 1")
        check_database_name(self.database)
        return self

    @property
    def distributed(self) -> bool:
        """True when the clients run on Dask workers (a local cluster or an existing scheduler)."""
        return self.scheduler is not None or self.processes != 1

    def to_dict(self) -> dict:
        return asdict(self)
