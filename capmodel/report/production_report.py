"""Report 07's result: where the telemetry comes from (an observe folder, a live server, FTDC files or the bundled
sample), the production answer on it, the inputs the page hashes and names, and its answer in one sentence for the
index of reports. The notebook holds the parameters, this call and the figures."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from capmodel.formatting import number, percent, shows_width
from capmodel.observe.capacity_words import months_text, spare_percent
from capmodel.plan.production import QUESTION

if TYPE_CHECKING:
    from capmodel.observe.observation import Observation
    from capmodel.plan.production import ProductionAnswer

#: what the page says of the bundled sample, above its tables
BUNDLED_NOTE = (
    "The bundled sample is diagnostic data that capmodel's embedded `mongod`, pinned to one CPU, wrote while a "
    "capmodel load on the other CPU passed through light load (open loop at about 20%, 30% and 40% of the "
    "server's core) and then up to saturation (a closed-loop sweep): a server that is the bottleneck, not "
    "anyone's production data (see `data/README.md`).")
#: the parameters each source leaves unused
_LIVE_ONLY, _FTDC_ONLY = ["duration", "interval"], ["since", "until"]


def production_short_answer(result) -> str:
    """One sentence (markdown) from a ``capmodel.plan.production.ProductionAnswer``: the saturation throughput with
    its interval, the planned throughput at the utilization target, and the observed peak's spare or excess; the
    observed peak alone, as a lower bound, when no method states a capacity."""
    observed = f"{number(result.observed_peak_throughput)} ops/s"
    saturation, planned, spare = result.saturation_throughput, result.planned_throughput, result.spare_fraction
    if saturation is None or planned is None or spare is None:
        return (f"At its busiest the server carried **{observed}**, a lower bound on its capacity: the data cannot "
                "say how much more it can take.")
    span = (f" ({percent(result.level)} interval {number(saturation.low)}–{number(saturation.high)} ops/s)"
            if shows_width(saturation.low, saturation.high) else "")
    text = (f"The server saturates at **{number(saturation.estimate)} ops/s**{span}; at the "
            f"{percent(result.utilization_target, 2)} utilization target it carries **{number(planned.estimate)} "
            f"ops/s**, and its observed peak of {observed} ")
    if spare.estimate >= 0:
        return text + f"leaves **{percent(spare.estimate, 3)}** of that spare."
    return text + f"is already **{percent(-spare.estimate, 3)} above** it."


def production_decision(result) -> str:
    """The decision in at most two short sentences, no brackets (``headline.decision_problems``): whether growth
    fits under the utilization target, and the figures a manager forwards; the intervals and the method follow in the
    answer."""
    observed = f"{number(result.observed_peak_throughput)} ops/s"
    saturation, planned, spare = result.saturation_throughput, result.planned_throughput, result.spare_fraction
    if saturation is None or planned is None or spare is None:
        return (f"**Capacity unknown**: at its busiest the server carried {observed}, and the data cannot say how much "
                "more it can take.")
    target = percent(result.utilization_target, 2)
    carries = f"the {number(planned.estimate)} ops/s it should carry at {target} utilization"
    if spare.estimate < 0:
        return (f"**No growth fits**: the server's busiest load, {observed}, is already "
                f"{spare_percent(-spare.estimate, spare)} above {carries}. It saturates at "
                f"{number(saturation.estimate)} ops/s.")
    months = result.runway_months
    if months is None or not math.isfinite(months.estimate) or not result.monthly_growth:
        runway = ""
    else:
        lasts = months_text(months.estimate)
        runway = (f" At {percent(result.monthly_growth)} growth a month that lasts {lasts}"
                  f"{' months' if lasts[0].isdigit() else ''}.")
    return (f"**{spare_percent(spare.estimate, spare)} of the planned throughput is spare**: the server's busiest "
            f"load is {observed} of {carries}.{runway}")


def production_qualifications(result) -> str:
    """The answer under report 07's decision, in short plain sentences (``headline.answer_problems``): where the
    saturation, the planned throughput and the spare share may lie; the method and its reasons follow below the
    headline (``ProductionAnswer.describe``)."""
    saturation, planned, spare = result.saturation_throughput, result.planned_throughput, result.spare_fraction
    below = "How these figures were worked out, and why this method, follows below."
    if saturation is None or planned is None or spare is None:
        return f"No method can state a capacity from this data. {below}"
    ranges = [f"{name} lies between {number(figure.low)} and {number(figure.high)} ops/s"
              for name, figure in (("saturation", saturation), ("the planned throughput", planned))
              if shows_width(figure.low, figure.high)]
    parts = [f"With {percent(result.level)} confidence, {'; '.join(ranges)}."] if ranges else []
    low, high = sorted((spare.low, spare.high))
    if shows_width(low, high, lambda x: percent(x, 3)) and math.isfinite(low) and math.isfinite(high):
        if high < 0:
            parts.append(f"The busiest load is between {percent(-high, 3)} and {percent(-low, 3)} above the plan.")
        elif low >= 0:
            parts.append(f"Between {percent(low, 3)} and {percent(high, 3)} of the planned throughput is spare.")
        else:
            parts.append("The busiest load may be below the plan or above it.")
    return " ".join([*parts, below])


@dataclass
class ProductionReport:
    """Everything report 07 shows; ``production_report`` builds it.

    Attributes
    ----------
    observation : Observation
        The telemetry read.
    result : ProductionAnswer
        The answer on it.
    source : str
        The telemetry as sentences name it.
    inputs : dict
        The files the headline hashes.
    unused : list of str
        The parameters this source leaves unused.
    mongodb_version : str or None
        The version the telemetry carries.
    bundled : bool
        The bundled FTDC sample was read.
    """

    observation: Observation
    result: ProductionAnswer
    source: str
    inputs: dict
    unused: list
    mongodb_version: str | None = None
    bundled: bool = False
    question: str = field(default=QUESTION, init=False)

    @property
    def samples(self):
        return self.observation.samples

    @property
    def curve(self):
        return self.observation.curve

    @property
    def short_answer(self) -> str:
        return production_short_answer(self.result)

    @property
    def decision(self) -> str:
        return production_decision(self.result)

    @property
    def answer(self) -> str:
        return production_qualifications(self.result)

    @property
    def details(self) -> str:
        return self.result.describe()

    @property
    def notes(self) -> list:
        """What reading the telemetry dropped, and where (a cut newest FTDC file)."""
        return list(getattr(self.observation, "notes", []))

    @property
    def bundled_note(self) -> str | None:
        return BUNDLED_NOTE if self.bundled else None

    def summary(self) -> str:
        """The observation's summary, naming its source as the page does."""
        return self.observation.summary().replace(self.observation.source, self.source)


