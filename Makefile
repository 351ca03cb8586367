# Batchplane developer commands. `make help` lists them.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STACK ?= kind

.DEFAULT_GOAL := help

# Installs come from uv.lock with uv (https://docs.astral.sh/uv/), the lock `pulumi install` reads too (Pulumi.yaml:
# `toolchain: uv`). uv itself is installed from PyPI, pinned, into .tools/ (the `uv` package is a wheel with the
# binary), so a fresh machine needs only python3 with pip. tests/project/test_packaging.py checks this pin
# against the `dev` extra's.
UV_VERSION := 0.13.9
TOOLS := .tools
UV := $(TOOLS)/bin/uv
# uv creates .venv with this interpreter (never a downloaded one) and installs there.
export UV_PROJECT_ENVIRONMENT := $(abspath $(VENV))
export UV_PYTHON_DOWNLOADS := never
UV_SYNC := $(UV) sync --locked --quiet --python $(PYTHON)

# `pip install --target`: no venv to create, and allowed beside a Debian-managed python3 (PEP 668).
$(UV):
	@$(PYTHON) -m pip install -qq --disable-pip-version-check --target $(TOOLS) uv==$(UV_VERSION)

# The program and the CLI: uv.lock's default group `run` (what `pulumi install` installs). --inexact keeps the dev
# tools when `make test` installed them first.
$(BIN)/.installed-run: pyproject.toml uv.lock | $(UV)
	@$(UV_SYNC) --inexact
	@touch $@

# The program, the CLI and the dev tools (the `dev` extra).
$(BIN)/.installed-dev: pyproject.toml uv.lock | $(UV)
	@$(UV_SYNC) --extra dev
	@touch $@ $(BIN)/.installed-run

# Graphviz's `dot` renders `batchplane graph` SVG/PNG (and their tests). As root with apt-get (CI, containers)
# it is installed quietly; otherwise this stops with the package to install.
GRAPHVIZ_PACKAGE := graphviz

# Debian's `prometheus` package: the real prometheus and promtool the observability tests run (rules checked and
# unit-tested, a Prometheus scraping a running webhook). Installed the same way as Graphviz.
PROMETHEUS_PACKAGE := prometheus

.PHONY: help install lock graphviz prometheus preview test compile test-compiled lint typecheck imports all-checks graphs docs e2e-kind
help: ## list the targets
	@grep -E '^[A-Za-z0-9_.-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

install: graphviz prometheus $(BIN)/.installed-dev ## create .venv from uv.lock with the dev tools (+ Graphviz and Prometheus as root)

# requirements.txt: the program's pins for pip (the PR workflow's `pip install -r requirements.txt`); the webhook image's
# pins (webhook/Dockerfile, no Pulumi). Both are exported from uv.lock; tests/project/test_packaging.py checks they agree.
lock: | $(UV) ## re-lock after changing pyproject.toml: uv.lock, then requirements.txt and webhook/requirements.txt from it
	$(UV) lock
	$(UV) export --frozen --no-hashes --quiet --output-file requirements.txt
	$(UV) export --frozen --no-hashes --quiet --no-default-groups --extra webhook --no-emit-project \
	  --output-file webhook/requirements.txt

graphviz: ## make sure Graphviz's `dot` binary is there (installs the graphviz package when root)
	@command -v dot >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	      $(GRAPHVIZ_PACKAGE)) >/dev/null || { echo "make: installing the $(GRAPHVIZ_PACKAGE) package failed" >&2; exit 1; }; \
	  else \
	    echo "make: Graphviz's dot binary is missing: install the '$(GRAPHVIZ_PACKAGE)' package" \
	      "(Debian/Ubuntu: sudo apt-get install $(GRAPHVIZ_PACKAGE); Fedora: sudo dnf install $(GRAPHVIZ_PACKAGE);" \
	      "macOS: brew install $(GRAPHVIZ_PACKAGE))" >&2; \
	    exit 1; \
	  fi; }

prometheus: ## make sure prometheus and promtool are there (installs Debian's prometheus package when root)
	@command -v promtool >/dev/null 2>&1 && command -v prometheus >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	      $(PROMETHEUS_PACKAGE)) >/dev/null || { echo "make: installing the $(PROMETHEUS_PACKAGE) package failed" >&2; exit 1; }; \
	  else \
	    echo "make: prometheus/promtool are missing: install the '$(PROMETHEUS_PACKAGE)' package" \
	      "(Debian/Ubuntu: sudo apt-get install $(PROMETHEUS_PACKAGE))" >&2; \
	    exit 1; \
	  fi; }

