"""capmodel: capacity planning for MongoDB-backed applications.

Fit the Universal Scalability Law and queueing models to measured concurrency-vs-throughput curves, plan machines and
costs on top of the fits, produce the curves with live mini-benchmarks, and render it all as papermill reports.

The names below are imported on first use, so ``import capmodel`` stays fast for the command line.
"""
from importlib import import_module

from capmodel.errors import CapmodelError

__version__ = "0.2.0"

_LAZY = {
    "read_curve": "capmodel.data.readers",
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
