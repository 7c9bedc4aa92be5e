"""observe --uri reads the URI's options as pymongo does: its timeouts as pymongo reads them (``2.5e2`` is 250 ms),
an unreachable server waits the URI's own timeout and never shows the password, the URI's ``connectTimeoutMS`` and
``socketTimeoutMS`` are kept, a member's URI keeps credentials and options as written, and a replica set URI with
timeouts and ``heartbeatFrequencyMS`` samples every member.
"""
from __future__ import annotations

import json
import time

import pytest

from capmodel.cli import main
from capmodel.observe.members import member_uri
from capmodel.observe.sampler import connect, uri_timeouts_ms


@pytest.mark.parametrize("query, expected", [
    ("serverSelectionTimeoutMS=2.5e2", {"serverSelectionTimeoutMS": 250}),
    ("SERVERSELECTIONTIMEOUTMS=300&ConnectTimeoutMS=0", {"serverSelectionTimeoutMS": 300, "connectTimeoutMS": None}),
    ("sockettimeoutms=1234.5", {"socketTimeoutMS": 1234}),           # pymongo's reading: 1.2345 s
    ("appName=x", {}),
    ("serverSelectionTimeoutMS=abc", {}),                             # refused by pymongo: MongoClient says why
])
def test_the_timeouts_are_pymongos_reading(query, expected):
    assert uri_timeouts_ms(f"mongodb://us%40er:p%40ss%3Aw@127.0.0.1:1/?{query}") == expected


def test_an_unreachable_server_waits_the_uris_own_timeout_and_never_shows_the_password(tmp_path, capsys):
    uri = "mongodb://me:s3cr%40t@127.0.0.1:1/?serverSelectionTimeoutMS=2.5e2"
    started = time.monotonic()
    assert main(["observe", "--uri", uri, "--duration", "2", "--out", str(tmp_path / "o"), "--json"]) == 2
    waited = time.monotonic() - started
    out, err = capsys.readouterr()
    assert "within 0.25 s" in json.loads(out)["error"] and err.count("\n") == 2   # the sampling line, the error
    assert "s3cr" not in out + err and "me:***@" in err
    assert waited < 4.5                    # before: the 5 s default (a bound on the behaviour, not a speed target)


def test_the_uris_connect_and_socket_timeouts_are_kept(mongod):
    client = connect(f"{mongod.uri.rstrip('/')}/?connectTimeoutMS=1234&socketTimeoutMS=0")
    try:
        assert client.options.pool_options.connect_timeout == 1.234      # before: capmodel's 5 s
        assert client.options.pool_options.socket_timeout is None        # 0: no timeout, as pymongo reads it
    finally:
        client.close()
    client = connect(mongod.uri)                                          # none given: capmodel's own
    try:
        assert client.options.pool_options.connect_timeout == 5.0
        assert client.options.pool_options.socket_timeout == 10.0
    finally:
        client.close()


def test_a_members_uri_keeps_credentials_and_options_as_written():
    uri = ("mongodb://us%40er:p%40ss@a:1,b:2/app?replicaSet=rs0&HeartbeatFrequencyMS=10000&"
           "serverSelectionTimeoutMS=3000&readPreference=secondary&directConnection=false")
    assert member_uri(uri, "b:2") == "mongodb://us%40er:p%40ss@b:2/app?HeartbeatFrequencyMS=10000&" \
                                     "serverSelectionTimeoutMS=3000"
    assert member_uri("mongodb://a:1,b:2/?replicaSet=rs0", "b:2") == "mongodb://b:2/"


def test_a_replica_set_uri_with_timeouts_and_heartbeat_samples_every_member(replica_set, tmp_path, capsys):
    uri = f"{replica_set.uri}&ServerSelectionTimeoutMS=4000&heartbeatFrequencyMS=10000"
    assert main(["observe", "--uri", uri, "--interval", "0.5", "--duration", "1", "--out", str(tmp_path / "rs"),
                 "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert len(result["members"]) == 3 and not [n for n in result["notes"] if "not sampled" in n]
    assert all(m["intervals"] == 2 for m in result["members"])
