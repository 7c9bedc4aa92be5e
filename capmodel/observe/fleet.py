"""A fleet of servers' FTDC, analysed as Dask tasks: which member of which cluster runs out first, and when.

``fleet_table(folders, ...)`` finds the servers (``server_folders``: each folder a ``diagnostic.data``, or a parent
of many), sends one task per server to a Dask cluster (an embedded ``LocalCluster`` of single-threaded worker
processes, started and stopped here, no dashboard; or an existing scheduler at ``scheduler``), and gathers one row
per server. Each task decodes its server's FTDC on the worker, works out its capacity there
(``capmodel.observe.capacity.server_capacity`` on the server's own CPU per operation, with the cores its hostInfo
reports) and returns only the summary row: the decoded samples never leave the worker. A server whose files cannot
be read fails its own row (``error`` says why), never the fleet.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from capmodel.errors import CapmodelError
from capmodel.extras import require
from capmodel.formatting import is_missing, markdown_literal, percent, plural, printable
from capmodel.models.evidence import Evidence, Reason
from capmodel.observe import ftdc
from capmodel.observe.fleet_cluster import dask_client
from capmodel.observe.folders import server_folders
from capmodel.observe.ftdc_samples import metadata_identity
from capmodel.observe.runway_words import HORIZON_MONTHS, HORIZON_WORDS, months_words, runway_status, shown_runway

if TYPE_CHECKING:
    import pandas as pd

FLEET_COLUMNS = ["cluster", "member", "window_start", "window_end", "hours", "busiest_ops", "capacity_ops",
           "capacity_low", "capacity_high", "method", "cpu_ms_per_op", "cores", "spare_fraction", "spare_low",
           "spare_high", "verdict", "runway_months", "runway_low", "runway_high", "runway_status", "reasons",
           "evidence", "error", "folder", "duplicate_of", "notes"]


def server_identity(folder) -> dict:
    """``host``, ``replica_set`` and ``cores`` of the server whose FTDC is in ``folder``: from the metadata document
    of its first file (hostInfo: the host name and cores; getCmdLineOpts: the port and the replica set), the host
    replaced by the name the replica set knows the member by (serverStatus ``repl.me`` in the first chunk's reference
    document) when there is one; None where the files do not say."""
    identity = metadata_identity(folder)
    files = ftdc.ftdc_files(folder)
    last = None                                   # the newest chunk: the replica set is configured by then
    try:
        for _, document in ftdc.iter_documents(files[-1]):
            if document.get("type") == ftdc.METRIC_CHUNK:
                last = document.get("data")
    except ftdc.TruncatedTail:                    # a cut newest file: its complete chunks serve (observe_ftdc notes it)
        pass
    repl = (_reference_document(last).get("serverStatus") or {}).get("repl") or {} if last else {}
    if isinstance(repl.get("me"), str) and repl["me"].strip():
        identity["host"] = repl["me"]
    if isinstance(repl.get("setName"), str) and repl["setName"].strip():
        identity["replica_set"] = repl["setName"]
    return identity


def _reference_document(data) -> dict:
    """The reference document (first sample) of a metric chunk's ``data``, or {} when it cannot be read."""
    import zlib

    import bson

    try:
        stream = zlib.decompressobj()
        raw = stream.decompress(bytes(data)[4:], 1 << 16)
        size = int.from_bytes(raw[:4], "little")
        if size > ftdc.MAX_UNCOMPRESSED:
            return {}
        while len(raw) < size and stream.unconsumed_tail:
            raw += stream.decompress(stream.unconsumed_tail, size - len(raw))
        return bson.decode(raw[:size])
    except Exception:  # noqa: BLE001 - the chunk's own decoding reports a damaged chunk with its offset
        return {}


