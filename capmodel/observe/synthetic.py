"""A synthetic fleet: FTDC ``diagnostic.data`` folders of servers whose load and capacity are known, for tests,
benchmarks and the fleet report.

Each server is an M/M/c queue of CPU work: ``cores`` servers, each operation costing ``cpu_ms_per_op`` of CPU (its
service demand D), so the CPU saturates at ``cores / D`` operations per second (the utilization law, Lazowska et al.,
*Quantitative System Performance*, 1984, ch. 3). The offered load follows a daily cycle (a sine around
``mean_rate`` with ``daily_amplitude``, peaking at ``peak_hour`` UTC) times a monthly growth; every second's operations
per class are Poisson draws, their latency is D plus the Erlang C wait at that second's utilization, and the CPU
counters grow by the operations' demand plus a background (``background_cores``). The files are written as mongod writes
them (``ftdc_writer``): a metadata document (hostInfo with the host and cores, getCmdLineOpts with the port and the
replica set), then chunks of ``samples_per_chunk`` one-second samples whose reference documents vary from chunk to chunk
(the tcmalloc ``formattedString`` changes length, a command counter comes and goes), archives rotated every
``chunks_per_file`` chunks. A sample is taken every ``period_s`` seconds (mongod's
``diagnosticDataCollectionPeriodMillis``, 1 s by default; a coarser period makes a day's files small and fast).

**A CPU per operation that changes with load.** ``cpu_ms_per_op`` is the figure at saturation; with ``light_extra``
(e) or ``contention`` (k) set, an operation at load fraction ρ = X / capacity costs

    D(ρ) = cpu_ms_per_op · (1 + (e − k) · (1 − ρ))

- *amortised costs* (e > 0): an operation that arrives while the server is idle pays a wake-up cost W that one
  arriving while it is busy shares with the work already running (a thread woken and scheduled, a CPU leaving its
  idle state, a network poll or a journal flush that serves one operation instead of several). With one worker the
  share of operations that find the server idle is 1 − ρ (Poisson arrivals see time averages: an M/M/1 queue is idle
  a share 1 − ρ of the time), so D = D_sat + W·(1 − ρ) and e = W / D_sat. The lab measured this direction: mongod
  pinned to one core spent 2.71 ms of CPU per operation at 18–34% of the core and 1.96 ms at saturation
  (``benchmarks/bench_headroom.py``, issue 26), +38% at a quarter of the load, which this form gives with e ≈ 0.5;
- *contention* (k > 0): an operation spins on a latch or retries a write conflict held by another with a chance
  that grows with the load (≈ ρ), so its CPU rises towards saturation: D = D_sat·(1 − k·(1 − ρ)).

Either way the CPU in use, background + X·D(ρ), reaches all the cores exactly at ``capacity`` (so ``capacity``
stays the true saturation throughput), and it rises with X as long as e − k < 1. ``cpu_noise`` adds a per-sample
relative scatter to the operations' CPU (log-normal, each sample's carrying ``cpu_noise_memory`` of the one before:
a checkpoint or a cache warming moves the CPU per operation for a while). With all of these at their defaults the
files are those the module wrote before they existed, byte for byte.
"""
from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field
from pathlib import Path

import bson
import numpy as np

from capmodel.errors import InputError
from capmodel.formatting import number, plural
from capmodel.models.queueing.erlang import erlang_c
from capmodel.observe import ftdc_writer

CLASS_SHARES = ("reads", "writes", "commands")
BACKGROUND_CORES = 0.02          # CPU the server spends with no operations (journal, TTL monitor, FTDC itself)


