"""Live observation that keeps what it has: every interval appended to disk as it completes, resumable.

``record_uri(uri, out, ...)`` samples a standalone server, or every data-bearing member of a replica set (one direct
connection each, ``capmodel.observe.members``), in the same ticks. Each completed interval is appended at once, as
``bench`` appends its steps: to ``samples.csv`` for a standalone (or one member named with ``directConnection=true``);
for a replica set to ``members/<host_port>/samples.csv`` and to the combined ``samples.csv`` (with a ``member``
column). A process killed mid-sampling leaves every completed interval on disk. ``observe.json`` records the format
version, the source (URI with the password masked), the replica set, the members and each session; ``resume=True``
continues into the same folder (the first sample after the gap is a new baseline: no interval spans the interruption)
and refuses a folder observed from another source or host set, naming it. At the end (or interruption) the curves, each
member's capacity and the limiting member are worked out from everything on disk.
"""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pandas as pd

from capmodel.csv_cells import guard_frame
from capmodel.errors import CapmodelError, InputError
from capmodel.observe import members as replica
from capmodel.observe import sampler, serverstatus
from capmodel.observe.member_folders import folder_name
from capmodel.observe.observation import TIME_FORMAT, Observation, read_samples
from capmodel.observe.serverstatus import CORES_COLUMN
from capmodel.observe.tables import curve_from_samples
from capmodel.output_folder import FolderLock, append_line, refuse_foreign, write_atomic
from capmodel.redact import redact_uri

OBSERVATION_FORMAT_VERSION = 1
STATE = "observe.json"


def _append(path: Path, frame: pd.DataFrame) -> None:
    """Append rows to a CSV (with its header when the file is new), on disk before returning; never through a
    symlink (``capmodel.output_folder``)."""
    new = not path.exists() or path.stat().st_size == 0
    append_line(path, guard_frame(frame).to_csv(index=False, header=new, date_format=TIME_FORMAT))


def _drop_partial_line(path: Path) -> None:
    """A line cut by a kill (no final newline) is removed before appending resumes."""
    refuse_foreign(path, lambda _: True)            # a symlink or a device is refused, never truncated
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with open(path, "r+b") as handle:
            handle.truncate(data.rfind(b"\n") + 1)


def _read_samples(path: Path) -> pd.DataFrame:
    if not path.exists() or path.stat().st_size == 0:
        return pd.DataFrame(columns=["time", "interval_s", "dropped"])
    return read_samples(path)


def _write_whole(path: Path, frame: pd.DataFrame) -> None:
    write_atomic(path, guard_frame(frame).to_csv(index=False, date_format=TIME_FORMAT))


class _State:
    """``observe.json``: what this folder observes, checked on resume."""

    def __init__(self, out: Path, source: str, replica_set: str | None, hosts: list[str], interval: float):
        self.path = out / STATE
        self.record: dict = {"format_version": OBSERVATION_FORMAT_VERSION, "source": source, "replica_set": replica_set,
                             "members": sorted(hosts), "interval_s": interval, "sessions": []}

    def open(self, resume: bool) -> None:
        out = self.path.parent
        if not resume:
            for name in (STATE, "samples.csv", "curve.csv", "members.csv", "members"):    # never replaced
                if (out / name).exists() or (out / name).is_symlink():
                    raise InputError(f"--out {out}: already holds {name}; pass --resume to continue that "
                                     "observation, or choose another folder")
            out.mkdir(parents=True, exist_ok=True)
        else:
            try:                                       # record_uri made sure it exists
                before = json.loads(self.path.read_text())
            except (OSError, ValueError) as exc:
                raise InputError(f"--resume: {self.path} is not an observe.json capmodel wrote ({exc})") from None
            if not isinstance(before, dict) or not isinstance(before.get("format_version"), int):
                raise InputError(f"--resume: {self.path} has no format_version")
            if before["format_version"] > OBSERVATION_FORMAT_VERSION:
                raise InputError(f"--resume: {self.path} has format version {before['format_version']}, newer than "
                                 f"this capmodel reads ({OBSERVATION_FORMAT_VERSION}): upgrade capmodel")
            if before.get("source") != self.record["source"]:
                raise InputError(f"--resume: {out} was observed from {before.get('source')}, not "
                                 f"{self.record['source']}; choose another --out")
            if sorted(before.get("members") or []) != self.record["members"]:
                raise InputError(f"--resume: {out} observed the members {', '.join(before.get('members') or [])}, "
                                 f"the URI now has {', '.join(self.record['members'])}; choose another --out")
            self.record["sessions"] = list(before.get("sessions") or [])
        self.record["sessions"].append({"started": dt.datetime.now(dt.timezone.utc).isoformat(), "ended": None})
        self.save()

    def close(self, interrupted: bool) -> None:
        self.record["sessions"][-1].update(ended=dt.datetime.now(dt.timezone.utc).isoformat(),
                                           interrupted=interrupted)
        self.save()

    def save(self) -> None:
        write_atomic(self.path, json.dumps(self.record, indent=1))


