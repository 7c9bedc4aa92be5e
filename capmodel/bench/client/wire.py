"""The wire binding (``--binding wire``): MongoDB's wire protocol spoken directly, one blocking socket per worker.

Each operation is one ``OP_MSG`` (MongoDB's wire protocol, "OP_MSG" in the MongoDB manual's *Legacy Opcodes and
Wire Protocol* reference and the drivers' OP_MSG specification) holding the command a driver would send
(``find`` with ``limit: 1, singleBatch: true`` for a read, ``update``, ``insert``, ``delete``, ``aggregate`` with
``getMore`` for the rest), encoded and decoded by the C extension of pymongo's ``bson``. Nothing else runs per
operation: no session, no retry, no server selection, no cursor object, no event loop. A worker thread blocks in
its socket while the server works, as YCSB's Java threads do, so at one client the time a client adds to each
operation is a socket's, and the CPU it spends is the encoding, two system calls and the decoding.

What a driver does once, the binding leaves to pymongo or does once per connection:

- **where to send**: pymongo's client (the coordinator's) selects the server: ``MongoClient.address`` for the
  primary (writes, and reads under ``primary``), the topology's ``apply_selector`` for another read preference,
  whose document then travels as ``$readPreference``;
- **connecting**: TCP (``TCP_NODELAY``), TLS (``tls``, ``tlsCAFile``, ``tlsCertificateKeyFile``,
  ``tlsAllowInvalidCertificates``, ``tlsAllowInvalidHostnames``, ``tlsInsecure``), the ``hello`` handshake, and
  SCRAM-SHA-256 or SCRAM-SHA-1 authentication (RFC 5802 and RFC 7677, as MongoDB's authentication specification
  applies them; the password prepared by SASLprep for SHA-256, by MongoDB's MD5 digest for SHA-1);
- **write concern**: the client's, as ``writeConcern``;
- **timeouts**: the socket's, ``--timeout-ms``: an operation that takes longer fails with ``NetworkTimeout`` and
  its connection is closed (its reply would come late on it).

A network error or a "not primary" reply closes the worker's connection; its next operation connects again to the
server pymongo then selects. ``unsupported(uri)`` says when a URI needs what the binding does not do (another
authentication mechanism, a load balancer, other TLS options): the sweep then uses mongojet.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import os
import socket
import ssl
import struct
import threading
from collections.abc import Mapping
from typing import Any

import bson
from bson.binary import Binary
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument
from pymongo.errors import (
    AutoReconnect,
    DuplicateKeyError,
    NetworkTimeout,
    NotPrimaryError,
    OperationFailure,
    WriteConcernError,
    WriteError,
)

OP_MSG = 2013
_RAW = CodecOptions(document_class=RawBSONDocument)
_HEADER = struct.Struct("<iiii")   # messageLength, requestID, responseTo, opCode
_LENGTH = struct.Struct("<i")
MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-1")
TLS_OPTIONS = {"tls", "ssl", "tlscafile", "tlscertificatekeyfile", "tlsallowinvalidcertificates",
               "tlsallowinvalidhostnames", "tlsinsecure"}
#: server error codes that say "this server is not (or no longer) the primary": the connection is dropped and the
#: next operation goes to the server pymongo selects then (the drivers' SDAM specification's "not writable primary"
#: and "node is recovering" codes)
NOT_PRIMARY_CODES = {10107, 13435, 11600, 11602, 13436, 189, 91}
DUPLICATE_KEY_CODES = {11000, 11001, 12582}   # pymongo raises DuplicateKeyError for these write errors


def read_uri(uri: str) -> tuple[dict, dict]:
    """The URI as pymongo reads it (``parse_uri``: validated and typed, ``tls=false`` is False), and its options with
    their names in lower case."""
    from pymongo.uri_parser import parse_uri

    parsed = parse_uri(uri)
    return parsed, {k.lower(): v for k, v in parsed["options"].items()}


def unsupported(uri: str) -> str | None:
    """Why the wire binding cannot connect with this URI (None: it can)."""
    _, options = read_uri(uri)
    mechanism = options.get("authmechanism")
    if mechanism not in (None, "DEFAULT", *MECHANISMS):
        return f"authMechanism={mechanism} (the wire binding speaks {' and '.join(MECHANISMS)})"
    if options.get("loadbalanced"):
        return "loadBalanced=true"
    other_tls = sorted(k for k in options if k.startswith(("tls", "ssl")) and k not in TLS_OPTIONS)
    if other_tls:
        return f"the TLS option {other_tls[0]}"
    return None


class Credentials:
    """A user, a password and where they are defined (``authSource``), from the URI."""

    def __init__(self, user: str, password: str, source: str, mechanism: str | None):
        self.user, self.password, self.source, self.mechanism = user, password, source, mechanism

    @classmethod
    def of(cls, parsed: dict, options: dict) -> "Credentials | None":
        """The credentials of a URI as ``read_uri`` gives it (None: it has none)."""
        if not parsed.get("username"):
            return None
        source = options.get("authsource") or parsed.get("database") or "admin"
        mechanism = options.get("authmechanism")
        return cls(parsed["username"], parsed.get("password") or "", source,
                   None if mechanism == "DEFAULT" else mechanism)   # DEFAULT: negotiated, as None


def tls_context(options: dict) -> ssl.SSLContext | None:
    """The TLS context a URI's options (``read_uri``'s) ask for (None: no TLS)."""
    if not (options.get("tls") or options.get("ssl")):
        return None
    context = ssl.create_default_context(cafile=options.get("tlscafile"))
    if options.get("tlscertificatekeyfile"):
        context.load_cert_chain(options["tlscertificatekeyfile"])
    insecure = bool(options.get("tlsinsecure"))
    context.check_hostname = not (insecure or options.get("tlsallowinvalidhostnames"))
    if insecure or options.get("tlsallowinvalidcertificates"):
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


class WireConnection:
    """One socket to one server, authenticated: ``command(body)`` sends an OP_MSG and returns the reply's document
    (an ``OperationFailure`` when the server says ``ok: 0``)."""

    def __init__(self, address: tuple[str, int], timeout_s: float, connect_timeout_s: float,
                 context: ssl.SSLContext | None = None, credentials: Credentials | None = None,
                 app_name: str = "capmodel-bench"):
        self.address = address
        try:
            sock = socket.create_connection(address, timeout=connect_timeout_s)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if context is not None:
                sock = context.wrap_socket(sock, server_hostname=address[0])
        except socket.timeout:
            raise NetworkTimeout(f"{address[0]}:{address[1]}: connection timed out") from None
        except OSError as exc:
            raise AutoReconnect(f"{address[0]}:{address[1]}: {exc}") from None
        sock.settimeout(timeout_s)
        self.sock = sock
        self._request = 0
        self._buffer = bytearray(1 << 16)
        self._view = memoryview(self._buffer)
        import capmodel

        hello = {"hello": 1, "$db": "admin", "client": {
            "driver": {"name": "capmodel-wire", "version": capmodel.__version__},
            "os": {"type": os.uname().sysname}, "application": {"name": app_name}}}
        if credentials is not None and credentials.mechanism is None:
            hello["saslSupportedMechs"] = f"{credentials.source}.{credentials.user}"
        reply = self.command(hello)
        self.max_message_bytes = int(reply.get("maxMessageSizeBytes", 48_000_000))
        if credentials is not None:
            offered = reply.get("saslSupportedMechs") or []
            mechanism = credentials.mechanism or ("SCRAM-SHA-256" if "SCRAM-SHA-256" in offered else "SCRAM-SHA-1")
            scram(self, credentials, mechanism)

    def command(self, body: dict) -> Mapping[str, Any]:
        """Send ``body`` (a command document with its ``$db``) and return the reply's document."""
        self._request += 1
        payload = bson.encode(body)
        message = _HEADER.pack(21 + len(payload), self._request, 0, OP_MSG) + b"\0\0\0\0\0" + payload
        sock = self.sock
        try:
            sock.sendall(message)
            got = sock.recv_into(self._view)   # as a rule the whole reply: one system call
            while 0 < got < 4:
                got += sock.recv_into(self._view[got:])
            if not got:
                raise AutoReconnect(f"{self.address[0]}:{self.address[1]}: connection closed by the server")
            length = _LENGTH.unpack_from(self._buffer)[0]
            if length > len(self._buffer):   # a reply larger than any before it on this connection
                grown = bytearray(length)
                grown[:got] = self._view[:got]
                self._buffer, self._view = grown, memoryview(grown)
            view = self._view
            while got < length:
                n = sock.recv_into(view[got:length])
                if not n:
                    raise AutoReconnect(f"{self.address[0]}:{self.address[1]}: connection closed by the server")
                got += n
        except socket.timeout:
            raise NetworkTimeout(f"{self.address[0]}:{self.address[1]}: timed out") from None
        except OSError as exc:
            raise AutoReconnect(f"{self.address[0]}:{self.address[1]}: {exc}") from None
        # header (16 bytes), flagBits (4), section kind 0 (1), then the reply's one document, read lazily: its
        # fields are decoded when they are read (the documents a find returns are counted, never decoded)
        reply = bson.decode(view[21:length], codec_options=_RAW)
        if reply.get("ok") != 1:
            code = reply.get("code")
            if code in NOT_PRIMARY_CODES:
                raise NotPrimaryError(reply.get("errmsg", "not primary"), reply)
            raise OperationFailure(reply.get("errmsg", "command failed"), code, reply)
        return reply

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


