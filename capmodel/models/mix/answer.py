"""The mix what-if's answer (``capmodel.models.mix.production.mix_what_if`` builds it): per member the predicted
throughput, latency and CPU with their bootstrap intervals, the member that saturates first, and the sentences."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from capmodel.formatting import interval, number, percent, plural
from capmodel.jsonable import to_jsonable
from capmodel.models.evidence import Evidence
from capmodel.models.mix.spread import CPU

#: the replication operations a sync source serves, by the class opLatencies counts them in
SERVED_WORDS = {"reads": "oplog getMores", "commands": "replSetUpdatePosition reports"}


@dataclass(frozen=True)
class MixWhatIf:
    """The mix what-if over one or more members, as ``mix_what_if`` returns it.

    ``table`` and ``describe()`` give the answer; ``limiting_member`` names the member with the least room and
    ``evidence`` the verdict.

    Attributes
    ----------
    members : tuple of ServerDemands
        One per member.
    rates : dict
        ``{member: {class: ops/s asked}}``.
    predicted, low, high : pandas.DataFrame
        One row per member: the predicted per-class throughput and latency and the CPU utilization, and the ends of
        their intervals.
    level : float
        The intervals' coverage.
    reasons : tuple of Reason
        What weakens the answer beyond the members' fits (saturation, a class not observed, a mix outside the fits).
    unseen : tuple
        ``(member, class)`` pairs asked for but never observed there: no prediction for them.
    waits, waits_given
        Each member's wait for its cores per operation used, and whether it was asked for.
    outside_mix : dict
        ``{member: rows}`` where the asked mix leaves what the latency fits saw.
    writes_factor : float
        The set's writes asked over observed, which the replication work follows.
    blocks, spread : dict
        Per member the bootstrap's run length and widening, and the window-to-window spread.
    """

    members: tuple                    # mix_production.ServerDemands, one per member
    rates: dict                       # member -> {class: ops/s asked}
    predicted: pd.DataFrame           # one row per member
    low: pd.DataFrame
    high: pd.DataFrame
    level: float
    reasons: tuple = field(default=())
    unseen: tuple = ()                # (member, class) pairs asked for but never observed there
    waits: dict = field(default_factory=dict)   # member -> the server's wait for its cores per operation used (s)
    waits_given: bool = False                   # those waits were asked for (else: as observed)
    outside_mix: dict = field(default_factory=dict)   # member -> ServerDemands.outside_mix at the asked rates
    writes_factor: float = 1.0        # the set's writes asked over observed, which the replication work follows
    blocks: dict = field(default_factory=dict)   # member -> (consecutive intervals a bootstrap run, widening)
    spread: dict = field(default_factory=dict)   # member -> {"cpu" or class: (s, windows)}: mix_spread.window_spread

    @cached_property
    def limiting_member(self) -> str:
        """The member with the least room: the smallest factor of the asked load that still fits, among the members
        with a prediction (a member not observed serving a class asked of it has none), else among all."""
        fits = self.predicted["load_factor_that_fits"]
        answered = self.answered
        return str((fits.loc[answered] if answered else fits).idxmin())

    @property
    def answered(self) -> list:
        """The members with a prediction: each was observed serving every class asked of it."""
        unseen = {member for member, _ in self.unseen}
        return [m.member for m in self.members if m.member not in unseen]

    @cached_property
    def evidence(self) -> Evidence:
        """The members' fits, plus saturation where the asked load does not fit."""
        return Evidence.of(*[r for m in self.members for r in m.reasons], *self.reasons)

    @property
    def table(self) -> pd.DataFrame:
        """One row per member and class: rate asked, predicted throughput and latency with the interval."""
        rows = []
        for m in self.members:
            p, lo, hi = self.predicted.loc[m.member], self.low.loc[m.member], self.high.loc[m.member]
            for c in m.classes:
                rows.append({"member": m.member, "class": c, "observed_per_s": m.baseline[c],
                             "asked_per_s": self.rates[m.member][c], "throughput": p[f"{c}_throughput"],
                             "latency_ms": p[f"{c}_latency_ms"], "latency_ms_low": lo[f"{c}_latency_ms"],
                             "latency_ms_high": hi[f"{c}_latency_ms"], "utilization": p["utilization"]})
        return pd.DataFrame(rows)

    def to_json(self) -> dict:
        """The JSON of ``capmodel mva --observed``: per member its cores, demands (CPU per operation in ms, the
        background), predicted utilization with its interval, the load factor that fits, replication, the window
        spread and where the asked mix leaves the fitted shares, and its classes' rows; the limiting member, the
        level and the evidence."""
        members = []
        for m in self.members:
            p = self.predicted.loc[m.member]
            members.append({
                "member": m.member, "cores": m.cores, "intervals": m.intervals,
                "cpu_per_op_ms": {c: v * 1000 for c, v in m.cpu_per_op.items()},
                "background_cores": m.background_cores, "utilization": p["utilization"],
                "utilization_interval": [self.low.loc[m.member, "utilization"],
                                         self.high.loc[m.member, "utilization"]],
                "load_factor_that_fits": p["load_factor_that_fits"],
                # replication: the work that follows the set's writes (a secondary), and the replication operations
                # served to other members, taken out of their class (capmodel.models.mix.intervals)
                "replication": {"observed_per_s": m.replication_baseline, "asked_per_s": p["replication_per_s"],
                                "cpu_per_op_ms": m.replication_cpu_per_op * 1000, "writes_factor": self.writes_factor,
                                "served_per_s": m.served,
                                "served_latency_ms": {c: v * 1000 for c, v in m.served_latency.items()}},
                # how far the figures moved from one window of the observation to another, beyond the fit (root mean
                # square, capmodel.models.mix.spread); the intervals include it
                "window_spread": {key: {"percent": math.expm1(s) * 100, "windows": k}
                                  for key, (s, k) in self.spread.get(m.member, {}).items()},
                # where the asked mix leaves the shares a class's latency was fitted on (ServerDemands.outside_mix)
                "mix_outside_fitted": [{"class": c, "share_of": k, "asked_share": asked, "fitted_shares": [low, high],
                                        "extrapolated_term": term}
                                       for c, k, asked, low, high, term in self.outside_mix.get(m.member, [])],
                "classes": [row for row in self.table.to_dict(orient="records") if row["member"] == m.member]})
        return to_jsonable({"members": members, "limiting_member": self.limiting_member, "level": self.level,
                            "evidence": self.evidence.to_json()})

    def describe(self) -> str:
        """The answer in sentences (only those whose condition holds)."""
        lines = []
        for m in self.members:
            p = self.predicted.loc[m.member]
            missing = [c for member, c in self.unseen if member == m.member]
            if missing:
                lines.append(f"{m.member}: not observed serving {', '.join(missing)}: no prediction for this load.")
                continue
            if p["utilization"] >= 1:
                lines.append(f"{m.member}: the asked load needs {percent(p['utilization'])} of {_cores(m.cores)}: it "
                             f"does not fit; {percent(p['load_factor_that_fits'])} of it does.")
                lines += _replication(m, p)
                continue
            low, high = self.low.loc[m.member], self.high.loc[m.member]
            asked = [c for c in m.classes if self.rates[m.member][c] > 0]
            parts = [f"{c} {number(p[f'{c}_throughput'])} ops/s at " + _latency(p, low, high, c) for c in asked]
            room = (f", room for {number(p['load_factor_that_fits'])}x this load"
                    + (" (its replication work with it)" if m.replication_cpu_per_op > 0 else "")
                    + " before the CPU saturates" if parts
                    else " (its background work alone)")   # no load asked: no factor of it means anything
            lines.append(f"{m.member}: " + "; ".join(parts or ["no operations asked"])
                         + f"; CPU {p['utilization']:.0%} of {_cores(m.cores)}{room}.")
            lines += _replication(m, p)
            if any(np.isinf(high[f"{c}_latency_ms"]) for c in asked):
                lines.append(f"{m.member}: a latency range without an upper end: more than "
                             f"{number((1 - self.level) / 2 * 100)}% of the refits on resampled intervals saturate the "
                             "CPU at this load, so its latency may grow without bound.")
            if any(m.latency_wait.get(c, 0) > 0 for c in m.classes):
                lines.append(f"{m.member}: the latencies include waiting for the CPU while other processes hold it, "
                             f"at {self.waits[m.member] * 1e6:,.0f} µs of the server's wait per operation "
                             + ("(as asked)." if self.waits_given else "(as observed; a busier host waits longer)."))
            for c, slowed in m.latency_mix.items():
                lines.append(f"{m.member}: {c} take longer as the share of " + " and ".join(
                    f"{k} grows (+{number(v * 1000, 2)} ms from none to all)" for k, v in slowed.items()) + ".")
            lines += [f"{m.member}: {mix_sentence(*row)}." for row in self.outside_mix.get(m.member, [])]
        answered = self.answered
        if len(answered) > 1:
            lines.append(f"Saturates first: {self.limiting_member}" + (
                "." if len(answered) == len(self.members) else " (of the members with a prediction)."))
        if any(self.predicted.loc[answered, "utilization"] < 1):
            runs = sorted({b for b, _ in self.blocks.values() if b > 1})
            lines.append(f"Latency ranges: {self.level:.0%} bootstrap intervals over the observed intervals" + (
                f", resampled in runs of {' to '.join(map(str, runs[::max(len(runs) - 1, 1)]))} consecutive "
                "intervals (they move together) and widened for the few runs" if runs else "") + (
                "; widened too for how far each figure moved from one window of the observation to another" if any(
                    self.spread.values()) else "") + ".")
            lines += [_spread(m, spread) for m, spread in self.spread.items() if spread and m in answered]
        return "\n".join(lines)


