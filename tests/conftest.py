"""Fixtures shared by the whole test suite.

``mongod`` and ``replica_set`` are real embedded MongoDB servers (never mocks). They are session-scoped and lazy: a
server starts the first time a test asks for it and is stopped when the session ends, so tests that do not need one
pay nothing. Nothing is skipped: the CI machine has AVX and the bundled mongod, and a test that needs a server fails
loudly if one cannot start.
"""
from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def mongod():
    """A standalone embedded mongod on a free 127.0.0.1 port (an EmbeddedServer: .uri, .port, .client(), ...)."""
    from capmodel.bench.server import embedded_server

    with embedded_server() as server:
        yield server


@pytest.fixture(scope="session")
def replica_set():
    """A 3-member embedded replica set (one PRIMARY, two SECONDARY); .uri carries ?replicaSet=..."""
    from capmodel.bench.server import embedded_server

    with embedded_server(replica_set=3) as server:
        yield server


@pytest.fixture
def mongo_client(mongod):
    """A pymongo client on the session's standalone mongod, closed after the test."""
    client = mongod.client()
    yield client
    client.close()


def pytest_collection_modifyitems(items):
    """Tests that use a real server get the ``mongod`` marker, so ``-m "not mongod"`` can leave them out."""
    for item in items:
        if {"mongod", "replica_set", "mongo_client"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.mongod)
