"""Every results class follows one convention (README, "Results objects"): ``table`` is a read-only property holding
a DataFrame, ``describe()`` returns the answer in words, ``summary()`` the full plain text, ``to_json()`` the machine
form (a dict ``json.dumps`` takes without NaN), ``evidence`` an ``Evidence``; ``answer`` is no method of a results
class (only of report pages, where it is the headline's text, a property).

The walk imports every module of the layers that hold results (models, plan, observe, bench, report) and checks each
class that defines one of these names; then one instance of each such class, built here from the bundled data and
synthetic telemetry, is checked for the return types. A new class with one of the names and no instance here fails
``test_every_results_class_has_an_instance_here``, so the convention is checked on it too.
"""
from __future__ import annotations

import importlib
import inspect
import json
import math
import pkgutil
import re
import warnings

import numpy as np
import pandas as pd
import pytest

import capmodel
from capmodel.models.evidence import Evidence

MEMBERS = ("table", "describe", "summary", "to_json", "answer", "evidence")
LAYERS = ("models", "plan", "observe", "bench", "report")
# shown to a reader: no sentence may carry a missing or infinite number as Python prints it
UNREADABLE = re.compile(r"\b(nan|NaN|None|inf)\b")


def _classes():
    """Every class defined in the results layers' modules, by qualified name."""
    found = {}
    for layer in LAYERS:
        package = importlib.import_module(f"capmodel.{layer}")
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            module = importlib.import_module(info.name)
            for name, cls in vars(module).items():
                if inspect.isclass(cls) and cls.__module__ == module.__name__:
                    found[f"{module.__name__}.{name}"] = cls
    return found


def _declared(cls, name: str):
    """How ``cls`` declares ``name`` (the attribute in the first capmodel class of its MRO that has it, or a dataclass
    field), or None."""
    for klass in cls.__mro__:
        if klass.__module__.startswith("capmodel") and name in vars(klass):
            return vars(klass)[name]
    fields = getattr(cls, "__dataclass_fields__", {})
    return fields.get(name)


CLASSES = _classes()
WITH_MEMBERS = {key: cls for key, cls in CLASSES.items() if any(_declared(cls, m) is not None for m in MEMBERS)
                and not issubclass(cls, BaseException)}


def _frozen_field(cls, name: str) -> bool:
    params = getattr(cls, "__dataclass_params__", None)
    return params is not None and params.frozen and name in getattr(cls, "__dataclass_fields__", {})


@pytest.mark.parametrize("key", sorted(WITH_MEMBERS))
def test_members_are_declared_as_the_convention_says(key):
    cls = WITH_MEMBERS[key]
    report_page = key.startswith("capmodel.report.")
    table = _declared(cls, "table")
    if table is not None:
        assert isinstance(table, property) and table.fset is None or _frozen_field(cls, "table"), (
            f"{key}.table must be a read-only property (or a frozen dataclass field), not a method")
    for name in ("describe", "summary", "to_json"):
        member = _declared(cls, name)
        if member is not None:
            assert inspect.isfunction(member), f"{key}.{name} must be a method"
    answer = _declared(cls, "answer")
    if answer is not None:
        if report_page:           # the headline's text: an attribute, never a call
            assert not inspect.isfunction(answer), f"{key}.answer is the page's text, a property or field"
        else:                     # only the old name of describe(), kept for one release
            assert getattr(answer, "renamed_to", None) == "describe", (
                f"{key}.answer(): a results class says its answer with describe(); answer() is only a deprecated alias")
    evidence = _declared(cls, "evidence")
    if evidence is not None:
        assert not inspect.isfunction(evidence), f"{key}.evidence must be a property or field, not a method"


# -- one instance of each class ------------------------------------------------------------------------------------
SIGMA, KAPPA, LAMBDA, D_S = 0.05, 0.002, 1000.0, 0.0001


def _usl(n):
    n = np.asarray(n, dtype=float)
    return LAMBDA * n / (1 + SIGMA * (n - 1) + KAPPA * n * (n - 1))


