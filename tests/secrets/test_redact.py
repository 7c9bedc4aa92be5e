"""Secrets never leave capmodel in a log, run.json or report: URIs, query options, secret-named keys.

Each expected string is written out by hand from the MongoDB connection-string format
(https://www.mongodb.com/docs/manual/reference/connection-string/): scheme, optional user[:password]@, host list,
optional /database, optional ?options.
"""
import copy

import pytest

from capmodel.redact import redact_mapping, redact_text, redact_uri

CASES = [
    # (uri, secret that must disappear, expected)
    ("mongodb://app:hunter2@db.example.com:27017/sales",
     "hunter2", "mongodb://app:***@db.example.com:27017/sales"),
    # URL-encoded '@' and ':' inside the password
    ("mongodb://app:p%40ss%3Aw0rd@db:27017/admin?authSource=admin",
     "p%40ss%3Aw0rd", "mongodb://app:***@db:27017/admin?authSource=admin"),
    # the same characters unencoded (invalid, but written by people) and several hosts
    ("mongodb://app:p@ss:w@rd@h1:27017,h2:27018,h3/db?replicaSet=rs0&w=majority",
     "p@ss:w@rd", "mongodb://app:***@h1:27017,h2:27018,h3/db?replicaSet=rs0&w=majority"),
    ("mongodb+srv://admin:S3cr3t!@cluster0.ab1cd.mongodb.net/test?retryWrites=true&w=majority",
     "S3cr3t!", "mongodb+srv://admin:***@cluster0.ab1cd.mongodb.net/test?retryWrites=true&w=majority"),
    ("MONGODB://app:Zz9Yy8@localhost",
     "Zz9Yy8", "MONGODB://app:***@localhost"),
    # IPv6 hosts in brackets
    ("mongodb://u:v6secret@[::1]:27017,[fe80::1]:27018/?replicaSet=x",
     "v6secret", "mongodb://u:***@[::1]:27017,[fe80::1]:27018/?replicaSet=x"),
    # a Unix socket path as host
    ("mongodb://u:sockpw@%2Ftmp%2Fmongodb-27017.sock/db",
     "sockpw", "mongodb://u:***@%2Ftmp%2Fmongodb-27017.sock/db"),
    # an unencoded '/' in the password
    ("mongodb://u:ab/cd9@host:1/db",
     "ab/cd9", "mongodb://u:***@host:1/db"),
    # secrets passed as options
    ("mongodb://h1/?tls=true&tlsCertificateKeyFilePassword=keypw77&appName=x",
     "keypw77", "mongodb://h1/?tls=true&tlsCertificateKeyFilePassword=***&appName=x"),
    ("mongodb://u:pw1@h1/?password=pw2&authSource=admin",
     "pw", "mongodb://u:***@h1/?password=***&authSource=admin"),
    ("mongodb://h/?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:FQoGtok,SERVICE_NAME:svc",
     "FQoGtok",
     "mongodb://h/?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:***,SERVICE_NAME:svc"),
    ("mongodb://h/?authMechanismProperties=AWS_SESSION_TOKEN%3AFQoGtok%2CSERVICE_NAME%3Asvc&ssl=true",
     "FQoGtok", "mongodb://h/?authMechanismProperties=AWS_SESSION_TOKEN%3A***%2CSERVICE_NAME%3Asvc&ssl=true"),
    # issue 11: whatever the scheme, or none (pymongo refuses these, and its error line used to echo them whole)
    ("user:pw4711@host:27017", "pw4711", "user:***@host:27017"),
    ("app:s3cr3t@db1,db2/sales?replicaSet=rs", "s3cr3t", "app:***@db1,db2/sales?replicaSet=rs"),
    ("http://user:pw4711@host:8080/x", "pw4711", "http://user:***@host:8080/x"),
    ("postgres://u:p9q8@h/db", "p9q8", "postgres://u:***@h/db"),
    ("mongodb+srv://u:Pw1@c.example.net/?password=Pw2&authMechanismProperties=AWS_SESSION_TOKEN:Tok3",
     "Pw", "mongodb+srv://u:***@c.example.net/?password=***&authMechanismProperties=AWS_SESSION_TOKEN:***"),
    ("db:27017/?authMechanismProperties=AWS_SESSION_TOKEN:Tok3,SERVICE_NAME:svc",
     "Tok3", "db:27017/?authMechanismProperties=AWS_SESSION_TOKEN:***,SERVICE_NAME:svc"),
    # an empty password is still hidden (its absence is not a secret, but the shape stays the same)
    ("mongodb://u:@h", "u:@", "mongodb://u:***@h"),
]


@pytest.mark.parametrize("uri,secret,expected", CASES)
def test_redact_uri(uri, secret, expected):
    redacted = redact_uri(uri)
    assert redacted == expected
    assert secret not in redacted


