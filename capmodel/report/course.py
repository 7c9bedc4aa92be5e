"""Report 01's course: one exercise per law on the bundled numbers, the check that tells a student whether an answer
is right, the MVA recursion written out step by step, and the solutions a teacher's copy shows.

Every right answer is computed here from capmodel's models (the utilization law, the fitted USL, exact MVA), never
typed in; the notebook holds the student's answers, the calls and the figures. The laws are the textbooks': Little,
"A proof for the queuing formula L = λW", Operations Research 9(3), 1961; the utilization and bottleneck laws,
Denning and Buzen, "The operational analysis of queueing network models", ACM Computing Surveys 10(3), 1978, and
Lazowska et al., "Quantitative System Performance", 1984, ch. 3 and 5; the USL, Gunther, "Guerrilla Capacity
Planning", 2007, ch. 4; the MVA recursion, Reiser and Lavenberg, "Mean-value analysis of closed multichain queuing
networks", J. ACM 27(2), 1980, as Lazowska et al. ch. 6 and Jain, "The Art of Computer Systems Performance
Analysis", 1991, ch. 34 write it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from capmodel.formatting import Column, integer, number, table

if TYPE_CHECKING:
    from capmodel.models.mix.demands import MixFit
    from capmodel.models.usl.usl_fit import USLFit

#: how far (relative) a student's answer may sit from the computed one and still be right: rounding to three
#: significant digits at every step of a hand calculation stays well inside it
ANSWER_TOLERANCE = 0.01
#: the populations of the step-by-step MVA table; the exercise asks for the next one
MVA_STEPS = 6


@dataclass(frozen=True)
class Feedback:
    """What a check cell shows: whether the answer is right (None: no answer yet) and, in a teacher's copy, the
    solution."""

    right: bool | None
    text: str

    def _repr_markdown_(self) -> str:
        return self.text


@dataclass(frozen=True)
class Exercise:
    """One exercise: the question on real numbers, its answer computed by capmodel, the working, and a hint.

    Attributes
    ----------
    question : str
        The task, with its numbers (markdown).
    answer : float
        The right answer, in ``unit``.
    unit : str
        The answer's unit, as the student gives it.
    working : str
        How the answer is reached (markdown), shown with the solutions.
    hint : str
        A nudge for a wrong answer.
    """

    question: str
    answer: float
    unit: str
    working: str
    hint: str

    def is_right(self, given) -> bool:
        """True when ``given`` is a number within ``ANSWER_TOLERANCE`` (relative) of the answer."""
        try:
            value = float(given)
        except (TypeError, ValueError):
            return False
        return math.isfinite(value) and abs(value - self.answer) <= ANSWER_TOLERANCE * abs(self.answer)

    def solution(self) -> str:
        """The answer and its working (markdown)."""
        return f"**Solution**: {self.working} = **{number(self.answer)} {self.unit}**."

    def check(self, given, solutions: bool = False) -> Feedback:
        """Whether ``given`` is right, in words; with ``solutions``, followed by the solution."""
        if (given is None or given is Ellipsis) and solutions:   # a teacher's copy: the solution alone
            return Feedback(None, self.solution())
        if given is None or given is Ellipsis:
            right, said = None, "No answer yet: put your figure in place of `None` in this cell and run it again."
        elif isinstance(given, bool) or not isinstance(given, (int, float, np.number)):
            right, said = False, f"Give a number (in {self.unit}), not {type(given).__name__} {given!r}."
        elif self.is_right(given):
            right, said = True, f"✅ **Right**: {number(float(given))} {self.unit}."
        else:
            side = "high" if float(given) > self.answer else "low"
            right, said = False, (f"❌ **Not yet**: {number(float(given))} {self.unit} is too {side} (more than "
                                  f"{ANSWER_TOLERANCE:.0%} off). Hint: {self.hint}")
        if solutions:
            said += "\n\n" + self.solution()
        return Feedback(right, said)


@dataclass
class Course:
    """The course's numbers: the plgm curve, its USL fit and the plgm mix demands.

    Attributes
    ----------
    curve : pandas.DataFrame
        plgm workload 1 (threads, throughput, mean latency).
    fit : USLFit
        The USL fitted to it.
    mix : MixFit
        Per-class demands fitted to plgm workloads 1 and 2 (the reads' time outside the database is a think time).
    mva : pandas.DataFrame
        The USL beside exact MVA on its load-dependent network (``usl_vs_mva``), as report 01 draws it.
    dataset : str
        The curve's name.
    read_share : float
        The reads' share of the mixed plgm workloads.
    database_cpus : int
        The processors at the database station.
    threads : int
        The measured thread count the Little's law exercise reads.
    """

    curve: pd.DataFrame
    fit: USLFit
    mix: MixFit
    mva: pd.DataFrame
    dataset: str = "plgm_workload1"
    read_share: float = 0.54
    database_cpus: int = 4
    threads: int = 64

    # -- 1. Little's law with think time --------------------------------------------------------------------------
    @property
    def measured(self) -> pd.Series:
        """The curve's row at ``threads`` (the largest measured thread count when that one was not measured)."""
        rows = self.curve[self.curve["concurrency"] == self.threads]
        return (rows if len(rows) else self.curve.loc[[self.curve["concurrency"].idxmax()]]).iloc[0]

    @property
    def think_time_ms(self) -> float:
        """Z: the reads' time outside the database (client, network, router), fitted from plgm workloads 1 and 2."""
        return float(self.mix.parameters.loc["read", "delay_ms"])

    @property
    def little(self) -> Exercise:
        row = self.measured
        n, x, z = float(row["concurrency"]), float(row["throughput"]), self.think_time_ms
        return Exercise(
            question=(f"At N = {integer(n)} threads, `{self.dataset}` measured X = {integer(x)} ops/s. Of each "
                      f"thread's cycle, Z = {number(z)} ms is spent outside the database (client, network, router: "
                      "the time the two plgm mixes' demands put there). How long did an operation spend at the "
                      "database, R = N/X − Z, in milliseconds?"),
            answer=n / x * 1000.0 - z, unit="ms",
            working=f"N/X = {integer(n)} / {integer(x)} ops/s = {number(n / x * 1000.0)} ms per cycle; minus Z = "
                    f"{number(z)} ms",
            hint="N/X is in seconds when X is in ops/s: multiply by 1,000 before taking Z away.")

    # -- 2. The utilization and bottleneck laws -------------------------------------------------------------------
    @property
    def utilization(self) -> Exercise:
        demands = self.mix.parameters["database_demand_ms"]
        share, c = self.read_share, self.database_cpus
        d = share * float(demands["read"]) + (1 - share) * float(demands["write"])
        return Exercise(
            question=(f"The plgm mixes run {share:.0%} reads and {1 - share:.0%} writes. Fitted to two plgm curves "
                      f"(section 7), a read needs {number(demands['read'], 4)} ms of the database's processors and a "
                      f"write {number(demands['write'], 4)} ms; the database has c = {c} processors. What is the most "
                      f"the mix can reach, the bottleneck bound X ≤ c/D with D = {number(share)} D_read + "
                      f"{number(1 - share)} D_write, in ops/s?"),
            answer=c / d * 1000.0, unit="ops/s",
            working=(f"D = {number(share)} × {number(demands['read'], 4)} + {number(1 - share)} × "
                     f"{number(demands['write'], 4)} = {number(d, 4)} ms per operation; c/D = {c} / {number(d, 4)} ms"),
            hint="the mix's demand is the share-weighted sum of the two; c processors serve c/D operations per "
                 "unit of time (× 1,000 for ms).")

    # -- 3. The USL's terms ---------------------------------------------------------------------------------------
    @property
    def peak(self) -> Exercise:
        fit = self.fit
        return Exercise(
            question=(f"The USL fitted to `{self.dataset}` has σ = {number(fit.sigma)} and κ = {number(fit.kappa)}. "
                      "At how many clients does its throughput peak, N* = √((1 − σ)/κ)?"),
            answer=float(fit.peak_concurrency), unit="clients",
            working=f"√((1 − {number(fit.sigma)}) / {number(fit.kappa)})",
            hint="1 − σ first, then divide by κ, then the square root.")

    # -- 4. The MVA recursion -------------------------------------------------------------------------------------
    @property
    def serial_demand_ms(self) -> float:
        """D: the serial part of one request alone, σ/λ, in ms (the USL's network: ``usl_network``)."""
        from capmodel.models.queueing.usl_mva import usl_network

        return float(usl_network(self.fit.sigma, 0.0, self.fit.lambda_, 1)["serial_demand"].iloc[0]) * 1000.0

    @property
    def parallel_time_ms(self) -> float:
        """Z: the part of one request that runs in parallel, (1 − σ)/λ, in ms: a delay station, no queue."""
        from capmodel.models.queueing.usl_mva import usl_network

        return float(usl_network(self.fit.sigma, 0.0, self.fit.lambda_, 1)["parallel_time"].iloc[0]) * 1000.0

    @cached_property
    def mva_steps(self) -> pd.DataFrame:
        """The recursion for n = 1 .. MVA_STEPS + 1 on one queueing station of demand D and a delay Z (ms):
        R(n) = D (1 + Q(n − 1)), X(n) = n / (Z + R(n)), Q(n) = X(n) R(n), with Q(0) = 0."""
        d, z = self.serial_demand_ms, self.parallel_time_ms
        rows, queue = [], 0.0
        for n in range(1, MVA_STEPS + 2):
            residence = d * (1.0 + queue)
            x = n / (z + residence)            # per ms
            rows.append({"n": n, "queue_before": queue, "residence_ms": residence, "throughput": x * 1000.0,
                         "queue": x * residence})
            queue = x * residence
        return pd.DataFrame(rows)

    @property
    def mva_check(self) -> pd.DataFrame:
        """capmodel's exact MVA (``exact_mva``) on the same network, beside the hand recursion's throughput."""
        from capmodel.models.queueing.mva import exact_mva

        steps = self.mva_steps
        exact = exact_mva({"serial": self.serial_demand_ms / 1000.0}, think_time=self.parallel_time_ms / 1000.0,
                          populations=steps["n"].tolist())
        return pd.DataFrame({"n": steps["n"], "by_hand": steps["throughput"], "exact_mva": exact["throughput"]})

    def mva_table(self):
        steps = self.mva_steps.iloc[:MVA_STEPS]
        return table(steps, {
            "n": Column("n (clients)", "int"), "queue_before": Column("Q(n − 1)"),
            "residence_ms": Column("R(n) = D(1 + Q(n − 1)) (ms)"),
            "throughput": Column("X(n) = n/(Z + R(n)) (ops/s)", "int"), "queue": Column("Q(n) = X(n)R(n)")},
            caption=(f"The MVA recursion, D = {number(self.serial_demand_ms)} ms, "
                     f"Z = {number(self.parallel_time_ms)} ms"),
            csv_name="mva_steps.csv")

    def mva_check_table(self):
        return table(self.mva_check.iloc[:MVA_STEPS], {
            "n": Column("n (clients)", "int"), "by_hand": Column("recursion above (ops/s)", "int"),
            "exact_mva": Column("capmodel exact_mva (ops/s)", "int")},
            caption="The recursion against capmodel's exact MVA", csv_name="mva_check.csv")

    @property
    def mva_exercise(self) -> Exercise:
        last = self.mva_steps.iloc[MVA_STEPS - 1]
        step = self.mva_steps.iloc[MVA_STEPS]
        n = int(step["n"])
        return Exercise(
            question=(f"Take the recursion one step further: with Q({n - 1}) = {number(last['queue'], 4)} from the "
                      f"table, D = {number(self.serial_demand_ms, 4)} ms and Z = {number(self.parallel_time_ms, 4)} "
                      f"ms, what is X({n}) in ops/s?"),
            answer=float(step["throughput"]), unit="ops/s",
            working=(f"R({n}) = {number(self.serial_demand_ms, 4)} × (1 + {number(last['queue'], 4)}) = "
                     f"{number(step['residence_ms'], 4)} ms; X({n}) = {n} / ({number(self.parallel_time_ms, 4)} + "
                     f"{number(step['residence_ms'], 4)}) ms"),
            hint="R(n) uses the queue one client earlier, Q(n − 1); X(n) = n / (Z + R(n)) is per ms: × 1,000.")

    # -- 5. A load-dependent demand -------------------------------------------------------------------------------
    def serial_demand_at_ms(self, n: int) -> float:
        """D(N) = (σ + κ(N − 1))/λ in ms: the serial demand when N clients keep each other coherent."""
        from capmodel.models.queueing.usl_mva import usl_network

        return float(usl_network(self.fit.sigma, self.fit.kappa, self.fit.lambda_, n)["serial_demand"].iloc[0]) * 1e3

    def load_dependent(self, n: int) -> Exercise:
        fit = self.fit
        d = self.serial_demand_at_ms(n)
        return Exercise(
            question=(f"With κ = {number(fit.kappa)}, every request also does coherency work for each of the other "
                      f"N − 1 clients: the serial demand becomes D(N) = (σ + κ(N − 1))/λ, with σ = {number(fit.sigma)} "
                      f"and λ = {integer(fit.lambda_)} ops/s. What is the bottleneck bound 1/D(N) at N = {n}, in "
                      "ops/s?"),
            answer=1000.0 / d, unit="ops/s",
            working=f"D({n}) = ({number(fit.sigma)} + {number(fit.kappa)} × {n - 1}) / {integer(fit.lambda_)} = "
                    f"{number(d * 1000.0)} µs; 1/D({n})",
            hint="κ(N − 1) is added to σ before dividing by λ; 1/D of a demand in seconds is in ops/s.")

    @property
    def population(self) -> int:
        """The largest population drawn: the load-dependent exercise's N."""
        return int(self.mva["concurrency"].max())

    @property
    def why_throughput_falls(self) -> str:
        """Why exact MVA on the USL's network rises, peaks and falls, in the figures of the curve drawn."""
        mva = self.mva
        top = mva.loc[mva["mva_throughput"].idxmax()]
        last = mva.iloc[-1]
        d1, dn = self.serial_demand_at_ms(1), self.serial_demand_at_ms(self.population)
        if self.fit.kappa <= 0:
            return (f"With κ = 0 the serial demand stays D = σ/λ = {number(d1 * 1000.0)} µs at every population, so "
                    f"MVA's throughput only rises towards 1/D = {integer(1000.0 / d1)} ops/s and never falls.")
        falls = last["mva_throughput"] < top["mva_throughput"]
        shape = (f"rises to {integer(top['mva_throughput'])} ops/s at {integer(top['concurrency'])} clients and falls "
                 f"to {integer(last['mva_throughput'])} ops/s at {integer(last['concurrency'])}" if falls else
                 f"rises to {integer(last['mva_throughput'])} ops/s at {integer(last['concurrency'])} clients")
        return (f"MVA's curve {shape} because the network is not the same at every population: each request does "
                f"κ/λ of coherency work for each of the other N − 1 clients, so the serial demand grows from "
                f"D(1) = {number(d1 * 1000.0)} µs to D({self.population}) = {number(dn * 1000.0)} µs, and the "
                f"bottleneck bound 1/D(N) falls from {integer(1000.0 / d1)} to {integer(1000.0 / dn)} ops/s. "
                "Throughput rises while clients fill the idle time and falls once the shrinking bound catches it. "
                "A fixed demand (section 4) only ever rises towards its bound.")

    @property
    def mva_with_bound(self) -> pd.DataFrame:
        """The USL and exact MVA (``mva``) beside the bottleneck bound 1/D(N) of each population's network, in
        ops/s, with the figure's column names."""
        from capmodel.models.queueing.usl_mva import usl_network

        fit = self.fit
        demand = usl_network(fit.sigma, fit.kappa, fit.lambda_, self.mva["concurrency"])["serial_demand"]
        return pd.DataFrame({"concurrency": self.mva["concurrency"], "USL": self.mva["usl_throughput"],
                             "MVA (exact)": self.mva["mva_throughput"],
                             "bottleneck bound 1/D(N)": 1.0 / demand.to_numpy()})

    @property
    def exercises(self) -> dict[str, Exercise]:
        """Every exercise by the name its check cell uses."""
        return {"little": self.little, "utilization": self.utilization, "peak": self.peak, "mva": self.mva_exercise,
                "load_dependent": self.load_dependent(self.population)}

    def question(self, name: str) -> Feedback:
        """Exercise ``name``'s question, for the cell above the student's answer."""
        return Feedback(None, f"**Exercise**: {self.exercises[name].question}")

    def check(self, name: str, given, solutions: bool = False) -> Feedback:
        """Whether ``given`` answers exercise ``name`` (see ``Exercise.check``); with ``solutions``, the solution."""
        return self.exercises[name].check(given, solutions)
