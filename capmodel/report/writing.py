"""Writing a report's files: a full disk or an unwritable output folder is one ReportError naming the file."""
from __future__ import annotations

from pathlib import Path

from capmodel.errors import ReportError


def write_text(path: Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path``; ``ReportError`` naming the file when the system refuses."""
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ReportError(f"cannot write {path}: {exc.strerror or exc}") from None
    return Path(path)
