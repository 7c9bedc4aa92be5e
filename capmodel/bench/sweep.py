"""A concurrency sweep: load the workload's data, run one step per (concurrency, repeat), write the curve table.

Output folder (``out``):
- ``run.json``    configuration, versions, host fingerprint, redacted URI, client ceiling, status (rewritten at the
                  start and the end of the sweep);
- ``steps.jsonl`` one JSON line per completed step, appended and fsync'ed the moment the step ends, so Ctrl-C or a
                  server crash loses no completed step; ``resume=True`` skips the steps already there;
- ``curve.csv``   the curve table (``capmodel fit DIR/curve.csv`` reads it as is), one row per successful step.

Adaptive mode measures four geometrically spaced concurrencies of the requested list (with only two values: any
integer between them), fits the USL to everything measured so far, measures next at the predicted peak (snapped to
the list), and stops once two successive peak estimates agree within ``tolerance`` (relative) and a measured
concurrency lies within ``tolerance`` of the peak, or no unmeasured concurrency is left next to it. If the fitted
peak lies beyond the largest requested concurrency, it measures that and stops (no peak in range).

Client-bound steps: a Python client on the same machine can be the bottleneck. Before the sweep the client's own
ceiling is calibrated by running the ``ping`` command closed-loop (the server answers it without touching data, so
its rate is the most this client can drive over this connection). A step is flagged ``client_bound`` when its
operation rate reaches 80% of that ceiling, or when the client processes used >= 85% of one core each (the GIL lets
one Python process execute about one core of Python code).

Client processes (``processes`` > 1): each step's workers are split over that many processes, each with its own
MongoClient (``capmodel.bench.processes``), for servers one Python process cannot saturate.
"""
from __future__ import annotations

import datetime as dt
import json
import math
import os
import platform
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd

from capmodel.bench.runner import ARRIVALS
from capmodel.bench.safety import DEFAULT_DATABASE, check_database_name
from capmodel.errors import BenchError, CapmodelError

STEPS_FILE, CURVE_FILE, RUN_FILE = "steps.jsonl", "curve.csv", "run.json"
CEILING_FRACTION = 0.8
CPU_FRACTION = 0.85
CALIBRATION_SECONDS = 1.0
ON_ERROR = ("stop", "retry", "continue")
# errors meaning the server could not be reached at all (died, restarted, network down): such a step is not a
# measurement of the server under load, whatever their number. Timeouts of a live but overloaded server
# (NetworkTimeout, ExecutionTimeout) are results, and count against --error-threshold instead.
UNREACHABLE = ("AutoReconnect", "ServerSelectionTimeoutError", "ConnectionFailure")
# configuration keys that define what a sweep measures: a resumed sweep must agree on them
SWEEP_KEYS = ("workload", "records", "concurrency", "repeat", "duration", "warmup", "operations", "rate", "adaptive",
              "tolerance", "max_steps", "database", "collection", "read_preference", "write_concern", "seed",
              "processes", "arrivals")


@dataclass
class BenchConfig:
    """Everything a sweep needs besides the server address."""

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
        if self.rate is not None and not self.rate > 0:
            raise BenchError(f"--rate must be > 0 operations per second, got {self.rate}")
        if self.arrivals not in ARRIVALS:
            raise BenchError(f"--arrivals must be one of {', '.join(ARRIVALS)}")
        if self.arrivals != "uniform" and self.rate is None:
            raise BenchError("--arrivals sets the open loop's arrival process: give --rate too")
        if self.operations is not None and self.operations < min(self.processes, self.concurrency[0]):
            raise BenchError(f"--operations {self.operations} is fewer than the client processes "
                             f"({min(self.processes, self.concurrency[0])})")
        if self.on_error not in ON_ERROR:
            raise BenchError(f"--on-error must be one of {', '.join(ON_ERROR)}")
        if self.adaptive and len(self.concurrency) < 2:
            raise BenchError("--adaptive needs a concurrency range: give at least two values (min and max)")
        if self.adaptive and not 0 < self.tolerance < 1:
            raise BenchError("--tolerance must be a fraction between 0 and 1")
        check_database_name(self.database)
        return self

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class SweepResult:
    out: Path
    curve: pd.DataFrame
    steps: list[dict]
    run: dict


