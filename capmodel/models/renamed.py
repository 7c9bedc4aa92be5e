"""Old names of the results' members, kept working for one release (each use warns with ``DeprecationWarning``).

The convention they moved to is in the README, "Results objects": ``table`` a read-only property (a DataFrame),
``describe()`` the answer in words, ``summary()`` the full plain text, ``to_json()`` the machine form.

``renamed_method(new, old)`` is a method ``old`` that warns and calls ``new``. ``table_frame(frame, owner)`` is for a
``table()`` method that became the ``table`` property: the property returns the DataFrame, and calling it, as the old
method was called, warns and returns it (or what the old method returned, when ``old_call`` says). pandas is imported
only when a table is built, so a module that uses this one does not import pandas for it.
"""
from __future__ import annotations

import warnings

REMOVED_IN = "the next release"


def renamed_method(new: str, old: str):
    """A method named ``old`` that warns (``DeprecationWarning``) and returns ``self.new(*args, **kwargs)``."""

    def alias(self, *args, **kwargs):
        warnings.warn(f"{type(self).__name__}.{old}() is deprecated and will be removed in {REMOVED_IN}: use "
                      f"{type(self).__name__}.{new}()", DeprecationWarning, stacklevel=2)
        return getattr(self, new)(*args, **kwargs)

    alias.__name__ = alias.__qualname__ = old
    alias.__doc__ = f"Deprecated old name of ``{new}()`` (kept for one release)."
    alias.renamed_to = new
    return alias


_CALLABLE_FRAME = None


def _callable_frame_class():
    """A DataFrame that can be called once more as the old ``table()`` method was (built on first use)."""
    global _CALLABLE_FRAME
    if _CALLABLE_FRAME is None:
        import pandas as pd

        class TableFrame(pd.DataFrame):
            """The ``table`` property's DataFrame; calling it (the old ``table()``) warns and returns it."""

            _metadata = ["_owner", "_old_call"]

            @property
            def _constructor(self):
                return pd.DataFrame           # what pandas derives from it is a plain DataFrame

            def __call__(self):
                warnings.warn(f"{self._owner}.table() is deprecated and will be removed in {REMOVED_IN}: "
                              f"{self._owner}.table is a property now (no call)", DeprecationWarning, stacklevel=2)
                return self if self._old_call is None else self._old_call()

        TableFrame.__qualname__ = "TableFrame"          # pickled by name: found through the module's __getattr__
        _CALLABLE_FRAME = TableFrame
    return _CALLABLE_FRAME


def __getattr__(name: str):
    if name == "TableFrame":
        return _callable_frame_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def table_frame(frame, owner: str, old_call=None):
    """``frame`` as the ``table`` property's value, callable for one release as the old ``owner.table()`` was;
    ``old_call`` returns what the old method returned when that was not this frame."""
    out = _callable_frame_class()(frame)
    object.__setattr__(out, "_owner", owner)
    object.__setattr__(out, "_old_call", old_call)
    return out
