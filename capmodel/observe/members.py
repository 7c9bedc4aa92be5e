"""Every member of a replica set: which one limits the set.

Live, ``discover`` asks the URI's deployment ``hello``: a replica set names its data-bearing members in ``hosts`` and
``passives`` (``arbiters`` hold no data and serve no operations: skipped); ``member_client`` opens one direct
connection per member (``directConnection=true``, the URI's credentials and TLS options, never its replica-set or
read-preference options). From FTDC, each member's ``diagnostic.data`` is one folder, named by its host (``fleet``).

Each member's samples give its own ``server_capacity`` (its CPU per operation and its cores); the member that limits
the set is the one with the least spare fraction among those whose verdict is usable. A member whose verdict is
unusable cannot be ranked: ``describe()`` says so rather than pass over it in silence.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from capmodel.errors import CapmodelError, InputError
from capmodel.formatting import aside, plural
from capmodel.observe.member_folders import folder_name
from capmodel.observe.observation import Observation, write_tables
from capmodel.observe.sampler import connect, host_cores
from capmodel.redact import redact_uri

if TYPE_CHECKING:
    from capmodel.observe.capacity import ServerCapacity

#: URI options that address the whole deployment, not one member
_SET_OPTIONS = {"replicaset", "directconnection", "readpreference", "readpreferencetags", "loadbalanced",
                "srvservicename", "srvmaxhosts", "maxstalenessseconds"}


def discover(client) -> tuple[str | None, list[str]]:
    """(replica set name, data-bearing members as host:port) from ``hello`` on a connected client; a standalone
    gives (None, [its address])."""
    reply = client.admin.command("hello")
    name = reply.get("setName")
    if not name:
        address = client.address
        return None, [f"{address[0]}:{address[1]}"] if address else []
    members = list(dict.fromkeys([*reply.get("hosts", []), *reply.get("passives", [])]))
    return name, members


def seed_hosts(uri: str) -> list[str]:
    """The URI's seeds as ``host:port`` (its own spelling), [] when pymongo cannot read it."""
    from pymongo import uri_parser

    try:
        nodes = uri_parser.parse_uri(uri, connect_timeout=5.0).get("nodelist") or []
    except Exception:  # noqa: BLE001 - InvalidURI, ConfigurationError (DNS), ValueError
        return []
    return [f"[{host}]:{port}" if ":" in host else f"{host}:{port}" for host, port in nodes]


def reconcile_seeds(name: str, hosts: list[str], seed_replies: dict) -> tuple[dict, list[str]]:
    """Where to reach each member (member -> address) and what to say about it, from the set's ``hosts`` and the
    ``hello`` replies of the URI's seeds that the set does not list (seed -> reply, on a direct connection).

    A seed that answers as a *hidden* member of the set (``hidden: true``: hello lists it nowhere, so discovery
    alone never samples it, though the URI named it) is a member, named by its ``me``. A seed whose ``me`` is a
    member the set lists by another name (split horizon: the set's names resolve inside its network, the URI's
    here) is that member, reached at the seed's address. Other seeds (another set, a standalone) are left out."""
    reach = {host: host for host in hosts}
    notes = []
    for seed, reply in seed_replies.items():
        if seed in reach or not isinstance(reply, dict) or reply.get("setName") != name:
            continue
        me = reply["me"] if isinstance(reply.get("me"), str) and reply.get("me") else seed
        if reply.get("hidden"):
            if me not in reach:
                reach[me] = seed
                notes.append(f"member {me} is hidden (hello lists it nowhere): sampled because the URI names it"
                             + (f" (at {seed})" if seed != me else ""))
        elif me in reach and reach[me] == me:
            reach[me] = seed
            notes.append(f"member {me} reached at {seed}, the address the URI gives it (the set knows it by the "
                         "other name)")
    return reach, notes


def is_direct(uri: str) -> bool:
    """True when the URI asks for one server by name (``directConnection=true``): only that one is sampled."""
    from urllib.parse import parse_qsl, urlsplit

    try:
        query = urlsplit(uri).query
    except ValueError:
        return False
    return any(k.lower() == "directconnection" and v.lower() == "true" for k, v in parse_qsl(query))


def member_client(uri: str, host: str, timeout_ms: int = 5000):
    """A direct, checked connection to one member with the URI's credentials and options (``member_uri``)."""
    return connect(member_uri(uri, host), timeout_ms, directConnection=True)