# --- files ---------------------------------------------------------------------------------------------------------

def read_steps(path: Path) -> list[dict]:
    """Completed steps from ``steps.jsonl``; a torn last line (crash while writing) is dropped."""
    if not path.exists():
        return []
    steps, lines = [], path.read_text().splitlines()
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            steps.append(json.loads(line))
        except json.JSONDecodeError:
            if i == len(lines) - 1:
                break
            raise BenchError(f"{path}: line {i + 1} is not valid JSON") from None
    return steps


def append_step(path: Path, record: dict) -> None:
    """Append one step and force it to disk before the sweep goes on."""
    from capmodel.commands import to_jsonable

    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(to_jsonable(record), allow_nan=False) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def _write_json(path: Path, obj: dict) -> None:
    from capmodel.commands import to_jsonable

    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(to_jsonable(obj), indent=2, allow_nan=False) + "\n")
    os.replace(tmp, path)


def curve_table(steps: list[dict]) -> pd.DataFrame:
    """The curve table of the successful steps: standard columns, labels, and per-operation latency columns."""
    rows = []
    for s in steps:
        if s.get("status") != "ok":
            continue
        lat = s["latency"]
        row = {
            "concurrency": s["concurrency"], "throughput": s["throughput"],
            "latency_mean_ms": lat["all"]["mean_ms"], "latency_p50_ms": lat["all"]["p50_ms"],
            "latency_p95_ms": lat["all"]["p95_ms"], "latency_p99_ms": lat["all"]["p99_ms"],
            "latency_p999_ms": lat["all"]["p999_ms"], "errors": s["error_count"],
        }
        cpu = (s.get("server") or {}).get("cpu_util")
        if cpu is not None:
            row["cpu_util"] = min(max(float(cpu), 0.0), 1.0)
        row.update({"workload": s["workload"], "repeat": s["repeat"], "ops_per_s": s["ops_per_s"],
                    "client_bound": bool(s.get("client_bound")), "client_cpu": s.get("client_cpu")})
        for op, summary in lat.items():
            if op == "all":
                continue
            for stat in ("mean", "p50", "p95", "p99", "p999"):
                row[f"latency_{op}_{stat}_ms"] = summary[f"{stat}_ms"]
            row[f"{op}_count"] = summary["count"]
        rows.append(row)
    if not rows:
        return pd.DataFrame(columns=["concurrency", "throughput"])
    table = pd.DataFrame(rows)
    if "cpu_util" in table and table["cpu_util"].isna().any():
        table = table.drop(columns="cpu_util")
    return table


# --- environment ---------------------------------------------------------------------------------------------------

def host_fingerprint() -> dict:
    import hashlib

    import psutil

    return {
        "hostname_sha256": hashlib.sha256(platform.node().encode()).hexdigest()[:12],
        "os": platform.platform(), "machine": platform.machine(), "python": platform.python_version(),
        "cpu_count": os.cpu_count(), "memory_gb": round(psutil.virtual_memory().total / 2**30, 1),
    }


def _versions(client) -> dict:
    import hdrh
    import pymongo

    import capmodel

    out = {"capmodel": capmodel.__version__, "pymongo": pymongo.version,
           "hdrhistogram": getattr(hdrh, "__version__", None), "python": sys.version.split()[0]}
    try:
        out["mongodb"] = client.admin.command("buildInfo").get("version")
    except Exception:  # noqa: BLE001 - a missing version is not worth stopping for
        out["mongodb"] = None
    return out


def _redact(uri: str) -> str:
    from capmodel.bench.redact import redact_uri

    return redact_uri(uri)


def _redact_text(text: str) -> str:
    from capmodel.bench.redact import redact_text

    return redact_text(text)


