"""A password stays masked wherever else it appears (``appName``, any option, the user name), a password SASLprep
refuses is one line, an unreachable server is one readable sentence (no driver repr), and progress bars are drawn
only on a terminal (no ``\\r`` lines in a redirected log). Real mongod (one started with ``--auth``)."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from capmodel.bench.client.mongo_errors import describe_error
from capmodel.cli import main
from capmodel.redact import redact_text, redact_uri
from tests.support.auth_server import auth_mongod as server_with_auth
from tests.support.auth_server import free_port

SECRET = "Tr0ub4dor-xyzzy"
DB = "capmodel_test_secrets"


@pytest.mark.parametrize("uri, expected", [
    (f"mongodb://app:{SECRET}@h:1/?appName={SECRET}", "mongodb://app:***@h:1/?appName=***"),
    (f"mongodb://app:{SECRET}@h:1/db?appName=svc-{SECRET}-1&w=1", "mongodb://app:***@h:1/db?appName=svc-***-1&w=1"),
    (f"mongodb://{SECRET}:{SECRET}@h:1/", "mongodb://***:***@h:1/"),
    (f"mongodb://ops-{SECRET}:{SECRET}@h:1/", "mongodb://ops-***:***@h:1/"),
    ("mongodb://app:p%40ss%2Fw0rd@h:1/?appName=p@ss/w0rd&authSource=p%40ss%2Fw0rd",
     "mongodb://app:***@h:1/?appName=***&authSource=***"),
    (f"mongodb://app:{SECRET}@h:1/{SECRET}?tls=true", "mongodb://app:***@h:1/***?tls=true"),
    ("mongodb://app@h:1/?appName=plain", "mongodb://app@h:1/?appName=plain"),
])
def test_a_password_is_masked_wherever_else_the_uri_carries_it(uri, expected):
    assert redact_uri(uri) == expected
    assert redact_text(f"failed: {uri} (retrying)") == f"failed: {expected} (retrying)"




@pytest.fixture(scope="module")
def auth_mongod(tmp_path_factory):
    """A mongod started with --auth, with one user whose password is SECRET: its port."""
    with server_with_auth(tmp_path_factory.mktemp("authdb"), SECRET) as (port, _):
        yield port


def test_a_password_in_app_name_is_masked_in_every_file_and_line(auth_mongod, tmp_path, capsys):
    uri = f"mongodb://bench:{SECRET}@127.0.0.1:{auth_mongod}/?authSource=admin&appName=load-{SECRET}"
    out = tmp_path / "out"
    code = main(["bench", "--uri", uri, "--workload", "ycsb-c", "--records", "100", "--concurrency", "1,2",
                 "--duration", "0.3", "--warmup", "0.1", "--database", DB, "--out", str(out), "--binding", "pymongo"])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    run = json.loads((out / "run.json").read_text())
    assert run["uri"] == f"mongodb://bench:***@127.0.0.1:{auth_mongod}/?authSource=admin&appName=load-***"
    for path in out.iterdir():
        assert SECRET not in path.read_text(errors="replace"), path.name
    assert SECRET not in printed.out + printed.err


def test_a_password_saslprep_refuses_is_one_line(auth_mongod, tmp_path, capsys):
    uri = f"mongodb://bench:bad%07pw@127.0.0.1:{auth_mongod}/?authSource=admin&authMechanism=SCRAM-SHA-256"
    code = main(["bench", "--uri", uri, "--workload", "ycsb-c", "--records", "10", "--concurrency", "1",
                 "--duration", "0.2", "--out", str(tmp_path / "out"), "--quiet", "--binding", "pymongo"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "cannot be used for SCRAM authentication (failed prohibited character check)" in err
    assert "bad" not in err


def test_an_unreachable_server_is_one_readable_sentence(tmp_path, capsys):
    closed = free_port()
    uri = f"mongodb://127.0.0.1:{closed},nonexistent.invalid:27017/?serverSelectionTimeoutMS=800"
    code = main(["bench", "--uri", uri, "--workload", "ycsb-c", "--concurrency", "1", "--out", str(tmp_path / "o"),
                 "--quiet", "--binding", "pymongo"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "TopologyDescription" not in err and "configured timeouts" not in err
    # the budget as pymongo states it: the URI's 0.8 s, or what was left of it when the driver gave up (a loaded
    # machine's run read 'within 0.785 s')
    waited = re.search(r"no server answered within ([0-9.]+) s \(", err)
    assert waited and 0.5 <= float(waited.group(1)) <= 0.8, err
    assert err.endswith(f" s (127.0.0.1:{closed}: connection refused; "
                        "nonexistent.invalid:27017: name or service not known)"), err


def test_describe_cuts_a_long_message_at_a_word_and_masks_secrets():
    class LongError(Exception):
        pass

    text = describe_error(LongError(f"mongodb://u:{SECRET}@h/ " + "word " * 200))
    assert SECRET not in text and text.endswith(" ...") and len(text) <= 304
    assert text[:-4].endswith("word")


def test_progress_bars_are_not_written_into_a_redirected_log(mongod, tmp_path):
    capmodel = str(Path(sys.executable).with_name("capmodel"))
    proc = subprocess.run([capmodel, "bench", "--uri", mongod.uri, "--workload", "ycsb-c", "--records", "100",
                           "--concurrency", "1,2", "--duration", "0.5", "--warmup", "0.1", "--database", DB,
                           "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "\r" not in proc.stderr and "c=1 repeat=1:" in proc.stderr and "c=2 repeat=1:" in proc.stderr


def test_a_password_seen_in_a_run_is_masked_in_any_text_during_it_and_forgotten_after():
    from capmodel.redact import secrets_masked

    with secrets_masked(f"mongodb://app:{SECRET}@h:1/"):
        assert redact_text(f"driver said: bad option value {SECRET}") == "driver said: bad option value ***"
        with secrets_masked(f"mongodb://app:{SECRET}@h:1/"):
            pass
        assert redact_text(SECRET) == "***"  # a nested run ending does not unmask the outer one's
    assert redact_text(f"unrelated {SECRET}") == f"unrelated {SECRET}"
