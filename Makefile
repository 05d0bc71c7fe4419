# Two commands on a fresh machine with Python 3.11+ and make: `make demo`, `make test`.
# Each creates .venv when missing and installs the pinned dependencies first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: install demo lab test lint typecheck arch docs pytest sim clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "platform-audit needs Python 3.11 or newer; set PYTHON=python3.11")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(BIN)/platform-audit demo

# JupyterLab on the notebooks, reading the store `make demo` wrote (or `make lab LAB_STORE=...`).
# Jupyter refuses to start as root without --allow-root (containers and many dev boxes run so).
LAB_STORE ?= $(CURDIR)/data/demo/store
LAB_ROOT  := $(if $(filter 0,$(shell id -u)),--allow-root)
lab: install
	PLATFORM_AUDIT_STORE="$(LAB_STORE)" $(BIN)/jupyter lab $(LAB_ROOT) notebooks/

test: install lint typecheck arch docs pytest

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install
	$(BIN)/mypy toolkit

# The floors of docs/architecture.md ([tool.importlinter] in pyproject.toml): each package
# imports only those below it, and no cycle, not even through a lazy import.
arch: install
	$(BIN)/lint-imports

# The documentation site (mkdocs.yml) into site/, which git ignores. Its reference pages are
# generated from the code as it builds (docs/hooks.py); --strict fails on any warning, a
# broken link or anchor among them. Nothing is fetched from the network. The tests marked
# docs_build build it again into a temporary folder: `make pytest` leaves them to this target.
docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir site

# The tests run in two processes on CI's two cores (pytest-xdist: one per core, at most four),
# half the time of one: most of the suite is single-threaded Python and DuckDB on small data.
# A module's tests stay in one process (--dist loadscope), so its fixtures are built once.
# `make test TEST_WORKERS=0` runs them in this process.
TEST_WORKERS ?= auto
pytest: install
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --maxprocesses 4 --dist loadscope -m "not docs_build"

sim: install
	$(BIN)/platform-audit sim serve

clean:
	rm -rf $(VENV) site .pytest_cache .mypy_cache .ruff_cache .import_linter_cache