def _salted(credentials: Credentials, mechanism: str) -> tuple[bytes, str]:
    """The password as SCRAM hashes it, and the hash's name."""
    if mechanism == "SCRAM-SHA-256":
        from pymongo.saslprep import saslprep

        return saslprep(credentials.password).encode("utf-8"), "sha256"
    digest = hashlib.md5(f"{credentials.user}:mongo:{credentials.password}".encode()).hexdigest()  # noqa: S324
    return digest.encode("utf-8"), "sha1"


def scram(connection: WireConnection, credentials: Credentials, mechanism: str) -> None:
    """Authenticate ``connection`` with SCRAM (RFC 5802; SHA-256: RFC 7677); an ``OperationFailure`` when refused."""
    password, name = _salted(credentials, mechanism)
    user = credentials.user.replace("=", "=3D").replace(",", "=2C")
    nonce = base64.b64encode(os.urandom(24)).decode()
    first_bare = f"n={user},r={nonce}"
    reply = connection.command({"saslStart": 1, "mechanism": mechanism, "payload": Binary(f"n,,{first_bare}".encode()),
                                "autoAuthorize": 1, "options": {"skipEmptyExchange": True},
                                "$db": credentials.source})
    server_first = bytes(reply["payload"]).decode()
    fields = dict(item.split("=", 1) for item in server_first.split(","))
    if not fields["r"].startswith(nonce):
        raise OperationFailure("SCRAM: the server's nonce does not extend the client's", 18)
    salted = hashlib.pbkdf2_hmac(name, password, base64.b64decode(fields["s"]), int(fields["i"]))
    client_key = hmac.digest(salted, b"Client Key", name)
    stored_key = hashlib.new(name, client_key).digest()
    without_proof = f"c=biws,r={fields['r']}"
    auth_message = f"{first_bare},{server_first},{without_proof}".encode()
    signature = hmac.digest(stored_key, auth_message, name)
    proof = base64.b64encode(bytes(a ^ b for a, b in zip(client_key, signature))).decode()
    reply = connection.command({"saslContinue": 1, "conversationId": reply["conversationId"],
                                "payload": Binary(f"{without_proof},p={proof}".encode()), "$db": credentials.source})
    final = dict(item.split("=", 1) for item in bytes(reply["payload"]).decode().split(","))
    server_key = hmac.digest(salted, b"Server Key", name)
    if base64.b64decode(final.get("v", "")) != hmac.digest(server_key, auth_message, name):
        raise OperationFailure("SCRAM: the server's signature is wrong", 18)
    while not reply.get("done"):
        reply = connection.command({"saslContinue": 1, "conversationId": reply["conversationId"],
                                    "payload": Binary(b""), "$db": credentials.source})