def make_client(uri: str, config: BenchConfig, pool: int):
    """One shared client sized for the largest concurrency, with a timeout on every operation."""
    import pymongo

    options = {"maxPoolSize": max(pool, 100), "appname": "capmodel-bench"}
    # timeouts written in the URI win over the defaults; explicit options (read preference, w) win over the URI
    query = uri.partition("?")[2].lower()
    defaults = {"timeoutMS": config.timeout_ms, "serverSelectionTimeoutMS": config.server_selection_timeout_ms,
                "connectTimeoutMS": min(config.timeout_ms, 10_000)}
    options.update({k: v for k, v in defaults.items() if f"{k.lower()}=" not in query})
    if config.read_preference:
        options["readPreference"] = config.read_preference
    if config.write_concern:
        w = config.write_concern
        options["w"] = int(w) if str(w).isdigit() else w
    try:
        return pymongo.MongoClient(uri, **options)
    except (pymongo.errors.ConfigurationError, pymongo.errors.InvalidURI, ValueError, TypeError) as exc:
        raise BenchError(f"cannot use the MongoDB URI {_redact(uri)}: {_redact_text(str(exc))}") from None


def _ping(client, uri: str) -> None:
    import pymongo

    try:
        client.admin.command("ping")
    except pymongo.errors.PyMongoError as exc:
        raise BenchError(f"cannot reach MongoDB at {_redact(uri)}: {_redact_text(str(exc))[:300]}") from None


# --- the sweep -----------------------------------------------------------------------------------------------------

