"""A Dask scheduler address that is wrong in every way a hostile network allows ends the run with one line, within
the documented bound (connect + handshake deadlines), with no traceback and no allocation sized by the peer.

Real sockets on 127.0.0.1: a server that accepts and never answers, one that answers garbage claiming 3 EiB, one that
closes at once; a wrong scheme; and a real ``dask scheduler`` process, which passes. Elapsed times are checked loosely
(well above the deadlines) only to tell "bounded" from "hangs"; speed itself is not asserted.
"""
from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.fake_peers import Peer, dask_scheduler  # tests/support/fake_peers.py

from capmodel.bench.cluster.scheduler_probe import HANDSHAKE_TIMEOUT_S, probe_scheduler, split_address
from capmodel.errors import BenchError

BOUND_S = 10.0  # connect 5 s + handshake 5 s, the README's figure


@pytest.fixture
def silent_peer():
    peer = Peer(lambda conn: None)
    yield peer
    peer.close()


@pytest.fixture
def garbage_peer():
    # the first 8 bytes read as a frame length: 3 EiB, then text
    peer = Peer(lambda conn: conn.sendall(struct.pack("<Q", 3 * 2**60) + b"HTTP/1.1 400 Bad Request\r\n\r\n"))
    yield peer
    peer.close()


@pytest.fixture
def small_garbage_peer():
    peer = Peer(lambda conn: conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n" + b"x" * 64))
    yield peer
    peer.close()


def _probe_error(address: str) -> tuple[str, float]:
    started = time.monotonic()
    with pytest.raises(BenchError) as info:
        probe_scheduler(address)
    return str(info.value), time.monotonic() - started


def test_a_silent_peer_is_named_after_the_handshake_deadline(silent_peer):
    message, elapsed = _probe_error(silent_peer.address)
    assert "accepted the connection but sent no handshake" in message and silent_peer.address in message
    assert HANDSHAKE_TIMEOUT_S * 0.9 <= elapsed < BOUND_S * 2


def test_a_garbage_peer_claiming_exabytes_is_refused_without_reading_them(garbage_peer):
    message, elapsed = _probe_error(garbage_peer.address)
    assert f"claims {3 * 2**60:,} bytes" in message and "not a Dask scheduler" in message
    assert elapsed < BOUND_S


def test_a_peer_whose_first_message_is_not_a_handshake_is_refused(small_garbage_peer):
    message, _ = _probe_error(small_garbage_peer.address)
    assert "not a Dask scheduler" in message or "not as a Dask scheduler does" in message


def test_a_peer_that_closes_at_once_is_named():
    peer = Peer(lambda conn: conn.close())
    try:
        message, _ = _probe_error(peer.address)
    finally:
        peer.close()
    assert "closed the connection without a Dask handshake" in message


@pytest.mark.parametrize("address, fragment", [
    ("http://127.0.0.1:8786", "'http://'"), ("ucx://127.0.0.1:8786", "'ucx://'"), ("tls://127.0.0.1:8786", "'tls://'"),
    ("tcp://127.0.0.1", "port from 1 to 65535"), ("tcp://127.0.0.1:99999", "port from 1 to 65535"),
    ("tcp://:8786", "port from 1 to 65535"),
])
def test_a_wrong_scheme_or_port_is_one_line_before_any_connection(address, fragment):
    with pytest.raises(BenchError, match="--scheduler") as info:
        split_address(address)
    assert fragment in str(info.value)


def test_an_address_without_a_scheme_is_tcp():
    assert split_address("127.0.0.1:8786") == ("127.0.0.1", 8786)
    assert split_address("tcp://[::1]:8786") == ("::1", 8786)


def test_a_real_dask_scheduler_passes_the_probe(tmp_path):
    dask = str(Path(sys.executable).with_name("dask"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = open(tmp_path / "scheduler.log", "w")
    proc = subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                probe_scheduler(f"tcp://127.0.0.1:{port}")
                break
            except BenchError as exc:
                assert "cannot reach" in str(exc), str(exc)  # not listening yet
                assert time.monotonic() < deadline, "the scheduler did not start"
                time.sleep(0.5)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


def test_a_stopped_schedulers_open_socket_is_named_within_the_bound(tmp_path):
    """A real ``dask scheduler`` frozen with SIGSTOP: the kernel still accepts connections, nothing answers."""
    import signal

    with dask_scheduler(tmp_path) as (address, proc):
        deadline = time.monotonic() + 60
        while True:   # until it answers as a scheduler
            try:
                probe_scheduler(address)
                break
            except BenchError:
                assert time.monotonic() < deadline, "the scheduler did not answer"
                time.sleep(0.5)
        proc.send_signal(signal.SIGSTOP)
        message, elapsed = _probe_error(address)
        assert "accepted the connection but sent no handshake" in message and elapsed < BOUND_S * 2


@pytest.mark.parametrize("kind", ["silent", "garbage", "scheme"])
def test_the_cli_ends_with_one_line_through_the_environment_variable(kind, silent_peer, garbage_peer, tmp_path):
    address = {"silent": silent_peer.address, "garbage": garbage_peer.address,
               "scheme": "http://127.0.0.1:8786"}[kind]
    env = {**os.environ, "CAPMODEL_DASK_SCHEDULER": address}
    started = time.monotonic()
    proc = subprocess.run([str(Path(sys.executable).with_name("capmodel")), "bench", "--uri", "mongodb://127.0.0.1:9/",
                           "--out", str(tmp_path / "out"), "--quiet"], env=env, capture_output=True, text=True,
                          timeout=120)
    elapsed = time.monotonic() - started
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert address in lines[0] or "'http://'" in lines[0]
    assert elapsed < BOUND_S + 20  # interpreter start-up on a loaded machine; a hang would be minutes