def _telemetry():
    """One second per row of a server that follows the USL, with CPU = 0.02 cores + 0.1 ms per operation."""
    from capmodel.observe.tables import curve_from_samples

    n = np.geomspace(1, 30, 40)
    x = _usl(n)
    samples = pd.DataFrame({
        "time": pd.date_range("2026-01-01", periods=len(n), freq="s", tz="UTC"), "interval_s": 1.0,
        "reads_per_s": x, "reads_latency_ms": n / x * 1000.0, "writes_per_s": 0.0, "writes_latency_ms": np.nan,
        "commands_per_s": 0.0, "commands_latency_ms": np.nan, "cpu_cores": 0.02 + D_S * x, "dropped": ""})
    return samples, curve_from_samples(samples)


def _mix_samples(lean=1.0):
    rng = np.random.default_rng(1)
    rows = []
    for i in range(40):
        rate = {"reads": rng.uniform(200, 3000), "writes": rng.uniform(0, 1500) * lean, "commands": rng.uniform(0, 50)}
        cpu = 0.02 + 120e-6 * rate["reads"] + 200e-6 * rate["writes"] + 50e-6 * rate["commands"]
        row = {"time": f"2026-01-01T00:00:{i:02d}Z", "cpu_cores": cpu, "dropped": ""}
        for c, fixed in (("reads", 60e-6), ("writes", 90e-6), ("commands", 5e-6)):
            row[f"{c}_per_s"] = rate[c]
            row[f"{c}_latency_ms"] = (fixed + 20e-6 / (1 - cpu)) * 1000
        rows.append(row)
    return pd.DataFrame(rows)


def _slo_answer():
    """An SLO search against a server whose p95 grows in proportion to the rate, 5 ms at 730 ops/s."""
    from capmodel.bench.sweep import slo

    def measure(rate, seconds):
        return {"status": "ok", "operations": int(rate * seconds), "error_count": 0, "ops_per_s": rate,
                "latency": {"all": {"p95_ms": 5.0 * rate / 730.0}}}

    return slo.search([slo.parse_objective("p95<=5ms")], measure, lambda: {"ops_per_s": 1000.0}, duration=1.0,
                      tolerance=0.1, max_steps=12)


def _shapes_what_if():
    """The shape what-if on the log and CPU of known truth of tests/observe/test_shape_demands.py."""
    import tempfile
    from pathlib import Path

    from capmodel.observe import query_shapes
    from capmodel.observe.shapes.what_if import shapes_what_if
    from tests.observe.test_shape_demands import CORES, _lab

    with tempfile.TemporaryDirectory() as folder:
        path, samples, _ = _lab(Path(folder))
        return shapes_what_if(query_shapes(path, interval_s=1), samples, CORES, {"1": 2}, n_bootstrap=20)


