"""capmodel: capacity planning for MongoDB-backed applications.

Fit the Universal Scalability Law and queueing models to measured concurrency-vs-throughput curves, plan machines and
costs on top of the fits, produce the curves with live mini-benchmarks, and render it all as papermill reports.

Each question has one entry point, called with keywords, and one result object whose ``describe()``, ``summary()``,
``to_json()`` and ``table`` say its answer (the command line and the reports print those):

- fit a curve: ``capmodel.fit_curve`` -> ``CurveAnswer``;
- a queueing network: ``capmodel.models.queueing.network_spec.solve`` (or ``exact_mva``, ``multiclass_mva``) -> an
  MVA result;
- a mix what-if from production: ``capmodel.models.mix.production.mix_what_if`` -> ``MixWhatIf``;
- production capacity of one server: ``capmodel.plan.production.production_answer`` -> ``ProductionAnswer``;
- a fleet of servers: ``capmodel.observe.fleet.fleet_table`` -> a table, ``Fleet`` around it;
- a live benchmark: ``capmodel.bench.sweep.sweep.run_sweep`` -> a run folder (``run.json``, ``steps.jsonl``,
  ``curve.csv``);
- a plan: ``capmodel.plan.plan_study`` (VMs), ``plan_node_study`` (nodes), ``plan_shard_study`` (shards) -> a study.

The names below are imported on first use, so ``import capmodel`` stays fast for the command line.
"""
from importlib import import_module

from capmodel.errors import CapmodelError

__version__ = "0.2.0"

_LAZY = {
    "read_curve": "capmodel.data.readers",
    "fit_curve": "capmodel.models.usl.answer",
    "fit_usl": "capmodel.models.usl.fit",
    "compare_models": "capmodel.models.usl.selection",
    "fit_usl_latency": "capmodel.models.usl.latency_form", "bin_by_concurrency": "capmodel.models.usl.latency_form",
    "datasets": "capmodel.data.datasets",
}

__all__ = ["CapmodelError", "__version__", *_LAZY]


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'capmodel' has no attribute {name!r}")
    module = import_module(_LAZY[name])
    value = module if module.__name__.endswith(name) else getattr(module, name)
    globals()[name] = value
    return value