def analyse_server(folder, monthly_growth: float | None = None, utilization_target: float = 0.8) -> dict:
    """One server's fleet row: identity, window, capacity and verdict, or ``error``. It runs on a Dask worker.

    Parameters
    ----------
    folder : str or path-like
        The server's ``diagnostic.data`` folder.
    monthly_growth : float, optional
        The load's growth a month, for the runway.
    utilization_target : float, default 0.8
        As for ``server_capacity``.

    Returns
    -------
    dict
        The row, keyed by ``capmodel.observe.fleet.FLEET_COLUMNS``. Nothing is raised: files that cannot be read give
        a row with ``error``; too few samples or busy intervals give a row with verdict ``unusable``.
    """
    from capmodel.observe.capacity import TooFewIntervals, no_capacity_evidence
    from capmodel.observe.ftdc_samples import TooFewSamples
    from capmodel.observe.observation import observe_ftdc

    row: dict = {column: None for column in FLEET_COLUMNS}
    row.update(folder=str(folder), runway_status=runway_status(None, monthly_growth))   # until a capacity says more
    try:
        identity = server_identity(folder)
        row.update(cluster=identity["replica_set"], member=identity["host"])
        observation = observe_ftdc(folder)
        row.update(window_start=observation.start.isoformat(), window_end=observation.end.isoformat(),
                   hours=(observation.end - observation.start).total_seconds() / 3600.0)
        row["notes"] = "; ".join(observation.notes) or None   # a cut newest file: what was dropped, where
        capacity = capacity_of(observation.samples, identity["cores"], monthly_growth, utilization_target)
    except (TooFewIntervals, TooFewSamples) as exc:   # read, but too little: not ranked (as observe says), not failed
        evidence = no_capacity_evidence(exc)
        row.update(verdict=evidence.grade, reasons=[r.code for r in evidence.reasons], evidence=evidence.to_json())
        return row
    except CapmodelError as exc:
        row["error"] = str(exc)
        return row
    except OSError as exc:              # an unreadable file: the system's words and the file, as observe says them
        row["error"] = f"{exc.filename or folder}: {exc.strerror or exc}"[:400]
        return row
    except (MemoryError, ValueError) as exc:        # undecodable files: this row fails, the fleet goes on
        row["error"] = f"{folder}: {type(exc).__name__}: {exc}"[:400]
        return row
    row.update(capacity_summary(capacity))
    return row


def capacity_of(samples: pd.DataFrame, cores, monthly_growth, utilization_target):
    """The one call of ``server_capacity`` for a fleet member (cores as its hostInfo reports them)."""
    from capmodel.observe.capacity import server_capacity

    if cores is not None:
        samples = samples.assign(cores=cores)
    return server_capacity(samples, utilization_target=utilization_target, monthly_growth=monthly_growth)


def capacity_summary(capacity) -> dict:
    """The fleet-row figures of a ``ServerCapacity``."""
    saturation, spare, runway = capacity.saturation_throughput, capacity.spare_fraction, capacity.runway_months
    return {
        "busiest_ops": capacity.observed_peak_throughput, "capacity_ops": saturation.estimate,
        "capacity_low": saturation.low, "capacity_high": saturation.high, "method": capacity.method,
        "cpu_ms_per_op": capacity.service_demand_ms.estimate, "cores": capacity.cores,
        "spare_fraction": spare.estimate, "spare_low": spare.low, "spare_high": spare.high,
        "verdict": capacity.evidence.grade, "reasons": [r.code for r in capacity.evidence.reasons],
        "evidence": capacity.evidence.to_json(),
        "runway_months": runway.estimate if runway is not None else None,
        "runway_low": runway.low if runway is not None else None,
        "runway_high": runway.high if runway is not None else None,
        "runway_status": runway_status(None if runway is None else runway.estimate, capacity.monthly_growth),
    }


def urgency_order(rows: pd.DataFrame) -> pd.DataFrame:
    """Most urgent first: usable verdicts by months of runway, then by spare fraction; then the servers whose verdict
    is unusable (they cannot be ranked); then the servers that failed."""
    import pandas as pd

    if not len(rows):
        return rows
    failed = rows["error"].notna()
    unusable = ~failed & (rows["verdict"] == "unusable")
    tier = pd.Series(0, index=rows.index).mask(unusable, 1).mask(failed, 2)
    runway = pd.to_numeric(rows["runway_months"], errors="coerce").fillna(math.inf)
    spare = pd.to_numeric(rows["spare_fraction"], errors="coerce").fillna(math.inf)
    key = pd.DataFrame({"tier": tier, "runway": runway, "spare": spare, "member": rows["member"].fillna("")})
    order = key.sort_values(["tier", "runway", "spare", "member"], kind="stable").index
    return rows.loc[order].reset_index(drop=True)


