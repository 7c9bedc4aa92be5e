"""The ``capmodel`` command: argument parsing and error handling only.

Each subcommand lives in its own module under ``capmodel/commands/`` with ``register(subparsers)``, which adds its
parser and sets ``func(args) -> int``. Errors a user can act on (``CapmodelError``, a missing file, a bad option) end
with exit status 2 and one line on stderr; no traceback reaches the user unless ``CAPMODEL_DEBUG=1``.
"""
from __future__ import annotations

import argparse
import errno
import os
import pkgutil
import sys
import warnings
from importlib import import_module

import capmodel
import capmodel.commands
from capmodel.errors import CapmodelError
from capmodel.extras import MissingExtraError, extra_of
from capmodel.redact import redact_text

EXIT_USAGE = 2
MAX_MESSAGE = 1000


class UsageError(CapmodelError):
    """A command-line option is missing or malformed; ``prog`` names the (sub)command it belongs to."""

    def __init__(self, message: str, prog: str = "capmodel"):
        super().__init__(message)
        self.prog = prog


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line on stderr and exit 2, like every other input error; and an option
    that takes one value, given twice with different values, is refused (argparse keeps the last one silently, so
    ``--concurrency 1,2 --concurrency 4`` would measure 4 alone). The same value twice is harmless and allowed."""

    def error(self, message):  # noqa: D401 - argparse's API
        raise UsageError(message, prog=self.prog)

    def parse_args(self, args=None, namespace=None):
        _GIVEN.clear()
        return super().parse_args(args, namespace)

    def _get_values(self, action, arg_strings):
        values = super()._get_values(action, arg_strings)
        if type(action) is argparse._StoreAction and action.option_strings:
            key = (id(self), action.dest)
            if key in _GIVEN and _GIVEN[key] != values:
                self.error(f"{'/'.join(action.option_strings)} given twice ({_word(_GIVEN[key])} and "
                           f"{_word(values)}); give it once")
            _GIVEN[key] = values
        return values


#: the value each single-valued option was given in the parse under way ((parser id, dest) -> value)
_GIVEN: dict = {}


def _word(value) -> str:
    return " ".join(map(str, value)) if isinstance(value, list) else str(value)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="capmodel",
        description="Capacity planning for MongoDB: fit scalability models, plan machines and costs, "
        "benchmark a live server, render reports.",
    )
    parser.add_argument("--version", action="version", version=f"capmodel {capmodel.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for info in sorted(pkgutil.iter_modules(capmodel.commands.__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            import_module(f"capmodel.commands.{info.name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    _skip_iri_grammars()
    _one_blas_thread()
    debug = os.environ.get("CAPMODEL_DEBUG") == "1"
    if not debug:  # numerical noise (RuntimeWarning) and libraries' warnings are not the user's business
        warnings.simplefilter("ignore")
    args = None
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return EXIT_USAGE
        status = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe shows up here, inside the handler below, not at interpreter exit
        return status
    except CapmodelError as exc:
        if debug:
            raise
        prog = exc.prog if isinstance(exc, UsageError) else "capmodel"
        return _error(f"{prog}: error: ", one_line(exc), args, argv, exc.json)
    except ModuleNotFoundError as exc:  # an extra's module, on a path no require() guards: still named by its extra
        extra = extra_of(exc.name)
        if debug or extra is None:
            raise
        command = " ".join(filter(None, ["capmodel", getattr(args, "command", None)]))
        return _error("capmodel: error: ", str(MissingExtraError(command, extra, exc.name or extra)), args, argv)
    except BrokenPipeError:  # output piped into `head` and the like: stop quietly
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keeps the interpreter's final flush quiet
        return 0
    except OSError as exc:  # a file that is missing, unreadable or unwritable
        if debug:
            raise
        return _error("capmodel: error: ", one_line(os_error_text(exc)), args, argv)
    except RecursionError:  # a structure nested too deeply for a check that should have caught it
        if debug:
            raise
        return _error("capmodel: error: ", "the input is nested too deeply", args, argv)
    except KeyboardInterrupt:
        print("capmodel: interrupted", file=sys.stderr)
        return 130


def _skip_iri_grammars() -> None:
    """``capmodel report`` imports nbformat, whose validator jsonschema imports its optional IRI format checker,
    rfc3987_syntax, when present (jupyterlab's jupyter-events installs it): that compiles ~40 grammars, 2 s of CPU of
    every report command's 3 s of imports. No notebook schema has an iri format, so the command's process goes without
    it (jsonschema then leaves the iri formats unchecked, as it does when the package is not installed)."""
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]  # None blocks an import (documented)


def _one_blas_thread() -> None:
    """numpy's BLAS (OpenBLAS) on one thread unless ``OPENBLAS_NUM_THREADS`` says otherwise: a command's matrices are
    small (a day of intervals by a few columns), and after each call OpenBLAS's other threads spin waiting for the
    next one, which cost ``capmodel observe --ftdc`` of a day a fifth of its CPU. Set before numpy is loaded (the
    commands import it when they run), as the fit and MVA benchmarks set it."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def _error(prefix: str, message: str, args, argv, payload: dict | None = None) -> int:
    """An error ends every command the same way: one line on stderr and exit 2; with --json also
    {"error": MESSAGE} on stdout (after ``payload``'s keys, what the command had to say besides: one JSON object), so
    that a script reading the JSON reads the error too."""
    print(prefix + message, file=sys.stderr)
    wants_json = getattr(args, "json", False) if args is not None else "--json" in (argv or sys.argv[1:])
    if wants_json:
        from capmodel.jsonable import print_json

        try:
            print_json({**(payload or {}), "error": message})
        except BrokenPipeError:
            pass
    return EXIT_USAGE


#: errors a write meets when the disk, the quota or a size limit refuses more bytes
FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


def os_error_text(exc: OSError) -> str:
    """The system's words and the file (and, when a write was refused for space, the folder to free)."""
    reason = exc.strerror or str(exc)
    if not getattr(exc, "filename", None):
        return (reason if exc.errno not in FULL
                else f"{reason} (while writing a file whose name the system did not give)")
    if exc.errno in FULL:
        folder = os.path.dirname(os.path.abspath(str(exc.filename)))
        return f"{reason} while writing '{exc.filename}' (free space in, or choose another folder than, {folder})"
    return f"{reason} '{exc.filename}'"


def one_line(message) -> str:
    """The error as one line a person can read: secrets masked, newlines folded, at most MAX_MESSAGE characters."""
    text = " ".join(redact_text(str(message)).split())
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 30] + f"... ({len(text):,} characters)"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
