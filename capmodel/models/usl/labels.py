"""Each scalability model's name as readers write it (the code names in ``capmodel.models.usl.family.MODELS`` are
identifiers: ``amdahl``, ``log_coherency``); the reports, the CLI text and the figures' legends all use these."""
from __future__ import annotations

MODEL_LABELS = {"linear": "linear", "amdahl": "Amdahl", "usl": "USL", "log_coherency": "log-coherency"}


def model_label(name: str) -> str:
    """A model's name as readers write it ("Amdahl", "USL", "log-coherency"); an unknown name as given."""
    return MODEL_LABELS.get(name, name)
