"""Data layer: the curve table, its readers and validation, and the bundled datasets.

``read_curve`` and ``validate_curve`` are imported on first use, so a module of this layer that needs no pandas
(``capmodel.data.curve_columns``) is imported without it.
"""
from importlib import import_module

_LAZY = {"read_curve": "capmodel.data.readers", "validate_curve": "capmodel.data.curve"}

__all__ = ["read_curve", "validate_curve"]


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'capmodel.data' has no attribute {name!r}")
    value = getattr(import_module(_LAZY[name]), name)
    globals()[name] = value
    return value
