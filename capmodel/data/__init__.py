"""Data layer: the curve table, its readers and validation, and the bundled datasets."""
from capmodel.data.curve import validate_curve
from capmodel.data.readers import read_curve

__all__ = ["read_curve", "validate_curve"]
