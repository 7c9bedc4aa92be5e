"""What a step is worth: failed or ok, client-bound or not, and whether its clients were really all in flight.

A step **fails** when a worker or client process failed, workers were still stuck on the server after it, nothing
completed, the server became unreachable (then the step may have ended early), errors exceeded the threshold, or no
operation completed for a long stretch of the window (``STALL_MIN_S`` or ``STALL_FRACTION`` of it, whichever is
longer): the server stopped answering, even if what it served before that looked fast. A step during which the
replica set **elected a new primary** (its primary or election term differs between the step's first and last
samples) says so in its record (``election``: primaries and terms, operations failed, attempts the driver retried,
the longest pause) and always fails: its throughput and latencies mix two servers and a failover, even when the
driver hid the failover (an election handoff on a planned step-down can elect the new primary before any operation
fails or pauses for long).

A step is **client-bound** when the client, not the server, may have set its pace:
- its operation rate reached ``CEILING_FRACTION`` of the client's ``ping`` ceiling measured before the sweep;
- a client process used ``CPU_FRACTION`` of one core or more (the GIL lets a Python process run about one core of
  Python code);
- a client host's CPUs were ``CPU_FRACTION`` busy or more (all cores, whatever used them; when the server runs on
  that host too, client and server compete for the same CPUs and the step cannot tell which one limited it);
- Little's law says the clients were not all in flight: in a closed loop without think time each of N clients is
  always inside an operation, so throughput x mean latency should be N; under ``LITTLE_FRACTION`` x N the clients
  spent their time elsewhere (waiting for the GIL, building requests), or operations last so long against the
  window that the window saw too few of them complete (a longer ``--duration`` tells which).
"""
from __future__ import annotations

from capmodel.bench.client.runner import UNREACHABLE
from capmodel.formatting import plural

CEILING_FRACTION = 0.8
CPU_FRACTION = 0.85
LITTLE_FRACTION = 0.8
STALL_MIN_S = 2.0
STALL_FRACTION = 0.25
LATE_START_S = 0.25  # a worker that started its warm-up later than this missed the common start


def client_bound_reasons(result, ceiling: float | None) -> list[str]:
    """Why the client may have set the step's pace (empty: no sign of it); ``result``: a merged StepResult."""
    reasons = []
    if ceiling and result.ops_per_s >= CEILING_FRACTION * ceiling:
        reasons.append(f"{result.ops_per_s:,.0f} ops/s is >= {CEILING_FRACTION:.0%} of the client ceiling "
                       f"{ceiling:,.0f}")
    busy = [w for w in result.workers if w["cpu_cores"] >= CPU_FRACTION]
    if busy:
        worst = max(busy, key=lambda w: w["cpu_cores"])
        processes = plural(len(result.workers), "client process", "client processes")
        reasons.append(f"{len(busy)} of {processes} used >= {CPU_FRACTION} of a core "
                       f"(the GIL; {worst['address']} on {worst['host']}: {worst['cpu_cores']:.2f}): more client "
                       "processes or hosts would push harder")
    for host, rows in hosts(result.workers).items():
        if rows["host_cpu"] >= CPU_FRACTION:
            shared = " shared with the server under test" if rows["server_on_host"] else ""
            reasons.append(f"client host {host}: its {plural(rows['host_cores'], 'CPU')}{shared} were "
                           f"{rows['host_cpu']:.0%} busy")
    little = effective_concurrency(result)
    if little is not None and little["ratio"] < LITTLE_FRACTION:
        reasons.append(f"Little's law: throughput x mean latency = {little['effective_concurrency']:.1f} of "
                       f"{result.concurrency} clients in flight on average (< {LITTLE_FRACTION:.0%}): the clients "
                       "spent their time outside operations, or operations outlast the window")
    return reasons


