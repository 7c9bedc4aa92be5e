"""Where servers' FTDC is: a folder holding ``metrics.*`` files is one server's ``diagnostic.data``; any other
folder is searched (three levels deep) for such folders, and a folder below it that cannot be listed is given as one
(its reading then fails naming the permission) rather than passed by in silence."""
from __future__ import annotations

import os
from pathlib import Path

from capmodel.errors import InputError


def _has_ftdc(folder: Path) -> bool:
    return any(p.is_file() and p.name.startswith("metrics.") for p in folder.iterdir())


def server_folders(paths) -> list[Path]:
    """Every server's FTDC folder among ``paths``: a folder holding ``metrics.*`` files is one server; any other
    folder is searched (three levels deep) for such folders. A path with none raises ``InputError`` naming it."""
    found: list[Path] = []
    for given in paths:
        path = Path(given).expanduser()
        if path.is_file():
            raise InputError(f"{path}: a file, not a folder (give the server's diagnostic.data, {path.parent})")
        if not path.is_dir():
            raise InputError(f"{path}: no such folder (give a server's diagnostic.data or a folder of them)")
        if _has_ftdc(path):
            found.append(path)
            continue
        inner = sorted({p.parent for pattern in ("*/metrics.*", "*/*/metrics.*", "*/*/*/metrics.*")
                        for p in path.glob(pattern) if p.is_file()})
        # a folder below that cannot be listed may hold a server: glob passes it by in silence, so it is given as one
        # (its row, or its member, then fails naming the permission) instead of the server going missing
        locked = unlisted_folders(path)
        if not inner and not locked:
            raise InputError(f"{path}: no FTDC files (metrics.*) in this folder or the folders below it")
        found.extend(sorted({*inner, *locked}))
    unique = list(dict.fromkeys(p.resolve() for p in found))
    return unique


def unlisted_folders(path: Path, depth: int = 3) -> list[Path]:
    """The folders down to ``depth`` levels below ``path`` that cannot be listed (no permission)."""
    found: list[Path] = []

    def walk(folder: Path, level: int) -> None:
        try:
            entries = list(os.scandir(folder))
        except PermissionError:
            found.append(folder)
            return
        except OSError:
            return
        if level < depth:
            for entry in entries:
                if entry.is_dir():
                    walk(Path(entry.path), level + 1)

    try:
        top = list(os.scandir(path))
    except OSError:
        return []
    for entry in top:
        if entry.is_dir():
            walk(Path(entry.path), 1)
    return found
