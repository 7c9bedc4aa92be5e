"""A concurrency sweep: load the workload's data, run one step per (concurrency, repeat), write the output folder.

``Sweep(uri, config, out).run()`` orchestrates the parts, each in its own module:
- ``config``     what to measure (``BenchConfig``, validated before anything connects);
- ``cluster.connection`` the coordinator's MongoClient, versions, where the server runs;
- ``cluster.executor`` where the clients run: threads of this process, a local Dask cluster, or Dask workers on other
  hosts;
- ``verdict``    what a step is worth: failed or ok, client-bound, Little's law;
- ``adaptive``   which concurrency to measure next (``--adaptive``);
- ``slo``        the highest open-loop rate that meets service-level objectives (``--slo``; ``slo.json``);
- ``files``      ``run.json``, ``steps.jsonl`` (each step fsync'ed the moment it ends) and ``curve.csv``.

Client ceiling: before the sweep the client's own ceiling is calibrated by running the ``ping`` command closed-loop
through the same executor (the server answers it without touching data, so its rate is the most these clients can
drive over these connections).
"""
from __future__ import annotations

import datetime as dt
import itertools
import json
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from capmodel.bench.client.runner import UNREACHABLE
from capmodel.bench.cluster.connection import (
    close_soon,
    host_fingerprint,
    make_client,
    ping,
    server_on_this_host,
    versions,
)
from capmodel.bench.cluster.executor import DaskExecutor, InProcess, SchedulerLost, open_executor
from capmodel.bench.cluster.scheduler_probe import probe_scheduler
from capmodel.bench.sweep import verdict
from capmodel.bench.sweep.adaptive import choose_next
from capmodel.bench.sweep.config import SWEEP_KEYS, BenchConfig
from capmodel.bench.sweep.files import (
    CURVE_FILE,
    RUN_FILE,
    SLO_FILE,
    STEPS_FILE,
    append_step,
    claim_outputs,
    curve_table,
    read_run,
    read_steps,
    write_curve,
    write_run,
    write_slo,
)
from capmodel.bench.sweep.slo import SloAnswer, parse_objective, search
from capmodel.errors import BenchError
from capmodel.extras import require
from capmodel.formatting import plural
from capmodel.output_folder import LOCK_FILE, FolderBefore, FolderLock, OutputFolderError, make_folder, write_atomic
from capmodel.redact import redact_text, redact_uri, secrets_masked

__all__ = ["Sweep", "SweepResult", "run_sweep"]

CALIBRATION_SECONDS = 1.0


@dataclass
class SweepResult:
    """What ``run_sweep`` returns.

    Attributes
    ----------
    out : pathlib.Path
        The output folder (``curve.csv``, ``steps.jsonl``, ``run.json``).
    curve : pandas.DataFrame
        The curve table of the measured steps (failed steps are not curve points).
    steps : list of dict
        Every step's record, as ``steps.jsonl`` holds it.
    run : dict
        The run's record, as ``run.json`` holds it (configuration, client ceiling, decisions, warnings).
    slo : SloAnswer or None
        With ``slo`` objectives: the highest rate that met them, as ``slo.json`` holds it.
    """
    out: Path
    curve: pd.DataFrame
    steps: list[dict]
    run: dict
    slo: SloAnswer | None = None


