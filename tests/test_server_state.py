"""The server state folder named by $CAPMODEL_STATE_DIR: a file there is a clear refusal, never advice to delete it."""
from __future__ import annotations

import pytest

from tests.cli_run import run


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
