"""A CPU quota for one process (Linux cgroup v1 ``cpu`` controller, as root): the lab's way to give a server less
than a core, so that clients on the other core can drive it to saturation.

``quota(pid, cores)`` is a context manager: a cgroup of its own with ``cpu.cfs_quota_us`` = cores × the period, the
process (all its threads) moved into it, and back to the root group and the cgroup removed on leaving. ``available()``
says whether this machine lets us (the controller mounted and writable)."""
from __future__ import annotations

import contextlib
import os
from pathlib import Path

ROOT = Path("/sys/fs/cgroup/cpu")


def available() -> bool:
    """Whether a cpu cgroup can be made here (cgroup v1's cpu controller mounted, and we may write to it)."""
    return (ROOT / "cgroup.procs").exists() and os.access(ROOT, os.W_OK)


@contextlib.contextmanager
def quota(pid: int, cores: float):
    """Run the block with process ``pid`` held to ``cores`` of CPU time per second."""
    group = ROOT / f"capmodel_lab_{os.getpid()}_{pid}"
    group.mkdir()
    try:
        period = int((group / "cpu.cfs_period_us").read_text())
        (group / "cpu.cfs_quota_us").write_text(str(int(round(cores * period))))
        (group / "cgroup.procs").write_text(str(pid))
        try:
            yield group
        finally:
            with contextlib.suppress(ProcessLookupError, OSError):     # a process that ended has left by itself
                (ROOT / "cgroup.procs").write_text(str(pid))
    finally:
        group.rmdir()


def throttled_share(group: Path) -> float:
    """The share of the group's periods so far in which it used up its quota."""
    stat = dict(line.split() for line in (group / "cpu.stat").read_text().splitlines())
    periods = int(stat["nr_periods"])
    return int(stat["nr_throttled"]) / periods if periods else 0.0
