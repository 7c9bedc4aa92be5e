# The two commands: `make report` (the main job) and `make test`. Both work on a fresh machine: the first run creates
# .venv and installs capmodel with every extra and the tests' tools (.[all,test]). `make check` runs the linter and the
# type checker on capmodel/ (it adds the check extra: ruff and mypy).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.capmodel-installed

CHECK_STAMP := $(VENV)/.capmodel-check-installed

.PHONY: venv test report docs check clean chromium

# The browser tests drive Debian's chromium (tests/report/test_browser.py); `make test` installs it when it is missing,
# with apt-get as root or through sudo. MARK narrows the tests by marker, e.g. make test MARK='not browser';
# PYTEST_ARGS passes other options on, e.g. make test PYTEST_ARGS=tests/usl/test_fit.py.
# The tests run in three parts: first those that may share the machine, on three pytest-xdist workers (many of them
# wait on a server, a kernel or a subprocess, so a third worker keeps both cores busy: 253 s against 306 s with two,
# on a quiet 2-core machine); then the ones marked serial (they measure rates or time, or start servers and clients
# of their own: tests/conftest.py), two modules at a time; last the ones marked exclusive (they pin the server and
# its clients to a CPU each and measure the server's CPU), alone. Every part always runs; the exit status is the first
# failure's (pytest's 5, no test selected in a part, is not one).
MARK ?=
PYTEST_ARGS ?=
AND_MARK = $(if $(MARK), and ($(MARK)))
# The serial part collects only the files that hold serial tests (python tests/conftest.py names them) unless
# PYTEST_ARGS names tests itself.
NAMED_TESTS = $(filter tests tests/% %.py,$(PYTEST_ARGS))$(findstring ::,$(PYTEST_ARGS))

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[all,test]'
	@# notebooks stored without outputs or run metadata (scripts/nbclean.py, .gitattributes), in a git clone only
	-@git rev-parse --git-dir >/dev/null 2>&1 && git config filter.nbclean.clean "python3 scripts/nbclean.py"
	touch $(STAMP)

venv: $(STAMP)

$(CHECK_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[all,test,check]'
	touch $(CHECK_STAMP)

# Lint (ruff: pyflakes, pycodestyle, import order) and types (mypy) on capmodel/, configured in pyproject.toml; both
# must report nothing.
check: $(CHECK_STAMP)
	$(BIN)/python -m ruff check capmodel/
	$(BIN)/python -m mypy

chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then sudo=; \
	  elif command -v sudo >/dev/null 2>&1; then sudo=sudo; \
	  else echo "make: the browser tests need Debian's chromium; run 'apt-get install chromium' as root" >&2; exit 1; fi; \
	  command -v apt-get >/dev/null 2>&1 || { echo "make: chromium is missing and there is no apt-get to install it;" \
	    "install chromium, or run make test MARK='not browser'" >&2; exit 1; }; \
	  echo "make: installing Debian's chromium for the browser tests"; \
	  $$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# PYTHONDONTWRITEBYTECODE is emptied for the tests: with it set, each of the ~3 pytest processes compiled and
# assertion-rewrote every test module again (7 s of CPU a process, of 13 s of collecting) and every capmodel
# subprocess, notebook kernel and Dask worker compiled capmodel's modules again; the .pyc files go to __pycache__
# folders, which git ignores.
test: $(STAMP) chromium
	@export PYTHONDONTWRITEBYTECODE=; status=0; \
	$(BIN)/python -m pytest -n 3 --dist loadscope -m "not serial$(AND_MARK)" $(PYTEST_ARGS) || status=$$?; \
	[ $$status = 5 ] && status=0; \
	$(BIN)/python -m pytest -n 2 --dist loadscope -m "serial and not exclusive$(AND_MARK)" \
	  $(if $(NAMED_TESTS),,$$($(BIN)/python tests/conftest.py)) $(PYTEST_ARGS) || { s=$$?; [ $$s = 5 ] || \
	  [ $$status != 0 ] || status=$$s; }; \
	$(BIN)/python -m pytest -m "exclusive$(AND_MARK)" $(if $(NAMED_TESTS),,$$($(BIN)/python tests/conftest.py)) \
	  $(PYTEST_ARGS) || { s=$$?; [ $$s = 5 ] || \
	  [ $$status != 0 ] || status=$$s; }; \
	exit $$status

report: $(STAMP)
	$(BIN)/capmodel report --all --live --out reports

# The manual (docs/, mkdocs.yml) into site/: strict, so a broken link or a docstring that does not parse fails it.
docs: $(STAMP)
	$(BIN)/mkdocs build --strict
	@echo "the manual: site/index.html"

clean:
	rm -rf $(VENV) build site *.egg-info .pytest_cache