@dataclass
class Fleet:
    """The fleet table, as ``fleet_table`` returns it: one row per server, most urgent first.

    ``describe()`` names the most urgent server in a sentence, ``evidence`` is its verdict, ``reading_table()`` and
    ``reasons_text()`` give the table and each row's reasons for people, and ``to_json()`` the whole.

    Attributes
    ----------
    rows : pandas.DataFrame
        One row per server folder: cluster, member, window, busiest load, capacity with its interval, CPU per
        operation, cores, spare fraction, verdict, runway, ``error`` (why the files could not be read) and
        ``duplicate_of`` (a copy of another folder's server, counted once).
    workers : str
        Where the tasks ran, in words.
    monthly_growth : float or None
        The growth rate the runways assume.
    """

    rows: pd.DataFrame
    workers: str
    monthly_growth: float | None

    @property
    def copies(self) -> int:
        """Folders holding a copy of another folder's server (counted once, not ranked)."""
        return int(self.rows["duplicate_of"].notna().sum()) if "duplicate_of" in self.rows else 0

    @property
    def failed(self) -> int:
        return int(self.rows["error"].notna().sum()) - self.copies

    def _usable(self) -> pd.DataFrame:
        return self.rows[self.rows["error"].isna() & (self.rows["verdict"] != "unusable")]

    @property
    def evidence(self):
        """The evidence of the answer (an ``Evidence``): the most urgent ranked server's, or unusable when none is
        ranked. (Each row's ``evidence`` is its JSON, as the workers send it.)"""
        usable = self._usable()
        if len(usable):
            return Evidence.from_json(usable.iloc[0]["evidence"])
        return Evidence.of(Reason("no_server_ranked", "unusable", "no server has a usable capacity verdict"))

    def plain_answer(self, source: str | None = None) -> str:
        """The answer under the decision, in short plain sentences (``headline.answer_problems``): what was read,
        the most urgent server's load against its capacity and the grade of that figure; ``describe`` says it with
        its method, in one sentence, below the headline."""
        servers = plural(len(self.rows) - self.copies, "server")
        text = f"Read from {source}: {servers}." if source else f"Read: {servers}."
        if self.failed:
            text += f" {plural(self.failed, 'folder')} could not be read."
        usable = self._usable()
        unranked = int((self.rows["error"].isna() & (self.rows["verdict"] == "unusable")).sum())
        if unranked:
            text += f" {plural(unranked, 'server')} could not be ranked: the data support no capacity."
        if not len(usable):
            return text
        top = usable.iloc[0]
        return (f"{text} The first to run out is busiest at {top['busiest_ops']:,.0f} ops/s, of a capacity of "
                f"{top['capacity_ops']:,.0f} ops/s by the {top['method']}; that figure's evidence is "
                f"{top['verdict']}. The fleet table ranks every server.")

    def describe(self, source: str | None = None) -> str:
        """The most urgent server in one sentence (or why none can be named); ``source`` names where the FTDC came
        from when it should be said (e.g. a generated fleet)."""
        usable = self._usable()
        extras = []
        if self.copies:
            extras.append(f"{plural(self.copies, 'more folder')} held a copy of one, counted once")
        if self.failed:
            extras.append(f"{self.failed:,} unreadable")
        unranked = int((self.rows["error"].isna() & (self.rows["verdict"] == "unusable")).sum())
        if unranked:
            extras.append(f"{unranked:,} not ranked (verdict unusable)")
        counts = (f"From {source}: of " if source else "Of ") + plural(len(self.rows) - self.copies, "server")
        counts += f" ({'; '.join(extras)})" if extras else ""
        if not len(usable):
            return f"{counts}, none has a usable capacity verdict, so none can be ranked."
        top = usable.iloc[0]
        where = f"{top['member']}" + (f" of {top['cluster']}" if isinstance(top["cluster"], str) else "")
        spare, busiest, capacity = top["spare_fraction"], top["busiest_ops"], top["capacity_ops"]
        load = (f"saturated: its busiest load, {busiest:,.0f} ops/s, is at or past its capacity of {capacity:,.0f} "
                f"ops/s ({top['method']})" if busiest >= capacity else
                f"busiest at {busiest:,.0f} ops/s of a capacity of {capacity:,.0f} ops/s ({top['method']})")
        runway = top["runway_months"]
        past = spare < 0 or (runway is not None and runway == 0)
        spare_text = (f"past its utilization target now, {percent(-spare)} above its planned throughput" if spare < 0
                      else "past its utilization target now" if past
                      else f"{percent(spare)} of its planned throughput spare")   # as the fleet table shows it
        text = f"{counts}, the most urgent is {where}: {load}; {spare_text} ({top['verdict']} evidence"
        cut = isinstance(top.get("notes"), str) and "truncated FTDC file" in top["notes"]
        text += ", from the complete part of its cut files)" if cut else ")"
        if (not past and runway is not None and math.isfinite(runway) and runway > 0
                and self.monthly_growth is not None):
            text += (f"; at {percent(self.monthly_growth)} growth a month it reaches its target in "
                     + (HORIZON_WORDS if runway > HORIZON_MONTHS else f"{runway:,.1f} months"))
        return text + "."


    def decision(self) -> str:
        """The decision in at most two short sentences, no brackets (``headline.decision_problems``): which server
        runs out first and when; the figures behind it, its verdict and where the data came from follow in
        ``describe``."""
        usable = self._usable()
        if not len(usable):
            return "**No server can be ranked**: none has a usable capacity verdict."
        top = usable.iloc[0]
        where = f"**{top['member']}**" + (f" of {top['cluster']}" if isinstance(top["cluster"], str) else "")
        spare, runway = top["spare_fraction"], top["runway_months"]
        if spare < 0 or (runway is not None and runway == 0):
            over = f": its busiest load is {percent(-spare)} above its planned throughput" if spare < 0 else ""
            return f"{where} runs out first and is past its utilization target now{over}."
        if runway is None or not math.isfinite(runway) or self.monthly_growth is None:
            return f"{where} runs out first, with {percent(spare)} of its planned throughput spare."
        when = HORIZON_WORDS if runway > HORIZON_MONTHS else f"{runway:,.1f} months"
        return (f"{where} runs out first: at {percent(self.monthly_growth)} growth a month it reaches its utilization "
                f"target in {when}.")

    def reading_table(self):
        """The fleet table for people (a ``capmodel.formatting.Table``): units in the headers, the spare fraction
        with its interval in one cell, "failed" as the verdict of a server whose files could not be read (the
        reasons behind each verdict: ``reasons_text``)."""
        from capmodel.formatting import Column, table

        def spare(row) -> float | None:
            return row["spare_fraction"] if isinstance(row["verdict"], str) else None

        def runway(row):   # 0 and beyond the horizon in words (PAST_TARGET_WORDS, HORIZON_WORDS), not "0.0"
            return shown_runway(row["runway_months"])

        frame = self.rows.astype(object).where(self.rows.notna(), None)
        # a server whose files could not be read has no name from them: its folder names it
        members = [r["folder"] if not isinstance(r["member"], str) and isinstance(r["error"], str) else r["member"]
                   for _, r in frame.iterrows()]
        shown = frame.assign(member=members, spare=[spare(r) for _, r in frame.iterrows()],
                             runway_months=[runway(r) for _, r in frame.iterrows()],
                             verdict=[("copy" if isinstance(r.get("duplicate_of"), str) else "failed")
                                      if isinstance(r["error"], str) else r["verdict"] for _, r in frame.iterrows()])
        methods = {m for m in shown["method"] if isinstance(m, str)}
        columns = {
            "cluster": Column("cluster", "text"), "member": Column("member", "text"),
            "hours": Column("window (h)", decimals=1), "busiest_ops": Column("busiest (ops/s)", "int"),
            "capacity_ops": Column("capacity (ops/s)", "int"), "method": Column("method", "text"),
            "cpu_ms_per_op": Column("CPU per operation (ms)"), "cores": Column("cores", "int"),
            "spare": Column("spare of the planned throughput", "percent", digits=2,
                            interval=("spare_low", "spare_high")),
            "verdict": Column("verdict", "text"),
            "runway_months": Column("runway (months)", decimals=1, infinite="never"),
        }
        notes = ["—: not known for this server (no growth rate given, or its files could not be read)"]
        if len(methods) == 1:          # one method for every server: said once, below, not in a column of repeats
            del columns["method"]
            notes.append(f"every capacity by the {methods.pop()}")
        return table(shown, columns, footnotes=notes, csv_name="fleet.csv")

    def reasons_text(self) -> str:
        """One markdown line per server, in the table's order: its verdict and the reasons behind it in words (a
        failed server: why its files could not be read)."""
        lines = []
        for _, row in self.rows.iterrows():
            name = row["member"] if isinstance(row["member"], str) else str(row["folder"])
            name = f"{row['cluster']} · {name}" if isinstance(row["cluster"], str) else name
            name = markdown_literal(name)           # names come from folders and from the servers' own metadata
            if isinstance(row["error"], str):
                lines.append(f"- **{name}**: failed: {markdown_literal(row['error'])}")
                continue
            reasons = row["evidence"].get("reasons", []) if isinstance(row["evidence"], dict) else []
            said = "; ".join(r.get("message", "") for r in reasons) or "nothing in the data speaks against it"
            if isinstance(row.get("notes"), str):      # what its files lacked (a cut newest file): said beside it
                said += f"; read from the complete part of its files: {row['notes']}"
            lines.append(f"- **{name}** ({row['verdict']}): {markdown_literal(said)}")
        return "\n".join(lines)

    def summary(self) -> str:
        """Everything ``capmodel fleet`` prints: the answer, then one line per server (its hours, busiest load,
        capacity, spare fraction, verdict and runway; why a server failed, was not counted or not ranked), and
        where it was computed."""
        shown = self.reading_table()    # the spare cell as the report writes it (no interval where it has no width)
        spare_at = list(shown.columns).index("spare")
        spares = [cells[spare_at] for cells in shown.cells()]
        lines = [self.describe(), "",
                 f"{'cluster':<10} {'member':<28} {'hours':>6} {'busiest':>10} {'capacity':>10} {'spare':>24} "
                 f"{'verdict':<9} {'runway (months)':>19}"]
        for (_, row), spare in zip(self.rows.iterrows(), spares):
            name = (row["member"] if isinstance(row["member"], str) else row["folder"])[-28:]
            cluster = row["cluster"] if isinstance(row["cluster"], str) else "-"
            if isinstance(row["error"], str):
                said = "not counted" if isinstance(row.get("duplicate_of"), str) else "failed"
                lines.append(f"{cluster:<10} {name:<28} {said}: {row['error']}")
                continue
            if row["verdict"] == "unusable":
                reasons = ", ".join(r.get("message", "") for r in row["evidence"].get("reasons", [])
                                    if r.get("grade") == "unusable")
                lines.append(f"{cluster:<10} {name:<28} not ranked, verdict unusable: {reasons}")
                continue
            runway = row["runway_months"]
            runway_text = "-" if runway is None or math.isnan(runway) else months_words(runway)
            hours, busiest, capacity = (_cell(row[k], f) for k, f in (("hours", ".1f"), ("busiest_ops", ",.0f"),
                                                                       ("capacity_ops", ",.0f")))
            lines.append(f"{cluster:<10} {name:<28} {hours:>6} {busiest:>10} {capacity:>10} {spare:>24} "
                         f"{row['verdict']:<9} {runway_text:>19}")
            if isinstance(row.get("notes"), str):
                lines.append(f"{'':<10} note: {row['notes']}")
        methods = ", ".join(sorted(set(self.rows["method"].dropna()))) or "no method"
        lines += ["", f"busiest and capacity in ops/s; capacity by {methods}; computed on {self.workers}"]
        return "\n".join(printable(line) for line in lines)    # a folder named with a newline: still one row

    def to_json(self) -> dict:
        from capmodel.jsonable import to_jsonable

        return {"servers": len(self.rows) - self.copies, "failed": self.failed, "copies": self.copies,
                "workers": self.workers, "monthly_growth": self.monthly_growth, "answer": self.describe(),
                "rows": to_jsonable(self.rows)}


