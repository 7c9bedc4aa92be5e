"""A sweep in plain words: where its clients ran and which steps the client, not the server, may have limited."""
from __future__ import annotations

from capmodel.formatting import plural


def describe_sweep(run: dict, steps: list[dict]) -> str:
    """The sentences a report prints about a sweep (``run``: run.json's content, ``steps``: steps.jsonl's)."""
    ok = [s for s in steps if s.get("status") == "ok"]
    failed = [s for s in steps if s.get("status") != "ok"]
    clients = run.get("clients", "one process")
    if clients == "1 process (this one)":     # as older run.json files say it, true only in the bench's own log
        clients = "1 process (the bench's own)"
    parts = [f"The clients ran as {clients}; {plural(len(ok), 'step')} measured"
             + (f", {len(failed)} failed ({failed[0].get('failure')})" if failed else "") + "."]
    bound = [s for s in ok if s.get("client_bound")]
    if bound:
        levels = ", ".join(str(s["concurrency"]) for s in bound)
        parts.append(f"{len(bound)} of {plural(len(ok), 'step')} may be limited by the client, not the server (at "
                     f"{levels} clients): {bound[-1]['client_bound_reasons'][0]}.")
    else:
        parts.append("No step shows a sign of being limited by the client.")
    if run.get("shared_host_warning"):
        parts.append("Note: " + run["shared_host_warning"] + ".")
    return " ".join(parts)