def member_uri(uri: str, host: str) -> str:
    """``uri`` with ``host`` alone in place of its seeds and without the options of a set (replicaSet, read
    preference, ...): its credentials, database and every other option as written (percent-encoding and case kept, so
    pymongo reads them as it read the seed's). A ``mongodb+srv`` URI becomes ``mongodb://`` with what SRV implied:
    TLS on unless the URI says otherwise, and the authSource of its TXT record."""
    from urllib.parse import quote

    from pymongo import uri_parser

    try:
        parsed = uri_parser.parse_uri(uri)        # the seed's URI was read by pymongo already: this fails rarely
    except Exception as exc:  # noqa: BLE001 - pymongo raises InvalidURI, ConfigurationError, ValueError
        raise InputError(f"--uri {redact_uri(uri)}: {type(exc).__name__}") from None
    scheme, _, rest = uri.partition("://")
    authority, _, path = rest.partition("/")       # as pymongo splits it: the user part ends at the last '@'
    userinfo = authority.rpartition("@")[0]
    database, _, query = path.partition("?")
    kept = [pair for pair in query.split("&") if pair and pair.partition("=")[0].lower() not in _SET_OPTIONS]
    if scheme.lower() == "mongodb+srv":
        keys = {pair.partition("=")[0].lower() for pair in kept}
        if not keys & {"tls", "ssl"}:
            kept.append("tls=true")
        source = next((v for k, v in parsed["options"].items() if k.lower() == "authsource"), None)
        if source and "authsource" not in keys:
            kept.append(f"authSource={quote(str(source), safe='')}")
    return (f"mongodb://{userinfo + '@' if userinfo else ''}{host}/{database}"
            + (f"?{'&'.join(kept)}" if kept else ""))


def member_cores(client) -> float | None:
    """The cores a member reports (``hostInfo``'s ``system.numCores``), or None when it does not say."""
    cores = host_cores(client)
    return cores if cores > 0 else None          # NaN (not said) compares false


@dataclass
class Member:
    """One replica-set member's observation and capacity, or why it has none.

    Attributes
    ----------
    host : str
        The member's host:port (or its folder's name).
    observation : Observation or None
        Its telemetry (None when its files could not be read).
    cores : float or None
        The cores its metadata reports.
    capacity : ServerCapacity or None
        Its capacity from the operational laws.
    error : str or None
        Why it has no observation or no capacity.
    """

    host: str
    observation: Observation | None
    cores: float | None = None
    capacity: ServerCapacity | None = None
    error: str | None = None

    @property
    def usable(self) -> bool:
        return self.capacity is not None and self.capacity.evidence.usable

    @property
    def assessed(self) -> ServerCapacity:
        """The capacity of a member that has one (a usable member, a member without an error)."""
        assert self.capacity is not None, f"{self.host} has no capacity"
        return self.capacity

    def row(self) -> dict:
        """This member's row of the set's ``table``."""
        row = {"host": self.host, "intervals": len(self.observation.samples) if self.observation else 0,
               "curve_points": len(self.observation.curve) if self.observation else 0, "error": self.error}
        if self.capacity is not None:
            c = self.capacity
            row.update(busiest_ops=c.observed_peak_throughput, capacity_ops=c.saturation_throughput.estimate,
                       method=c.method, cpu_ms_per_op=c.service_demand_ms.estimate, cores=c.cores,
                       spare_fraction=c.spare_fraction.estimate, spare_low=c.spare_fraction.low,
                       spare_high=c.spare_fraction.high, verdict=c.evidence.grade)
        return row

    def to_json(self) -> dict:
        out = self.row()
        out["capacity"] = self.capacity.to_json() if self.capacity is not None else None
        return out


def assess(member: Member, utilization_target: float = 0.8, monthly_growth: float | None = None) -> Member:
    """Fill ``member.capacity`` from its samples (or ``error`` when the samples cannot give one); with
    ``monthly_growth`` its runway too."""
    from capmodel.observe.fleet import capacity_of

    if member.observation is None or member.error:
        return member
    try:
        member.capacity = capacity_of(member.observation.samples, member.cores, monthly_growth, utilization_target)
    except CapmodelError as exc:
        member.error = str(exc)
    return member