@pytest.mark.parametrize("uri", [
    "mongodb://127.0.0.1:27017/",
    "mongodb://h1,h2/?replicaSet=rs&appName=me@home",   # an '@' inside an option is not a password
    "mongodb+srv://cluster0.example.net/db",
    "mongodb://CN%3Dclient%2COU%3Dapps@host/?authMechanism=MONGODB-X509",  # user only, no password
    "not a uri at all",
])
def test_uris_without_secrets_are_unchanged(uri):
    assert redact_uri(uri) == uri


def test_the_user_name_can_be_hidden_too():
    assert redact_uri("mongodb://alice:pw@h:1/db", user=True) == "mongodb://***:***@h:1/db"
    assert redact_uri("mongodb://CN%3Dclient@host/", user=True) == "mongodb://***@host/"
    assert redact_uri("mongodb://h:1/db", user=True) == "mongodb://h:1/db"


def test_redact_text_finds_every_uri_in_a_log():
    log = (
        'connect failed: mongodb://app:hunter2@db1:27017,db2:27017/?replicaSet=rs (timeout)\n'
        'config {"uri": "mongodb+srv://ro:t0ps3cret@c.example.net/x"}; '
        'retrying (mongodb://u:Pw%21@h/db), then mongodb://plain:27017/.'
    )
    out = redact_text(log)
    for secret in ("hunter2", "t0ps3cret", "Pw%21"):
        assert secret not in out
    assert out == (
        'connect failed: mongodb://app:***@db1:27017,db2:27017/?replicaSet=rs (timeout)\n'
        'config {"uri": "mongodb+srv://ro:***@c.example.net/x"}; '
        'retrying (mongodb://u:***@h/db), then mongodb://plain:27017/.'
    )


def test_redact_mapping_masks_secret_keys_and_uris_recursively():
    run = {
        "uri": "mongodb://bench:benchpw@127.0.0.1:27017/?authSource=admin",
        "target": {"mongo_uri": "mongodb://a:b9b9@h/db", "password": "pw-1", "db_password": "pw-2", "port": 27017},
        "auth": {"apiKey": "key-3", "client_secret": "sec-4", "token": None, "sessionToken": 12345},
        "steps": [{"concurrency": 8, "note": "ran against mongodb://x:stepPw@h/"}, ("mongodb://y:tuplePw@h/", 1)],
        "threads": 8,
        "passes": 3,           # not a password
        "workload": "read-heavy",
    }
    original = copy.deepcopy(run)
    out = redact_mapping(run)
    assert run == original  # the input is not modified
    flat = repr(out)
    for secret in ("benchpw", "b9b9", "pw-1", "pw-2", "key-3", "sec-4", "12345", "stepPw", "tuplePw"):
        assert secret not in flat
    assert out == {
        "uri": "mongodb://bench:***@127.0.0.1:27017/?authSource=admin",
        "target": {"mongo_uri": "mongodb://a:***@h/db", "password": "***", "db_password": "***", "port": 27017},
        "auth": {"apiKey": "***", "client_secret": "***", "token": None, "sessionToken": "***"},
        "steps": [{"concurrency": 8, "note": "ran against mongodb://x:***@h/"}, ("mongodb://y:***@h/", 1)],
        "threads": 8,
        "passes": 3,
        "workload": "read-heavy",
    }


def test_one_module_owns_the_patterns_and_the_mask():
    import capmodel.redact as owner
    from capmodel.report import params

    # report parameters and run.json keys are judged by the same names
    for name, secret in (("db_password", True), ("api-key", True), ("pwd", True), ("passes", False),
                         ("threads", False)):
        assert owner.is_secret_name(name) is secret
        assert (params.redacted({name: "value"})[name] == owner.MASK) is secret
    assert owner.redact_url_password("https://ann:pw@host/x") == "https://ann:***@host/x"


@pytest.mark.parametrize("line,secret", [
    ("cannot use the MongoDB URI user:pw4711@host:27017: Invalid URI scheme", "pw4711"),
    ("tried http://user:pw4711@host/ and gave up", "pw4711"),
    ("options password=pw4711&w=1 were refused", "pw4711"),
    ("authMechanismProperties=AWS_SESSION_TOKEN:pw4711,SERVICE_NAME:x rejected", "pw4711"),
])
def test_redact_text_masks_every_form_in_a_message(line, secret):
    shown = redact_text(line)
    assert secret not in shown and "***" in shown
    assert shown.split()[-1] == line.split()[-1]  # the rest of the line is kept


@pytest.mark.parametrize("text", ["ratio 3:4 at 10:30", "mail bob@example.com", "x=1 and y=2", "a:b c@d"])
def test_ordinary_text_is_left_alone(text):
    assert redact_text(text) == text