@dataclass(frozen=True)
class SyntheticServer:
    """One server's true parameters; ``capacity`` is its CPU saturation throughput (ops/s)."""

    host: str
    replica_set: str | None = None
    cores: int = 4
    cpu_ms_per_op: float = 0.2
    mean_rate: float = 2000.0
    daily_amplitude: float = 0.5
    peak_hour: float = 14.0
    monthly_growth: float = 0.0
    shares: tuple = (0.7, 0.25, 0.05)
    hours: float = 24.0
    start: dt.datetime = dt.datetime(2026, 11, 2, tzinfo=dt.timezone.utc)
    seed: int = 0
    samples_per_chunk: int = 300
    chunks_per_file: int = 72
    filler_metrics: int = 150
    pid: int = 4242
    reported_cores: int | None = None     # what hostInfo says, when it is not the truth (a container's quota)
    light_extra: float = 0.0              # e: the CPU per operation at idle above its saturation figure (a share)
    contention: float = 0.0               # k: the CPU per operation at idle below its saturation figure (a share)
    background_cores: float = BACKGROUND_CORES
    period_s: float = 1.0                 # seconds between samples
    cycle_hours: float = 24.0             # the load's cycle: a day, or shorter (a batch job's hourly wave)
    cpu_noise: float = 0.0                # relative scatter of each sample's operations' CPU (log-normal sigma)
    cpu_noise_memory: float = 0.0         # the share of the previous sample's scatter each sample carries (AR(1))

    def __post_init__(self):
        if not (0 <= self.light_extra < 1 and 0 <= self.contention < 1 and self.light_extra - self.contention < 1):
            raise InputError(f"light_extra and contention are shares in [0, 1), got {self.light_extra!r} and "
                             f"{self.contention!r}")
        if not (0 <= self.background_cores < self.cores and self.period_s > 0 and self.cycle_hours > 0
                and self.cpu_noise >= 0 and 0 <= self.cpu_noise_memory < 1):
            raise InputError("background_cores must be below cores, period_s and cycle_hours positive, cpu_noise "
                             "at least 0 and cpu_noise_memory in [0, 1)")

    @property
    def capacity(self) -> float:
        """Operations per second at which the CPU is saturated: (cores - background) / D (the bottleneck law)."""
        return (self.cores - self.background_cores) * 1000.0 / self.cpu_ms_per_op

    @property
    def changes_with_load(self) -> bool:
        """Whether the CPU per operation depends on the load (``light_extra`` or ``contention`` set)."""
        return self.light_extra != self.contention

    def cpu_ms_per_op_at(self, rate) -> np.ndarray:
        """The true CPU per operation (ms) at offered rate(s) ``rate`` (ops/s): D(ρ) of the module's docstring."""
        rho = np.clip(np.asarray(rate, dtype=float) / self.capacity, 0.0, 1.0)
        return self.cpu_ms_per_op * (1.0 + (self.light_extra - self.contention) * (1.0 - rho))

    def throughput_at_cpu(self, cpu_cores: float) -> float:
        """The true rate (ops/s) at which the server's mean CPU in use is ``cpu_cores``: the root of background +
        X·D(X / capacity) = cpu_cores below saturation (the planned capacity at a utilization target u is
        ``throughput_at_cpu(u * cores)``)."""
        m, d, x_max = self.light_extra - self.contention, self.cpu_ms_per_op / 1000.0, self.capacity
        need = float(cpu_cores) - self.background_cores
        if need <= 0:
            return 0.0
        # m·d/X_max·X² − d(1 + m)·X + need = 0; the root below saturation, in the form without cancellation
        b = d * (1.0 + m)
        return 2.0 * need / (b + math.sqrt(b * b - 4.0 * m * d / x_max * need))

    @property
    def peak_rate(self) -> float:
        """The offered load at the top of the daily cycle on the first day (ops/s)."""
        return self.mean_rate * (1.0 + self.daily_amplitude)

    @property
    def port(self) -> int:
        return int(self.host.rsplit(":", 1)[1]) if ":" in self.host else 27017

    def to_json(self) -> dict:
        out = {"host": self.host, "replica_set": self.replica_set, "cores": self.cores,
               "cpu_ms_per_op": self.cpu_ms_per_op, "capacity": self.capacity, "mean_rate": self.mean_rate,
               "peak_rate": self.peak_rate, "daily_amplitude": self.daily_amplitude,
               "monthly_growth": self.monthly_growth, "hours": self.hours, "start": self.start.isoformat()}
        if self.changes_with_load or self.background_cores != BACKGROUND_CORES:
            out.update(light_extra=self.light_extra, contention=self.contention,
                       background_cores=self.background_cores)
        return out


@dataclass
class _Day:
    """Every second's cumulative counters and gauges of one server (int64 arrays)."""

    times_ms: np.ndarray
    columns: dict = field(default_factory=dict)


