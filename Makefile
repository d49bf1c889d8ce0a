# webmcp-harness — every target does the set-up it needs, idempotently.
# `make demo` and `make test` work on a fresh clone; nothing downloads a browser.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup chromium demo selftest test lint typecheck unit clean conformance conformance-deps

setup: $(STAMP) chromium

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# Finds a Chromium ($$WEBMCP_CHROMIUM, /usr/bin/chromium, a Playwright-managed one);
# installs Debian's `chromium` when none is found and we are root with apt-get.
chromium: $(STAMP)
	$(BIN)/python -m harness.browser.chromium --ensure

# The official MCP conformance suite and a Node.js >= 22 to run it, pinned by
# conformance/package-lock.json (npm ci: needs npm, and the npm registry on first use).
CONFORMANCE := conformance/node_modules/.installed

$(CONFORMANCE): conformance/package.json conformance/package-lock.json
	cd conformance && npm ci --no-audit --no-fund
	touch $(CONFORMANCE)

conformance-deps: $(CONFORMANCE)

# The suite against `webmcp-harness mcp --transport http` (tests/test_conformance.py runs it too).
conformance: setup $(CONFORMANCE)
	$(BIN)/python conformance/run.py

demo: setup
	$(BIN)/webmcp-harness demo

# The reliability selftest's full run (writes reports/reliability.md and .json).
selftest: setup
	$(BIN)/webmcp-harness selftest --full

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy harness

unit: setup $(CONFORMANCE)
	$(BIN)/python -m pytest

test: lint typecheck unit

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache conformance/node_modules