class Sweep:
    """One sweep: ``Sweep(uri, config, out).run()``."""

    def __init__(self, uri: str, config: BenchConfig, out, resume: bool = False, progress: bool = True,
                 log=None, server_pids=None):
        """``server_pids``: the mongod pids when the server runs on this machine (gives the curve's cpu_util)."""
        require("bench", "a benchmark sweep")
        self.uri, self.config, self.out, self.resume = uri, config.check(), Path(out), resume
        self.shape = None  # --rate-shape, read once (a trace's file here, on the coordinator)
        if self.config.rate_shape is not None:
            from capmodel.bench.client.arrivals import parse_rate_shape

            self.shape = parse_rate_shape(self.config.rate_shape)
        self.server_pids = list(server_pids) if server_pids else None
        self.progress = progress
        self.log = log or (lambda message: None)

    @property
    def steps_path(self) -> Path:
        return self.out / STEPS_FILE

    def _prepare_out(self) -> list[dict]:
        claim_outputs(self.out)  # no symlink, no file capmodel did not write
        done = read_steps(self.steps_path)
        self.previous_curve_sha256 = None
        if (self.out / RUN_FILE).is_file():
            self.previous_curve_sha256 = json.loads((self.out / RUN_FILE).read_text()).get("curve_sha256")
        if done and not self.resume:
            raise BenchError(f"{self.steps_path} already holds {len(done)} steps: pass --resume to continue that "
                             "sweep, or choose another --out")
        if self.resume and self.config.slo:
            raise BenchError("--resume cannot continue an SLO search (its rates follow from every verdict before "
                             "them): run it again into another --out")
        if self.resume:
            stored = read_run(self.out)["config"]
            differ = [k for k in SWEEP_KEYS if _norm(stored.get(k)) != _norm(getattr(self.config, k))]
            if differ:
                detail = ", ".join(f"{k}: {str(stored.get(k))[:40]!r} before, {str(getattr(self.config, k))[:40]!r} "
                                   "now" for k in differ)
                raise BenchError(f"--resume: {self.out} was started with a different configuration ({detail})")
        if self.steps_path.exists():  # rewritten without a torn last line (empty when nothing is resumed)
            write_atomic(self.steps_path, "".join(json.dumps(s) + "\n" for s in done))
        return done

    def run(self) -> SweepResult:
        cfg = self.config
        if cfg.scheduler is not None:
            probe_scheduler(cfg.scheduler)  # before anything is loaded: a wrong address is one line within 10 s
        before = FolderBefore(self.out)
        try:
            make_folder(self.out)
        except OutputFolderError as exc:
            raise BenchError(str(exc)) from None
        # one run at a time in --out (the lock is released when this process ends, however); the URI's password is
        # masked in every line the run writes, wherever it appears (appName, another option, a driver's message)
        with FolderLock(self.out), secrets_masked(self.uri):
            try:
                return self._run_locked(cfg, started=time.perf_counter())
            except BaseException:
                # refused or stopped before a step was recorded (the workload, the server, the collection, the load):
                # --out is left as it was found: what this run created in it is removed, a folder it created too
                if not getattr(self, "steps", None):
                    before.undo((RUN_FILE, STEPS_FILE, CURVE_FILE, SLO_FILE, LOCK_FILE))
                raise

    def _run_locked(self, cfg, started: float) -> SweepResult:
        import pymongo

        done = self._prepare_out()
        self.steps = list(done)
        self.run_info: dict[str, Any] = {}
        client = make_client(self.uri, cfg, pool=16)
        self.executor: InProcess | DaskExecutor | None = None
        try:
            try:
                self._run(client)
            except pymongo.errors.PyMongoError as exc:  # outside a step (load, indexes, calibration)
                raise BenchError(f"MongoDB failed while preparing the sweep: {redact_text(str(exc))[:300]}") from None
            self.run_info["status"] = "complete"
        except BaseException as exc:
            if self.run_info:
                self.run_info["status"] = "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed"
                self.run_info["stopped_because"] = redact_text(str(exc))[:500]
            raise
        finally:
            if self.run_info:
                self.run_info["finished_at"] = _now()
                self.run_info["sweep_seconds_this_session"] = time.perf_counter() - started
                self.run_info["steps_completed"] = sum(s.get("status") == "ok" for s in self.steps)
                self.run_info["benchmark_seconds"] = sum(s.get("wall_seconds", 0.0) for s in self.steps)
                self._finish()
            if self.executor is not None:
                self.executor.close()
            close_soon(client)
        return SweepResult(self.out, curve_table(self.steps), self.steps, self.run_info, getattr(self, "slo", None))

    def _run(self, client) -> None:
        from capmodel.bench.client.operations import create_indexes, load_records
        from capmodel.bench.workload.definition import load_workload
        from capmodel.bench.workload.ownership import prepare_collection

        cfg = self.config
        workload = load_workload(cfg.workload, records=cfg.records, collection=cfg.collection,
                                 allow_server_js=cfg.allow_server_js)
        ping(client, self.uri)
        from pymongo import ReadPreference

        # the set-up reads the primary whatever --read-preference says: a lagging secondary's count of the loaded
        # records started the inserts' key sequence below the last record (DuplicateKeyError on a replica set)
        database = client.get_database(cfg.database, read_preference=ReadPreference.PRIMARY)
        collection, action, _ = prepare_collection(database, workload, allow_existing=cfg.allow_existing)
        self.run_info.update({
            "config": cfg.to_dict(), "uri": redact_uri(self.uri), "workload": {
                "name": workload.name, "source": workload.source, "collection": workload.collection,
                "records": workload.records, "throughput_unit": workload.throughput_unit,
                "operations": {o.name: o.proportion for o in workload.operations}},
            "versions": versions(client), "host": host_fingerprint(),
            "started_at": _now(), "status": "running", "data": action,
            "curve_sha256": self.previous_curve_sha256,
        })
        if self.resume:
            previous = read_run(self.out)
            self.run_info["started_at"] = previous.get("started_at", self.run_info["started_at"])
            self.run_info["client_ceiling_ops_per_s"] = previous.get("client_ceiling_ops_per_s")
            self.run_info["resumed_at"] = _now()
        write_run(self.out, self.run_info)
        if action == "load":
            create_indexes(collection, workload)
            self._load(collection, workload, load_records)
        self.executor = open_executor(self._resolved_binding(cfg), self.uri)
        self.run_info["clients"] = self.executor.workers_described
        if cfg.scheduler is None and server_on_this_host(self.uri):
            host = socket.gethostname()
            self._note_shared_host(host if cfg.processes == 1 else f"{host} (127.0.0.1)")
        self.log(f"clients: {self.executor.workers_described}")
        existing = collection.estimated_document_count() if workload.has_keys else None
        runner = self._runner(database, workload, existing)
        if cfg.calibrate and self.run_info.get("client_ceiling_ops_per_s") is None:
            self.run_info["client_ceiling_ops_per_s"] = self._calibrate(database)
            write_run(self.out, self.run_info)
        if cfg.adaptive:
            self._adaptive(runner, client, workload)
            return
        if cfg.slo:
            self._slo(runner, client, workload)
            return
        for conc in cfg.concurrency:
            for rep in range(1, cfg.repeat + 1):
                if not self._done(conc, rep):
                    self._step(runner, client, workload, conc, rep, "grid")

    def _resolved_binding(self, cfg: BenchConfig) -> BenchConfig:
        """The configuration the clients run with: ``wire`` becomes mongojet when the URI needs what the wire
        binding does not do (said in ``run.json`` and the log)."""
        from dataclasses import replace

        from capmodel.bench.client.wire import unsupported

        binding = cfg.binding
        why = unsupported(self.uri) if binding == "wire" else None
        if why is not None:
            binding = "mongojet"
            self.run_info["binding_note"] = f"the URI needs {why}: the clients use mongojet instead of wire"
            self.log(self.run_info["binding_note"])
        self.run_info["binding"] = binding
        return cfg if binding == cfg.binding else replace(cfg, binding=binding)

    def _note_shared_host(self, host: str) -> None:
        hosts = self.run_info.setdefault("client_hosts_shared_with_server", [])
        if host not in hosts:
            hosts.append(host)
            self.run_info["shared_host_warning"] = (
                f"the clients run on the server's host ({', '.join(hosts)}): client and server compete for its CPUs, "
                "so a saturated step cannot say which of them set its pace; for the server's own capacity run the "
                "clients on other hosts (--scheduler)")
            self.log(self.run_info["shared_host_warning"])

    def _finish(self) -> None:
        self.run_info["curve_sha256"] = write_curve(self.out, self.steps)
        write_run(self.out, self.run_info)

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

    @property
    def _executor(self) -> InProcess | DaskExecutor:
        """Where the clients run, once the sweep has opened it."""
        assert self.executor is not None, "the sweep opens its executor first"
        return self.executor

    def _runner(self, database, workload, existing: int | None):
        """A runner of ``workload`` on the sweep's executor (``Runner.run``'s signature)."""
        join_timeout = self.config.timeout_ms / 1000.0 + 5.0
        return self._executor.runner(database.name, workload.collection, workload, existing, seed=self.config.seed,
                                    join_timeout=join_timeout)

    def _calibrate(self, database) -> float:
        """The client's ceiling: closed-loop ``ping`` rate at the sweep's smallest useful concurrency (<= 8 per
        client process)."""
        from capmodel.bench.workload.definition import parse_workload

        ping_workload = parse_workload({"name": "client-ceiling", "collection": "unused",
                                        "operations": [{"op": "command", "command": {"ping": 1}}]}, "calibration")
        conc = min(8 * self._executor.size, max(self.config.concurrency))
        result = self._runner(database, ping_workload, None).run(conc, duration=CALIBRATION_SECONDS, warmup=0.3,
                                                                 label="ceiling")
        if result.ops_per_s == 0:
            failure = verdict.failure(result, 0.0, result.error_samples) or "no ping completed"
            raise BenchError(f"the client ceiling could not be measured: {failure}")
        self.log(f"client ceiling (ping, {conc} clients on {self._executor.workers_described}): "
                 f"{result.ops_per_s:,.0f} ops/s")
        return result.ops_per_s

    def _step(self, runner, client, workload, conc: int, rep: int, phase: str, rate: float | None = None,
              duration: float | None = None, on_error: str | None = None) -> dict:
        """Measure one step (``rate``/``duration``: this step's, instead of the sweep's) and record it; a failed step
        stops the sweep, is retried or is returned, as ``on_error`` (default the sweep's) says."""
        cfg = self.config
        on_error = on_error or cfg.on_error
        attempts = 1 + (cfg.retries if on_error == "retry" else 0)
        for attempt in range(1, attempts + 1):
            try:
                record = self._measure(runner, client, workload, conc, rep, phase, attempt, rate, duration)
            except SchedulerLost as exc:
                raise BenchError(f"{exc} during step concurrency={conc} repeat={rep}; "
                                 f"{self._saved()} in {self.out}; restart the cluster and rerun with "
                                 "--resume") from None
            self.steps.append(record)
            append_step(self.steps_path, record)
            if record["status"] == "ok":
                asked = f" at {record['target_rate']:,.0f}/s asked" if record.get("target_rate") else ""
                self.log(f"c={conc} repeat={rep}{asked}: {record['throughput']:,.1f}/s, "
                         f"p99 {record['latency']['all']['p99_ms']:.2f} ms, {record['error_count']} errors"
                         + (" [client-bound]" if record["client_bound"] else ""))
                return record
            self.log(f"c={conc} repeat={rep}: step failed ({record['failure']})")
            if on_error == "retry" and attempt < attempts:
                self._wait_for_server(client)
        if on_error == "continue":
            return record
        raise BenchError(f"step concurrency={conc} repeat={rep} failed: {record['failure']}. "
                         f"{self._saved()} in {self.out}; fix the server and rerun with --resume")

    def _saved(self) -> str:
        """'1 completed step is saved', '3 completed steps are saved'."""
        done = sum(s.get("status") == "ok" for s in self.steps)
        return f"{plural(done, 'completed step')} {'is' if done == 1 else 'are'} saved"

    def _wait_for_server(self, client) -> None:
        deadline = time.monotonic() + self.config.server_selection_timeout_ms / 1000.0 * 2
        while time.monotonic() < deadline:
            try:
                client.admin.command("ping")
                return
            except Exception:  # noqa: BLE001 - still down; retry until the deadline
                time.sleep(0.5)

    def _measure(self, runner, client, workload, conc, rep, phase, attempt, rate=None, duration=None) -> dict:
        from capmodel.bench.client import telemetry

        cfg = self.config
        rate = cfg.rate if rate is None else rate
        duration = cfg.duration if duration is None else duration
        replica_before = _safe(lambda: telemetry.replica_state(client))
        before = _safe(lambda: telemetry.server_snapshot(client))
        server_meter = _safe(lambda: telemetry.CpuMeter(self.server_pids).start()) if self.server_pids else None
        result = runner.run(conc, duration=duration if cfg.operations is None else None, warmup=cfg.warmup,
                            operations=cfg.operations, rate=rate, arrivals=cfg.arrivals, progress=self.progress,
                            shape=self.shape, windows=cfg.windows,
                            label=f"c={conc} r={rep}")
        server_cpu = _safe(server_meter.stop) if server_meter is not None else None
        # a server that stopped answering must not hold the step's record up: its telemetry is skipped
        lost = result.ended_early or any(kind in UNREACHABLE for kind in result.errors)
        after = _safe(lambda: telemetry.server_snapshot(client)) if result.operations and not lost else None
        replica_after = _safe(lambda: telemetry.replica_state(client)) if replica_before else None
        election = verdict.election(replica_before, replica_after, result)
        server = None
        if before is not None and after is not None and before.get("host") == after.get("host") and \
                not (election and election["seen"]):  # counters of two servers make no delta
            server = _safe(lambda: telemetry.delta(before, after))
        if server_cpu is not None:
            server = dict(server or {})
            server["cpu_util"] = server_cpu["process"]  # mongod's share of the machine (embedded server only)
            server["cpu_cores"] = server_cpu["process_cores"]
        hosts = verdict.hosts(result.workers)
        record = {"step": len(self.steps) + 1, "phase": phase, "attempt": attempt, "workload": workload.name,
                  "repeat": rep, **result.as_record(), "server": server,
                  "client_cpu": sum(w["cpu_cores"] for w in result.workers),
                  "host_cpu": max((h["host_cpu"] for h in hosts.values()), default=None),
                  "client_hosts": hosts}
        for host, row in hosts.items():
            if row["server_on_host"]:
                self._note_shared_host(host)
        record["error_samples"] = {k: redact_text(v) for k, v in result.error_samples.items()}
        little = verdict.effective_concurrency(result)
        record["effective_concurrency"] = little["effective_concurrency"] if little else None
        record["clients_in_flight"] = little["ratio"] if little else None
        reasons = verdict.client_bound_reasons(result, self.run_info.get("client_ceiling_ops_per_s"))
        if result.late_start_s > verdict.LATE_START_S:
            reasons.append(f"a client process started {result.late_start_s:.2f} s after the others")
        record["client_bound"] = bool(reasons)
        record["client_bound_reasons"] = reasons
        record["election"] = election
        failure = verdict.failure(result, cfg.error_threshold, record["error_samples"]) or \
            verdict.election_failure(election)
        record["status"] = "ok" if failure is None else "failed"
        record["failure"] = failure
        return record

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


    def _slo(self, runner, client, workload) -> None:
        """Search the highest open-loop rate meeting the objectives (``capmodel.bench.sweep.slo``) at the largest
        concurrency (the most operations in flight); a failed step is a missed rate, not the end of the run."""
        cfg = self.config
        conc = max(cfg.concurrency)
        measured = itertools.count(1)

        def probe() -> dict:
            return self._step(runner, client, workload, conc, 1, "slo-probe")

        def measure(rate: float, seconds: float) -> dict:
            return self._step(runner, client, workload, conc, next(measured), "slo", rate=rate, duration=seconds,
                              on_error="continue")

        self.slo = search([parse_objective(text) for text in cfg.slo or []], measure, probe, cfg.duration,
                          cfg.tolerance, cfg.max_steps or 12, log=self.log)
        self.slo.workload = workload.name
        write_slo(self.out, self.slo.to_json())
        self.run_info["slo"] = {"max_rate": self.slo.max_rate, "interval": list(self.slo.interval),
                                "grade": self.slo.evidence.grade, "file": SLO_FILE}