def _response_ms(server: SyntheticServer, rate: np.ndarray) -> np.ndarray:
    """Mean response time (ms) of an M/M/c queue at each offered rate: D + C(c, a) D / (c - a), D the CPU per
    operation at that rate."""
    grid = np.linspace(0.0, 0.995, 400)
    waits = np.array([erlang_c(server.cores, u * server.cores) / (server.cores * (1.0 - u)) for u in grid])
    demand_ms = server.cpu_ms_per_op_at(rate) if server.changes_with_load else server.cpu_ms_per_op
    utilization = np.clip(rate * demand_ms / 1000.0 / server.cores, 0.0, 0.995)
    return demand_ms * (1.0 + np.interp(utilization, grid, waits))


def _day(server: SyntheticServer) -> _Day:
    rng = np.random.default_rng(server.seed)
    period = server.period_s
    samples = int(round(server.hours * 3600 / period))
    t = np.arange(samples + 1, dtype=np.float64) * period
    start_s = server.start.timestamp()
    hour = ((start_s + t) / 3600.0) % 24.0
    growth = (1.0 + server.monthly_growth) ** (t / (30.0 * 86400.0))
    cycle = 1.0 + server.daily_amplitude * np.cos(2 * np.pi * (hour - server.peak_hour) / server.cycle_hours)
    rate = server.mean_rate * cycle * growth
    rate = np.minimum(rate, 0.99 * server.capacity)
    response = _response_ms(server, rate)
    day = _Day(times_ms=(start_s * 1000 + t * 1000).astype(np.int64))
    total_ops = np.zeros(samples + 1)
    for name, share in zip(CLASS_SHARES, server.shares):
        ops = rng.poisson(rate * share * period)
        ops[0] = 0
        latency_us = ops * response * 1000.0 * rng.lognormal(0.0, 0.05, ops.size)
        day.columns[f"opLatencies.{name}.ops"] = np.cumsum(ops).astype(np.int64)
        day.columns[f"opLatencies.{name}.latency"] = np.cumsum(latency_us).astype(np.int64)
        total_ops += ops
    reads = np.diff(day.columns["opLatencies.reads.ops"], prepend=0)
    writes = np.diff(day.columns["opLatencies.writes.ops"], prepend=0)
    commands = np.diff(day.columns["opLatencies.commands.ops"], prepend=0)
    day.columns["opcounters.query"] = np.cumsum(reads).astype(np.int64)
    day.columns["opcounters.insert"] = np.cumsum(writes // 2).astype(np.int64)
    day.columns["opcounters.update"] = np.cumsum(writes - writes // 2).astype(np.int64)
    day.columns["opcounters.command"] = np.cumsum(commands).astype(np.int64)
    cpu_us = (_operations_cpu_us(server, rate, total_ops)
              + server.background_cores * 1e6 * period * rng.uniform(0.5, 1.5, t.size))
    cpu_us[0] = 0
    day.columns["extra_info.user_time_us"] = np.cumsum(cpu_us * 0.85).astype(np.int64) + 5_000_000
    day.columns["extra_info.system_time_us"] = np.cumsum(cpu_us * 0.15).astype(np.int64) + 1_000_000
    inside = total_ops / period * response / 1000.0               # Little's law: operations inside the server
    day.columns["globalLock.activeClients.readers"] = rng.poisson(inside * server.shares[0]).astype(np.int64)
    day.columns["globalLock.activeClients.writers"] = rng.poisson(inside * server.shares[1]).astype(np.int64)
    day.columns["connections.current"] = (200 + rng.poisson(inside)).astype(np.int64)
    day.columns["uptimeMillis"] = (3_600_000 + t * 1000).astype(np.int64)
    return day


def _operations_cpu_us(server: SyntheticServer, rate: np.ndarray, ops: np.ndarray) -> np.ndarray:
    """The CPU (µs) the operations of each sample cost: their count times the CPU per operation at the sample's
    rate, times the sample's scatter (``cpu_noise``, drawn from a generator of its own so that the other draws stay
    those of a server without it)."""
    if not server.changes_with_load and not server.cpu_noise:
        return ops * server.cpu_ms_per_op * 1000.0
    cpu = ops * server.cpu_ms_per_op_at(rate) * 1000.0
    if server.cpu_noise:
        shocks = np.random.default_rng([server.seed, 2]).normal(0.0, server.cpu_noise, ops.size)
        memory = server.cpu_noise_memory
        scatter = np.empty_like(shocks)
        scatter[0] = shocks[0]
        for i in range(1, ops.size):          # AR(1) with the stationary variance of its shocks' sigma
            scatter[i] = memory * scatter[i - 1] + math.sqrt(1.0 - memory * memory) * shocks[i]
        cpu *= np.exp(scatter - server.cpu_noise ** 2 / 2)
    return cpu


def _reference(server: SyntheticServer, day: _Day, at: int, chunk: int, fillers: dict) -> dict:
    """The reference document (first sample) of a chunk, laid out like mongod's, with this chunk's variations."""
    when = dt.datetime.fromtimestamp(day.times_ms[at] / 1000.0, dt.timezone.utc)
    value = {name: bson.Int64(int(column[at])) for name, column in day.columns.items()}
    status = {
        "host": server.host, "version": "7.0.14", "process": "mongod", "pid": bson.Int64(server.pid),
        "uptime": float(value["uptimeMillis"] // 1000), "uptimeMillis": value["uptimeMillis"], "localTime": when,
        "connections": {"current": value["connections.current"], "available": bson.Int64(50_000)},
        "extra_info": {"note": "fields vary by platform", "user_time_us": value["extra_info.user_time_us"],
                       "system_time_us": value["extra_info.system_time_us"]},
        "globalLock": {"activeClients": {"total": bson.Int64(0),
                                         "readers": value["globalLock.activeClients.readers"],
                                         "writers": value["globalLock.activeClients.writers"]},
                       "currentQueue": {"total": 0, "readers": 0, "writers": 0}},
        "opLatencies": {name: {"latency": value[f"opLatencies.{name}.latency"],
                               "ops": value[f"opLatencies.{name}.ops"]} for name in CLASS_SHARES},
        "opcounters": {name: value.get(f"opcounters.{name}", bson.Int64(0))
                       for name in ("insert", "query", "update", "delete", "getmore", "command")},
        "tcmalloc": {"formattedString": "MALLOC: " + "=" * (40 + chunk % 13) + " bytes in use"},
        "wiredTiger": {"filler": {name: bson.Int64(int(series[0])) for name, series in fillers.items()}},
    }
    if chunk % 5 == 3:                            # a counter that appears in some chunks only, as real files have
        status["metrics"] = {"commands": {"hello": {"total": bson.Int64(1000 + chunk)}}}
    if server.replica_set:
        status["repl"] = {"setName": server.replica_set, "isWritablePrimary": True, "me": server.host}
    return {"start": when, "serverStatus": status, "end": when}


def _metadata(server: SyntheticServer) -> dict:
    parsed: dict = {"net": {"port": server.port}}
    if server.replica_set:
        parsed["replication"] = {"replSetName": server.replica_set}
    return {"start": server.start, "buildInfo": {"version": "7.0.14"},
            "getCmdLineOpts": {"argv": ["mongod"], "parsed": parsed},
            "hostInfo": {"system": {"hostname": server.host, "memSizeMB": 16_384,
                                    "numCores": server.reported_cores or server.cores}},
            "end": server.start}


def write_server(server: SyntheticServer, folder) -> Path:
    """Write one server's ``diagnostic.data`` into ``folder`` (created); returns it."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    day = _day(server)
    rng = np.random.default_rng(server.seed + 1)
    rates = rng.uniform(0, 50, server.filler_metrics)
    starts = rng.integers(0, 10**9, server.filler_metrics)
    metadata = ftdc_writer.metadata_document(server.start, _metadata(server))
    chunks: list[bytes] = []
    file_start, file_index = server.start, 0
    size = server.samples_per_chunk
    for chunk, at in enumerate(range(0, day.times_ms.size, size)):
        stop = min(at + size, day.times_ms.size)
        fillers = {f"metric_{i:03d}": starts[i] + np.cumsum(rng.poisson(rates[i], stop - at)) - 0
                   for i in range(server.filler_metrics)}
        for i, name in enumerate(fillers):
            starts[i] = fillers[name][-1]
        reference = _reference(server, day, at, chunk, fillers)
        series = {f"serverStatus.{name}": column[at:stop] for name, column in day.columns.items()}
        series["serverStatus.localTime"] = day.times_ms[at:stop]
        series["serverStatus.uptime"] = day.columns["uptimeMillis"][at:stop] // 1000
        series.update({f"serverStatus.wiredTiger.filler.{name}": values for name, values in fillers.items()})
        when = dt.datetime.fromtimestamp(day.times_ms[at] / 1000.0, dt.timezone.utc)
        chunks.append(ftdc_writer.chunk_document(when, ftdc_writer.encode_chunk(reference, series)))
        if len(chunks) == server.chunks_per_file:
            ftdc_writer.write_file(folder / ftdc_writer.archive_name(file_start, file_index), metadata, chunks)
            chunks, file_index = [], file_index + 1
            file_start = dt.datetime.fromtimestamp(day.times_ms[stop - 1] / 1000.0, dt.timezone.utc)
    if chunks:
        ftdc_writer.write_file(folder / ftdc_writer.archive_name(file_start, file_index), metadata, chunks)
    return folder


def fleet_servers(clusters: int = 3, members: int = 3, hours: float = 24.0, seed: int = 0) -> list[SyntheticServer]:
    """A varied fleet: ``clusters`` replica sets of ``members`` each, with different cores, demands, loads and growth
    (the primary of each set busier than its secondaries; the first set's primary the busiest of the fleet)."""
    rng = np.random.default_rng(seed)
    servers = []
    for c in range(clusters):
        cores = int(rng.choice([2, 4, 8]))
        demand = float(rng.uniform(0.1, 0.6))
        capacity = (cores - BACKGROUND_CORES) * 1000.0 / demand
        # the primary's daily peak as a share of capacity: from 85% (past an 80% target) in the first set down to 35%
        busiest = 0.85 - 0.5 * c / max(clusters - 1, 1) + float(rng.uniform(-0.03, 0.03))
        growth = float(rng.choice([0.02, 0.05, 0.1]))
        # one daily cycle per set (its members serve the same users), peaking inside the generated window
        amplitude = float(rng.uniform(0.3, 0.6))
        peak_hour = (min(hours, 24.0) * float(rng.uniform(0.5, 0.9))) % 24.0
        for m in range(members):
            peak = capacity * busiest * (1.0 if m == 0 else float(rng.uniform(0.3, 0.7)))
            servers.append(SyntheticServer(
                host=f"rs{c}-{m}.example.net:27017", replica_set=f"rs{c}", cores=cores, cpu_ms_per_op=demand,
                mean_rate=peak / (1 + amplitude), daily_amplitude=amplitude, monthly_growth=growth, hours=hours,
                peak_hour=peak_hour, seed=seed * 1000 + c * 10 + m, pid=1000 + c * 10 + m))
    return servers


def write_fleet(servers: list[SyntheticServer], parent) -> list[Path]:
    """Each server's ``diagnostic.data`` under ``parent/<host_port>/diagnostic.data``, plus ``parent/fleet.json``
    with the true parameters."""
    import json

    parent = Path(parent)
    folders = [write_server(s, parent / s.host.replace(":", "_") / "diagnostic.data") for s in servers]
    (parent / "fleet.json").write_text(json.dumps([s.to_json() for s in servers], indent=1))
    return folders


def describe_synthetic(servers: list[SyntheticServer], parent) -> str:
    """One phrase saying what was generated (not where: a report generates it into a temporary folder, gone after the
    render; ``parent`` is kept for the callers)."""
    sets = sorted({s.replica_set for s in servers if s.replica_set})
    hours = sorted({s.hours for s in servers})
    span = f"{number(hours[0], 6)} h" if len(hours) == 1 else f"{number(hours[0], 6)}–{number(hours[-1], 6)} h"
    grouping = f" in {plural(len(sets), 'replica set')}" if sets else ""   # the count of servers: the answer's
    return (f"a synthetic fleet{grouping}, {span} of one-second FTDC per server, "
            "generated by capmodel.observe.synthetic because no folders were given")
