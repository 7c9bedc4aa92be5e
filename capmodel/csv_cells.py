"""A text cell of a CSV capmodel writes, guarded against spreadsheet formula injection, and read back.

A cell whose text comes from outside (a host name from a server's FTDC metadata or ``hello``, an error message
quoting one) and begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is taken for a formula by a
spreadsheet that opens the file (OWASP, "CSV Injection"). Such a cell is written with a ``'`` before it, which a
spreadsheet shows as text; so is a cell that already begins with ``'``, so that ``unguarded`` reads every cell back
to its own text (a ``'`` first always marks the guard). Numbers are not text cells and are never guarded: ``-1.5``
stays a number. The one rule for every CSV the package writes (``capmodel.observe.csv_out``, the live recording, the
report tables of ``capmodel.formatting``) and for its readers of them (``mva --observed``, ``read_observation``).

Standard library only (the two frame functions take pandas' DataFrames, imported by their callers).
"""
from __future__ import annotations

#: first characters a spreadsheet reads as the start of a formula (OWASP), and the guard itself
TRIGGERS = frozenset("=+-@\t\r'")
GUARD = "'"


def guarded(text):
    """The cell's text as written: ``GUARD`` before a text that begins with a trigger; anything else as it is."""
    return GUARD + text if isinstance(text, str) and text[:1] in TRIGGERS else text


def unguarded(text):
    """A written cell's own text: without the ``GUARD`` that ``guarded`` put first; anything else as it is."""
    return text[1:] if isinstance(text, str) and text[:1] == GUARD else text


def _texts(frame):
    """The names of a pandas DataFrame's columns that may hold text (object or string dtype)."""
    from pandas.api.types import is_object_dtype, is_string_dtype

    return [name for name in frame.columns if is_object_dtype(frame[name]) or is_string_dtype(frame[name])]


def guard_frame(frame):
    """A copy of a pandas DataFrame whose text cells (in columns of object or string dtype) are ``guarded``."""
    out = frame.copy()
    for name in _texts(out):
        out[name] = out[name].map(guarded)
    return out


def unguard_frame(frame):
    """The DataFrame ``pandas.read_csv`` read of a CSV the package wrote, its text cells ``unguarded`` (in place;
    returned)."""
    for name in _texts(frame):
        frame[name] = frame[name].map(unguarded)
    return frame