def mix_sentence(c: str, k: str, asked: float, low: float, high: float, term: bool) -> str:
    """What ``ServerDemands.outside_mix``'s row means, for people (no closing full stop: a reason's message)."""
    seen = f"{low:.0%}" if f"{low:.0%}" == f"{high:.0%}" else f"{low:.0%} to {high:.0%}"
    if term:
        return (f"the {c}' latency at this mix is an extrapolation: it grows with the share of {k}, fitted where {k} "
                f"were {seen} of the operations, and the asked mix has {asked:.0%}")
    return (f"{c} were observed only where {k} were {seen} of the operations: at the asked {asked:.0%} their latency "
            f"assumes the mix does not change it (not measured there)")


def _replication(m, p) -> list:
    """What the member's replication work is in the answer: a term of its own that follows the writes (a
    secondary), or the oplog getMores it served counted with the writes (a sync source serving writes)."""
    if m.replication_cpu_per_op > 0:
        return [f"{m.member}: its replication work follows the primary's writes: {number(p['replication_per_s'])} "
                "oplog entries applied and getMores and position reports served a second here "
                f"({number(m.replication_baseline)} observed), at {number(m.replication_cpu_per_op * 1e6)} µs of CPU "
                "each."]
    if "writes" in m.classes and any(v > 0 for v in m.served.values()):
        served = " and ".join(f"{number(v)} {SERVED_WORDS[c]}" for c, v in m.served.items() if v > 0)
        return [f"{m.member}: the {served} a second it served to other members count with the writes they follow, "
                "not with the clients' operations."]
    return []


def _spread(member: str, spread: dict) -> str:
    """The member's window-to-window spread (``mix_spread.window_spread``) in a sentence: 'the CPU ±1.3% over 6
    windows, the reads latency ±8.2% over 6'."""
    parts = [f"{'the CPU' if key == CPU else f'the {key} latency'} ±{percent(np.expm1(s))} over "
             + (plural(k, "window") if not i else str(k))
             for i, (key, (s, k)) in enumerate(spread.items())]
    return (f"{member}: how far its figures moved from one window of the observation to another, beyond the fit "
            f"(root mean square): {', '.join(parts)}.")


def _latency(p, low, high, c: str) -> str:
    """'0.11 (0.1 to 0.12) ms', or '2.45 ms (0.09 ms or more)' when the range has no upper end."""
    col = f"{c}_latency_ms"
    if np.isinf(high[col]):
        return f"{number(p[col])} ms ({number(low[col])} ms or more)"
    return interval(p[col], low[col], high[col], unit="ms")


def _cores(cores) -> str:
    return f"{number(cores)} core" + ("" if cores == 1 else "s")
