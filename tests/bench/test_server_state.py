"""The server state folder named by $CAPMODEL_STATE_DIR: a file there is a clear refusal, never advice to delete it."""
from __future__ import annotations

import pytest

from tests.support.cli_run import run


@pytest.mark.parametrize("command", ["stop", "status", "start"])
@pytest.mark.parametrize("below", ["", "sub/folder"])
def test_a_state_dir_that_is_a_file_is_refused_without_advice_to_delete_it(tmp_path, monkeypatch, command, below):
    precious = tmp_path / "passwd"
    precious.write_text("root:x:0:0:root:/root:/bin/bash\n")
    monkeypatch.setenv("CAPMODEL_STATE_DIR", str(precious / below) if below else str(precious))
    result = run("server", command)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert f"{precious} is a file, not a folder" in result.stderr and "CAPMODEL_STATE_DIR" in result.stderr
    assert "delete" not in result.stderr.lower()
    assert precious.read_text() == "root:x:0:0:root:/root:/bin/bash\n"


def test_a_state_file_that_cannot_be_written_is_named(tmp_path, monkeypatch):
    import resource
    import signal
    import subprocess
    import sys

    def limited():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (10, 10))

    code = ("from capmodel.bench.server import EmbeddedServer\n"
            "from capmodel.bench.server.state import save_state\n"
            "from capmodel.errors import ServerError\n"
            "server = EmbeddedServer.__new__(EmbeddedServer)\n"
            "server.to_state = lambda: {'port': 27017, 'padding': 'x' * 100}\n"
            "try:\n    save_state(server)\nexcept ServerError as exc:\n    print(exc)\n")
    env = {**__import__("os").environ, "CAPMODEL_STATE_DIR": str(tmp_path)}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, preexec_fn=limited,
                            env=env, timeout=60)
    assert result.stdout.strip() == (f"cannot write the server state file {tmp_path / 'server.json'} (in {tmp_path}): "
                                     "File too large"), result.stderr
    assert list(tmp_path.iterdir()) == []
