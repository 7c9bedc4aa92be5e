"""The CLI's state file: which server ``capmodel server start`` left running (plain JSON under the cache directory)."""
from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

from capmodel.bench.server.process import EmbeddedServer
from capmodel.errors import ServerError

STATE_DIR_ENV = "CAPMODEL_STATE_DIR"


def state_dir() -> Path:
    """``$CAPMODEL_STATE_DIR``, else ``$XDG_CACHE_HOME/capmodel``, else ``~/.cache/capmodel``."""
    if os.environ.get(STATE_DIR_ENV):
        return Path(os.environ[STATE_DIR_ENV]).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "capmodel"

def state_path() -> Path:
    """``server.json`` in the state folder; refused when the folder (or a folder above it) is a file, which
    capmodel did not create and never advises deleting."""
    folder = state_dir()
    for place in (folder, *folder.parents):
        if place.exists():
            if not place.is_dir():
                told = f" (${STATE_DIR_ENV})" if os.environ.get(STATE_DIR_ENV) else ""
                raise ServerError(f"the capmodel state folder {folder}{told} cannot be used: {place} is a file, not a "
                                  f"folder; point ${STATE_DIR_ENV} at a folder")
            break
    return folder / "server.json"

def save_state(server: EmbeddedServer) -> Path:
    path = state_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    try:
        tmp.write_text(json.dumps({**server.to_state(), "started_at": time.time()}, indent=2))
        tmp.replace(path)
    except OSError as exc:   # a full disk names no file by itself
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise ServerError(f"cannot write the server state file {path} (in {path.parent}): "
                          f"{exc.strerror or exc}") from None
    return path

def load_state() -> EmbeddedServer | None:
    """The server the CLI started, if its state file exists (running or not)."""
    path = state_path()
    try:
        state = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise ServerError(f"cannot read the server state file {path}: {exc} (delete it if no server runs)") from None
    try:
        return EmbeddedServer.from_state(state)
    except (KeyError, TypeError) as exc:
        raise ServerError(f"the server state file {path} is malformed ({exc}); delete it if no server runs") from None

def clear_state() -> None:
    with contextlib.suppress(FileNotFoundError):
        state_path().unlink()
