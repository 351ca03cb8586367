# Batchplane developer commands. `make help` lists them.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STACK ?= kind

.DEFAULT_GOAL := help

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

.PHONY: help install preview test lint typecheck check bench
help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

install: $(BIN)/.installed ## create .venv and install batchplane with its dev tools

preview: $(BIN)/.installed ## set up, then preview the default stack offline (STACK=kind)
	$(BIN)/batchplane preview --stack $(STACK)

test: $(BIN)/.installed ## set up, then run the whole test suite
	$(BIN)/pytest -q

lint: $(BIN)/.installed ## ruff lint + format check
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(BIN)/.installed ## mypy --strict on batchplane/ and components/
	$(BIN)/mypy

check: lint typecheck test ## everything CI runs
