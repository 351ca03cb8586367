# Batchplane developer commands. `make help` lists them.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STACK ?= kind

.DEFAULT_GOAL := help

# requirements.txt first: the exact versions the Pulumi program runs with (what `pulumi install` installs), then the
# dev tools on top.
$(BIN)/.installed: pyproject.toml requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -r requirements.txt
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

# Graphviz's `dot` renders `batchplane graph` SVG/PNG (and their tests). As root with apt-get (CI, containers)
# it is installed quietly; otherwise this stops with the package to install.
GRAPHVIZ_PACKAGE := graphviz

# Debian's `prometheus` package: the real prometheus and promtool the observability tests run (rules checked and
# unit-tested, a Prometheus scraping a running webhook). Installed the same way as Graphviz.
PROMETHEUS_PACKAGE := prometheus

.PHONY: help install graphviz prometheus preview test compile test-compiled lint typecheck imports check bench graphs e2e-kind
help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

install: graphviz prometheus $(BIN)/.installed ## create .venv and install batchplane with its dev tools (+ Graphviz as root)

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

preview: $(BIN)/.installed ## set up, then preview the default stack offline (STACK=kind)
	$(BIN)/batchplane preview --stack $(STACK)

# The webhook's decision path compiled with mypyc (batchplane/webhook/compile.py): what the webhook image runs.
COMPILED := build/compiled

test: graphviz prometheus $(BIN)/.installed ## set up, then run the whole test suite (and the decision path compiled)
	$(BIN)/pytest -q
	$(MAKE) --no-print-directory test-compiled

compile: $(BIN)/.installed ## compile the webhook's decision path with mypyc into build/compiled
	$(BIN)/python -m batchplane.webhook.compile --out $(COMPILED)

test-compiled: compile ## the webhook, accounting and quantity tests against the compiled decision path
	BATCHPLANE_COMPILED=$(COMPILED) $(BIN)/pytest -q tests/webhook tests/accounting tests/quantity

lint: $(BIN)/.installed ## ruff lint + format check
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(BIN)/.installed ## mypy --strict on batchplane/
	$(BIN)/mypy

imports: $(BIN)/.installed ## the layering contracts (import-linter, [tool.importlinter] in pyproject.toml)
	$(BIN)/lint-imports

check: lint typecheck imports test ## everything CI runs

graphs: graphviz $(BIN)/.installed ## regenerate docs/graphs/<stack>.dot and .svg for every stacks/Pulumi.<stack>.yaml
	@mkdir -p docs/graphs
	@for f in stacks/Pulumi.*.yaml; do \
	  s=$${f#stacks/Pulumi.}; s=$${s%.yaml}; \
	  $(BIN)/batchplane graph --stack $$s --format dot --output docs/graphs/$$s.dot || exit 1; \
	  $(BIN)/batchplane graph --stack $$s --format svg --output docs/graphs/$$s.svg || exit 1; \
	done

e2e-kind: $(BIN)/.installed ## end-to-end on a real kind cluster (needs docker, kind, kubectl, pulumi); ~15 min
	$(BIN)/pytest -m kind tests/e2e -v -rs