@dataclass
class ReplicaSetObservation:
    """Every member's observation and capacity, and which member limits the set.

    ``limiting`` is the usable member with the least spare fraction; ``describe()`` says it in words and ``table`` gives
    one row per member.

    Attributes
    ----------
    replica_set : str or None
        The set's name from the members' metadata.
    members : list of Member
        One per folder.
    source : str
        Where the FTDC came from.
    interrupted : bool
        Sampling was stopped early.
    notes : list of str
        What the files left out (a cut newest file).
    replica_sets : int
        The replica sets the folders hold; above 1, no member "limits the set".
    """

    replica_set: str | None
    members: list[Member]
    source: str
    interrupted: bool = False
    notes: list[str] = field(default_factory=list)
    replica_sets: int = 1           # the folders' replica sets: above 1, no member "limits the set"

    @property
    def limiting(self) -> Member | None:
        """The usable member with the least spare fraction (closest to its capacity), or None."""
        usable = [m for m in self.members if m.usable]
        return min(usable, key=lambda m: (m.assessed.spare_fraction.estimate, m.host)) if usable else None

    def describe(self) -> str:
        """The answer: the limiting member and its spare, and which members could not be ranked (while one that was
        not observed, or carried as much load, cannot be, the ranked member closest to its capacity is named as
        such, not as the set's limit)."""
        top = self.limiting
        whole = "the set" if self.replica_sets <= 1 else f"these {self.replica_sets} replica sets' servers"
        limits = "limits the set" if self.replica_sets <= 1 else f"is the closest to its capacity of {whole}"
        why = _grouped_reasons(unranked := [m for m in self.members if not m.usable])
        if top is None:
            return f"No member can be named as limiting {whole}: no member has a usable capacity verdict {aside(why)}."
        ranked = sum(m.usable for m in self.members)
        figures = f"busiest at {top.assessed.observed_peak_throughput:,.0f} ops/s, {spare_phrase(top.assessed)}"
        if not unranked:
            least = "the only member given" if ranked == 1 else f"the least spare of the {plural(ranked, 'member')}"
            return f"{top.host} {limits}: {figures}, {least}."
        busier = [m for m in unranked
                  if (load := _busiest(m)) is None or load >= top.assessed.observed_peak_throughput]
        if not busier:      # the members not ranked carried less load than the one named
            return (f"{top.host} {limits}: {figures}, the least spare of the {plural(ranked, 'ranked member')}; "
                    f"the members not ranked carried less load. Not ranked (verdict unusable or no capacity): {why}.")
        maybe = ("the set's limit may be a member that could not be ranked" if self.replica_sets <= 1 else
                 "a server that could not be ranked may be closer to its capacity")
        return (f"{top.host} is the closest to its capacity of the {plural(ranked, 'ranked member')}: {figures}; "
                f"{maybe}. Not ranked (verdict unusable or no capacity): {why}.")

    @property
    def table(self) -> pd.DataFrame:
        """The combined members table, one row per member (``Member.row``)."""
        return pd.DataFrame([m.row() for m in self.members])

    def write(self, out_dir) -> dict:
        """``members/<host_port>/samples.csv`` and ``curve.csv`` per member; ``samples.csv`` and ``curve.csv`` of
        every member (a ``member`` column first); ``members.csv`` (one row per member)."""
        out = Path(out_dir)
        paths: dict = {"members": {}}
        observed = [(m, m.observation) for m in self.members if m.observation is not None]
        for member, observation in observed:
            paths["members"][member.host] = observation.write(out / "members" / folder_name(member.host))
        combined = {}
        for name in ("samples", "curve"):
            frames = [getattr(observation, name).assign(member=m.host) for m, observation in observed]
            if frames:
                both = pd.concat(frames, ignore_index=True)
                combined[name] = both[["member", *[c for c in both.columns if c != "member"]]]
        written = write_tables(out, {**combined, "members": self.table}, self.source,
                               members=[folder_name(m.host) for m, _ in observed])
        paths.update({name: path for name, path in written.items() if name != "members"})
        paths["table"] = written["members"]
        return paths

    @property
    def evidence(self):
        """The answer's evidence: the limiting member's, or unusable when no member can be ranked."""
        from capmodel.models.evidence import Evidence, Reason

        top = self.limiting
        if top is not None:
            return top.assessed.evidence
        return Evidence.of(Reason("no_member_ranked", "unusable", "no member has a usable capacity verdict"))

    def summary(self) -> str:
        """What ``capmodel observe`` prints of a replica set: the source, one line per member (its intervals, busiest
        load, saturation, spare fraction, runway and verdict; why it has no capacity or is not ranked), the notes,
        and the answer. Each line printable (a member named with a newline stays one line)."""
        from capmodel.formatting import plural, printable
        from capmodel.observe.runway_words import runway_phrase

        lines = [f"source: {self.source}" + (f" (replica set {self.replica_set})" if self.replica_set else "")]
        for member in self.members:
            row = member.row()
            intervals = plural(row["intervals"], "interval")
            if member.capacity is None:
                lines.append(f"  {member.host}: {intervals}; no capacity: {member.error}")
            elif not member.usable:
                why = "; ".join(r.message for r in member.capacity.evidence.reasons if r.grade == "unusable")
                lines.append(f"  {member.host}: {intervals}; not ranked, verdict unusable: {why}")
            else:
                lines.append(f"  {member.host}: {intervals}, busiest {row['busiest_ops']:,.0f} ops/s, saturation "
                             f"{row['capacity_ops']:,.0f} ops/s, {spare_phrase(member.capacity)}"
                             f"{runway_phrase(member.capacity)}, {row['verdict']} evidence")
        lines += [f"note: {note}" for note in self.notes]
        if self.interrupted:
            lines.append("sampling was interrupted: every complete interval is kept")
        lines.append(self.describe())
        return "\n".join(printable(line) for line in lines)

    def to_json(self) -> dict:
        top = self.limiting
        return {"source": self.source, "replica_set": self.replica_set, "interrupted": self.interrupted,
                "capacity": top.assessed.to_json() if top else None, "evidence": self.evidence.to_json(),
                "members": [m.to_json() for m in self.members], "limiting_member": top.host if top else None,
                "answer": self.describe(), "notes": self.notes}


