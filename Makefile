# Everything a fresh machine needs: `make demo` and `make check` create the virtualenv first.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo check test lint types imports snapshots-update screenshots bench clean

$(BIN)/ioh-tui: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

demo: $(BIN)/ioh-tui
	$(BIN)/ioh-tui demo

lint: $(BIN)/ioh-tui
	$(BIN)/ruff format --check ioh_tui tests benchmarks scripts
	$(BIN)/ruff check ioh_tui tests benchmarks scripts

types: $(BIN)/ioh-tui
	$(BIN)/mypy

imports: $(BIN)/ioh-tui
	$(BIN)/lint-imports

test: $(BIN)/ioh-tui
	$(BIN)/pytest -q

check: lint types imports test

snapshots-update: $(BIN)/ioh-tui
	$(BIN)/pytest -q tests/snapshots --snapshot-update

screenshots: $(BIN)/ioh-tui
	$(BIN)/python scripts/screenshots.py

bench: $(BIN)/ioh-tui
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) build dist *.egg-info
