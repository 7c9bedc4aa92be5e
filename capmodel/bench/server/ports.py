"""Loopback TCP ports for the embedded mongods: free ones from the OS, or a requested range checked free."""
from __future__ import annotations

import socket

from capmodel.errors import ServerError


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port the OS says is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]

def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
        return True

def choose_ports(port: int | None, count: int) -> list[int]:
    if port is None:
        ports: list[int] = []
        while len(ports) < count:
            candidate = free_port()
            if candidate not in ports:
                ports.append(candidate)
        return ports
    ports = [port + i for i in range(count)]
    for p in ports:
        if not 0 < p < 65536:
            raise ServerError(f"--port {port}: port {p} is out of range")
        if not port_is_free(p):
            raise ServerError(f"--port {port}: port {p} on 127.0.0.1 is already in use (omit --port to get a free one)")
    return ports