def _connect_members(uri: str) -> tuple[str | None, dict, list[str], dict]:
    """(replica set, host -> client, notes, host -> why it was not reached): a standalone's own client, or a direct
    client per member. The URI's seeds that the set's ``hello`` does not list are asked themselves
    (``members.reconcile_seeds``): a hidden member the URI names is sampled, and a member the set names by a name
    that does not resolve here is reached at the URI's address for it."""
    seed = sampler.connect(uri)
    try:
        name, hosts = replica.discover(seed)
    except Exception:
        seed.close()
        raise
    if replica.is_direct(uri):                    # one member asked for by name: that member only
        address = seed.address
        return None, {f"{address[0]}:{address[1]}" if address else "server": seed}, [], {}
    if name is None:
        return None, {hosts[0] if hosts else "server": seed}, [], {}
    seed.close()
    replies = {}
    for address in replica.seed_hosts(uri):
        if address in hosts:
            continue
        try:
            client = replica.member_client(uri, address, timeout_ms=2000)
        except CapmodelError:
            continue                              # a seed that does not answer: the set's own list stands
        try:
            replies[address] = client.admin.command("hello")
        except Exception:  # noqa: BLE001 - PyMongoError: the same
            pass
        finally:
            client.close()
    reach, notes = replica.reconcile_seeds(name, hosts, replies)
    clients, unreached = {}, {}
    for host, address in reach.items():
        try:
            clients[host] = replica.member_client(uri, address)
        except CapmodelError as exc:
            unreached[host] = str(exc)
    if not clients:
        raise CapmodelError(f"no member of replica set {name} could be reached "
                            f"({'; '.join(f'{h}: {why}' for h, why in unreached.items())})")
    return name, clients, notes, unreached


def record_uri(uri: str, out, interval: float = 1.0, duration: float = 600.0, resume: bool = False,
               should_stop=None, utilization_target: float = 0.8) -> replica.ReplicaSetObservation:
    """Sample ``uri`` (every member of a replica set) into ``out``, appending each interval; see the module doc."""
    sampler.check_timing(interval, duration)
    out = Path(out)
    source = redact_uri(uri)
    name, clients, notes, unreached = _connect_members(uri)
    if resume and not (out / STATE).exists():
        for client in clients.values():
            client.close()
        raise InputError(f"--resume: {out / STATE} not found: {out} holds no live observation to continue")
    try:
        out.mkdir(parents=True, exist_ok=True)
        with FolderLock(out):                       # one observation writes a folder at a time
            return _record(out, source, name, clients, notes, interval, duration, resume, should_stop,
                           utilization_target, unreached)
    finally:
        for client in clients.values():
            client.close()


def _record(out, source, name, clients, notes, interval, duration, resume, should_stop, utilization_target,
            unreached=None):
    unreached = unreached or {}
    cores = {host: replica.member_cores(client) for host, client in clients.items()}
    state = _State(out, source, name, [*clients, *unreached], interval)
    state.open(resume)
    files = {host: (out / "members" / folder_name(host) / "samples.csv") if name else
             out / "samples.csv" for host in clients}
    combined = out / "samples.csv"
    for path in {*files.values(), combined}:
        path.parent.mkdir(parents=True, exist_ok=True)
        _drop_partial_line(path)
    last: dict = {}

    def on_tick(tick: dict) -> None:
        for host, row in tick.items():
            row = {**row, CORES_COLUMN: cores[host] if cores[host] is not None else float("nan")}
            if host in last:
                rows = serverstatus.intervals(pd.DataFrame([last[host], row]), own_commands=1)
                _append(files[host], rows)
                if name:
                    _append(combined, rows.assign(member=host)[["member", *rows.columns]])
            last[host] = row

    interrupted = sampler.sample_ticks(clients, interval, duration, on_tick, should_stop,
                                       where={h: redact_uri(f"mongodb://{h}") for h in clients}, notes=notes)
    state.close(interrupted)
    if name:
        notes += _joined(clients, [*clients, *unreached])
    return finish(out, name, list(clients), cores, source, interrupted, notes, utilization_target, unreached)


def _joined(clients: dict, known: list[str]) -> list[str]:
    """Notes naming the members the set lists now (``hello`` on a member that answers) that it did not list when
    the observation began: they were not sampled."""
    for client in clients.values():
        try:
            _, hosts = replica.discover(client)
        except Exception:  # noqa: BLE001 - PyMongoError: ask the next member
            continue
        return [f"member {host} joined the set during the observation: not sampled (observe again to include it)"
                for host in hosts if host not in known]
    return []


def finish(out: Path, name, hosts, cores, source, interrupted, notes, utilization_target=0.8, unreached=None):
    """Curves, capacities and the limiting member from every interval on disk; writes ``curve.csv`` (per member
    and combined) and, for a replica set, ``members.csv``. A member that could not be reached (``unreached``: host
    -> why) is a row of its own, never sampled: the set's limit cannot be named past it."""
    result = []
    curves = []
    unreached = unreached or {}
    for host in [*hosts, *unreached]:
        folder = out / "members" / folder_name(host) if name else out
        samples = _read_samples(folder / "samples.csv")
        if host in unreached:
            if not len(samples):
                result.append(replica.Member(host, None, error=f"not sampled: {unreached[host]}"))
                continue
            notes.append(f"member {host} not reached this time ({unreached[host]}): its intervals from before are "
                         "kept")
        curve = curve_from_samples(samples) if len(samples) else pd.DataFrame(columns=["time", "concurrency"])
        _write_whole(folder / "curve.csv", curve)
        curves.append(curve.assign(member=host))
        observation = Observation(samples, curve, f"{source} member {host}" if name else source, interrupted)
        member = replica.Member(host, observation, cores.get(host))
        if len(samples) == 0:
            member.error = "no complete interval was sampled"
        result.append(replica.assess(member, utilization_target))
    observed = replica.ReplicaSetObservation(name, result, source, interrupted, notes)
    if name:
        combined = pd.concat(curves, ignore_index=True) if curves else pd.DataFrame()
        _write_whole(out / "curve.csv", combined[["member", *[c for c in combined.columns if c != "member"]]])
        write_atomic(out / "members.csv", guard_frame(observed.table).to_csv(index=False))
    return observed
