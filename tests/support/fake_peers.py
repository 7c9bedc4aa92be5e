"""A TCP peer for the tests of what capmodel does with a scheduler address that is not a Dask scheduler (silent,
garbage, closing): one class, shared by the bench's and the fleet's tests."""
import contextlib
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path


class Peer:
    """A TCP server on 127.0.0.1 that does ``behaviour(conn)`` with every connection, until closed."""

    def __init__(self, behaviour):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.behaviour, self.conns, self.stop = behaviour, [], threading.Event()
        self.address = f"tcp://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.conns.append(conn)
            self.behaviour(conn)

    def close(self):
        self.stop.set()
        for conn in self.conns:
            conn.close()
        self.sock.close()


@contextlib.contextmanager
def dask_scheduler(folder):
    """A real ``dask scheduler`` on a free port of 127.0.0.1, listening when the block starts; yields
    ``(address, process)`` and stops it after (its log in ``folder/scheduler.log``)."""
    dask = str(Path(sys.executable).with_name("dask"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with open(Path(folder) / "scheduler.log", "w") as log:
        proc = subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
                                stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 60
            while True:  # until it listens
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    assert time.monotonic() < deadline, "the scheduler did not start"
                    time.sleep(0.5)
            yield f"tcp://127.0.0.1:{port}", proc
        finally:
            proc.send_signal(signal.SIGCONT)   # a test may have frozen it
            proc.terminate()
            proc.wait(timeout=30)