def _cell(value, spec: str) -> str:
    """A figure of a row in the text table, "-" where the row has none."""
    return "-" if is_missing(value) else format(value, spec)


def fleet_table(paths, monthly_growth: float | None = None, utilization_target: float = 0.8,
                scheduler: str | None = None, workers: int = 2) -> Fleet:
    """Analyse every server's FTDC under ``paths`` as Dask tasks: which member of which cluster runs out first.

    Each task decodes its server's FTDC on the worker, works out its capacity there (``server_capacity`` with the
    cores its ``hostInfo`` reports) and returns only the summary row. A server whose files cannot be read fails its own
    row, never the fleet.

    Parameters
    ----------
    paths : str, path-like or list of them
        ``diagnostic.data`` folders, or folders holding them.
    monthly_growth : float, optional
        The load's growth a month (0.1 for 10 %), for each server's runway.
    utilization_target : float, default 0.8
        As for ``server_capacity``.
    scheduler : str, optional
        The address of an existing Dask scheduler; default an embedded local cluster, started and stopped here.
    workers : int, default 2
        The local cluster's single-threaded worker processes (1 to 4 per CPU core).

    Returns
    -------
    Fleet

    Raises
    ------
    InputError
        No FTDC folder is found, or ``workers`` is out of range.
    CapmodelError
        Dask is not installed, or the scheduler cannot be reached or has no workers.
    """
    require("observe", "fleet_table")
    folders = server_folders(paths)
    with dask_client(scheduler, workers) as (client, described):
        table = analyse_on(client, folders, monthly_growth, utilization_target)
    return Fleet(table, described, monthly_growth)


