"""The one exception family of capmodel.

Everything capmodel raises on purpose is a ``CapmodelError``; the CLI turns it into exit status 2 and a single line on
stderr. Messages name what the user can act on: the file, the column, the row, the option.
"""


class CapmodelError(Exception):
    """Base of every error capmodel raises on purpose. ``json``: what a ``--json`` command had to say besides the
    error (a fleet's rows, the reports' records); the CLI prints it with the error in one JSON object."""

    def __init__(self, *args, json: dict | None = None):
        super().__init__(*args)
        self.json = json


class InputError(CapmodelError, ValueError):
    """Bad input data: a missing or non-numeric column, NaN, a value out of range, too few points."""


class FitError(CapmodelError):
    """A model could not be fitted to the data it was given."""


class PlanError(CapmodelError, ValueError):
    """A planning question that cannot be answered as asked (unknown VM, unreachable target, bad option)."""


class BenchError(CapmodelError):
    """A benchmark could not run or had to stop (refused target, unsafe collection, failed step)."""


class ServerError(CapmodelError):
    """The embedded mongod could not be started, reached or stopped."""


class ReportError(CapmodelError):
    """A notebook report could not be executed or converted."""


def plain(value):
    """A numpy scalar as the Python number it holds (it reads as 0.0, not as np.float64(0.0)); anything else as is."""
    item = getattr(value, "item", None)
    if callable(item) and type(value).__module__ == "numpy" and getattr(value, "ndim", None) == 0:
        return item()
    return value


def shown(value, limit: int = 60) -> str:
    """``repr(value)`` cut to a readable length for a message (a 1 MB cell must not become a 1 MB error line)."""
    value = plain(value)
    try:
        text = repr(value) if not isinstance(value, str) else repr(value[: limit + 1])
    except ValueError:  # an integer beyond Python's digit limit for str()
        text = f"<an integer of about {int(value.bit_length() * 0.30103)} digits>"
    return text if len(text) <= limit else text[: limit - 3] + "..."