class WireBinding:
    """A workload's operations over the wire protocol, one connection per worker thread (``capmodel.bench.client.
    bindings``'s interface: each method returns the number of documents the operation counts for)."""

    asynchronous = False

    def __init__(self, client, database: str, collection: str, uri: str, timeout_s: float):
        """``client``: the pymongo MongoClient that selects servers (its read preference and write concern are the
        operations'); ``uri``: its URI, for the credentials and TLS options."""
        self.client, self.db, self.coll = client, database, collection
        self.timeout_s = timeout_s
        self.connect_timeout_s = min(timeout_s, 10.0)
        parsed, options = read_uri(uri)
        self.credentials = Credentials.of(parsed, options)
        self.context = tls_context(options)
        self.app_name = options.get("appname") or "capmodel-bench"
        preference = client.read_preference
        self.reads_primary = preference.mongos_mode == "primary"
        self.read_preference = None if self.reads_primary else preference.document
        concern = client.write_concern.document
        self.write_concern = concern or None
        self._local = threading.local()
        self._opened: list[WireConnection] = []
        self._lock = threading.Lock()
        self.database = _Database(self)

    # -- connections ---------------------------------------------------------------------------------------------
    def _connect(self, primary: bool) -> WireConnection:
        from pymongo import ReadPreference

        preference = ReadPreference.PRIMARY if primary or self.reads_primary else self.client.read_preference
        connection = WireConnection(self._address(preference), self.timeout_s, self.connect_timeout_s, self.context,
                                    self.credentials, self.app_name)
        with self._lock:
            self._opened.append(connection)
        return connection

    def _address(self, preference) -> tuple[str, int]:
        """A server pymongo's topology selects for ``preference`` (the primary, the one server, a mongos, or one of
        the members the read preference allows), waiting for one as pymongo's server selection does."""
        import random

        servers = self.client.topology_description.apply_selector(preference, None)
        if not servers:
            self.client.admin.command("ping", read_preference=preference)   # pymongo waits for a selectable one
            servers = self.client.topology_description.apply_selector(preference, None)
        if not servers:
            raise AutoReconnect("no server is selectable")
        return random.choice(servers).address

    def _run(self, body: dict, primary: bool) -> Mapping[str, Any]:
        """Send one command on this thread's connection (opened or re-opened as needed)."""
        local = self._local
        slot = "writer" if primary else "reader"
        connection = getattr(local, slot, None)
        if connection is None:
            connection = self._connect(primary)
            setattr(local, slot, connection)
        try:
            return connection.command(body)
        except (AutoReconnect, NetworkTimeout):   # NotPrimaryError is an AutoReconnect: reconnect next time
            connection.close()
            setattr(local, slot, None)
            with self._lock:
                self._opened.remove(connection)
            raise

    def _read(self, body: dict) -> Mapping[str, Any]:
        if self.read_preference is not None:
            body["$readPreference"] = self.read_preference
            return self._run(body, primary=False)
        return self._run(body, primary=True)

    def _write(self, body: dict) -> Mapping[str, Any]:
        if self.write_concern is not None:
            body["writeConcern"] = self.write_concern
        reply = self._run(body, primary=True)
        errors = reply.get("writeErrors")
        if errors:
            first = errors[0]
            code = first.get("code")
            kind = DuplicateKeyError if code in DUPLICATE_KEY_CODES else WriteError   # pymongo's classes, its rule
            raise kind(first.get("errmsg", "write error"), code, first)
        concern = reply.get("writeConcernError")
        if concern:
            raise WriteConcernError(concern.get("errmsg", "write concern error"), concern.get("code"), concern)
        return reply

    def _cursor_count(self, reply: Mapping[str, Any]) -> int:
        cursor = reply["cursor"]
        count, cursor_id = len(cursor["firstBatch"]), cursor["id"]
        while cursor_id:
            reply = self._read({"getMore": cursor_id, "collection": self.coll, "$db": self.db})
            cursor_id = reply["cursor"]["id"]
            count += len(reply["cursor"]["nextBatch"])
        return count

    def close(self) -> None:
        with self._lock:
            opened, self._opened = self._opened, []
        for connection in opened:
            connection.close()

    # -- the operations (bindings' interface) --------------------------------------------------------------------
    def ping(self):
        self._run({"ping": 1, "$db": "admin"}, primary=True)
        return 1

    def read(self, filter, projection=None):
        body = {"find": self.coll, "filter": filter, "limit": 1, "singleBatch": True, "$db": self.db}
        if projection is not None:
            body["projection"] = projection
        self._read(body)
        return 1

    def _find_body(self, filter, projection, sort, limit) -> dict:
        body = {"find": self.coll, "filter": filter, "$db": self.db}
        if projection is not None:
            body["projection"] = projection
        if sort:
            body["sort"] = dict(sort)
        if limit:
            body["limit"] = int(limit)
        return body

    def scan(self, filter, projection, sort, limit):
        self._cursor_count(self._read(self._find_body(filter, projection, sort, limit)))
        return 1

    def find(self, filter, projection, sort, limit):
        return self._cursor_count(self._read(self._find_body(filter, projection, sort, limit)))

    def ycsb_update(self, filter, update):
        self._write({"update": self.coll, "updates": [{"q": filter, "u": update}], "$db": self.db})
        return 1

    def update(self, filter, update, many=False):
        reply = self._write({"update": self.coll, "updates": [{"q": filter, "u": update, "multi": bool(many)}],
                             "$db": self.db})
        return int(reply.get("nModified", 0))

    def read_modify_write(self, filter, projection, update):
        self.read(filter, projection)
        self.ycsb_update(filter, update)
        return 1

    def insert_one(self, document):
        self._write({"insert": self.coll, "documents": [document], "$db": self.db})
        return 1

    def insert_many(self, documents):
        documents = list(documents)
        self._write({"insert": self.coll, "documents": documents, "ordered": False, "$db": self.db})
        return len(documents)

    def delete(self, filter, many=False):
        reply = self._write({"delete": self.coll, "deletes": [{"q": filter, "limit": 0 if many else 1}],
                             "$db": self.db})
        return int(reply.get("n", 0))

    def aggregate(self, pipeline):
        return self._cursor_count(self._read({"aggregate": self.coll, "pipeline": list(pipeline), "cursor": {},
                                              "$db": self.db}))

    def command(self, command):
        self._run({**command, "$db": self.db}, primary=True)
        return 1


class _Database:
    """What the runner reads of a binding's database: its name."""

    def __init__(self, binding: WireBinding):
        self.name = binding.db