def analyse_on(client, folders, monthly_growth: float | None = None, utilization_target: float = 0.8
               ) -> pd.DataFrame:
    """The fleet rows of ``folders`` (one Dask task each on ``client``'s workers), most urgent first. Task keys
    carry a token of this run, so that two fleets on one scheduler never share a result."""
    import secrets

    run = secrets.token_hex(4)
    futures = client.map(analyse_server, [str(f) for f in folders], monthly_growth=monthly_growth,
                         utilization_target=utilization_target, pure=False,
                         key=[f"capmodel-fleet-{run}-{i}" for i in range(len(folders))])
    rows = []
    for folder, future in zip(folders, futures):
        try:
            rows.append(future.result())
        except Exception as exc:  # noqa: BLE001 - a worker lost while decoding: that row fails
            row: dict = {column: None for column in FLEET_COLUMNS}
            row.update(folder=str(folder), runway_status=runway_status(None, monthly_growth),
                       error=f"{folder}: the Dask task failed: {type(exc).__name__}: {exc}"[:400])
            rows.append(row)
    import pandas as pd

    return urgency_order(mark_copies(pd.DataFrame(rows, columns=FLEET_COLUMNS)))


def mark_copies(rows):
    """The rows with every copy of a server counted once: a row whose host, replica set, window and measured figures
    (busiest load, CPU per operation: the same FTDC decodes to the same figures) are those of an earlier row (the same
    FTDC given twice, e.g. a copied folder) gets ``duplicate_of`` (the first row's folder) and an ``error`` saying so,
    so that it is neither ranked nor counted as a server. Two servers that only share a name and a window (containers
    all called ``mongo:27017``) are both kept."""
    rows = rows.copy()
    seen: dict = {}
    for index, row in rows.iterrows():
        if isinstance(row["error"], str) or not isinstance(row["member"], str):
            continue
        key = (row["cluster"], row["member"], row["window_start"], row["window_end"], row["busiest_ops"],
               row["cpu_ms_per_op"])
        if key in seen:
            rows.at[index, "duplicate_of"] = seen[key]
            rows.at[index, "error"] = (f"the same server and window as {seen[key]} (a copy of its FTDC): "
                                       "counted once")
        else:
            namesake = next((folder for other, folder in seen.items() if other[:2] == key[:2]), None)
            if namesake is not None:   # told apart by the folder, which the text table does not show
                said = f"another server ({namesake}) reports the same name: this one is {row['folder']}"
                rows.at[index, "notes"] = "; ".join(n for n in (row["notes"], said) if isinstance(n, str))
            seen[key] = row["folder"]
    return rows
