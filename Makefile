# Everything a fresh machine needs: `make demo` and `make check` create the virtualenv first.
# `make demo` installs only what the app needs to run; `make check` adds the test, lint and type
# tools. Both install at the versions in constraints/dev.txt.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
CONSTRAINTS := constraints/dev.txt
INSTALL := $(BIN)/pip install --quiet -c $(CONSTRAINTS)
# Stamps: one per install, so `make check` after `make demo` still installs the test tools.
APP := $(VENV)/.installed-app
DEV := $(VENV)/.installed-dev

.PHONY: demo check test lint types imports pre-commit snapshots-update screenshots bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(APP): pyproject.toml $(CONSTRAINTS) | $(BIN)/python
	$(INSTALL) -e .
	touch $@

$(DEV): pyproject.toml $(CONSTRAINTS) | $(BIN)/python
	$(INSTALL) -e '.[test]'
	touch $@

demo: $(APP)
	$(BIN)/ioh-tui demo

lint: $(DEV)
	$(BIN)/ruff format --check ioh_tui tests benchmarks scripts
	$(BIN)/ruff check ioh_tui tests benchmarks scripts

types: $(DEV)
	$(BIN)/mypy

imports: $(DEV)
	$(BIN)/lint-imports

# Two workers, a test file to each (a file's tests share their fixtures and servers): the suite
# waits on subprocesses and sockets about as much as it computes. The SVG snapshots run after,
# alone: a picture taken while the other worker loads the machine can catch a layout mid-way.
test: $(DEV)
	$(BIN)/pytest -q -n 2 --dist loadfile -m "not snapshot"
	$(BIN)/pytest -q -m snapshot

check: lint types imports test

# The checks `make check` runs before the tests, as a git pre-commit hook (.pre-commit-config.yaml).
pre-commit: $(DEV)
	$(INSTALL) pre-commit
	$(BIN)/pre-commit install

snapshots-update: $(DEV)
	$(BIN)/pytest -q tests/snapshots --snapshot-update

screenshots: $(DEV)
	$(BIN)/python scripts/screenshots.py

bench: $(DEV)
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) build dist *.egg-info ci-artifacts snapshot_report.html