class Sweep:
    """One sweep: ``Sweep(uri, config, out).run()``."""

    def __init__(self, uri: str, config: BenchConfig, out, resume: bool = False, progress: bool = True,
                 log=None, server_pids=None):
        """``server_pids``: the mongod pids when the server runs on this machine (gives the curve's cpu_util)."""
        self.uri, self.config, self.out, self.resume = uri, config.check(), Path(out), resume
        self.server_pids = list(server_pids) if server_pids else None
        self.progress = progress
        self.log = log or (lambda message: None)

    # files
    @property
    def steps_path(self) -> Path:
        return self.out / STEPS_FILE

    def _prepare_out(self) -> list[dict]:
        self.out.mkdir(parents=True, exist_ok=True)
        done = read_steps(self.steps_path)
        if done and not self.resume:
            raise BenchError(f"{self.steps_path} already holds {len(done)} steps: pass --resume to continue that "
                             "sweep, or choose another --out")
        if self.resume and (self.out / RUN_FILE).exists():
            stored = json.loads((self.out / RUN_FILE).read_text()).get("config", {})
            differ = [k for k in SWEEP_KEYS if k in stored and _norm(stored[k]) != _norm(getattr(self.config, k))]
            if differ:
                detail = ", ".join(f"{k}: {stored[k]!r} before, {getattr(self.config, k)!r} now" for k in differ)
                raise BenchError(f"--resume: {self.out} was started with a different configuration ({detail})")
        if self.resume and done:  # rewrite without a torn last line
            self.steps_path.write_text("".join(json.dumps(s) + "\n" for s in done))
        return done

    def run(self) -> SweepResult:
        import pymongo

        cfg = self.config
        done = self._prepare_out()
        self.steps, self.run_info = list(done), {}
        client = make_client(self.uri, cfg, pool=max(cfg.concurrency) + 8)
        self.pool = None
        if cfg.processes > 1:
            from capmodel.bench.processes import ProcessPool

            self.pool = ProcessPool(self.uri, cfg, cfg.processes, max(cfg.concurrency))
        started = time.perf_counter()
        try:
            try:
                self._run(client)
            except pymongo.errors.PyMongoError as exc:  # outside a step (load, indexes, calibration)
                raise BenchError(f"MongoDB failed while preparing the sweep: {_redact_text(str(exc))[:300]}") from None
            self.run_info["status"] = "complete"
        except BaseException as exc:
            if self.run_info:
                self.run_info["status"] = "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed"
                self.run_info["stopped_because"] = _redact_text(str(exc))[:500]
            raise
        finally:
            if self.run_info:
                self.run_info["finished_at"] = _now()
                self.run_info["sweep_seconds_this_session"] = time.perf_counter() - started
                self.run_info["steps_completed"] = sum(s.get("status") == "ok" for s in self.steps)
                self.run_info["benchmark_seconds"] = sum(s.get("wall_seconds", 0.0) for s in self.steps)
                self._finish()
            if self.pool is not None:
                self.pool.close()
            client.close()
        return SweepResult(self.out, curve_table(self.steps), self.steps, self.run_info)

    def _run(self, client) -> None:
        from capmodel.bench.binding import create_indexes, load_records
        from capmodel.bench.safety import prepare_collection
        from capmodel.bench.workloads import load_workload

        cfg = self.config
        workload = load_workload(cfg.workload, records=cfg.records, collection=cfg.collection)
        _ping(client, self.uri)
        database = client[cfg.database]
        collection, action, _ = prepare_collection(database, workload, allow_existing=cfg.allow_existing)
        self.run_info.update({
            "config": cfg.to_dict(), "uri": _redact(self.uri), "workload": {
                "name": workload.name, "source": workload.source, "collection": workload.collection,
                "records": workload.records, "throughput_unit": workload.throughput_unit,
                "operations": {o.name: o.proportion for o in workload.operations}},
            "versions": _versions(client), "host": host_fingerprint(),
            "started_at": _now(), "status": "running", "data": action,
        })
        if self.resume and (self.out / RUN_FILE).exists():
            previous = json.loads((self.out / RUN_FILE).read_text())
            self.run_info["started_at"] = previous.get("started_at", self.run_info["started_at"])
            self.run_info["client_ceiling_ops_per_s"] = previous.get("client_ceiling_ops_per_s")
            self.run_info["resumed_at"] = _now()
        _write_json(self.out / RUN_FILE, self.run_info)
        if action == "load":
            create_indexes(collection, workload)
            self._load(collection, workload, load_records)
        existing = collection.estimated_document_count() if workload.has_keys else None
        runner = self._runner(database, workload, existing)
        if cfg.calibrate and self.run_info.get("client_ceiling_ops_per_s") is None:
            self.run_info["client_ceiling_ops_per_s"] = self._calibrate(database)
            _write_json(self.out / RUN_FILE, self.run_info)
        if cfg.adaptive:
            self._adaptive(runner, client, workload)
            return
        for conc in cfg.concurrency:
            for rep in range(1, cfg.repeat + 1):
                if not self._done(conc, rep):
                    self._step(runner, client, workload, conc, rep, "grid")

    def _finish(self) -> None:
        curve_table(self.steps).to_csv(self.out / CURVE_FILE, index=False)
        _write_json(self.out / RUN_FILE, self.run_info)

    def _done(self, conc: int, rep: int) -> bool:
        return any(s["concurrency"] == conc and s["repeat"] == rep and s.get("status") == "ok" for s in self.steps)

    def _load(self, collection, workload, load_records) -> None:
        if workload.records == 0:
            return
        bar = None
        if self.progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=workload.records, unit="doc", desc=f"load {workload.collection}", leave=False)
        try:
            load_records(collection, workload, 0, workload.records, seed=self.config.seed,
                         progress=bar.update if bar else None)
        finally:
            if bar:
                bar.close()
        self.log(f"loaded {workload.records} records into {self.config.database}.{workload.collection}")

    def _runner(self, database, workload, existing: int | None):
        """A runner of ``workload``: threads of this process, or the sweep's client processes (``processes`` > 1)."""
        from capmodel.bench.binding import KeySpace
        from capmodel.bench.runner import Runner

        join_timeout = self.config.timeout_ms / 1000.0 + 5.0
        if self.pool is not None:
            return self.pool.runner(database.name, workload.collection, workload, existing, seed=self.config.seed,
                                    join_timeout=join_timeout)
        keyspace = KeySpace(workload, existing) if existing is not None else None
        return Runner(database[workload.collection], workload, keyspace, seed=self.config.seed,
                      join_timeout=join_timeout)

    def _calibrate(self, database) -> float:
        """The client's ceiling: closed-loop ``ping`` rate at the sweep's smallest useful concurrency (<= 8 per
        client process)."""
        from capmodel.bench.workloads import parse_workload

        ping = parse_workload({"name": "client-ceiling", "collection": "unused",
                               "operations": [{"op": "command", "command": {"ping": 1}}]}, "calibration")
        conc = min(8 * self.config.processes, max(self.config.concurrency))
        result = self._runner(database, ping, None).run(conc, duration=CALIBRATION_SECONDS, warmup=0.3)
        self.log(f"client ceiling (ping, {conc} workers in {min(conc, self.config.processes)} process(es)): "
                 f"{result.ops_per_s:,.0f} ops/s")
        return result.ops_per_s

    def _step(self, runner, client, workload, conc: int, rep: int, phase: str) -> dict:
        cfg = self.config
        attempts = 1 + (cfg.retries if cfg.on_error == "retry" else 0)
        for attempt in range(1, attempts + 1):
            record = self._measure(runner, client, workload, conc, rep, phase, attempt)
            self.steps.append(record)
            append_step(self.steps_path, record)
            if record["status"] == "ok":
                self.log(f"c={conc} repeat={rep}: {record['throughput']:,.1f}/s, "
                         f"p99 {record['latency']['all']['p99_ms']:.2f} ms, {record['error_count']} errors"
                         + (" [client-bound]" if record["client_bound"] else ""))
                return record
            self.log(f"c={conc} repeat={rep}: step failed ({record['failure']})")
            if cfg.on_error == "retry" and attempt < attempts:
                self._wait_for_server(client)
        if cfg.on_error == "continue":
            return record
        raise BenchError(f"step concurrency={conc} repeat={rep} failed: {record['failure']}. "
                         f"{sum(s.get('status') == 'ok' for s in self.steps)} completed steps are saved in "
                         f"{self.out}; fix the server and rerun with --resume")

    def _wait_for_server(self, client) -> None:
        deadline = time.monotonic() + self.config.server_selection_timeout_ms / 1000.0 * 2
        while time.monotonic() < deadline:
            try:
                client.admin.command("ping")
                return
            except Exception:  # noqa: BLE001 - still down; retry until the deadline
                time.sleep(0.5)

    def _measure(self, runner, client, workload, conc, rep, phase, attempt) -> dict:
        from capmodel.bench import telemetry

        cfg = self.config
        before = _safe(lambda: telemetry.server_snapshot(client))
        # the client's CPU: this process, or the client processes doing the work
        meter = telemetry.CpuMeter(self.pool.ensure_started() if self.pool is not None else None).start()
        server_meter = _safe(lambda: telemetry.CpuMeter(self.server_pids).start()) if self.server_pids else None
        result = runner.run(conc, duration=cfg.duration if cfg.operations is None else None, warmup=cfg.warmup,
                            operations=cfg.operations, rate=cfg.rate, arrivals=cfg.arrivals, progress=self.progress,
                            label=f"c={conc} r={rep}")
        client_cpu = meter.stop()
        server_cpu = _safe(server_meter.stop) if server_meter is not None else None
        after = _safe(lambda: telemetry.server_snapshot(client))
        server = None
        if before is not None and after is not None:
            server = _safe(lambda: telemetry.delta(before, after))
        if server_cpu is not None:
            server = dict(server or {})
            server["cpu_util"] = server_cpu["process"]  # mongod's share of the machine (embedded server only)
            server["cpu_cores"] = server_cpu["process_cores"]
        record = {"step": len(self.steps) + 1, "phase": phase, "attempt": attempt, "workload": workload.name,
                  "repeat": rep, **result.as_record(), "server": server,
                  "client_cpu": client_cpu["process_cores"], "host_cpu": client_cpu["system"]}
        record["error_samples"] = {k: _redact_text(v) for k, v in result.error_samples.items()}
        ceiling = self.run_info.get("client_ceiling_ops_per_s")
        reasons = []
        if ceiling and result.ops_per_s >= CEILING_FRACTION * ceiling:
            reasons.append(f"{result.ops_per_s:,.0f} ops/s is >= {CEILING_FRACTION:.0%} of the client ceiling "
                           f"{ceiling:,.0f}")
        processes = min(cfg.processes, conc)
        if record["client_cpu"] >= CPU_FRACTION * processes:
            reasons.append(f"the {processes} client process(es) used {record['client_cpu']:.2f} cores "
                           f"(>= {CPU_FRACTION} of one core each, the GIL); more client processes (--processes) "
                           "or a client on another machine would push harder")
        record["client_bound"] = bool(reasons)
        record["client_bound_reasons"] = reasons
        attempts = result.operations + result.error_count
        failure = None
        if result.runner_failures:
            failure = (f"{result.runner_failures} worker(s) of the runner failed"
                       + _first_error({"RunnerFailure": 1}, record["error_samples"]))
        elif result.stuck_workers:
            failure = f"{result.stuck_workers} worker(s) still waiting on the server after the step"
        elif result.operations == 0:
            failure = "no operation completed" + _first_error(result.errors, record["error_samples"])
        elif any(kind in UNREACHABLE for kind in result.errors):
            lost = {k: v for k, v in result.errors.items() if k in UNREACHABLE}
            failure = "the server became unreachable during the step" + _first_error(lost, record["error_samples"])
        elif result.error_count > cfg.error_threshold * attempts:
            failure = (f"{result.error_count} of {attempts} operations failed"
                       + _first_error(result.errors, record["error_samples"]))
        record["status"] = "ok" if failure is None else "failed"
        record["failure"] = failure
        return record

    # --- adaptive --------------------------------------------------------------------------------------------------
    def _adaptive(self, runner, client, workload) -> None:
        cfg = self.config
        lo, hi = cfg.concurrency[0], cfg.concurrency[-1]
        max_steps = cfg.max_steps or max(len(cfg.concurrency), 8)
        history: list[float] = []
        decisions = []
        while True:
            measured = sorted({s["concurrency"] for s in self.steps if s.get("status") == "ok"})
            choice, reason, peak = choose_next(self.steps, lo, hi, cfg.tolerance, history,
                                               candidates=cfg.concurrency if len(cfg.concurrency) > 2 else None)
            decisions.append({"measured": measured, "peak_estimate": peak, "next": choice, "reason": reason})
            if choice is None or len(measured) >= max_steps:
                if choice is not None:
                    reason = f"stopped at the step limit ({max_steps} concurrencies)"
                break
            for rep in range(1, cfg.repeat + 1):
                if not self._done(choice, rep):
                    self._step(runner, client, workload, choice, rep, "adaptive")
        grid = len(cfg.concurrency) * cfg.repeat
        ok = [s for s in self.steps if s.get("status") == "ok"]
        per_step = sum(s["wall_seconds"] for s in ok) / max(len(ok), 1)
        self.run_info["adaptive"] = {
            "stopped_because": reason, "peak_concurrency": peak, "decisions": decisions,
            "steps": len(ok), "grid_steps": grid, "benchmark_seconds": sum(s["wall_seconds"] for s in ok),
            "grid_seconds_estimate": grid * per_step,
            "saved_fraction_estimate": 1 - len(ok) / grid if grid else 0.0,
        }
        self.log(f"adaptive: {reason}; {len(ok)} steps instead of {grid}")


