"""Check a Dask scheduler's address before Dask is given it: the scheme, the connection and the first message, each
with a deadline.

Dask's client trusts its peer: a socket that accepts and never answers holds it without end, and a peer that sends
garbage has its first eight bytes read as a frame length (Dask then tries to allocate that much: exabytes) and leaves a
traceback from the client's cleanup. A real scheduler speaks first: on a new connection it sends its handshake (a
length-prefixed message of about a hundred bytes naming ``compression``, ``python`` and ``pickle-protocol``), so reading
it with a deadline and a size bound tells a scheduler from anything else without trusting what the peer claims.

Bounds: ``CONNECT_TIMEOUT_S`` to connect, ``HANDSHAKE_TIMEOUT_S`` for the first message, at most
``HANDSHAKE_MAX_BYTES`` read. A wrong address ends the run with one line within their sum (10 s), stated in the README.
"""
from __future__ import annotations

import socket
import struct
import time

from capmodel.errors import BenchError
from capmodel.formatting import number

CONNECT_TIMEOUT_S = 5.0
HANDSHAKE_TIMEOUT_S = 5.0
HANDSHAKE_MAX_BYTES = 64 * 1024  # a scheduler's handshake is ~100 bytes; nothing it says first is larger
CALL_TIMEOUT_S = 30.0  # every later call to the scheduler (workers, clocks, versions)
SCHEMES = ("tcp",)
HANDSHAKE_KEYS = (b"compression", b"python", b"pickle-protocol")


def split_address(address: str) -> tuple[str, int]:
    """``(host, port)`` of ``tcp://HOST:PORT`` (or ``HOST:PORT``); a BenchError naming what is wrong otherwise."""
    text = address.strip()
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "tcp", text
    if scheme.lower() not in SCHEMES:
        raise BenchError(f"--scheduler {address!r}: the scheme {scheme + '://'!r} is not one capmodel speaks; give "
                         "tcp://HOST:PORT (as 'dask scheduler' prints it)")
    host, colon, port_text = rest.rpartition(":")
    host = host.strip("[]")
    if not colon or not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise BenchError(f"--scheduler {address!r}: expected tcp://HOST:PORT with a port from 1 to 65535, "
                         "e.g. tcp://10.0.0.5:8786")
    return host, int(port_text)


def probe_scheduler(address: str, connect_timeout: float = CONNECT_TIMEOUT_S,
                    handshake_timeout: float = HANDSHAKE_TIMEOUT_S) -> None:
    """Return when a Dask scheduler answers at ``address``; raise one BenchError line otherwise, within
    ``connect_timeout + handshake_timeout`` seconds."""
    host, port = split_address(address)
    where = f"the Dask scheduler at {address}"
    try:
        sock = socket.create_connection((host, port), timeout=connect_timeout)
    except socket.timeout:
        raise BenchError(f"cannot reach {where}: no connection within {number(connect_timeout, 6)} s") from None
    except OSError as exc:
        raise BenchError(f"cannot reach {where}: {exc.strerror or exc}") from None
    try:
        first = _read_handshake(sock, handshake_timeout, where)
    finally:
        sock.close()
    if not all(key in first for key in HANDSHAKE_KEYS):
        raise BenchError(f"{where} answered, but not as a Dask scheduler does (its first message is not a Dask "
                         "handshake); check the host and port")


def _read_handshake(sock: socket.socket, timeout: float, where: str) -> bytes:
    deadline = time.monotonic() + timeout
    prefix = _read_exactly(sock, 8, deadline, where, timeout)
    (claimed,) = struct.unpack("<Q", prefix)
    if claimed > HANDSHAKE_MAX_BYTES:
        raise BenchError(f"{where} is not a Dask scheduler: its first message claims {claimed:,} bytes (a Dask "
                         f"handshake is about a hundred); check the host and port")
    return _read_exactly(sock, claimed, deadline, where, timeout)


def _read_exactly(sock: socket.socket, count: int, deadline: float, where: str, timeout: float) -> bytes:
    data = bytearray()
    while len(data) < count:
        left = deadline - time.monotonic()
        if left <= 0:
            raise _silent(where, timeout)
        sock.settimeout(left)
        try:
            chunk = sock.recv(count - len(data))
        except socket.timeout:
            raise _silent(where, timeout) from None
        except OSError as exc:
            raise BenchError(f"{where} dropped the connection: {exc.strerror or exc}") from None
        if not chunk:
            raise BenchError(f"{where} closed the connection without a Dask handshake; check the host and port")
        data += chunk
    return bytes(data)


def _silent(where: str, timeout: float) -> BenchError:
    return BenchError(f"{where} accepted the connection but sent no handshake within {number(timeout, 6)} s (a Dask "
                      "scheduler speaks first): is it a stopped scheduler, a proxy or another service?")