def _instances() -> dict:
    from capmodel.data import datasets
    from capmodel.models.queueing.erlang import mmc

    from capmodel.bench.client.arrivals import parse_rate_shape

    slo_answer = _slo_answer()
    from capmodel.models.evidence import Reason
    from capmodel.models.usl.family import get_model
    from capmodel.models.mix.demands import fit_mix_demands
    from capmodel.models.mix.production import fit_server_demands, mix_what_if
    from capmodel.models.queueing.multiclass import multiclass_mva
    from capmodel.models.usl.answer import fit_curve
    from capmodel.models.usl.selection import compare_models
    from capmodel.models.usl.latency_form import fit_usl_latency
    from capmodel.observe.capacity import server_capacity
    from capmodel.observe.fleet import FLEET_COLUMNS, Fleet, capacity_summary, urgency_order
    from capmodel.observe.members import Member, ReplicaSetObservation
    from capmodel.observe.observation import Observation
    from capmodel.observe.synthetic import SyntheticServer
    from capmodel.plan.capacity import Objectives, capacity_from_fit
    from capmodel.plan.nodes import plan_node_study
    from capmodel.plan.production import production_answer
    from capmodel.plan.shards import plan_shard_study
    from capmodel.plan.study import plan_study

    curve = datasets.load_curve("plgm_workload1")
    usl = capmodel.fit_usl(curve)
    samples, observed_curve = _telemetry()
    capacity = server_capacity(samples, cores=1, monthly_growth=0.05)
    observation = Observation(samples, observed_curve, "synthetic telemetry")
    member = Member("db-a:27017", observation, cores=1, capacity=capacity)
    rows = pd.DataFrame([{**{c: None for c in FLEET_COLUMNS}, "cluster": "rs0", "member": "db-a:27017",
                          **capacity_summary(capacity)}], columns=FLEET_COLUMNS)
    mixes = {name: datasets.load_curve(name) for name in ("plgm_workload1", "plgm_workload2", "plgm_workload3")}
    mixed = {"read": 0.54, "write": 0.46}
    mix_fit = fit_mix_demands({"plgm_workload1": (mixes["plgm_workload1"], {"read": 1.0, "write": 0.0}),
                               "plgm_workload2": (mixes["plgm_workload2"], mixed)}, servers=4)
    study = plan_study()
    estimate = capacity.spare_fraction
    from capmodel.observe import query_shapes
    from tests.support.shapes_lab import FIXTURE

    shapes = query_shapes(FIXTURE)
    return {
        "capmodel.models.queueing.erlang.MMcResult": mmc(8.0, 10.0, 1),
        "capmodel.models.evidence.Reason": Reason("example", "weak", "an example reason", math.inf),
        "capmodel.models.evidence.Evidence": usl.evidence,
        "capmodel.models.evidence.NextStep": usl.evidence.next_step,      # plgm_workload1 is weak: its next step
        "capmodel.models.mix.demands.MixPrediction": mix_fit.compare(mixes["plgm_workload3"], mixed, "plgm_workload3"),
        "capmodel.models.mix.answer.MixWhatIf": mix_what_if({"a": _mix_samples(), "b": _mix_samples(2.0)},
                                                                cores=1, scale={"reads": 1.3}, n_bootstrap=20),
        "capmodel.models.mix.production.ServerDemands": fit_server_demands(_mix_samples(), cores=1),
        "capmodel.models.queueing.network.MulticlassResult": multiclass_mva({"cpu": {"a": 0.01, "b": 0.02}},
                                                                       {"a": 4, "b": 2}, {"a": 0.1, "b": 0.1}),
        "capmodel.models.usl.results.ScalabilityFit": get_model("log_coherency").fit(curve),
        "capmodel.models.usl.usl_fit.USLFit": usl,
        "capmodel.models.usl.answer.CurveAnswer": fit_curve(curve, "auto"),
        "capmodel.models.usl.ranking.ModelComparison": compare_models(curve, extrapolation=False),
        "capmodel.models.usl.latency_form.LatencyFit": fit_usl_latency(observed_curve),
        "capmodel.plan.calibration.UserLoad": study.plan.workload,
        "capmodel.plan.capacity.Objectives": Objectives(utilization_target=0.8, latency_p95_ms=5.0),
        "capmodel.plan.capacity.FitCapacity": capacity_from_fit(usl, Objectives(utilization_target=0.8)),
        "capmodel.plan.planner.CapacityPlan": study.plan,
        "capmodel.plan.study.PlanStudy": study,
        "capmodel.plan.nodes.NodeStudy": plan_node_study(sigma=0.02, sensitivity=[0, 0.02]),
        "capmodel.plan.shards.ShardStudy": plan_shard_study(),
        "capmodel.plan.production.ProductionAnswer": production_answer(
            samples, observed_curve, cores=1, latency_target_ms=2.0, monthly_growth=0.05, bins=None,
            n_bootstrap=20),
        "capmodel.models.estimate.Estimate": estimate,
        "capmodel.observe.capacity.ServerCapacity": capacity,
        "capmodel.observe.observation.Observation": observation,
        "capmodel.observe.members.Member": member,
        "capmodel.observe.members.ReplicaSetObservation": ReplicaSetObservation("rs0", [member], "synthetic"),
        "capmodel.observe.fleet.Fleet": Fleet(urgency_order(rows), "no workers (built here)", 0.05),
        "capmodel.observe.synthetic.SyntheticServer": SyntheticServer("db-a:27017", "rs0"),
        "capmodel.observe.shapes.result.QueryShapes": shapes,
        "capmodel.observe.shapes.sampling.Coverage": shapes.coverage,
        "capmodel.observe.shapes.what_if.ShapesWhatIf": _shapes_what_if(),
        "capmodel.observe.shapes.fidelity.ReplayFidelity": _replay_fidelity(),
        "capmodel.bench.sweep.slo.SloAnswer": slo_answer,
        "capmodel.bench.sweep.slo.Judged": slo_answer.judged[0],
        "capmodel.bench.sweep.slo.Objective": slo_answer.objectives[0],
        "capmodel.bench.client.arrivals.RateShape": parse_rate_shape("sine:1000:500"),
    }


