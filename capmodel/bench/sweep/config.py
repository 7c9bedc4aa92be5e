"""What a sweep measures and how: ``BenchConfig``, validated in one place (``check``) before anything connects."""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field, replace

from capmodel.bench.client.arrivals import ARRIVALS
from capmodel.bench.workload.ownership import DEFAULT_DATABASE, check_database_name
from capmodel.constraints import Choice, Flag, Number, Sequence, checked
from capmodel.errors import BenchError
from capmodel.formatting import number

ON_ERROR = ("stop", "retry", "continue")
BINDINGS = ("wire", "mongojet", "pymongo")
#: the read preference modes MongoDB's drivers take (case as written: pymongo refuses 'Secondary')
READ_PREFERENCES = ("primary", "primaryPreferred", "secondary", "secondaryPreferred", "nearest")
SCHEDULER_ENV = "CAPMODEL_DASK_SCHEDULER"
# configuration keys that define what a sweep measures: a resumed sweep must agree on them
SWEEP_KEYS = ("workload", "records", "concurrency", "repeat", "duration", "warmup", "operations", "rate", "adaptive",
              "tolerance", "max_steps", "database", "collection", "read_preference", "write_concern", "seed",
              "processes", "arrivals", "binding", "slo", "rate_shape", "windows")


MAX_CONCURRENCY = 10_000       # clients of one step (threads over the client processes)
MAX_PROCESSES_PER_CPU = 4      # local client processes per CPU core of this machine
MAX_SCHEDULED_OPERATIONS = 10_000_000  # open loop: rate x (warm-up + duration), the due times drawn before a step
# What every option may be (capmodel.constraints; bounds inclusive), checked in ``BenchConfig.check`` before anything
# connects or allocates, each named as the command line spells it.
SWEEP_PARAMETER_CONSTRAINTS = {
    "concurrency": Sequence(Number(int, 1, MAX_CONCURRENCY, text=False), name="--concurrency", min_length=1,
                            required=True),
    "records": Number(int, 0, 1_000_000_000, name="--records"),
    "repeat": Number(int, 1, 1_000, name="--repeat"),
    "duration": Number(float, 0.001, 86_400.0, name="--duration"),
    "warmup": Number(float, 0.0, 3_600.0, name="--warmup"),
    "operations": Number(int, 1, 1_000_000_000, name="--operations"),
    "rate": Number(float, 0.001, 10_000_000.0, name="--rate"),
    "windows": Number(int, 1, 1_000, name="--windows"),
    "tolerance": Number(float, 1e-6, 1 - 1e-6, name="--tolerance"),
    "max_steps": Number(int, 1, 10_000, name="--max-steps"),
    "timeout_ms": Number(int, 1, 86_400_000, name="--timeout-ms"),
    "server_selection_timeout_ms": Number(int, 1, 3_600_000, name="server_selection_timeout_ms"),
    "retries": Number(int, 0, 100, name="retries"),
    "error_threshold": Number(float, 0.0, 1.0, name="error_threshold"),
    "seed": Number(int, -(2**63), 2**63 - 1, name="--seed"),
    "workers": Number(int, 1, 100_000, name="--workers"),
    "allow_server_js": Flag(name="allow_server_js"),
    "arrivals": Choice(ARRIVALS, name="--arrivals"),
    "binding": Choice(BINDINGS, name="--binding"),
    "on_error": Choice(ON_ERROR, name="--on-error"),
    "read_preference": Choice(READ_PREFERENCES, name="--read-preference"),
}


