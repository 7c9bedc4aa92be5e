"""Where servers' FTDC is: a folder holding ``metrics.*`` files is one server's ``diagnostic.data``; any other
folder is searched (``DEPTH`` levels deep, symlinked folders followed once each) for such folders, and a folder below
it that cannot be listed is given as one (its reading then fails naming the permission) rather than passed by in
silence."""
from __future__ import annotations

import os
from pathlib import Path

from capmodel.errors import InputError

#: levels searched below a parent folder: fleet/<datacentre>/<rack>/<host>/<mongod>/diagnostic.data is five
DEPTH = 6


def _has_ftdc(folder: Path) -> bool:
    return any(p.is_file() and p.name.startswith("metrics.") for p in folder.iterdir())


def server_folders(paths) -> list[Path]:
    """Every server's FTDC folder among ``paths`` (a list of folders, or one): a folder holding ``metrics.*`` files
    is one server; any other folder is searched (``DEPTH`` levels deep) for such folders. A path with none, or no
    path, raises ``InputError`` naming it."""
    if isinstance(paths, (str, bytes, os.PathLike)):   # one folder given as itself: not its characters one by one
        paths = [os.fsdecode(paths)]
    paths = list(paths)
    if not paths:
        raise InputError("no folder given: give a server's diagnostic.data or a folder of them")
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
        # a folder below that cannot be listed may hold a server: it is given as one (its row, or its member, then
        # fails naming the permission) instead of the server going missing
        inner, locked = _search(path)
        if not inner and not locked:
            raise InputError(f"{path}: no FTDC files (metrics.*) in this folder or the folders below it (searched "
                             f"{DEPTH} levels down)")
        found.extend(sorted({*inner, *locked}))
    unique = list(dict.fromkeys(p.resolve() for p in found))
    return unique


def _search(path: Path, depth: int = DEPTH) -> tuple[list[Path], list[Path]]:
    """(the folders holding FTDC files, the folders that cannot be listed) down to ``depth`` levels below ``path``;
    a folder holding FTDC is not searched further, and a folder reached twice (a symlink loop, a link to a sibling)
    is searched once. (Before: three levels by glob, so a server four levels down was passed by in silence.)"""
    servers: list[Path] = []
    locked: list[Path] = []
    seen: set = set()

    def walk(folder: Path, level: int) -> None:
        try:
            real = folder.resolve()
        except (OSError, RuntimeError):
            return
        if real in seen:
            return
        seen.add(real)
        try:
            entries = list(os.scandir(folder))
        except PermissionError:
            if level:
                locked.append(folder)
            return
        except OSError:
            return
        if level and any(e.name.startswith("metrics.") and _is_file(e) for e in entries):
            servers.append(folder)
            return
        if level < depth:
            for entry in sorted(entries, key=lambda e: e.name):
                if _is_dir(entry):
                    walk(Path(entry.path), level + 1)

    walk(path, 0)
    return servers, locked


def _is_file(entry) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False


def _is_dir(entry) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def unlisted_folders(path: Path, depth: int = DEPTH) -> list[Path]:
    """The folders down to ``depth`` levels below ``path`` that cannot be listed (no permission)."""
    return _search(path, depth)[1]