def production_report(observed: str = "", ftdc: str = "", uri: str = "", duration: float = 60.0,
                      interval: float = 1.0, since: str = "", until: str = "", cores: float = 0.0,
                      utilization_target: float = 0.8, latency_target_ms: float = 5.0, monthly_growth: float = 0.05,
                      fit_on: str = "throughput", bins: int = 8, level: float = 0.95,
                      bootstrap: int = 200) -> ProductionReport:
    """Read the telemetry and answer report 07's question on it.

    Parameters
    ----------
    observed : str
        A ``capmodel observe --out`` folder, read as it is (no sampling). Takes precedence over ``uri`` and ``ftdc``.
    ftdc : str
        A ``diagnostic.data`` folder or FTDC file; used when neither ``observed`` nor ``uri`` is given.
    uri : str
        A MongoDB to sample live (read-only ``serverStatus``); used when ``observed`` is not given.
    duration, interval : float
        Seconds of live sampling, and seconds between samples (with ``uri``).
    since, until : str
        The FTDC window, ISO 8601 (UTC); "" the bundled sample's load window, or all of the files given.
    cores : float
        The CPUs the mongod may use; 0 takes what the server reports.
    utilization_target, latency_target_ms, monthly_growth, fit_on, bins, level, bootstrap
        As ``capmodel.plan.production.production_answer`` takes them; 0 for ``latency_target_ms``,
        ``monthly_growth`` and ``bins`` means none.

    Returns
    -------
    ProductionReport
        When none of ``observed``, ``uri`` and ``ftdc`` is given, on the bundled FTDC sample.
    """
    from capmodel.observe import bundled_sample, observe_ftdc, observe_uri, read_observation
    from capmodel.observe.ftdc import ftdc_files
    from capmodel.observe.ftdc_samples import metadata_identity
    from capmodel.plan.production import production_answer

    bundled = not (observed or uri or ftdc)
    sample = bundled_sample() if bundled else {}
    if observed:
        observation = read_observation(observed)
    elif uri:
        observation = observe_uri(uri, interval=interval, duration=duration)
    elif ftdc:
        observation = observe_ftdc(ftdc, since or None, until or None)
    else:
        observation = observe_ftdc(sample["path"], since or sample["since"], until or sample["until"])
    from_ftdc = not (observed or uri)
    source = ("the bundled FTDC sample" if bundled else f"the FTDC files in {Path(ftdc).name}" if from_ftdc
              else observation.source)
    result = production_answer(observation.samples, observation.curve, cores=cores or None,
                               utilization_target=utilization_target, latency_target_ms=latency_target_ms or None,
                               monthly_growth=monthly_growth or None, level=level, fit_on=fit_on, bins=bins or None,
                               n_bootstrap=bootstrap, source=source)
    read = ftdc_files(ftdc or sample["path"]) if from_ftdc else []       # the files read, each hashed
    version = sample.get("mongod") or (metadata_identity(ftdc or sample["path"])["version"] if read else None)
    inputs = ({"observed": str(Path(observed) / "samples.csv")} if observed else
              {(f"ftdc {f.name}" if len(read) > 1 else "ftdc"): str(f) for f in read})
    unused = (["ftdc", "uri", *_LIVE_ONLY, *_FTDC_ONLY] if observed else ["ftdc", *_FTDC_ONLY] if uri
              else ["uri", *_LIVE_ONLY])
    return ProductionReport(observation, result, source, inputs, unused, version, bundled)
