"""Fixtures shared by the whole test suite.

``mongod`` and ``replica_set`` are real embedded MongoDB servers (never mocks). They are session-scoped and lazy: a
server starts the first time a test asks for it and is stopped when the session ends, so tests that do not need one
pay nothing. Nothing is skipped: the CI machine has AVX and the bundled mongod, and a test that needs a server fails
loudly if one cannot start.
"""
from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

# nbformat's validator, jsonschema, imports its optional IRI checker rfc3987_syntax when installed, which compiles ~40
# grammars (2 s of CPU in every test process); no notebook schema has an iri format: the suite goes without it, as the
# capmodel command does (capmodel/cli.py)
sys.modules.setdefault("rfc3987_syntax", None)

# A shell starts a command put in the background with `&` with SIGINT ignored, and every process it starts inherits
# that: the Ctrl-C tests' children then never saw their SIGINT (4 failures, one 30 s wait). The suite's processes
# take SIGINT as Python does by default, however the run was started.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def mongod():
    """A standalone embedded mongod on a free 127.0.0.1 port (an EmbeddedServer: .uri, .port, .client(), ...)."""
    from capmodel.bench.server import embedded_server

    with embedded_server() as server:
        yield server


@pytest.fixture(scope="session")
def replica_set():
    """A 3-member embedded replica set (one PRIMARY, two SECONDARY); .uri carries ?replicaSet=..."""
    from capmodel.bench.server import embedded_server

    with embedded_server(replica_set=3) as server:
        yield server


@pytest.fixture
def mongo_client(mongod):
    """A pymongo client on the session's standalone mongod, closed after the test."""
    client = mongod.client()
    yield client
    client.close()


# Modules whose tests measure throughput, latency or time, or start servers and client processes of their own:
# ``make test`` runs them after the rest has run on three pytest-xdist workers, two modules at a time, so that
# another test's load never bends what they measure beyond what their bounds allow; the EXCLUSIVE ones run last, one
# at a time, alone: those that pin the server and its clients to one CPU each and measure the server's CPU.
# A module is named by its path under tests/, without ".py".
SERIAL_MODULES = {
    "observe/test_headroom_live", "mix/test_production_live", "bench/test_election", "bench/test_sweep",
    "bench/test_local_cluster", "bench/test_dask_hosts", "bench/test_runner", "observe/test_shape_demands_live",
    "mix/test_replica_set_live", "bench/test_interrupted_sweep",
}
EXCLUSIVE_MODULES = {"observe/test_headroom_live", "mix/test_production_live", "observe/test_shape_demands_live"}
# Modules whose live tests (those on a server: LIVE_FIXTURES) run alone, their FTDC and text tests on the workers
# (observe/test_members' generated replica set took 20 s of the serial part).
LIVE_TESTS_SERIAL_MODULES = {"observe/test_members", "observe/test_observe"}
LIVE_FIXTURES = {"mongod", "replica_set", "mongo_client", "run"}
# Modules that share the session's one render of every report (tests/support/rendered_reports.py, cached under the
# session's temporary folder, which is one per xdist worker), with fleet/test_fleet's report-08 test: one work unit of
# one worker, so the reports are rendered once.
RENDERED_REPORT_MODULES = {"report/test_browser", "report/test_notebooks", "report/test_page_07",
                           "report/test_machinery", "report/test_index", "report/test_long_paths",
                           "formatting/test_brackets", "report/test_headline_words",
                           "formatting/test_column_precision"}
