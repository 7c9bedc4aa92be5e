"""A URI's password is masked in every message and written file whatever its form: a URI without a scheme or with
``http://`` in an error line, and ``report 06_live_benchmark -p uri 'user:pw@host'`` in the executed notebook, its
HTML, index.html and stdout."""
from __future__ import annotations

import pytest

from capmodel.cli import main

SECRET = "Pw4711zz"


@pytest.mark.parametrize("uri", [f"user:{SECRET}@127.0.0.1:1", f"http://user:{SECRET}@127.0.0.1:1/",
                                 f"mongodb://user:{SECRET}@127.0.0.1:1/?appname=x&password={SECRET}"
                                 "&serverSelectionTimeoutMS=1000",
                                 f"mongodb://h:1/?authMechanism=MONGODB-AWS&serverSelectionTimeoutMS=1000&"
                                 f"authMechanismProperties=AWS_SESSION_TOKEN:{SECRET}"])
def test_bench_error_line_never_shows_the_password(uri, tmp_path, capsys):
    status = main(["bench", "--uri", uri, "--out", str(tmp_path / "o"), "--concurrency", "1", "--quiet",
                   "--timeout-ms", "500"])
    out = capsys.readouterr()
    assert status == 2
    assert SECRET not in out.out + out.err and "***" in out.err
    assert len(out.err.strip().splitlines()) == 1
    for path in tmp_path.rglob("*"):
        assert path.is_dir() or SECRET not in path.read_text(errors="replace")


def test_a_schemeless_uri_report_parameter_is_masked_in_every_written_file(tmp_path, capsys):
    status = main(["report", "06_live_benchmark", "-p", "uri", f"user:{SECRET}@127.0.0.1:1",
                   "-p", "concurrency", "1", "--out", str(tmp_path / "out")])
    out = capsys.readouterr()
    # refused before any kernel (report parameters are checked first): one line, the password masked, nothing written
    assert status == 2 and len(out.err.strip().splitlines()) == 1
    assert "parameter uri: user:***@127.0.0.1:1 is not a MongoDB URI" in out.err
    assert not (tmp_path / "out").exists()
    assert SECRET not in out.out + out.err
