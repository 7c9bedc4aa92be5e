"""Bounds on a measured-curve file, checked before any parser sees it.

A curve table is small: tens of rows, tens of columns. A file far beyond that is a mistake or an attack, and parsing
it first (a 2 GB file grew to 14.8 GB of memory; a 9 MB CSV of 10^6 columns took 27 s and 1.67 GB) is the harm. So:

- ``MAX_FILE_BYTES`` (64 MiB: about a million rows) for every format, from ``stat`` before a byte is read;
- ``MAX_LINE_BYTES`` (64 KiB) per line for the line formats (CSV, TSV, JSON Lines, markdown, YCSB output), found by a
  streaming scan that holds one block at a time;
- ``MAX_COLUMNS`` (1,000) columns, counted in the header line before parsing (and after, for the other formats).

Each is one ``InputError`` naming the file, the limit and where it was passed (line, byte offset); lists of column
names in messages are cut (``listed``), so no error line is longer than a few hundred characters.
"""
from __future__ import annotations

from pathlib import Path

from capmodel.errors import InputError

MAX_FILE_BYTES = 64 * 2**20
MAX_LINE_BYTES = 64 * 2**10
MAX_COLUMNS = 1_000
LINE_FORMATS = frozenset({"csv", "tsv", "jsonl", "markdown", "ycsb"})
_BLOCK = 2**20


def check_size(path: Path) -> int:
    """The file's size in bytes; an InputError beyond ``MAX_FILE_BYTES``."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise InputError(f"{path}: cannot read file ({exc.strerror or exc})") from None
    if size > MAX_FILE_BYTES:
        raise InputError(f"{path}: {size:,} bytes is more than a curve file may have ({MAX_FILE_BYTES:,} bytes, "
                         "about a million rows); pass a smaller extract")
    return size


def check_lines(path: Path) -> None:
    """Raise when a line of ``path`` is longer than ``MAX_LINE_BYTES``, naming the line and its byte offset."""
    line_start, line_no, offset = 0, 1, 0
    try:
        with open(path, "rb") as fh:
            while block := fh.read(_BLOCK):
                start = 0
                while (end := block.find(b"\n", start)) >= 0:
                    if offset + end - line_start > MAX_LINE_BYTES:
                        raise _too_long(path, line_no, line_start)
                    line_start, line_no, start = offset + end + 1, line_no + 1, end + 1
                offset += len(block)
                if offset - line_start > MAX_LINE_BYTES:
                    raise _too_long(path, line_no, line_start)
    except OSError as exc:
        raise InputError(f"{path}: cannot read file ({exc.strerror or exc})") from None


def _too_long(path: Path, line_no: int, at: int) -> InputError:
    return InputError(f"{path}: line {line_no:,} (byte offset {at:,}) is longer than {MAX_LINE_BYTES:,} bytes; a curve "
                      "table's lines are short (is this the right file?)")


def check_file(path: Path, fmt: str) -> None:
    """All the bounds that need no parsing: size, and line length for the line formats (which are text: a UTF-16
    file or a NUL byte is refused, naming the encoding or the byte offset)."""
    check_size(path)
    if fmt in LINE_FORMATS:
        check_text(path)
        check_lines(path)


def check_text(path: Path) -> None:
    """Raise when ``path`` is UTF-16 or UTF-32 (by its byte-order mark, or NULs between ASCII letters) or holds a NUL
    byte: a line format is UTF-8 text (pandas would read UTF-16 as garbled column names)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
            fh.seek(0)
            nul, offset = -1, 0
            while nul < 0 and (block := fh.read(_BLOCK)):
                found = block.find(b"\0")
                nul = offset + found if found >= 0 else -1
                offset += len(block)
    except OSError as exc:
        raise InputError(f"{path}: cannot read file ({exc.strerror or exc})") from None
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) or (nul in (0, 1) and len(head) == 4 and head.count(b"\0") == 2):
        raise InputError(f"{path}: UTF-16 (or UTF-32) text; save it as UTF-8 (in a spreadsheet: CSV UTF-8)")
    if nul >= 0:
        raise InputError(f"{path}: binary content, not text (NUL byte at byte offset {nul:,})")


def check_column_count(count: int, source) -> None:
    if count > MAX_COLUMNS:
        raise InputError(f"{source}: {count:,} columns is more than a curve table may have ({MAX_COLUMNS:,})")


def listed(names, limit: int = 12, width: int = 40) -> str:
    """``names`` for a message: at most ``limit`` of them, each cut to ``width`` characters, and how many in all."""
    names = [str(n) for n in names]
    shown = [n if len(n) <= width else n[: width - 3] + "..." for n in names[:limit]]
    more = f" ... ({len(names):,} in all)" if len(names) > limit else ""
    return (", ".join(shown) or "none") + more
