"""The wire binding (``capmodel.bench.client.wire``, the default) against real mongods: every operation kind with
the counts the server confirms, the documents it writes as pymongo reads them back, SCRAM-SHA-256 and SCRAM-SHA-1
authentication on a server started with ``--auth`` (a wrong password refused as the server refuses it), reads that
follow the read preference on a replica set, a client-side timeout that leaves the next operation working, and the
URIs it leaves to mongojet."""
from __future__ import annotations

import itertools
from urllib.parse import quote_plus

import pytest
from pymongo import MongoClient
from pymongo.errors import DuplicateKeyError, NetworkTimeout, OperationFailure

from capmodel.bench.client import telemetry
from capmodel.bench.client.runner import Runner
from capmodel.bench.client.wire import WireBinding, WireConnection, unsupported
from tests.support.auth_server import auth_mongod
from tests.support.loaded_collections import loaded

DB = "capmodel_test_wire"
_names = itertools.count()


@pytest.fixture(scope="module")
def client(mongod):
    c = mongod.client()
    yield c
    c.drop_database(DB)
    c.close()


def wire(client, uri, collection, timeout_s=20.0):
    return WireBinding(client, DB, collection, uri, timeout_s)


@pytest.mark.parametrize("name", ["orders-mix", "ycsb-a", "ycsb-e", "ycsb-f", "ycsb-d"])
def test_every_operation_kind_runs_and_the_server_counts_them(client, mongod, name):
    coll, w, keys = loaded(client[DB], name, records=500)
    binding = wire(client, mongod.uri, w.collection)
    before = telemetry.server_snapshot(client)
    try:
        result = Runner(binding, w, keys, seed=3).run(4, duration=1.0, warmup=0.2)
    finally:
        binding.close()
    after = telemetry.server_snapshot(client)
    assert result.errors == {} and result.runner_failures == 0 and result.stuck_workers == 0
    assert all(result.latency[op.name]["count"] > 0 for op in w.operations)
    served = sum(after[f"op_latency.{k}.ops"] - before[f"op_latency.{k}.ops"] for k in ("reads", "writes", "commands"))
    assert served >= result.operations


def test_writes_land_as_pymongo_reads_them_and_counts_are_the_servers(client, mongod):
    coll = client[DB][f"writes_{next(_names)}"]
    binding = wire(client, mongod.uri, coll.name)
    try:
        assert binding.insert_many([{"_id": i, "v": i % 3} for i in range(10)]) == 10
        assert binding.insert_one({"_id": "x", "v": 7}) == 1
        assert binding.update({"v": 1}, {"$set": {"w": True}}, many=True) == 3
        assert binding.update({"v": 2}, {"$set": {"w": True}}) == 1
        assert binding.find({"w": True}, None, [("_id", 1)], 0) == 4
        assert binding.delete({"v": 0}, many=True) == 4
        assert binding.aggregate([{"$match": {"v": {"$gte": 1}}}, {"$count": "n"}]) == 1
        # a result larger than one batch comes through getMore: 150 documents, first batch 101
        binding.insert_many([{"_id": f"b{i}", "v": 9} for i in range(150)])
        assert binding.find({"v": 9}, None, None, 0) == 150
        with pytest.raises(DuplicateKeyError) as duplicate:   # pymongo's class for it, as the other bindings say
            binding.insert_one({"_id": "x"})
        assert duplicate.value.code == 11000
        assert binding.read({"_id": "x"}) == 1
    finally:
        binding.close()
    assert coll.find_one({"_id": "x"}) == {"_id": "x", "v": 7}
    assert coll.count_documents({"w": True}) == 4 and coll.count_documents({"v": 0}) == 0


