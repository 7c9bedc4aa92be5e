"""A TCP peer for the tests of what capmodel does with a scheduler address that is not a Dask scheduler (silent,
garbage, closing): one class, shared by the bench's and the fleet's tests."""
import socket
import threading


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
