"""What a sweep measures and how: ``BenchConfig``, validated in one place (``check``) before anything connects."""
from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass, field

from capmodel.bench.client.arrivals import ARRIVALS
from capmodel.bench.workload.ownership import DEFAULT_DATABASE, check_database_name
from capmodel.errors import BenchError, shown

ON_ERROR = ("stop", "retry", "continue")
BINDINGS = ("pymongo", "mongojet")
SCHEDULER_ENV = "CAPMODEL_DASK_SCHEDULER"
# configuration keys that define what a sweep measures: a resumed sweep must agree on them
SWEEP_KEYS = ("workload", "records", "concurrency", "repeat", "duration", "warmup", "operations", "rate", "adaptive",
              "tolerance", "max_steps", "database", "collection", "read_preference", "write_concern", "seed",
              "processes", "arrivals", "binding")


# The documented range of every numeric option (checked in ``BenchConfig.check`` before anything connects or
# allocates): name -> (kind, lowest, highest, the option's name on the command line). Bounds are inclusive.
MAX_CONCURRENCY = 10_000       # clients of one step (threads over the client processes)
MAX_PROCESSES_PER_CPU = 4      # local client processes per CPU core of this machine
MAX_SCHEDULED_OPERATIONS = 10_000_000  # open loop: rate x (warm-up + duration), the due times drawn before a step
LIMITS = {
    "records": (int, 0, 1_000_000_000, "--records"),
    "repeat": (int, 1, 1_000, "--repeat"),
    "duration": (float, 0.001, 86_400.0, "--duration"),
    "warmup": (float, 0.0, 3_600.0, "--warmup"),
    "operations": (int, 1, 1_000_000_000, "--operations"),
    "rate": (float, 0.001, 10_000_000.0, "--rate"),
    "tolerance": (float, 1e-6, 1 - 1e-6, "--tolerance"),
    "max_steps": (int, 1, 10_000, "--max-steps"),
    "timeout_ms": (int, 1, 86_400_000, "--timeout-ms"),
    "server_selection_timeout_ms": (int, 1, 3_600_000, "server_selection_timeout_ms"),
    "retries": (int, 0, 100, "retries"),
    "error_threshold": (float, 0.0, 1.0, "error_threshold"),
    "seed": (int, -(2**63), 2**63 - 1, "--seed"),
    "workers": (int, 1, 100_000, "--workers"),
}


def _checked_number(name: str, value):
    """``value`` as the option's kind, finite and inside its documented range, or a BenchError naming the option."""
    kind, low, high, option = LIMITS[name]
    given = shown(value, 40)
    wanted = (f"an integer from {low:,} to {high:,}" if kind is int else f"a number from {low:g} to {high:g}")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        try:
            value = float(value) if kind is float else value
        except (TypeError, ValueError):
            pass
    if isinstance(value, float) and kind is int and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (kind is int and not isinstance(value, int)):
        raise BenchError(f"{option} must be {wanted}, got {given}")
    if (isinstance(value, float) and not math.isfinite(value)) or not low <= value <= high:
        raise BenchError(f"{option} must be {wanted}, got {given}")
    return kind(value)


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
    # the binding the clients use (capmodel.bench.client.bindings): "mongojet" (coroutines on a Rust core; 0.3-0.4x
    # the client CPU per operation of pymongo threads in benchmarks/bench_runner.py) or "pymongo" (threads)
    binding: str = "mongojet"
    allow_server_js: bool = False  # accept $where, $function, $accumulator in the workload (refused otherwise)

    def check(self) -> "BenchConfig":
        """Validate every option (types, finite, in range) and normalise; raises a BenchError naming the option."""
        if isinstance(self.concurrency, (str, bytes)) or not hasattr(self.concurrency, "__iter__"):
            raise BenchError("--concurrency must be a list of client counts, e.g. 1,2,4")
        bad = [c for c in self.concurrency if isinstance(c, bool) or not isinstance(c, int) or not
               1 <= c <= MAX_CONCURRENCY]
        if bad or not self.concurrency:
            raise BenchError(f"--concurrency: every value must be an integer >= 1 and <= {MAX_CONCURRENCY:,}, "
                             f"got {shown(bad[0], 40) if bad else 'nothing'}")
        self.concurrency = sorted(set(self.concurrency))
        if not isinstance(self.allow_server_js, bool):
            raise BenchError(f"allow_server_js must be True or False, got {shown(self.allow_server_js, 40)}")
        for name in LIMITS:
            if getattr(self, name) is not None:
                setattr(self, name, _checked_number(name, getattr(self, name)))
        if self.operations is None and self.duration is None:
            raise BenchError("--duration must be given (or --operations)")
        cpus = os.cpu_count() or 1
        most = min(max(self.concurrency), MAX_PROCESSES_PER_CPU * cpus)
        if self.processes == "auto":
            self.processes = min(cpus, max(self.concurrency))
        if isinstance(self.processes, bool) or not isinstance(self.processes, int) or self.processes < 1:
            raise BenchError(f"--processes must be an integer >= 1 or 'auto', got {str(self.processes)[:40]!r}")
        if self.processes > most:
            raise BenchError(f"--processes {self.processes} is more than this sweep can use: at most the largest "
                             f"--concurrency ({max(self.concurrency)}) and {MAX_PROCESSES_PER_CPU} per CPU core "
                             f"({MAX_PROCESSES_PER_CPU * cpus} here), so at most {most}")
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
        if self.rate is not None:
            seconds = self.warmup + (self.duration if self.operations is None else 0.0)
            if self.rate * seconds > MAX_SCHEDULED_OPERATIONS:
                raise BenchError(f"--rate {self.rate:g} over {seconds:g} s of warm-up and measurement schedules "
                                 f"{self.rate * seconds:,.0f} operations a step; at most "
                                 f"{MAX_SCHEDULED_OPERATIONS:,} (lower --rate or --duration)")
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
            from capmodel.bench.client.async_workers import available

            if not available():
                raise BenchError("--binding mongojet needs the mongojet package: pip install mongojet")
        if self.on_error not in ON_ERROR:
            raise BenchError(f"--on-error must be one of {', '.join(ON_ERROR)}")
        if self.adaptive and len(self.concurrency) < 2:
            raise BenchError("--adaptive needs a concurrency range: give at least two values (min and max)")
        check_database_name(self.database)
        return self

    @property
    def distributed(self) -> bool:
        """True when the clients run on Dask workers (a local cluster or an existing scheduler)."""
        return self.scheduler is not None or self.processes != 1

    def to_dict(self) -> dict:
        return asdict(self)