def hosts(workers: list[dict]) -> dict[str, dict]:
    """Per client host: its CPU use (the mean of its workers' readings), cores, workers and clients."""
    out: dict[str, dict] = {}
    for w in workers:
        row = out.setdefault(w["host"], {"workers": 0, "clients": 0, "host_cpu_sum": 0.0, "host_cores": w["host_cores"],
                                         "server_on_host": False, "cpu_cores": 0.0})
        row["workers"] += 1
        row["clients"] += w["clients"]
        row["host_cpu_sum"] += w["host_cpu"]
        row["cpu_cores"] += w["cpu_cores"]
        row["server_on_host"] = row["server_on_host"] or bool(w.get("server_on_host"))
    for row in out.values():
        row["host_cpu"] = row.pop("host_cpu_sum") / row["workers"]
    return out


def effective_concurrency(result) -> dict | None:
    """Closed loop: the effective concurrency X x R and its ratio to the clients (None for the open loop)."""
    if result.mode != "closed" or result.operations == 0:
        return None
    mean_ms = result.latency.get("all", {}).get("mean_ms")
    if mean_ms is None or mean_ms != mean_ms:
        return None
    effective = result.ops_per_s * mean_ms / 1000.0
    return {"effective_concurrency": effective, "ratio": effective / result.concurrency}


def failure(result, error_threshold: float, samples: dict) -> str | None:
    """Why the step failed, or None when it is a measurement (``samples``: redacted error texts by kind)."""
    attempts = result.operations + result.error_count
    if result.runner_failures:
        return (f"{plural(result.runner_failures, 'worker')} of the runner failed"
                + first_error({"RunnerFailure": 1}, samples))
    if result.ended_early:
        return result.ended_early + first_error(result.errors, samples)
    if result.stuck_workers:
        return f"{plural(result.stuck_workers, 'worker')} still waiting on the server after the step"
    if result.operations == 0:
        return "no operation completed" + first_error(result.errors, samples)
    if any(kind in UNREACHABLE for kind in result.errors):
        lost = {k: v for k, v in result.errors.items() if k in UNREACHABLE}
        return "the server became unreachable during the step" + first_error(lost, samples)
    if result.error_count > error_threshold * attempts:
        return f"{result.error_count} of {attempts} operations failed" + first_error(result.errors, samples)
    stall = max(STALL_MIN_S, STALL_FRACTION * result.seconds)
    if result.mode == "closed" and result.longest_silence_s >= stall:
        return (f"no operation completed for {result.longest_silence_s:.1f} s of the {result.seconds:.1f} s window: "
                f"the server stopped answering ({plural(result.in_flight_at_end, 'operation')} in flight at its end)"
                + first_error(result.errors, samples))
    return None


def election(before: dict | None, after: dict | None, result) -> dict | None:
    """The step's ``election`` record from two ``telemetry.replica_state`` samples (None: not a replica set, or the
    set could not be sampled before the step)."""
    if before is None:
        return None
    seen = after is None or before["primary"] != after["primary"] or before["term"] != after["term"]
    retried = None
    if result.failed_attempts is not None:
        retried = max(result.failed_attempts - result.error_count, 0)
    return {"seen": seen, "primary_before": before["primary"], "primary_after": after and after["primary"],
            "term_before": before["term"], "term_after": after and after["term"],
            "operations_failed": result.error_count, "attempts_retried": retried,
            "longest_pause_s": result.longest_silence_s}


def election_failure(record: dict | None) -> str | None:
    """Why a step across an election is not a measurement, or None."""
    if not record or not record["seen"]:
        return None
    after = (f"{record['primary_after']}, term {record['term_after']}" if record["primary_after"]
             else "no primary at the step's end")
    parts = [f"{plural(record['operations_failed'], 'operation')} failed"]
    if record["attempts_retried"] is not None:
        parts.append(f"{plural(record['attempts_retried'], 'attempt')} retried by the driver")
    parts.append(f"operations paused up to {record['longest_pause_s']:.1f} s")
    return (f"the replica set elected a new primary during the step ({record['primary_before']}, term "
            f"{record['term_before']} -> {after}): " + ", ".join(parts)
            + "; its throughput and latencies mix two primaries and a failover")


def first_error(errors: dict, samples: dict) -> str:
    if not errors:
        return ""
    kind = max(errors, key=lambda k: errors[k])
    return f" (mostly {kind}: {samples.get(kind, '')[:160]})"
