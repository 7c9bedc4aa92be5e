"""The serial part of ``make test`` collects only the files ``tests/conftest.py`` names (serial_paths): every test
that can be marked serial must live in one of them, or it would silently run in neither part."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests import conftest

TESTS = Path(__file__).resolve().parents[1]


def test_the_serial_files_exist_and_are_the_modules_conftest_marks():
    paths = conftest.serial_paths()
    assert paths == sorted(set(paths))
    for path in paths:
        assert (TESTS.parent / path).is_file(), path
    assert {conftest.module_name(TESTS.parent / p) for p in paths} == (conftest.SERIAL_MODULES
                                                                        | conftest.LIVE_TESTS_SERIAL_MODULES)


def test_every_module_conftest_names_is_a_test_file():
    named = conftest.SERIAL_MODULES | conftest.LIVE_TESTS_SERIAL_MODULES | conftest.RENDERED_REPORT_MODULES
    assert sorted(m for m in named if not (TESTS / f"{m}.py").is_file()) == []


def test_no_test_file_marks_itself_serial():
    # the marker comes only from conftest's module sets; a file marking its own tests serial would be left out of
    # the serial part's collection
    marked = [p.name for p in TESTS.rglob("*.py") if p.name != "conftest.py"
              and re.search(r"mark\.serial\b", p.read_text(encoding="utf-8"))]
    assert marked == []


def test_the_makefile_reads_the_list_from_conftest():
    out = subprocess.run([sys.executable, str(TESTS / "conftest.py")], capture_output=True, text=True, check=True,
                         cwd=TESTS.parent)
    assert out.stdout.split() == conftest.serial_paths()
    makefile = (TESTS.parent / "Makefile").read_text()
    assert "tests/conftest.py" in makefile and '-m "serial and not exclusive$(AND_MARK)"' in makefile
    assert '-m "exclusive$(AND_MARK)"' in makefile


def test_the_exclusive_modules_are_serial_ones():
    # an exclusive module not also serial would run in the parallel part as well
    assert conftest.EXCLUSIVE_MODULES <= conftest.SERIAL_MODULES


def test_each_unit_given_a_duration_is_a_unit_of_the_suite():
    # a renamed or removed module left in UNIT_SECONDS would silently stop being scheduled first
    units = {conftest.work_unit(f"{p.relative_to(TESTS.parent).as_posix()}::t") for p in TESTS.rglob("test_*.py")}
    assert sorted(set(conftest.UNIT_SECONDS) - units) == []
