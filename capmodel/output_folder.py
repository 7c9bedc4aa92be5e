"""An output folder a run owns: one run at a time, nothing written through a symlink, no file replaced that capmodel
did not write, and records that say their format version.

The one place for these rules (bench, observe and report call it; standard library only):

- ``FolderLock(out)``: an exclusive ``flock`` on ``out/.capmodel.lock`` for the run's life, the holder's PID written in
  it. A second run is refused naming that PID. The kernel drops the lock when its process dies, so the file a crashed
  run leaves behind never blocks the next run.
- ``append_line`` / ``write_atomic``: files are opened with ``O_NOFOLLOW`` (an entry of the folder that is a symlink is
  refused, its target untouched); an atomic write goes to a new temporary file (``O_EXCL``) renamed over the entry.
- ``refuse_foreign(path, is_ours)``: an existing entry that is a symlink, not a regular file, or not recognised by
  ``is_ours`` is refused, naming it.
- ``check_folder(out)`` / ``make_folder(out)``: a file where the folder (or a parent) should be is refused as a file,
  not a folder; ``make_folder`` then creates it when missing.
- ``check_format(record, path, known)``: a record's ``format_version`` (absent: 1, the records written before versions
  existed); a newer one than this capmodel knows is refused with one line.
"""
from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from pathlib import Path

from capmodel.errors import CapmodelError

LOCK_FILE = ".capmodel.lock"
_PID_LINE = re.compile(rb"(?:[1-9][0-9]{0,9}\n)?")   # a PID and a newline, as written below; or nothing


class OutputFolderError(CapmodelError):
    """An output folder capmodel may not write into as asked (in use, a symlink, a file it did not write)."""


class FolderLock:
    """``with FolderLock(out):`` holds ``out`` for this process; a second holder is refused, naming the first's PID."""

    def __init__(self, out, option: str = "--out"):
        self.out, self.option = Path(out), option
        self.fd: int | None = None

    def __enter__(self) -> "FolderLock":
        import fcntl

        path = self.out / LOCK_FILE
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o644)
        except OSError as exc:
            raise _refused_open(path, exc, self.option) from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise OutputFolderError(f"{path} exists and is not a regular file; capmodel will not use it as its lock "
                                    f"(move it or choose another {self.option})")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = _read_pid(fd)
            os.close(fd)
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise OutputFolderError(f"cannot lock {path}: {exc.strerror or exc}") from None
            who = f"PID {holder}" if holder else "another process"
            raise OutputFolderError(f"{self.option} {self.out} is in use by another capmodel run ({who}); wait for "
                                    f"it to finish or choose another {self.option}") from None
        if not _PID_LINE.fullmatch(os.pread(fd, 64, 0)):  # a lock file holds what __enter__ writes, or nothing
            os.close(fd)
            raise OutputFolderError(f"{path} was not written by capmodel; capmodel will not replace it: move it away "
                                    f"or choose another {self.option}")
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self.fd = fd
        return self

    def __exit__(self, *exc_info) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, 0)
            os.close(self.fd)  # closing releases the flock; the empty file stays (removing it would race)
            self.fd = None


def check_folder(out, option: str = "--out") -> Path:
    """Refuse ``out`` when it, or one of its parents, is a file rather than a folder (naming it); nothing is
    created. Returns ``out`` as a Path."""
    out = Path(out)
    if os.path.lexists(out) and not out.is_dir():
        raise OutputFolderError(f"{option} {out} is a file, not a folder: give a folder (it is created when "
                                "missing)")
    for parent in out.parents:
        if parent.exists() and not parent.is_dir():
            raise OutputFolderError(f"{option} {out}: {parent} is a file, not a folder")
    return out


def make_folder(out, option: str = "--out") -> Path:
    """Create the folder ``out`` (and its parents) when missing and return it; a file in its place is refused as in
    ``check_folder``."""
    out = check_folder(out, option)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputFolderError(f"cannot create {option} {out}: {exc.strerror or exc}") from None
    return out


