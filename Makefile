# The two commands: `make report` (the main job) and `make test`. Both work on a fresh machine: the first run creates
# .venv and installs capmodel with everything it needs.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.capmodel-installed

.PHONY: venv test report clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

test: $(STAMP)
	$(BIN)/python -m pytest

report: $(STAMP)
	$(BIN)/capmodel report --all --live --out reports

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