def _snapper(lo: int, hi: int, candidates):
    """Round a concurrency to the allowed values: any integer in [lo, hi], or the nearest candidate (log scale)."""
    if not candidates:
        return lambda x: min(max(int(round(x)), lo), hi)
    allowed = sorted(set(candidates))
    return lambda x: min(allowed, key=lambda c: abs(math.log(c) - math.log(min(max(x, lo), hi))))


def initial_points(lo: int, hi: int, count: int = 4, candidates=None) -> list[int]:
    """``count`` geometrically spaced concurrencies from lo to hi (fewer if the range is small)."""
    if hi <= lo:
        return [lo]
    snap = _snapper(lo, hi, candidates)
    return sorted({snap(lo * (hi / lo) ** (i / (count - 1))) for i in range(count)})


def choose_next(steps: list[dict], lo: int, hi: int, tolerance: float, history: list[float], candidates=None):
    """The next concurrency to measure, or None; returns ``(next, reason, peak_estimate)``.

    ``candidates``: measure only these concurrencies (a grid), else any integer in [lo, hi]. ``history`` collects
    the successive peak estimates (it is appended to).
    """
    ok = [s for s in steps if s.get("status") == "ok"]
    measured = sorted({s["concurrency"] for s in ok})
    for point in initial_points(lo, hi, candidates=candidates):
        if point not in measured:
            return point, "initial points", None
    from capmodel.models.usl import fit_usl

    snap = _snapper(lo, hi, candidates)
    curve = pd.DataFrame({"concurrency": [s["concurrency"] for s in ok], "throughput": [s["throughput"] for s in ok]})
    try:
        fit = fit_usl(curve)
        peak = float(fit.peak_concurrency)
    except CapmodelError as exc:
        refine = _between(ok, measured, snap, candidates)
        return refine, f"USL fit failed ({exc}); refining around the best point", None
    what = "peak"
    if not math.isfinite(peak) and fit.sigma > 0:
        # no retrograde (kappa = 0): throughput levels off at lambda/sigma; look for the knee instead, where
        # X(N) = (1 - tolerance) * lambda/sigma, i.e. N = (1 - tolerance)(1 - sigma) / (tolerance * sigma)
        peak = (1 - tolerance) * (1 - fit.sigma) / (tolerance * fit.sigma)
        what = f"knee of the plateau at {fit.ceiling:,.0f}/s"
    if not math.isfinite(peak) or peak >= hi:
        if hi in measured:
            return None, f"no peak up to concurrency {hi}: throughput is still rising (fitted peak {peak:.3g})", peak
        return hi, "fitted peak beyond the range: measuring the largest concurrency", peak
    peak = max(peak, lo)
    history.append(peak)
    target = snap(peak)
    near = [c for c in measured if abs(c - peak) <= max(tolerance * peak, 0.5)]
    stable = len(history) >= 2 and abs(history[-1] - history[-2]) <= tolerance * history[-2]
    if near and stable:
        return None, f"{what} located at concurrency {peak:.1f} within {tolerance:.0%}", peak
    if target not in measured:
        return target, f"measuring at the fitted {what} {peak:.1f}", peak
    refine = _between(ok, measured, snap, candidates, around=target)
    if refine is None:
        return None, f"{what} at {peak:.1f}: no unmeasured concurrency left next to it", peak
    return refine, f"refining next to the fitted {what} {peak:.1f}", peak


