"""The embedded mongod: real processes, real pings, real shutdowns (nothing here is mocked)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest
from pymongo import MongoClient

from capmodel.bench import server as srv
from capmodel.bench.server import EmbeddedServer, embedded_server, start_server
from capmodel.errors import ServerError

ROOT = Path(__file__).resolve().parents[2]


def _gone(pid: int, timeout: float = 10.0) -> bool:
    """True once pid has exited (a zombie waiting for init to reap it counts as exited)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.05)
    return False


def _cmdline_opts(client) -> dict:
    return client.admin.command("getCmdLineOpts")["parsed"]


# ------------------------------------------------------------------------------------------------- the session servers
def test_standalone_fixture_is_a_light_loopback_mongod(mongod, mongo_client):
    assert mongod.uri == f"mongodb://127.0.0.1:{mongod.port}/"
    assert mongo_client.admin.command("ping")["ok"] == 1.0
    # the version reported by the running server is the one the binary prints
    assert mongod.version == srv.mongod_version(srv.find_mongod())
    assert mongo_client.admin.command("buildInfo")["version"] == mongod.version
    opts = _cmdline_opts(mongo_client)
    assert opts["net"]["bindIp"] == "127.0.0.1"
    assert opts["net"]["port"] == mongod.port
    assert opts["storage"]["wiredTiger"]["engineConfig"]["cacheSizeGB"] == 0.25
    assert opts["storage"]["wiredTiger"]["engineConfig"]["configString"] == "log=(prealloc=false,file_max=16MB)"
    assert opts["systemLog"]["path"] == str(mongod.dbpath / "mongod.log")
    assert mongo_client.admin.command("getParameter", 1, diagnosticDataCollectionEnabled=1)[
        "diagnosticDataCollectionEnabled"] is False
    assert (mongod.dbpath / "mongod.log").stat().st_size > 0
    assert mongod.alive_pids() == mongod.pids


def test_standalone_fixture_runs_in_its_own_session(mongod):
    # Ctrl-C in a terminal goes to the foreground process group; mongod must not be in ours.
    assert os.getsid(mongod.pid) == mongod.pid
    assert os.getpgid(mongod.pid) != os.getpgid(0)


def test_standalone_fixture_stores_and_reads_documents(mongo_client):
    coll = mongo_client.capmodel_test.server_roundtrip
    coll.drop()
    coll.insert_many([{"_id": i, "square": i * i} for i in range(10)])
    assert coll.count_documents({}) == 10
    assert coll.find_one({"_id": 7})["square"] == 49
    coll.drop()


def test_replica_set_has_one_primary_and_two_secondaries(replica_set):
    assert len(replica_set.ports) == 3 and len(set(replica_set.ports)) == 3
    assert replica_set.uri.endswith(f"/?replicaSet={replica_set.replica_set}")
    with replica_set.client() as client:
        status = client.admin.command("replSetGetStatus")
        assert status["set"] == replica_set.replica_set
        states = sorted(m["stateStr"] for m in status["members"])
        assert states == ["PRIMARY", "SECONDARY", "SECONDARY"]
        assert sorted(m["name"] for m in status["members"]) == sorted(f"127.0.0.1:{p}" for p in replica_set.ports)
        # a majority write with w=3 is on every member: read it back from each one directly
        coll = client.capmodel_test.get_collection("replicated", write_concern=__import__("pymongo").WriteConcern(w=3))
        coll.drop()
        coll.insert_one({"_id": "x", "value": 42})
    for port in replica_set.ports:
        with MongoClient(host="127.0.0.1", port=port, directConnection=True) as member:
            doc = member.capmodel_test.replicated.find_one({"_id": "x"})
            assert doc == {"_id": "x", "value": 42}


# ------------------------------------------------------------------------------------------------------ start and stop
def test_stop_ends_the_process_and_removes_the_temporary_dbpath():
    server = start_server()
    pid, dbpath = server.pid, server.dbpath
    assert psutil.pid_exists(pid) and dbpath.is_dir()
    server.stop()
    assert _gone(pid)
    assert not dbpath.exists()
    assert server.alive_pids() == []
    server.stop()  # stopping twice is harmless