def _busiest(member: Member) -> float | None:
    """A member's busiest load (95th percentile of its intervals' ops/s), None when it was not observed."""
    if member.capacity is not None:
        return member.capacity.observed_peak_throughput
    if member.observation is None or not len(member.observation.curve):
        return None
    return float(member.observation.curve["throughput"].quantile(0.95))


def spare_phrase(capacity) -> str:
    """The spare fraction in words: "12% of its planned throughput spare (9% to 15%)", or, past the plan, "already
    3% above its planned throughput (1% to 5% above)" ("(spare -5% to 1%)" where the interval reaches the plan)."""
    from capmodel.formatting import percent, shows_width
    spare = capacity.spare_fraction
    known = shows_width(spare.low, spare.high, percent)
    bounds = f"{percent(spare.low)} to {percent(spare.high)}" if known else ""
    if spare.estimate >= 0:
        return f"{percent(spare.estimate)} of its planned throughput spare" + (f" ({bounds})" if known else "")
    return f"already {percent(-spare.estimate)} above its planned throughput" + (
        "" if not known else f" ({percent(-spare.high)} to {percent(-spare.low)} above)" if spare.high <= 0 else
        f" (spare {bounds})")


#: hosts named per reason in the answer; the rest counted (every member's row names its own reason)
NAMED_PER_REASON = 5


def _grouped_reasons(members: list[Member]) -> str:
    """'a:1: why; b:1, c:1: another reason' with the members that share a reason named together (at most
    ``NAMED_PER_REASON`` of them, then "and N more"): 29 idle members once made one sentence of 29 reasons."""
    groups: dict = {}
    for m in members:
        groups.setdefault(m.error or _unusable(m.assessed.evidence), []).append(m.host)
    parts = []
    for reason, hosts in groups.items():
        named = ", ".join(hosts[:NAMED_PER_REASON])
        more = len(hosts) - NAMED_PER_REASON
        parts.append(f"{named}{f' and {more:,} more' if more > 0 else ''}: {reason}")
    return "; ".join(parts)


def _unusable(evidence) -> str:
    return "; ".join(r.message for r in evidence.reasons if r.grade == "unusable") or "verdict unusable"


