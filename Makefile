# GNU make. Needs only python3 >= 3.11 (and apt-get for what it may install on Debian/Ubuntu).
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CHROMIUM := /usr/bin/chromium
# The tests' OpenID provider (oidc-provider on node), its packages pinned by package-lock.json.
OIDC_DIR := tests/oidc
OIDC_STAMP := $(OIDC_DIR)/node_modules/.installed
# apt-get needs root: use sudo only when we are not root already.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT_INSTALL := $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y
# The test suite runs in this many pytest-xdist workers, each with its own embedded PostgreSQL,
# browser and OpenID provider; a test file stays on one worker (its module fixtures with it).
# Most tests wait on servers, browsers and subprocesses, so more workers than cores pays.
TEST_WORKERS ?= 3

.PHONY: help venv run test lint bench chromium node migration clean distclean

help:
	@echo "make run        start the console with a demo process on http://127.0.0.1:8000"
	@echo "make test       lint, type-check and run the test suite (installs Chromium and node if missing)"
	@echo "make lint       ruff check, ruff format --check and mypy"
	@echo "make bench      run the benchmarks"
	@echo "make migration MSG='...'   autogenerate a migration from engine/schema.py"
	@echo "make clean      remove caches and build output (keeps .venv and .interlock)"

venv: $(STAMP)

# Rebuilt only when pyproject.toml changes. Debian and Ubuntu ship python3 without ensurepip
# unless python3-venv is installed: venv then fails half-way, leaving a .venv without pip.
$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
		{ echo "Interlock needs Python >= 3.11; $(PYTHON) is $$($(PYTHON) -V 2>&1)" >&2; exit 1; }
	@if ! $(BIN)/python -m pip --version >/dev/null 2>&1; then \
		rm -rf $(VENV); \
		if ! $(PYTHON) -m venv $(VENV); then \
			command -v apt-get >/dev/null || exit 1; \
			echo "$(PYTHON) -m venv failed: installing python3-venv with apt-get" >&2; \
			rm -rf $(VENV); \
			$(SUDO) apt-get update && $(APT_INSTALL) python3-venv && $(PYTHON) -m venv $(VENV) || exit 1; \
		fi; \
	fi
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

run: venv
	$(BIN)/interlock serve --demo

# Playwright drives Debian's Chromium (no browser download); install it when missing.
chromium:
	@if [ ! -x $(CHROMIUM) ] && command -v apt-get >/dev/null; then \
		echo "installing chromium with apt-get" >&2; \
		$(SUDO) apt-get update && $(APT_INSTALL) chromium || \
			echo "warning: could not install chromium; browser tests will not run" >&2; \
	fi

# The OpenID provider the tests start needs node and npm; install them when missing.
node:
	@if { ! command -v node || ! command -v npm; } >/dev/null && command -v apt-get >/dev/null; then \
		echo "installing nodejs and npm with apt-get" >&2; \
		$(SUDO) apt-get update && $(APT_INSTALL) nodejs npm || \
			echo "warning: could not install node; the OpenID provider tests will not run" >&2; \
	fi

# npm ci: exactly the committed lock file, again whenever it changes.
$(OIDC_STAMP): $(OIDC_DIR)/package-lock.json | node
	@if command -v npm >/dev/null; then \
		npm ci --prefix $(OIDC_DIR) --no-audit --no-fund && touch $@; \
	else \
		echo "warning: npm is missing; the OpenID provider tests will not run" >&2; \
	fi

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy engine app tests bench

test: venv chromium $(OIDC_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy engine app tests bench
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadfile

bench: venv
	$(BIN)/python -m bench

migration: venv
	@if [ -z "$(MSG)" ]; then echo 'usage: make migration MSG="what changed"' >&2; exit 2; fi
	$(BIN)/python -m engine.db.migrate revision "$(MSG)"

clean:
	rm -rf build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis test-results
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
