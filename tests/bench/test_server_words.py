"""What ``capmodel server`` prints when no server runs, checked as wording: ``status`` and ``stop`` say so in one
line (``status`` exits 3, ``stop`` 0). The server's states are checked on ``status --json`` in test_server.py."""
from capmodel.cli import main


def test_status_and_stop_without_a_server_say_none_is_running(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CAPMODEL_STATE_DIR", str(tmp_path / "state"))
    assert main(["server", "status"]) == 3
    assert capsys.readouterr().out == "no capmodel server is running\n"
    assert main(["server", "stop"]) == 0
    assert capsys.readouterr().out == "no capmodel server is running\n"
