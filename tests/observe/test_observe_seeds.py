"""``observe --uri`` with several seeds and no replicaSet: pymongo drops a standalone from such a topology, so the
connection fails although the server answered. The error says which seed is a standalone and to give it alone."""
from __future__ import annotations

import socket

import pytest

from tests.support.cli_run import run

WAIT = "serverSelectionTimeoutMS=1000"   # the URI's own wait, which observe honours: a dead seed costs 1 s, not 5


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("order", ["live-first", "dead-first"])
def test_a_standalone_among_seeds_is_named(mongod, tmp_path, order):
    live, dead = f"127.0.0.1:{mongod.port}", f"127.0.0.1:{_closed_port()}"
    seeds = [live, dead] if order == "live-first" else [dead, live]
    done = run("observe", "--uri", f"mongodb://{','.join(seeds)}/?{WAIT}", "--duration", "1", "--interval", "1",
               "--out", tmp_path / "o")
    assert done.returncode == 2, done.stdout + done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert f"{live} answered as a standalone" in line, line
    assert f"--uri mongodb://{live}/" in line and "no server answered" not in line, line
    assert not (tmp_path / "o").exists()


def test_seeds_that_all_fail_still_say_none_answered(tmp_path):
    seeds = f"127.0.0.1:{_closed_port()},127.0.0.1:{_closed_port()}"
    done = run("observe", "--uri", f"mongodb://{seeds}/?{WAIT}", "--duration", "1", "--interval", "1",
               "--out", tmp_path / "o")
    assert done.returncode == 2
    assert "no server answered" in done.stderr and "standalone" not in done.stderr, done.stderr
