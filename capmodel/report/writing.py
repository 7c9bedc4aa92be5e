"""Writing a report's files: a full disk or an unwritable output folder is one ReportError naming the file; an entry
of the folder that is a symlink is refused, its target untouched (``capmodel.output_folder``)."""
from __future__ import annotations

from pathlib import Path

from capmodel.errors import ReportError
from capmodel.output_folder import write_in_place


def write_text(path: Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path``; ``ReportError`` naming the file when the system refuses."""
    try:
        write_in_place(Path(path), text)
    except OSError as exc:
        raise ReportError(f"cannot write {path}: {exc.strerror or exc}") from None
    return Path(path)
