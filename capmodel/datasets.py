"""``capmodel.datasets.names()`` and ``capmodel.datasets.load(name)``: the bundled datasets (see data/README.md)."""
from capmodel.data.datasets import data_dir, load, load_curve, names, path

__all__ = ["data_dir", "load", "load_curve", "names", "path"]