class FolderBefore:
    """What a folder held before a run (``FolderBefore(out)``, taken before anything is created), so that a run
    refused before it produced anything leaves the folder as it found it: ``undo(names)`` removes those of
    ``names`` that were not there before (``LOCK_FILE`` among them), then the folders the run created, innermost
    first, when they are empty. Call it while holding the lock, so that no other run can take the lock file
    removed."""

    def __init__(self, out):
        self.out = Path(out).absolute()
        self.created = [p for p in (self.out, *self.out.parents) if not os.path.lexists(p)]
        try:
            self.before: set[str] | None = set(os.listdir(self.out)) if not self.created else set()
        except OSError:
            self.before = None            # unreadable: nothing is ever removed

    def undo(self, names) -> None:
        if self.before is None:
            return
        for name in names:
            if name not in self.before:
                with contextlib.suppress(OSError):
                    if not os.path.isdir(self.out / name) or os.path.islink(self.out / name):
                        os.unlink(self.out / name)
        for folder in self.created:      # innermost first; stops at the first that is not empty
            try:
                os.rmdir(folder)
            except OSError:
                break


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _refused_open(path: Path, exc: OSError, option: str = "--out") -> OutputFolderError:
    if exc.errno == errno.ELOOP:
        return OutputFolderError(f"{path} is a symlink; capmodel does not write through symlinks in {option} "
                                 "(remove it or choose another folder)")
    return OutputFolderError(f"cannot write {path}: {exc.strerror or exc}")


def refuse_foreign(path: Path, is_ours, option: str = "--out") -> None:
    """Raise when ``path`` exists and is a symlink, not a regular file, or a file ``is_ours(path)`` does not
    recognise; nothing is raised for a missing entry."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode):
        raise OutputFolderError(f"{path} is a symlink; capmodel does not write through symlinks in {option} (remove "
                                "it or choose another folder)")
    if not stat.S_ISREG(info.st_mode):
        raise OutputFolderError(f"{path} exists and is not a regular file; capmodel will not replace it (move it "
                                f"or choose another {option})")
    if not is_ours(path):
        raise OutputFolderError(f"{path} was not written by capmodel (or was changed since); capmodel will not "
                                f"replace it: move it away or choose another {option}")


def _write_all(fd: int, text: str, path: Path, sync: bool = True) -> None:
    """Write all of ``text`` (UTF-8) to ``fd``: ``os.write`` may take only part of it. A refusal (a full disk, a
    size limit) is an ``OSError`` naming ``path``, the file the user asked for (``os.write`` names none)."""
    data = text.encode("utf-8")
    try:
        while data:
            data = data[os.write(fd, data):]
        if sync:
            os.fsync(fd)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, str(path)) from None


def append_line(path: Path, text: str) -> None:
    """Append ``text`` to ``path`` (created if missing) and force it to disk; never through a symlink."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        raise _refused_open(path, exc) from None
    try:
        _write_all(fd, text, path)
    finally:
        os.close(fd)


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one rename: a new temporary file beside it (``O_EXCL``, never a symlink's
    target), fsync'ed, then renamed over the entry. A failure leaves no temporary file."""
    _regular_or_missing(path)  # never rename over a device, a folder or a symlink
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    except FileExistsError:
        tmp.unlink()  # our own leftover (same PID): a regular file or a link, removed, never followed
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    try:
        try:
            _write_all(fd, text, path)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def write_in_place(path: Path, text: str) -> None:
    """Write ``text`` into ``path`` (created or truncated), never through a symlink; for files a reader may watch
    grow, where ``write_atomic``'s rename is not wanted."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _refused_open(path, exc) from None
        raise
    try:
        _write_all(fd, text, path, sync=False)
    finally:
        os.close(fd)


def _regular_or_missing(path: Path) -> None:
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISLNK(mode):
        raise OutputFolderError(f"{path} is a symlink; capmodel does not write through symlinks (remove it or choose "
                                "another folder)")
    if not stat.S_ISREG(mode):
        raise OutputFolderError(f"{path} exists and is not a regular file; capmodel will not replace it")


def check_format(record: dict, path, known: int, what: str = "record") -> int:
    """The record's format version (1 when it has none); a newer one than ``known`` or a malformed one is refused."""
    version = record.get("format_version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise OutputFolderError(f"{path}: format_version {str(version)[:20]!r} is not a positive whole number; this "
                                f"is not a {what} capmodel wrote")
    if version > known:
        raise OutputFolderError(f"{path} was written by a newer capmodel (format {version}; this one reads formats "
                                f"1 to {known}): upgrade capmodel to read it")
    return version
