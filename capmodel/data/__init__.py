"""Data layer: the curve table, its readers and validation, and the bundled datasets."""
from capmodel.data.curve import validate_curve

__all__ = ["validate_curve"]