def test_a_timed_out_operation_fails_and_the_next_one_works(client, mongod):
    coll = client[DB][f"slow_{next(_names)}"]
    coll.insert_one({"_id": 1})
    binding = wire(client, mongod.uri, coll.name, timeout_s=0.3)
    try:
        with pytest.raises(NetworkTimeout):
            binding.find({"$where": "sleep(1000) || true"}, None, None, 0)
        assert binding.read({"_id": 1}) == 1   # a new connection: the late reply is not read as this one's
    finally:
        binding.close()


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-1", None])
def test_scram_authenticates_and_a_wrong_password_is_refused(tmp_path, mechanism):
    password = "s3cret,=ä"
    with auth_mongod(tmp_path, password) as (port, _):
        chosen = f"&authMechanism={mechanism}" if mechanism else ""
        uri = f"mongodb://bench:{quote_plus(password)}@127.0.0.1:{port}/?authSource=admin{chosen}"
        with MongoClient(uri, directConnection=True) as pymongo_client:
            binding = WireBinding(pymongo_client, DB, "t", uri, 10.0)
            try:
                assert binding.insert_one({"_id": 1}) == 1 and binding.read({"_id": 1}) == 1
            finally:
                binding.close()
            assert pymongo_client[DB]["t"].count_documents({}) == 1
        wrong = uri.replace("s3cret", "wrong")
        with MongoClient(f"mongodb://127.0.0.1:{port}/", directConnection=True) as selector:
            with pytest.raises(OperationFailure) as refused:
                WireBinding(selector, DB, "t", wrong, 10.0).ping()
        assert refused.value.code == 18   # AuthenticationFailed, the server's own code


def test_reads_follow_the_read_preference_and_writes_go_to_the_primary(replica_set):
    uri = replica_set.uri + "&readPreference=secondary"
    with MongoClient(uri) as client:
        client.admin.command("ping")
        binding = WireBinding(client, DB, "rs", uri, 10.0)
        try:
            binding.insert_one({"_id": 1})
            binding.read({"_id": 1})
            assert binding._local.writer.address == client.primary
            assert binding._local.reader.address in client.secondaries
        finally:
            binding.close()
        client[DB].drop_collection("rs")


def test_a_connection_says_hello_and_speaks_op_msg(mongod):
    connection = WireConnection(("127.0.0.1", mongod.port), 5.0, 5.0)
    try:
        reply = connection.command({"buildInfo": 1, "$db": "admin"})
        assert reply["version"] == mongod.version and connection.max_message_bytes == 48_000_000
        with pytest.raises(OperationFailure) as unknown:
            connection.command({"noSuchCommand": 1, "$db": "admin"})
        assert unknown.value.code == 59   # CommandNotFound
    finally:
        connection.close()


@pytest.mark.parametrize("uri, needs", [
    ("mongodb://h/", None),
    ("mongodb://u:p@h/?authMechanism=SCRAM-SHA-256", None),
    ("mongodb://h/?tls=true&tlsCAFile=/dev/null", None),
    ("mongodb://u@h/?authMechanism=MONGODB-X509&tls=true", "authMechanism=MONGODB-X509"),
    ("mongodb://h/?loadBalanced=true", "loadBalanced=true"),
    ("mongodb://h/?tls=true&tlsCRLFile=/dev/null", "the TLS option tlscrlfile"),
])
def test_uris_the_binding_cannot_serve_are_named(uri, needs):
    said = unsupported(uri)
    assert (said is None) if needs is None else needs in said


def test_the_uris_tls_options_make_the_context():
    import ssl

    from capmodel.bench.client.wire import read_uri
    from capmodel.bench.client.wire import tls_context as context_of

    def tls_context(uri):
        return context_of(read_uri(uri)[1])

    assert tls_context("mongodb://h/") is None and tls_context("mongodb://h/?tls=false") is None
    checked = tls_context("mongodb://h/?tls=true")
    assert checked.verify_mode == ssl.CERT_REQUIRED and checked.check_hostname
    names = tls_context("mongodb://h/?tls=true&tlsAllowInvalidHostnames=true")
    assert names.verify_mode == ssl.CERT_REQUIRED and not names.check_hostname
    for insecure in ("tlsAllowInvalidCertificates=true", "tlsInsecure=true"):
        context = tls_context(f"mongodb://h/?tls=true&{insecure}")
        assert context.verify_mode == ssl.CERT_NONE and not context.check_hostname