def test_context_manager_cleans_up_after_an_exception_in_the_block():
    class Boom(Exception):
        pass

    seen: list[EmbeddedServer] = []
    with pytest.raises(Boom):
        with embedded_server() as server:
            seen.append(server)
            raise Boom()
    assert _gone(seen[0].pid)
    assert not seen[0].dbpath.exists()
    assert seen[0] not in srv._LIVE


def test_a_user_dbpath_is_kept_with_its_data(tmp_path):
    dbpath = tmp_path / "data"
    with embedded_server(dbpath=dbpath) as server:
        with server.client() as client:
            client.keep.me.insert_one({"_id": 1})
    assert dbpath.is_dir() and (dbpath / "mongod.log").exists()
    with embedded_server(dbpath=dbpath) as again, again.client() as client:
        assert client.keep.me.find_one({"_id": 1}) == {"_id": 1}


def test_a_port_in_use_is_a_clear_error(mongod):
    with pytest.raises(ServerError, match=f"port {mongod.port} on 127.0.0.1 is already in use"):
        start_server(port=mongod.port)


def test_a_mongod_that_fails_to_start_reports_its_log(tmp_path):
    # an unknown storage engine recorded in the dbpath makes mongod exit at startup
    dbpath = tmp_path / "bad"
    dbpath.mkdir()
    (dbpath / "storage.bson").write_bytes(b"not bson at all")
    with pytest.raises(ServerError, match=r"exited with status \d+ while starting; last lines of .*mongod.log"):
        start_server(dbpath=dbpath, timeout=30)
    assert all(server.dbpath != dbpath for server in srv._LIVE)


def test_missing_avx_is_a_clear_error():
    cpuinfo = "processor\t: 0\nflags\t\t: fpu vme de pse sse sse2 ssse3 sse4_1 sse4_2\n"
    assert srv.cpu_flags(cpuinfo) == {"fpu", "vme", "de", "pse", "sse", "sse2", "ssse3", "sse4_1", "sse4_2"}
    if os.uname().machine == "x86_64":
        with pytest.raises(ServerError, match="AVX"):
            srv.check_cpu(Path("mongod"), cpuinfo)
    srv.check_cpu(Path("mongod"), cpuinfo.replace("sse2", "sse2 avx"))  # no error with AVX


def test_capmodel_mongod_must_name_an_executable(monkeypatch, tmp_path):
    monkeypatch.setenv("CAPMODEL_MONGOD", str(tmp_path / "nope"))
    with pytest.raises(ServerError, match="CAPMODEL_MONGOD=.*not an executable"):
        srv.find_mongod()
    monkeypatch.setenv("CAPMODEL_MONGOD", str(srv.bundled_mongod()))
    assert srv.find_mongod() == srv.bundled_mongod()


# ----------------------------------------------------------------------------------------- signals and dying parents
def _python(code: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def test_ctrl_c_in_the_with_block_stops_mongod():
    child = _python("""
        import json, time
        from capmodel.bench.server import embedded_server
        with embedded_server() as s:
            print(json.dumps({"pid": s.pid, "dbpath": str(s.dbpath)}), flush=True)
            time.sleep(60)
    """)
    info = json.loads(child.stdout.readline())
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=30)
    # the KeyboardInterrupt left the with block unhandled: Python ends itself by SIGINT (returncode -2)
    assert child.returncode == -signal.SIGINT, err
    assert _gone(info["pid"])
    assert not Path(info["dbpath"]).exists()


def test_a_killed_parent_takes_its_mongod_along():
    # SIGKILL leaves no chance for finally-blocks; the parent-death signal still stops mongod
    child = _python("""
        import json, time
        from capmodel.bench.server import start_server
        s = start_server()
        print(json.dumps({"pid": s.pid, "dbpath": str(s.dbpath)}), flush=True)
        time.sleep(60)
    """)
    info = json.loads(child.stdout.readline())
    child.kill()
    child.wait(timeout=10)
    child.stdout.close(), child.stderr.close()
    assert _gone(info["pid"], timeout=20)
    # the dead parent could not remove its temporary dbpath; the next start clears such leftovers
    dbpath = Path(info["dbpath"])
    assert (dbpath / "mongod.lock").read_text() == ""  # mongod shut down cleanly on SIGTERM and released its lock
    assert srv.remove_stale_temp_dbpaths(min_age=0, candidates=[dbpath]) == [dbpath]
    assert not dbpath.exists()