def run_sweep(uri: str, config: BenchConfig, out, resume: bool = False, progress: bool = True, log=None,
              server_pids=None):
    """Run a benchmark sweep against a MongoDB server: the Python entry point of ``capmodel bench``.

    Loads the workload's collection (capmodel's own, in its own database), calibrates the client's ceiling, then
    measures one step per concurrency (or adaptively, towards the fitted peak), appending each completed step to
    ``steps.jsonl`` at once and writing ``curve.csv`` and ``run.json`` into ``out``.

    Parameters
    ----------
    uri : str
        The server's connection string (its password is masked in everything the run writes).
    config : BenchConfig
        The workload, concurrencies, step length and every other option; checked before anything connects.
    out : str or path-like
        The output folder, owned by one run at a time (a lock file); a file in it capmodel did not write is refused.
    resume : bool, default False
        Continue the run recorded in ``out`` (its ``run.json``); the configuration must agree with the recorded one.
    progress : bool, default True
        Draw progress bars (on a terminal only).
    log : callable, optional
        Called with each step line and decision.
    server_pids : list of int, optional
        The mongod's process ids when it runs on this machine: adds the curve's ``cpu_util``.

    Returns
    -------
    SweepResult
        ``out``, the ``curve`` (the curve table of the measured steps), every step record and the run's record.

    Raises
    ------
    BenchError
        An option out of range, an output folder that cannot be used, a collection capmodel did not create (without
        ``allow_existing``), a failed step under ``on_error="stop"``, or a ``resume`` that disagrees with the record.
    InputError
        The workload is refused.
    ServerError
        The server cannot be reached.

    See Also
    --------
    capmodel.bench.server.start.embedded_server : a throwaway mongod to run it against.

    Examples
    --------
    A short sweep against an embedded server (it needs the ``mongod`` wheel)::

        from capmodel.bench.server.start import embedded_server
        from capmodel.bench.sweep.config import BenchConfig
        from capmodel.bench.sweep.sweep import run_sweep

        with embedded_server(cpus="0") as server:
            result = run_sweep(server.uri, BenchConfig(workload="ycsb-c", records=1000, concurrency=[1, 4, 16],
                                                       duration=2, warmup=1), "runs/c", server_pids=server.pids)
        print(result.curve[["concurrency", "throughput", "latency_p95_ms"]])
    """
    return Sweep(uri, config, out, resume=resume, progress=progress, log=log, server_pids=server_pids).run()


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