def observe_ftdc_members(paths, since=None, until=None, utilization_target: float = 0.8) -> ReplicaSetObservation:
    """Every member of a replica set from its FTDC, each with its capacity, and the member that limits the set.

    Parameters
    ----------
    paths : str, path-like or list of them
        Several ``diagnostic.data`` folders, or a parent folder with one per member. Each member is named by the host
        its FTDC metadata gives (else by its folder).
    since, until : str or datetime, optional
        The window, as for ``observe_ftdc``.
    utilization_target : float, default 0.8
        As for ``server_capacity``.

    Returns
    -------
    ReplicaSetObservation
        A member whose files cannot be read, or that gives no capacity, carries its ``error`` instead of failing the
        set.

    Raises
    ------
    InputError
        No FTDC folder is found under ``paths``.
    """
    from capmodel.observe.fleet import server_identity
    from capmodel.observe.folders import server_folders
    from capmodel.observe.observation import observe_ftdc

    folders = server_folders(paths)
    members: list[Member] = []
    sets: set[str] = set()
    alone: list[str] = []
    for folder in folders:
        # a member whose files cannot be read (damaged, empty, not readable) fails its own row, as in the fleet
        named = folder.parent.name if folder.name == "diagnostic.data" and folder.parent.name else folder.name
        identity = {"host": None, "cores": None}
        try:
            identity = server_identity(folder)
            if identity["replica_set"]:
                sets.add(identity["replica_set"])
            else:
                alone.append(identity["host"] or named)
            observation = observe_ftdc(folder, since, until)
            members.append(assess(Member(identity["host"] or named, observation, identity["cores"]),
                                  utilization_target))
        except CapmodelError as exc:
            members.append(Member(identity["host"] or named, None, identity["cores"], error=str(exc)))
        except OSError as exc:
            members.append(Member(identity["host"] or named, None, identity["cores"],
                                  error=f"{exc.filename or folder}: {exc.strerror or exc}"))
    members, notes = _namesakes(members, folders)
    notes += _apart(members)
    if len(sets) > 1:
        set_names = sorted(sets, key=_natural)
        shown = ", ".join(set_names[:10]) + (f" and {len(set_names) - 10:,} more" if len(set_names) > 10 else "")
        notes.insert(0, f"the folders belong to {len(sets):,} replica sets ({shown})")
    if sets and alone:   # a standalone's FTDC among a set's members: not one of them, and no set's limit
        notes.append(f"{', '.join(alone[:5])}{f' and {len(alone) - 5:,} more' if len(alone) > 5 else ''} "
                     f"name{'s' if len(alone) == 1 else ''} no replica set in {'its' if len(alone) == 1 else 'their'} "
                     f"FTDC (a standalone server), beside members of {', '.join(sorted(sets, key=_natural)[:10])}")
    return ReplicaSetObservation(next(iter(sets)) if len(sets) == 1 and not alone else None, members,
                                 "FTDC " + ", ".join(str(f) for f in folders), notes=notes,
                                 replica_sets=max(len(sets) + (len(alone) if sets else 0), 1))


def _namesakes(members: list[Member], folders: list) -> tuple[list[Member], list[str]]:
    """The members with each copy of a member's FTDC counted once (the same host, window and figures: a copied
    folder) and namesakes told apart by their folder (containers that all call themselves ``mongo:27017``, metadata
    naming no host), with a note saying which; the folders stand in the same order as ``members``."""
    kept: list[tuple[Member, Path]] = []
    notes: list[str] = []
    seen: dict[tuple, Path] = {}
    for member, folder in zip(members, folders):
        observation = member.observation
        key = (member.host, observation.start, observation.end, len(observation.samples),
               member.capacity.observed_peak_throughput if member.capacity is not None else None) \
            if observation is not None else None
        if key is not None and key in seen:
            notes.append(f"{folder} holds a copy of {seen[key]}'s FTDC (the same member and window): counted once")
            continue
        if key is not None:
            seen[key] = folder
        kept.append((member, folder))
    hosts = [m.host for m, _ in kept]
    for host in dict.fromkeys(h for h in hosts if hosts.count(h) > 1):
        notes.append(f"{hosts.count(host):,} folders name the member {host} (different FTDC): each is named by its "
                     "folder too")
    for member, folder in kept:
        if hosts.count(member.host) > 1:
            member.host = f"{member.host} ({folder})"
    return [m for m, _ in kept], notes


def _apart(members: list[Member]) -> list[str]:
    """A note when the members' windows do not all overlap: their loads were measured at different times, so the
    limit compares one member's hours with another's."""
    windows = [(m.observation.start, m.observation.end, m.host) for m in members
               if m.observation is not None and m.observation.start is not None]
    if len(windows) < 2:
        return []
    latest = max(windows, key=lambda w: w[0])
    earliest = min(windows, key=lambda w: w[1])
    if latest[0] <= earliest[1]:
        return []

    def span(window) -> str:
        return f"{window[0]:%Y-%m-%d %H:%M} to {window[1]:%Y-%m-%d %H:%M} UTC"

    return [f"the members' windows do not overlap ({earliest[2]}: {span(earliest)}; {latest[2]}: {span(latest)}): "
            "their loads were measured at different times, so the member named compares hours that differ"]


def _natural(name: str) -> list:
    """A sort key that reads the numbers in a name as numbers: rs2 before rs10."""
    import re

    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]