# -------------------------------------------------------------------------------------------------------------- CLI
def _cli(*args, state_dir, timeout=90):
    env = {**os.environ, "CAPMODEL_STATE_DIR": str(state_dir)}
    return subprocess.run([sys.executable, "-m", "capmodel.cli", "server", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_cli_start_status_stop(tmp_path):
    state = tmp_path / "state"
    before = _cli("status", "--json", state_dir=state)
    assert before.returncode == 3 and json.loads(before.stdout)["running"] is False   # nothing runs: non-zero

    started = _cli("start", state_dir=state)
    assert started.returncode == 0, started.stderr
    uri = started.stdout.strip()
    try:
        checked = _cli("status", "--json", state_dir=state)
        assert checked.returncode == 0
        status = json.loads(checked.stdout)
        assert status["running"] is True and status["uri"] == uri
        assert status["port"] == int(uri.rsplit(":", 1)[1].strip("/"))
        assert status["version"] == srv.mongod_version(srv.find_mongod())
        pid = status["pid"]
        assert status["pids"] == [pid] and psutil.Process(pid).name() == "mongod"
        assert Path(status["dbpath"]).is_dir()
        with MongoClient(uri, serverSelectionTimeoutMS=5000) as client:
            assert client.admin.command("ping")["ok"] == 1.0

        again = _cli("start", state_dir=state)
        assert again.returncode == 0 and again.stdout.strip() == f"a capmodel server is already running: {uri}"
        assert json.loads(_cli("status", "--json", state_dir=state).stdout)["pids"] == [pid]
    finally:
        stopped = _cli("stop", state_dir=state)
    assert stopped.returncode == 0 and uri in stopped.stdout
    assert _gone(pid)
    assert not Path(status["dbpath"]).exists()
    assert not (state / "server.json").exists()
    assert _cli("stop", state_dir=state).returncode == 0                    # nothing to stop: not an error
    assert _cli("status", state_dir=state).returncode == 3


def test_cli_start_replica_set(tmp_path):
    state = tmp_path / "state"
    started = _cli("start", "--replica-set", "3", "--json", state_dir=state)
    assert started.returncode == 0, started.stderr
    info = json.loads(started.stdout)
    try:
        assert info["replica_set"] and len(info["pids"]) == 3
        with MongoClient(info["uri"], serverSelectionTimeoutMS=10_000) as client:
            members = client.admin.command("replSetGetStatus")["members"]
            assert sorted(m["stateStr"] for m in members) == ["PRIMARY", "SECONDARY", "SECONDARY"]
    finally:
        assert _cli("stop", state_dir=state).returncode == 0
    assert all(_gone(pid) for pid in info["pids"])


def _foreground(state_dir) -> tuple[subprocess.Popen, str]:
    env = {**os.environ, "CAPMODEL_STATE_DIR": str(state_dir)}
    child = subprocess.Popen([sys.executable, "-m", "capmodel.cli", "server", "start", "--foreground"], cwd=ROOT,
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return child, child.stdout.readline().strip()


def test_cli_foreground_stops_on_sigterm(tmp_path):
    child, uri = _foreground(tmp_path)
    status = json.loads(_cli("status", "--json", state_dir=tmp_path).stdout)
    assert status["running"] is True and status["uri"] == uri
    pid = status["pid"]
    with MongoClient(uri, serverSelectionTimeoutMS=5000) as client:
        assert client.admin.command("ping")["ok"] == 1.0
    child.send_signal(signal.SIGTERM)
    _, err = child.communicate(timeout=30)
    assert child.returncode == 0 and "stopped" in err
    assert _gone(pid)
    assert not Path(status["dbpath"]).exists()
    assert not (tmp_path / "server.json").exists()


def test_cli_stop_ends_a_foreground_server_from_another_terminal(tmp_path):
    child, uri = _foreground(tmp_path)
    pid = json.loads(_cli("status", "--json", state_dir=tmp_path).stdout)["pid"]
    stopped = _cli("stop", state_dir=tmp_path)
    assert stopped.returncode == 0 and uri in stopped.stdout
    _, err = child.communicate(timeout=30)
    assert child.returncode == 0 and "the server has stopped" in err
    assert _gone(pid)


def test_a_dbpath_in_use_is_refused(mongod, tmp_path):
    with embedded_server(dbpath=tmp_path / "shared") as first:
        with pytest.raises(ServerError, match=f"mongod pid {first.pid} is already using it"):
            start_server(dbpath=tmp_path / "shared")
        assert first.is_running()


def test_cli_refuses_bad_options_and_a_broken_state_file(tmp_path, monkeypatch, capsys):
    from capmodel.cli import main

    monkeypatch.setenv("CAPMODEL_STATE_DIR", str(tmp_path))
    assert main(["server", "start", "--replica-set", "9"]) == 2
    assert "--replica-set 9: a replica set has 1 to 7 members" in capsys.readouterr().err
    assert main(["server", "start", "--cache-gb", "0"]) == 2
    assert "--cache-gb must be a number of GB from 0.25 to 10,000" in capsys.readouterr().err
    (tmp_path / "server.json").write_text("{not json")
    assert main(["server", "status"]) == 2
    assert f"cannot read the server state file {tmp_path / 'server.json'}" in capsys.readouterr().err
    assert main(["server"]) == 2
    assert "required: ACTION" in capsys.readouterr().err


def test_cli_start_pins_cpus_and_turns_ftdc_on(tmp_path):
    """``--cpus 0`` pins mongod and every thread it starts to CPU 0 (read back from the kernel for each thread);
    ``--ftdc`` turns diagnostic data on at one sample a second (read back from the server's own parameters)."""
    state = tmp_path / "state"
    started = _cli("start", "--cpus", "0", "--ftdc", "--json", state_dir=state)
    assert started.returncode == 0, started.stderr
    info = json.loads(started.stdout)
    try:
        assert info["cpus"] == [0] and info["diagnostic_data"] is True
        pid = info["pid"]
        threads = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
        assert len(threads) > 5                                  # mongod's own threads, started after the pin
        assert {frozenset(os.sched_getaffinity(t)) for t in threads} == {frozenset({0})}
        with MongoClient(info["uri"], serverSelectionTimeoutMS=5000) as client:
            params = client.admin.command({"getParameter": 1, "diagnosticDataCollectionEnabled": 1,
                                           "diagnosticDataCollectionPeriodMillis": 1})
        assert params["diagnosticDataCollectionEnabled"] is True
        assert params["diagnosticDataCollectionPeriodMillis"] == 1000
        shown = _cli("status", state_dir=state)
        assert shown.returncode == 0 and "CPUs 0" in shown.stdout and "diagnostic.data" in shown.stdout
    finally:
        assert _cli("stop", state_dir=state).returncode == 0


def test_cli_refuses_cpus_it_may_not_use(tmp_path, monkeypatch, capsys):
    from capmodel.cli import main

    monkeypatch.setenv("CAPMODEL_STATE_DIR", str(tmp_path))
    allowed = ",".join(str(c) for c in range(os.cpu_count()))
    assert main(["server", "start", "--cpus", "4096"]) == 2
    assert f"--cpus '4096': this machine has CPUs {allowed}" in capsys.readouterr().err
    assert main(["server", "start", "--cpus", "one"]) == 2
    assert "--cpus 'one': expected CPU numbers" in capsys.readouterr().err
    assert not (tmp_path / "server.json").exists()             # refused before any mongod started


def test_status_says_where_the_ftdc_is_how_to_read_it_and_that_stop_deletes_a_temporary_one():
    from types import SimpleNamespace

    from capmodel.commands.server import ftdc_where

    one = SimpleNamespace(diagnostic_data=True, replica_set=None, dbpath="/tmp/d1", owns_dbpath=True)
    assert ftdc_where(one) == ("FTDC in /tmp/d1/diagnostic.data: capmodel observe --ftdc /tmp/d1/diagnostic.data "
                               "(deleted by 'server stop': read it before, or start with --dbpath to keep it)")
    kept = SimpleNamespace(diagnostic_data=True, replica_set="capmodel", dbpath="/data/rs", owns_dbpath=False)
    assert ftdc_where(kept) == "FTDC in /data/rs/member*/diagnostic.data: capmodel observe --ftdc /data/rs"
    assert ftdc_where(SimpleNamespace(diagnostic_data=False, replica_set=None, dbpath="/x", owns_dbpath=True)) == ""
