"""Attempts the driver saw fail, also those it then retried without telling the caller (pymongo's retryable reads and
writes hide a failover from the operation's result: a step across an election showed 0 errors).

``failed_attempts(database)`` counts, for this process, the commands on ``database`` that pymongo reported failed
(``CommandFailedEvent``: a server error such as NotWritablePrimary, or the connection closed under it). The listener is
registered once, before the clients of the step are created (pymongo attaches global listeners to clients made after
registration). mongojet publishes no such events: its steps say ``None`` (not counted).
"""
from __future__ import annotations

import threading
from collections import Counter

_COUNTS: Counter = Counter()
_LOCK = threading.Lock()
_REGISTERED = False


def listen() -> None:
    """Register the counting listener once in this process (before the clients to watch are created)."""
    global _REGISTERED
    with _LOCK:
        if _REGISTERED:
            return
        from pymongo import monitoring

        class _FailedCommands(monitoring.CommandListener):
            def started(self, event):
                pass

            def succeeded(self, event):
                pass

            def failed(self, event):
                with _LOCK:
                    _COUNTS[event.database_name] += 1

        monitoring.register(_FailedCommands())
        _REGISTERED = True


def failed_attempts(database: str) -> int:
    """Failed command attempts on ``database`` in this process since ``listen()``."""
    with _LOCK:
        return _COUNTS[database]