def _replay_fidelity():
    """The lab's log replayed by itself: its replay workload pointed at the lab's own collection."""
    import dataclasses

    from capmodel.observe import query_shapes
    from capmodel.observe.shapes.fidelity import replay_fidelity
    from capmodel.observe.shapes.replay import replay_workload
    from tests.support.shapes_lab import FIXTURE

    shapes = query_shapes(FIXTURE)
    workload = replay_workload(shapes)
    itself = dataclasses.replace(workload, spec={**workload.spec, "collection": "orders"})
    return replay_fidelity(shapes, shapes, itself)


@pytest.fixture(scope="module")
def instances():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)       # built the current way
        return _instances()


def test_every_results_class_has_an_instance_here(instances):
    wanted = {key for key in WITH_MEMBERS if not key.startswith("capmodel.report.")}
    assert wanted - set(instances) == set(), "a results class with no instance in this test: add one to _instances"
    assert set(instances) - wanted == set(), "an instance here of a class the walk does not find"
    for key, obj in instances.items():
        assert type(obj) is WITH_MEMBERS[key], key


def _has(obj, name: str) -> bool:
    return _declared(type(obj), name) is not None


def test_table_is_a_read_only_dataframe(instances):
    checked = 0
    for key, obj in instances.items():
        if not _has(obj, "table"):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            frame = obj.table
        assert isinstance(frame, pd.DataFrame) and len(frame), key
        with pytest.raises(AttributeError):
            obj.table = frame
        checked += 1
    assert checked >= 7


def test_describe_summary_and_to_json_return_what_they_promise(instances):
    for key, obj in instances.items():
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            if _has(obj, "describe"):
                text = obj.describe()
                assert isinstance(text, str) and text.strip(), key
                assert not UNREADABLE.search(text), f"{key}.describe(): {UNREADABLE.search(text)[0]!r} in {text!r}"
            if _has(obj, "summary"):
                text = obj.summary()
                assert isinstance(text, str) and text.strip(), key
            if _has(obj, "to_json"):
                record = obj.to_json()
                assert isinstance(record, dict), key
                json.dumps(record, allow_nan=False)
            if _has(obj, "evidence"):
                assert isinstance(obj.evidence, Evidence), key


def test_the_production_table_holds_the_figures_its_formatted_table_shows(instances):
    answer = instances["capmodel.plan.production.ProductionAnswer"]
    frame = answer.table
    assert list(frame.columns) == ["figure", "unit", "estimate", "low", "high"]
    sat = answer.saturation_throughput
    row = frame.set_index("figure").loc["saturation throughput"]
    assert (row["estimate"], row["low"], row["high"]) == (sat.estimate, sat.low, sat.high)
    observed = frame.set_index("figure").loc["observed peak (95th percentile)"]
    assert observed["estimate"] == pytest.approx(np.quantile(_usl(np.geomspace(1, 30, 40)), 0.95), rel=1e-9)
    assert math.isnan(observed["low"])                 # no interval: the formatted table shows a dash
    assert len(answer.capacity_table().rows) == len(frame)


def test_a_comparison_says_its_choice_in_words_and_as_json(instances):
    from capmodel.models.usl.labels import model_label

    comparison = instances["capmodel.models.usl.ranking.ModelComparison"]
    assert comparison.describe() == f"{model_label(comparison.recommended)} is recommended: {comparison.reason}."
    record = comparison.to_json()
    assert record["recommended"] == comparison.recommended
    assert [r["model"] for r in record["table"]] == comparison.table["model"].tolist()
    assert "params" not in record["table"][0]


def test_fleet_evidence_is_the_most_urgent_servers_verdict(instances):
    fleet = instances["capmodel.observe.fleet.Fleet"]
    capacity = instances["capmodel.observe.capacity.ServerCapacity"]
    assert fleet.evidence.to_json() == capacity.evidence.to_json()