def _between(ok, measured, snap, candidates, around=None):
    """An unmeasured concurrency between ``around`` (default: the best point) and a neighbour, widest gap first."""
    best = around if around is not None else max(ok, key=lambda s: s["throughput"])["concurrency"]
    i = measured.index(best) if best in measured else 0
    neighbours = [measured[j] for j in (i - 1, i + 1) if 0 <= j < len(measured)]
    for neighbour in sorted(neighbours, key=lambda c: -abs(math.log(c / best))):
        lo, hi = sorted((best, neighbour))
        inside = [c for c in (candidates or range(lo + 1, hi)) if lo < c < hi and c not in measured]
        if inside:
            middle = math.sqrt(lo * hi)
            return min(inside, key=lambda c: abs(math.log(c / middle)))
    return None


def run_sweep(uri: str, config: BenchConfig, out, resume: bool = False, progress: bool = True, log=None,
              server_pids=None):
    """Run a sweep (see ``Sweep``) and return its ``SweepResult``."""
    return Sweep(uri, config, out, resume=resume, progress=progress, log=log, server_pids=server_pids).run()


def _first_error(errors: dict, samples: dict) -> str:
    if not errors:
        return ""
    kind = max(errors, key=errors.get)
    return f" (mostly {kind}: {samples.get(kind, '')[:160]})"


def _norm(value):
    if isinstance(value, (list, tuple)):
        return [_norm(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _safe(fn):
    try:
        return fn()
    except Exception:  # noqa: BLE001 - telemetry is best effort: a dead server must not break the step record
        return None


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