@dataclass
class BenchConfig:
    """Everything a sweep needs besides the server address: the options of ``capmodel bench``.

    ``check()`` returns a validated copy (``BenchError`` naming the option otherwise); ``run_sweep`` calls it.

    Parameters
    ----------
    workload : str, default "ycsb-b"
        A bundled workload's name or a YAML file's path (``load_workload``).
    records : int, optional
        Overrides the workload's record count.
    concurrency : list of int, default [1, 2, 4, 8, 16, 32, 64]
        The client counts to measure (1–10,000); with ``adaptive``, two values mean any integer between them.
    repeat : int, default 1
        Measurements per concurrency.
    duration : float, default 10.0
        Seconds measured per step.
    warmup : float, default 2.0
        Seconds run and discarded before each step.
    operations : int, optional
        Operations per step instead of a duration.
    rate : float, optional
        Open loop at this many ops/s (latency counted from the intended start); default closed loop.
    rate_shape : str, optional
        Open loop at a rate that follows a shape over each step's window: ``ramp:100:2000``, ``step:500:2000``,
        ``sine:1000:500``, ``spike:500:5000`` or ``trace:FILE.csv`` (``capmodel.bench.client.arrivals``).
    windows : int, optional
        An open-loop step cut into this many equal windows, each with its own latencies and rates in the step's
        record (default 10 with ``rate_shape``).
    adaptive : bool, default False
        Measure four points, fit the USL after every step and measure at the predicted peak until two estimates agree.
    slo : list of str, optional
        Service-level objectives (``p95<=5ms``, ``errors<=0.1%``, ``p95<=+5%``): search the highest open-loop rate
        that meets them all (``capmodel.bench.sweep.slo``) instead of sweeping concurrencies.
    tolerance : float, default 0.1
        The adaptive sweep's agreement; with ``slo``, the width of the final bracket.
    max_steps : int, optional
        The most steps of an adaptive sweep (default the concurrencies given, at least 8), or rates of an SLO search
        (default 12).
    database : str, default "capmodel_bench"
        The database the run works in (never ``admin``, ``local`` or ``config``).
    collection : str, optional
        Overrides the workload's collection.
    read_preference, write_concern : str, optional
        Override the URI's.
    timeout_ms : int, default 10000
        Every operation's timeout.
    server_selection_timeout_ms : int, default 5000
        How long to wait for a server to answer.
    on_error : {"stop", "retry", "continue"}, default "stop"
        What a failed step does to the sweep.
    retries : int, default 2
        Attempts more per step with ``on_error="retry"``.
    error_threshold : float, default 0.05
        The share of failed operations beyond which a step fails.
    seed : int, default 0
        Seeds the data and the request keys.
    allow_existing : bool, default False
        Use an existing collection capmodel did not create, as it is (never dropped, loaded or indexed).
    calibrate : bool, default True
        Measure the client's ceiling (the ``ping`` rate) first, to flag client-bound steps.
    processes : int or "auto", default 1
        1: clients are coroutines or threads of this process; P or ``"auto"`` (one per core): a local Dask cluster of P
        single-threaded worker processes.
    arrivals : {"uniform", "poisson"}, default "uniform"
        An open loop's arrivals: at fixed intervals or a Poisson process.
    scheduler : str, optional
        The address of an existing Dask scheduler whose workers run the clients (not with ``processes``).
    workers : int, optional
        How many of its workers take part.
    binding : {"wire", "mongojet", "pymongo"}, default "wire"
        How the clients reach the server: the wire protocol on one blocking socket per client thread
        (``capmodel.bench.client.wire``; mongojet when the URI needs an authentication mechanism or TLS option it
        does not speak), mongojet's coroutines, or pymongo's threads.
    allow_server_js : bool, default False
        Accept ``$where``, ``$function`` and ``$accumulator`` in the workload.
    """

    workload: str = "ycsb-b"
    records: int | None = None
    concurrency: list[int] = field(default_factory=lambda: [1, 2, 4, 8, 16, 32, 64])
    repeat: int = 1
    duration: float = 10.0
    warmup: float = 2.0
    operations: int | None = None
    rate: float | None = None
    rate_shape: str | None = None
    windows: int | None = None
    adaptive: bool = False
    slo: list[str] | None = None
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
    # how the clients reach the server: "wire" (capmodel.bench.client.wire: the wire protocol on a blocking socket per
    # client thread; mongojet when the URI needs what it does not do), "mongojet" (coroutines on a Rust driver) or
    # "pymongo" (threads); benchmarks/bench_vs_ycsb.py sets them beside YCSB's client
    binding: str = "wire"
    allow_server_js: bool = False  # accept $where, $function, $accumulator in the workload (refused otherwise)

    def check(self) -> "BenchConfig":
        """A checked copy: every option validated (types, finite, in range, the choices), the concurrencies sorted
        without repeats, ``processes="auto"`` resolved; raises a BenchError naming the option. ``self`` is not
        changed."""
        values = checked(SWEEP_PARAMETER_CONSTRAINTS, asdict(self), BenchError)
        values["concurrency"] = concurrency = sorted(set(values["concurrency"]))
        if self.operations is None and self.duration is None:
            raise BenchError("--duration must be given (or --operations)")
        cpus = os.cpu_count() or 1
        most = min(max(concurrency), MAX_PROCESSES_PER_CPU * cpus)
        processes = min(cpus, max(concurrency)) if self.processes == "auto" else self.processes
        if isinstance(processes, bool) or not isinstance(processes, int) or processes < 1:
            raise BenchError(f"--processes must be an integer >= 1 or 'auto', got {str(processes)[:40]!r}")
        if processes > most:
            raise BenchError(f"--processes {processes} is more than this sweep can use: at most the largest "
                             f"--concurrency ({max(concurrency)}) and {MAX_PROCESSES_PER_CPU} per CPU core "
                             f"({MAX_PROCESSES_PER_CPU * cpus} here), so at most {most}")
        values["processes"] = processes
        if self.scheduler is not None:
            values["scheduler"] = str(self.scheduler).strip()
            if not values["scheduler"]:
                raise BenchError("--scheduler: give the Dask scheduler's address, e.g. tcp://10.0.0.5:8786")
            if processes != 1:
                raise BenchError("--processes starts a local cluster; with --scheduler the cluster's workers run "
                                 "the clients (limit them with --workers)")
        if self.workers is not None and self.scheduler is None:
            raise BenchError("--workers limits the workers of an existing cluster: give --scheduler too "
                             "(or --processes for a local one)")
        out = replace(self, **values)
        scheduled, option = None, "--rate"
        if out.rate_shape is not None:
            from capmodel.bench.client.arrivals import parse_rate_shape

            shape = parse_rate_shape(out.rate_shape)
            clash = [o for o, on in (("--rate", out.rate is not None), ("--operations", out.operations is not None),
                                     ("--slo", out.slo is not None)) if on]
            if clash:
                raise BenchError(f"--rate-shape sets each step's rates: leave out {', '.join(clash)}")
            scheduled, option = shape.first_rate * out.warmup + shape.mean_rate() * out.duration, "--rate-shape"
        elif out.rate is not None:
            scheduled = out.rate * (out.warmup + (out.duration if out.operations is None else 0.0))
        if scheduled is not None and scheduled > MAX_SCHEDULED_OPERATIONS:
            raise BenchError(f"{option} over {number(out.warmup, 6)} s of warm-up and {number(out.duration, 6)} s "
                             f"of measurement schedules {scheduled:,.0f} operations a step; at most "
                             f"{MAX_SCHEDULED_OPERATIONS:,} (lower the rate or --duration)")
        if out.arrivals != "uniform" and out.rate is None and out.rate_shape is None:
            raise BenchError("--arrivals sets the open loop's arrival process: give --rate or --rate-shape too")
        if out.windows is not None and out.rate is None and out.rate_shape is None:
            raise BenchError("--windows cuts an open-loop step: give --rate or --rate-shape too")
        if out.operations is not None and out.operations < min(processes, concurrency[0]):
            raise BenchError(f"--operations {out.operations} is fewer than the client processes "
                             f"({min(processes, concurrency[0])})")
        if out.binding == "mongojet":
            from capmodel.bench.client.async_workers import available

            if not available():
                raise BenchError("--binding mongojet needs the 'bench' extra: pip install 'capmodel[bench]'")
        if out.slo is not None:
            from capmodel.bench.sweep.slo import parse_objective

            if isinstance(out.slo, str):
                out.slo = [out.slo]
            if not out.slo:
                raise BenchError("--slo: give at least one objective, e.g. --slo 'p95<=5ms'")
            for text in out.slo:
                parse_objective(text)
            clash = [o for o, on in (("--adaptive", out.adaptive), ("--rate", out.rate is not None),
                                     ("--operations", out.operations is not None), ("--repeat", out.repeat != 1))
                     if on]
            if clash:
                raise BenchError(f"--slo chooses its own rates and repeats: leave out {', '.join(clash)}")
        if out.adaptive and len(concurrency) < 2:
            raise BenchError("--adaptive needs a concurrency range: give at least two values (min and max)")
        check_database_name(out.database)
        if out.collection is not None and not str(out.collection).strip():   # '' was the workload's name in silence
            raise BenchError("--collection is empty: give a collection name, or leave it out for the workload's")
        return out

    @property
    def distributed(self) -> bool:
        """True when the clients run on Dask workers (a local cluster or an existing scheduler)."""
        return self.scheduler is not None or self.processes != 1

    def to_dict(self) -> dict:
        return asdict(self)