preview: $(BIN)/.installed-run ## set up the program and CLI only, then preview the default stack offline (STACK=kind)
	@$(BIN)/batchplane preview --stack $(STACK)

# The webhook's decision path compiled with mypyc (batchplane/webhook/compile.py): what the webhook image runs.
COMPILED := build/compiled

# pytest-xdist: one worker per core, a test file per worker at a time (its module fixtures computed once).
# PYTEST_WORKERS=0 runs in one process.
PYTEST_WORKERS ?= auto
PYTEST_PARALLEL := -n $(PYTEST_WORKERS) --dist loadfile

# `make test` starts the mypyc compile (one process: mypy, then the C compiler on one C file) in the background
# while the pure pass runs, and waits for it before the compiled pass: on 2 cores the compile's single process no
# longer runs with the other core idle, and the pure pass's tail (one worker finishing its last slow file) leaves
# a core to it. Its output goes to build/compile.log and is printed after the pure pass (docs/performance.md).
test: graphviz prometheus $(BIN)/.installed-dev ## set up, then run the whole test suite (and the decision path compiled)
	@mkdir -p build
	@$(BIN)/python -m batchplane.webhook.compile --out $(COMPILED) > build/compile.log 2>&1 & job=$$!; \
	  $(BIN)/pytest -q $(PYTEST_PARALLEL); pure=$$?; \
	  wait $$job; compiled=$$?; cat build/compile.log; \
	  if [ $$compiled -ne 0 ]; then echo "make test: the mypyc compile failed (build/compile.log)" >&2; fi; \
	  [ $$pure -eq 0 ] && [ $$compiled -eq 0 ]
	$(COMPILED_TESTS)

compile: $(BIN)/.installed-dev ## compile the webhook's decision path with mypyc into build/compiled
	$(BIN)/python -m batchplane.webhook.compile --out $(COMPILED)

# tests/webhook/test_compile.py tests the compiler itself (it runs in the pure pass); against the compiled path it
# would only compile the package a second time.
COMPILED_TESTS = BATCHPLANE_COMPILED=$(COMPILED) $(BIN)/pytest -q $(PYTEST_PARALLEL) tests/webhook tests/accounting \
  tests/quantity --ignore=tests/webhook/test_compile.py

test-compiled: compile ## the webhook, accounting and quantity tests against the compiled decision path
	$(COMPILED_TESTS)

lint: $(BIN)/.installed-dev ## ruff lint + format check
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(BIN)/.installed-dev ## mypy --strict on batchplane/
	$(BIN)/mypy

imports: $(BIN)/.installed-dev ## the layering contracts (import-linter, [tool.importlinter] in pyproject.toml)
	$(BIN)/lint-imports

all-checks: lint typecheck imports test ## lint, typecheck, import contracts and the tests (the policy pack is `batchplane check`)

graphs: graphviz $(BIN)/.installed-dev ## regenerate docs/graphs/<template>.dot and .svg for every templates/Pulumi.<template>.yaml
	@mkdir -p docs/graphs
	@for f in templates/Pulumi.*.yaml; do \
	  s=$${f#templates/Pulumi.}; s=$${s%.yaml}; \
	  $(BIN)/batchplane graph --config $$f --format dot --output docs/graphs/$$s.dot || exit 1; \
	  $(BIN)/batchplane graph --config $$f --format svg --output docs/graphs/$$s.svg || exit 1; \
	done

# Every page and figure in docs/ that describes the code, regenerated from it (no Docker, no network; Graphviz for the
# graphs). Each has a test that fails, naming `make docs`, when the committed text is stale: tests/config/test_reference.py,
# tests/preflight/test_docs.py, tests/graph/test_docs_graphs.py, tests/docs/test_docfigures.py and
# tests/webhook/test_process_imports.py. Pages are written through a temporary file, so a failing generator leaves
# the committed page as it was.
docs: graphs $(BIN)/.installed-dev ## regenerate docs/ from the code: config reference, requirements, graphs and the figures the pages mark
	$(BIN)/batchplane config-reference --output docs/config-reference.md.tmp && mv docs/config-reference.md.tmp docs/config-reference.md
	$(BIN)/batchplane preflight --requirements > docs/requirements.md.tmp && mv docs/requirements.md.tmp docs/requirements.md
	$(BIN)/python -m batchplane.docfigures README.md docs/*.md

e2e-kind: $(BIN)/.installed-dev ## end-to-end on a real kind cluster (needs docker, kind, kubectl, pulumi); ~15 min
	$(BIN)/pytest -m kind tests/e2e -v -rs