# The work units that take longest (seconds on a 2-core machine, approximate: each unit's tests and fixtures, as
# ``--durations`` printed them). Under pytest-xdist they are handed out first, longest first, so that no long unit
# starts while the other workers run dry; the other units follow in the order collected. A scheduling hint only: a
# wrong or missing figure costs wall time, never a result (tests/architecture/test_serial_part.py checks that each
# name is a unit).
UNIT_SECONDS = {
    "rendered reports": 90, "tests/report/test_jupyterlab.py": 50, "tests/architecture/test_readme_quickstarts.py": 45,
    "tests/fleet/test_fleet.py": 25, "tests/bench/test_bench_command.py": 30, "tests/report/test_page_claims.py": 25,
    "tests/observe/test_live_members.py": 23, "tests/observe/test_ftdc_fuzz.py": 20,
    "tests/evidence/test_grade_promises.py": 20, "tests/observe/test_members.py": 18,
    "tests/bench/test_scheduler_address.py": 17, "tests/observe/test_hung_member.py": 14,
    "tests/architecture/test_layers.py": 14, "tests/observe/test_calibration.py": 12,
    "tests/architecture/test_docs.py": 12, "tests/fleet/test_fleet_words.py": 10,
    # the serial part
    "tests/bench/test_dask_hosts.py": 30, "tests/bench/test_sweep.py": 30, "tests/observe/test_observe.py": 28,
    "tests/bench/test_interrupted_sweep.py": 22, "tests/bench/test_local_cluster.py": 17,
    "tests/bench/test_election.py": 14, "tests/mix/test_replica_set_live.py": 10,
}
TESTS = Path(__file__).resolve().parent


def module_name(path) -> str:
    """A test file's name in the sets above: its path under tests/ without ".py" (``bench/test_sweep``)."""
    path = Path(str(path)).resolve()
    try:
        return path.relative_to(TESTS).with_suffix("").as_posix()
    except ValueError:
        return path.stem


def pytest_collection_modifyitems(config, items):
    """Tests that use a real server get the ``mongod`` marker, so ``-m "not mongod"`` can leave them out; tests of
    SERIAL_MODULES, and the live tests of LIVE_TESTS_SERIAL_MODULES, the ``serial`` marker. On a pytest-xdist worker,
    the tests of the units in UNIT_SECONDS come first, longest unit first (every worker collects, and orders, alike)."""
    if hasattr(config, "workerinput"):
        items.sort(key=lambda item: -UNIT_SECONDS.get(work_unit(item.nodeid), 0))
    for item in items:
        if {"mongod", "replica_set", "mongo_client"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.mongod)
        module = module_name(item.fspath)
        if module in SERIAL_MODULES or (module in LIVE_TESTS_SERIAL_MODULES
                                        and LIVE_FIXTURES & set(getattr(item, "fixturenames", ()))):
            item.add_marker(pytest.mark.serial)
        if module in EXCLUSIVE_MODULES:
            item.add_marker(pytest.mark.exclusive)


def work_unit(nodeid: str) -> str:
    """The pytest-xdist work unit of a test: its module (module-scoped fixtures are built once), or one unit for every
    reader of the rendered reports."""
    module = nodeid.split("::", 1)[0]          # tests/report/test_browser.py: relative to the repository
    if module.removeprefix("tests/").removesuffix(".py") in RENDERED_REPORT_MODULES or "::test_report_08_" in nodeid:
        return "rendered reports"
    return module


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadscope`` (make test) with work_unit as the scope, the units handed out in the order collected
    (pytest_collection_modifyitems: the longest first), not xdist's default of the most tests first."""
    if config.getvalue("dist") != "loadscope":
        return None
    config.option.loadscopereorder = False
    from xdist.scheduler import LoadScopeScheduling

    class ByWorkUnit(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return ByWorkUnit(config, log)


def serial_paths() -> list[str]:
    """The test files that hold serial tests (SERIAL_MODULES and LIVE_TESTS_SERIAL_MODULES), relative to the
    repository: ``make test`` passes them to its serial part, which would otherwise collect all ~2,000 tests to keep
    ~90 (tests/architecture/test_serial_part.py checks that no serial test lives elsewhere)."""
    return sorted(f"tests/{m}.py" for m in SERIAL_MODULES | LIVE_TESTS_SERIAL_MODULES)


if __name__ == "__main__":        # the Makefile: python tests/conftest.py prints the serial part's files
    print(" ".join(serial_paths()))
